/**
 * Chain-analytics benchmark (`npm run bench` calls it): on its own local devnet,
 *   1. whale-watch's log scan over 20,000 blocks holding 20,000 USDC transfers: the chunked
 *      concurrent scan against a one-request-at-a-time scan of the same chunks, side by side,
 *      straight to anvil and through a proxy adding 50 ms per request (a public RPC's latency);
 *   2. the whole whale-watch function over that window;
 *   3. calls per second of wallet-profile with warm caches.
 *
 * anvil's time to mine a block grows with the chain's length (about 1.5 microseconds per
 * block already on the chain, measured with anvil 1.7.1), so 20,000 blocks take minutes to
 * mine. The chain is therefore built once and kept in data/bench-analytics/ (anvil's own state
 * dump); later runs load it in a second. Delete that folder to rebuild it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { encodeFunctionData, getAddress, keccak256, type PublicClient, parseAbi, stringToBytes, toHex } from "viem";
import walletProfileFunctions from "../functions/wallet-profile.ts";
import whaleWatchFn from "../functions/whale-watch.ts";
import { walletProfile, whaleWatch } from "../spec/routes/analytics.ts";
import type { AnalyticsSettings } from "../src/analytics/services.ts";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { TransferScanner } from "../src/chain/log-scanner.ts";
import type { FunctionContext } from "../src/context.ts";
import { compileContracts } from "../src/local/devnet/contracts.ts";
import { devnetAccounts, startDevnet } from "../src/local/devnet/devnet.ts";
import { startUpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { startLatencyProxy } from "./bench-latency-proxy.ts";
import { reportTarget } from "./bench-report.ts";
import { createProgress, type Progress } from "./progress.ts";

const QUICK = process.env.BENCH_QUICK === "1";
/** The window measured: 20,000 blocks and transfers; `--quick` without the big chain cached builds a smaller one. */
const FULL = { blocks: 20_000, transfers: 20_000 };
const SMALL = { blocks: 4_000, transfers: 4_000 };
let BLOCKS = FULL.blocks;
let TRANSFERS = FULL.transfers;
const PER_BLOCK = 50; // transfers in each block that has any; the others are empty
const PLAN_VERSION = 1;
const CACHE_DIR = path.join("data", "bench-analytics");
const LATENCY_MS = 50;
const REPEATS = QUICK ? 1 : 7;
const WARM_UPS = 3;
const PROFILE_SECONDS = QUICK ? 1 : 3;

const usdcAbi = parseAbi(["function mint(address to, uint256 amount)", "function transfer(address to, uint256 amount) returns (bool)"]);

/** A JSON-RPC batch sender (the benches drive anvil directly). */
export type Rpc = (calls: { method: string; params: unknown[] }[]) => Promise<unknown[]>;

/** Send JSON-RPC batches to `url`; any error answer throws. */
export function rpcOf(url: string): Rpc {
  let id = 0;
  return async (calls) => {
    const body = calls.map((c) => ({ jsonrpc: "2.0", id: ++id, ...c }));
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const answers = (await res.json()) as { result?: unknown; error?: { message: string } }[];
    for (const a of answers) if (a.error) throw new Error(`rpc: ${a.error.message}`);
    return answers.map((a) => a.result);
  };
}

/** The amount (atomic USDC) of bench transfer `i`: mostly small, one in 100 whale-sized. */
function amountOf(i: number): bigint {
  const r = BigInt(keccak256(toHex(`bench-amount-${i}`)).slice(0, 14));
  return i % 100 === 7 ? 100_000_000_000n + (r % 1_900_000_000_000n) : 1_000_000n + (r % 5_000_000_000n);
}

/** Build the bench chain: one block of mints, then 20,000 blocks with 50 transfers in every 50th. */
async function buildChain(rpcUrl: string): Promise<{ fromBlock: number; toBlock: number }> {
  const rpc = rpcOf(rpcUrl);
  // The devnet's ten accounts are unlocked in anvil: eth_sendTransaction needs no signing here.
  const senders = devnetAccounts().map((a) => a.address);
  const minter = senders[0] as string; // account 0 is USDC's minter on the devnet
  const tx = (from: string, data: string) => ({
    method: "eth_sendTransaction",
    params: [{ from, to: base.usdc.address, data, gas: "0x249f0", maxFeePerGas: "0x77359400", maxPriorityFeePerGas: "0xf4240" }],
  });
  await rpc([{ method: "evm_setAutomine", params: [false] }]);
  await rpc(senders.map((to) => tx(minter, encodeFunctionData({ abi: usdcAbi, functionName: "mint", args: [to, 10n ** 15n] }))));
  await rpc([{ method: "evm_mine", params: [] }]);
  const [head] = (await rpc([{ method: "eth_blockNumber", params: [] }])) as string[];
  const fromBlock = Number(head) + 1;
  const progress = createProgress({ label: "bench chain", unit: "blocks", total: BLOCKS });
  for (let b = 0; b < TRANSFERS / PER_BLOCK; b++) {
    const calls = Array.from({ length: PER_BLOCK }, (_, k) => {
      const i = b * PER_BLOCK + k;
      const to = getAddress(keccak256(stringToBytes(`bench-recipient-${i % 997}`)).slice(0, 42));
      return tx(
        senders[i % senders.length] as string,
        encodeFunctionData({ abi: usdcAbi, functionName: "transfer", args: [to, amountOf(i)] }),
      );
    });
    await rpc(calls);
    // One block with the transfers, then empty blocks with no time passing (anvil_mine interval 0).
    await rpc([{ method: "evm_mine", params: [] }]);
    await rpc([{ method: "anvil_mine", params: [toHex(BLOCKS / (TRANSFERS / PER_BLOCK) - 1), "0x0"] }]);
    progress.update((b + 1) * (BLOCKS / (TRANSFERS / PER_BLOCK)));
  }
  progress.finish();
  await rpc([{ method: "evm_setAutomine", params: [true] }]);
  const [end] = (await rpc([{ method: "eth_blockNumber", params: [] }])) as string[];
  const toBlock = Number(end);
  if (toBlock - fromBlock + 1 !== BLOCKS) throw new Error(`bench chain has ${toBlock - fromBlock + 1} blocks, expected ${BLOCKS}`);
  return { fromBlock, toBlock };
}

/** The bench chain running on its own anvil: loaded from the cache, or built (and cached) now. */
export interface BenchChain {
  rpcUrl: string;
  window: { fromBlock: number; toBlock: number };
  stop(): Promise<void>;
}

// startAnvil (src/local/devnet/anvil.ts) has no load-only option, and `--state` would re-dump ~100 MB
// every 5 s during the measurements; so a cached chain runs on anvil started here with
// `--load-state`, with the devnet's own flags.
const ANVIL_FLAGS = [
  "--chain-id",
  String(base.chainId),
  "--accounts",
  "10",
  "--balance",
  "10000",
  "--base-fee",
  "1000000",
  "--gas-limit",
  "150000000",
  "--network",
  "optimism",
  "--silent",
];

function anvilCommand(): { command: string; args: string[] } {
  const require = createRequire(import.meta.url);
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  try {
    const binary = path.join(path.dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)), "bin", "anvil");
    if (existsSync(binary)) return { command: binary, args: [] };
  } catch {
    // fall back to the wrapper package
  }
  return { command: process.execPath, args: [require.resolve("@foundry-rs/anvil/bin.mjs")] };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Start anvil on a cached chain (gzipped state dump) and wait until it serves `window`. */
export async function loadCachedChain(stateFile: string, window: BenchChain["window"], workDir: string): Promise<BenchChain> {
  const json = path.join(workDir, "anvil-state.json");
  writeFileSync(json, gunzipSync(readFileSync(stateFile)));
  const port = await freePort();
  const { command, args } = anvilCommand();
  const mnemonic = "test test test test test test test test test test test junk";
  const child: ChildProcess = spawn(
    command,
    [...args, "--host", "127.0.0.1", "--port", String(port), "--mnemonic", mnemonic, ...ANVIL_FLAGS, "--load-state", json],
    {
      stdio: "ignore",
    },
  );
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
  };
  process.once("exit", () => child.kill("SIGKILL"));
  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const [head] = (await rpcOf(rpcUrl)([{ method: "eth_blockNumber", params: [] }])) as string[];
      if (Number(head) < window.toBlock) throw new Error(`the cached chain ends at block ${Number(head)}, before ${window.toBlock}`);
      return { rpcUrl, window, stop };
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("the cached chain")) {
        await stop();
        throw error;
      }
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error("anvil did not start with the cached chain");
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function cacheFiles(plan: { blocks: number; transfers: number }): { stateFile: string; windowFile: string } {
  const contractsHash = compileContracts().sourceHash;
  const key = createHash("sha256")
    .update(`${PLAN_VERSION}:${plan.blocks}:${plan.transfers}:${PER_BLOCK}:${contractsHash}`)
    .digest("hex")
    .slice(0, 16);
  return { stateFile: path.join(CACHE_DIR, `chain-${key}.json.gz`), windowFile: path.join(CACHE_DIR, `chain-${key}.window.json`) };
}

async function benchChain(workDir: string): Promise<BenchChain> {
  // Building the full chain takes minutes: a quick run without it cached measures a smaller one.
  if (QUICK && !existsSync(cacheFiles(FULL).stateFile)) {
    BLOCKS = SMALL.blocks;
    TRANSFERS = SMALL.transfers;
  }
  const { stateFile, windowFile } = cacheFiles({ blocks: BLOCKS, transfers: TRANSFERS });
  if (existsSync(stateFile) && existsSync(windowFile)) {
    const t = Date.now();
    try {
      const chain = await loadCachedChain(stateFile, JSON.parse(readFileSync(windowFile, "utf8")) as BenchChain["window"], workDir);
      console.log(`Loaded the bench chain from ${stateFile} in ${((Date.now() - t) / 1000).toFixed(1)} s.`);
      return chain;
    } catch (error) {
      console.log(`The cached bench chain did not load (${error instanceof Error ? error.message : error}); building it again.`);
    }
  }
  console.log(`Building the bench chain once (${BLOCKS} blocks, ${TRANSFERS} USDC transfers); later runs reuse ${CACHE_DIR}/.`);
  const t = Date.now();
  const devnet = await startDevnet({ dataDir: workDir, port: 0, persist: false });
  try {
    const window = await buildChain(devnet.rpcUrl);
    // anvil_dumpState answers the gzipped state as hex: kept gzipped, loaded with --load-state next time.
    const [dump] = (await rpcOf(devnet.rpcUrl)([{ method: "anvil_dumpState", params: [] }])) as string[];
    mkdirSync(CACHE_DIR, { recursive: true });
    writeFileSync(`${stateFile}.tmp`, Buffer.from((dump as string).slice(2), "hex"));
    renameSync(`${stateFile}.tmp`, stateFile);
    writeFileSync(windowFile, `${JSON.stringify(window)}\n`);
    console.log(`Built in ${((Date.now() - t) / 1000).toFixed(0)} s.`);
    return { rpcUrl: devnet.rpcUrl, window, stop: devnet.stop };
  } catch (error) {
    await devnet.stop();
    throw error;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

type Scan = { ms: number; logs: number; requests: number; limit: number };

/**
 * Median times of a concurrent and a one-at-a-time scan of `window`, run in pairs (after a
 * warm-up) so load drift hits both, and the median and range of the pairs' speed-ups: the
 * machine's speed drifts by tens of percent within seconds, so a ratio is only as good as the
 * two runs sharing one stretch of it. One scanner, as the service keeps one per RPC: its limit
 * on requests in flight starts at 8 and adapts to the provider across scans.
 */
async function timeScans(
  client: PublicClient,
  window: { fromBlock: number; toBlock: number },
  progress: Progress,
): Promise<{ concurrent: Scan; serial: Scan; speedUps: number[] }> {
  // As the service builds it: eth_getLogs through the client's transport (src/chain/client.ts).
  const scanner = new TransferScanner(client);
  const once = async (concurrency?: number) => {
    const t = performance.now();
    const result = await scanner.transfers({ token: base.usdc.address, ...window }, -1, {
      useCache: false,
      ...(concurrency ? { concurrency } : {}),
    });
    progress.tick();
    return { ms: performance.now() - t, logs: result.logs.length, requests: result.stats.requests, limit: result.stats.concurrency };
  };
  // Warm-up: the service's scanner is long-lived, so its code is compiled and its address book
  // filled by earlier calls; the first scans of a fresh process are not what a caller waits for.
  for (let i = 0; i < WARM_UPS; i++) await once(i % 2 === 0 ? undefined : 1);
  const concurrent: Scan[] = [];
  const serial: Scan[] = [];
  for (let i = 0; i < REPEATS; i++) {
    concurrent.push(await once());
    serial.push(await once(1));
  }
  const pick = (runs: Scan[]) => ({ ...(runs[runs.length - 1] as Scan), ms: median(runs.map((r) => r.ms)) });
  const speedUps = concurrent.map((c, i) => (serial[i] as Scan).ms / c.ms);
  return { concurrent: pick(concurrent), serial: pick(serial), speedUps };
}

/** Run the analytics benchmarks and print their tables. */
export async function benchAnalytics(): Promise<void> {
  const workDir = mkdtempSync(path.join(tmpdir(), "bench-analytics-"));
  const cleanups: (() => Promise<void>)[] = [async () => rmSync(workDir, { recursive: true, force: true })];
  try {
    const chain = await benchChain(workDir);
    cleanups.unshift(() => chain.stop());
    const stubs = await startUpstreamStubs();
    cleanups.unshift(() => stubs.close());
    const { window } = chain;
    const payTo = devnetAccounts()[1]?.address as `0x${string}`;

    const direct = createChainClient(base.chainAt([chain.rpcUrl]), rpcTransport([chain.rpcUrl]));
    const proxy = await startLatencyProxy(chain.rpcUrl, LATENCY_MS);
    cleanups.unshift(() => proxy.close());
    const distant = createChainClient(base.chainAt([proxy.url]), rpcTransport([proxy.url]));

    const rows: string[][] = [];
    const speed: { label: string; concurrentMs: number; serialMs: number; speedUps: number[] }[] = [];
    const scans = createProgress({ label: "whale-watch scans", unit: "scans", total: 2 * (WARM_UPS + 2 * REPEATS) });
    for (const [label, client, _url] of [
      ["anvil, direct", direct, chain.rpcUrl],
      [`anvil + ${LATENCY_MS} ms per request`, distant, proxy.url],
    ] as const) {
      const { concurrent, serial: sequential, speedUps } = await timeScans(client, window, scans);
      if (concurrent.logs !== TRANSFERS || sequential.logs !== TRANSFERS) {
        throw new Error(`scan found ${concurrent.logs}/${sequential.logs} transfers, expected ${TRANSFERS}`);
      }
      speed.push({ label, concurrentMs: concurrent.ms, serialMs: sequential.ms, speedUps });
      rows.push([
        label,
        `${concurrent.requests}`,
        `${concurrent.ms.toFixed(0)} ms`,
        `${concurrent.limit}`,
        `${sequential.ms.toFixed(0)} ms`,
        `${median(speedUps).toFixed(2)}x`,
        speedUps.length > 1 ? `${Math.min(...speedUps).toFixed(2)}-${Math.max(...speedUps).toFixed(2)}x` : "-",
      ]);
    }
    scans.finish();

    // The functions as the service runs them, with the stub market APIs (no payment: that is not analytics cost).
    const settings: AnalyticsSettings = {
      mode: "local",
      upstreams: {
        dexscreenerUrl: stubs.urls.dexscreener,
        defillamaUrl: stubs.urls.defillama,
        defillamaCoinsUrl: stubs.urls.defillamaCoins,
        hyperliquidUrl: stubs.urls.hyperliquid,
        timeoutMs: 8_000,
      },
    };
    const ctx = (route: FunctionContext["route"]): FunctionContext => ({
      config: {
        mode: "local",
        network: base.id,
        chainId: base.chainId,
        usdc: base.usdc.address,
        payTo,
        publicUrl: undefined,
        version: "bench",
        validateResponses: false,
      },
      chain: direct,
      log: createLogger("silent"),
      // The analytics functions never touch the store.
      store: undefined as never,
      analytics: settings,
      requestId: "bench",
      payment: null,
      route,
      now: () => new Date(),
    });
    const head = Number(await direct.getBlockNumber({ cacheTime: 0 }));
    const blocks = head - window.fromBlock + 1;
    const expectedWhales = Array.from({ length: TRANSFERS }, (_, i) => amountOf(i)).filter(
      (v) => v * 10_001n >= 100_000n * 10n ** 10n,
    ).length;
    let t = performance.now();
    const whales = await whaleWatchFn.run({ blocks }, ctx(whaleWatch));
    const whaleColdMs = performance.now() - t;
    t = performance.now();
    await whaleWatchFn.run({ blocks }, ctx(whaleWatch));
    const whaleWarmMs = performance.now() - t;
    if (whales.events_found !== expectedWhales || whales.transfers_scanned !== TRANSFERS) {
      throw new Error(
        `whale-watch found ${whales.events_found} whales in ${whales.transfers_scanned} transfers, expected ${expectedWhales} in ${TRANSFERS}`,
      );
    }

    const address = devnetAccounts()[2]?.address as `0x${string}`;
    const profileCtx = ctx(walletProfile);
    const walletProfileFn = walletProfileFunctions.find((f) => f.route === walletProfile) as (typeof walletProfileFunctions)[number];
    await walletProfileFn.run({ address }, profileCtx); // warm the caches
    let calls = 0;
    const until = performance.now() + PROFILE_SECONDS * 1000;
    const workers = Array.from({ length: 8 }, async () => {
      while (performance.now() < until) {
        await walletProfileFn.run({ address }, profileCtx);
        calls++;
      }
    });
    await Promise.all(workers);
    const perSecond = calls / PROFILE_SECONDS;

    const table = (header: string[], body: string[][]) => {
      const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)));
      const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i] as number)).join("  ")}`;
      return [line(header), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
    };
    console.log(
      `\nwhale-watch scan: ${BLOCKS} blocks (${window.fromBlock}-${window.toBlock}), ${TRANSFERS} USDC transfers, ${REPEATS} pairs of runs (medians), no cache`,
    );
    console.log(
      table(
        [
          "RPC",
          "HTTP requests",
          "concurrent (adaptive limit)",
          "limit after",
          "one at a time (reference)",
          "speed-up (median of pairs)",
          "pairs' range",
        ],
        rows,
      ),
    );
    console.log(`  targets: speed-up >= 3x with +${LATENCY_MS} ms per request, > 1x direct`);
    for (const [s, floor] of [
      [speed[1], 3],
      [speed[0], 1],
    ] as const) {
      if (!s) continue;
      const range = s.speedUps.length > 1 ? `, pairs ${Math.min(...s.speedUps).toFixed(2)}-${Math.max(...s.speedUps).toFixed(2)}x` : "";
      reportTarget({
        target: `whale-watch scan of ${BLOCKS} blocks, ${s.label}: ${floor === 1 ? "faster than" : `>= ${floor}x`} the serial scan`,
        figure: `${median(s.speedUps).toFixed(2)}x (${s.concurrentMs.toFixed(0)} ms${range})`,
        reference: `one request at a time ${s.serialMs.toFixed(0)} ms`,
        ok: floor === 1 ? median(s.speedUps) > 1 : median(s.speedUps) >= floor,
      });
    }
    console.log(
      `\nwhale-watch function, ${blocks} blocks up to the head: ${whales.events_found} whales of ${whales.transfers_scanned} transfers`,
    );
    console.log(
      table(
        ["run", "time"],
        [
          ["cold caches", `${whaleColdMs.toFixed(0)} ms`],
          ["warm (final chunks cached)", `${whaleWarmMs.toFixed(0)} ms`],
        ],
      ),
    );
    console.log(
      `\nwallet-profile with warm caches (function level, 8 concurrent callers, ${PROFILE_SECONDS} s): ${perSecond.toFixed(0)} calls/s`,
    );
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchAnalytics().then(
    () => process.exit(0),
    (error) => {
      console.error("bench-analytics failed:", error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
