/**
 * Entity-intelligence benchmark (`npm run bench -- entity`): each of the six routes' functions,
 * as the service runs them (market APIs stubbed, no payment), on a local chain of 20,000 blocks
 * holding 100,000 USDC transfers among 2,000 users, exchange X's two hot wallets (deposits and
 * withdrawals) and a flagged funder: p50 over five runs with cold caches (a fresh scanner and
 * classifier each run) and five with warm ones, with the logs each answer read; and `trace`
 * with 3 hops. `--quick`: 20,000 transfers among 500 users, two runs each.
 *
 * Building the chain takes minutes (anvil slows as its chain grows), so it is built once and
 * kept in data/bench-entity/ (anvil's state dump); later runs load it in seconds. Delete the
 * folder to rebuild it.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Address, encodeFunctionData, getAddress, keccak256, parseAbi, stringToBytes, toHex } from "viem";
import counterpartiesFn from "../functions/entity-intel-counterparties.ts";
import exchangeFlowFn from "../functions/entity-intel-exchange-flow.ts";
import portfolioFn from "../functions/entity-intel-portfolio.ts";
import traceFn from "../functions/entity-intel-trace.ts";
import venueUsersFn from "../functions/entity-intel-venue-users.ts";
import type { CompiledContent } from "../spec/content-schema.ts";
import { counterparties, exchangeFlow, portfolio, trace, venueUsers } from "../spec/routes/entity-intel.ts";
import { loadLabelBook } from "../src/analytics/labels.ts";
import type { AnalyticsSettings } from "../src/analytics/services.ts";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { UseCaseIndex } from "../src/content/use-cases.ts";
import type { FunctionContext, RouteFunction } from "../src/context.ts";
import { compileContracts } from "../src/local/devnet/contracts.ts";
import { devnetAccounts, startDevnet } from "../src/local/devnet/devnet.ts";
import { startUpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { type BenchChain, loadCachedChain, rpcOf } from "./bench-analytics.ts";
import { reportTarget } from "./bench-report.ts";
import { COMPILED_CONTENT_FILE, compileContent } from "./content/compile.ts";

const QUICK = process.env.BENCH_QUICK === "1";
const BLOCKS = 20_000;
/**
 * `--quick` runs on a chain of its own with a fifth of the transfers among a quarter of the
 * users: the full chain's state takes anvil about 18 s to load; this one is cached beside it.
 */
const TRANSFERS = QUICK ? 20_000 : 100_000;
const PER_BLOCK = 100; // transfers in each busy block; one block in 20 is busy (one in 100 with --quick)
const USERS = QUICK ? 500 : 2_000;
const PLAN_VERSION = 1;
const CACHE_DIR = path.join("data", "bench-entity");
/** Runs per route and cache state; `--quick`: 2 (the p50 is then the slower of the two). */
const RUNS = QUICK ? 2 : 5;

const usdcAbi = parseAbi(["function mint(address to, uint256 amount)", "function transfer(address to, uint256 amount) returns (bool)"]);
const user = (i: number): Address => getAddress(keccak256(stringToBytes(`bench-entity-user-${i % USERS}`)).slice(0, 42));
const pick = (i: number, salt: string) => Number(BigInt(keccak256(toHex(`${salt}-${i}`)).slice(0, 14)) % BigInt(USERS));

/** The amount (atomic USDC) of bench transfer `i`: mostly 1-5,000 USDC, one in 100 between 100,000 and 2,000,000. */
function amountOf(i: number): bigint {
  const r = BigInt(keccak256(toHex(`bench-entity-amount-${i}`)).slice(0, 14));
  return i % 100 === 3 ? 100_000_000_000n + (r % 1_900_000_000_000n) : 1_000_000n + (r % 5_000_000_000n);
}

/** The curated addresses the bench's transfers use: exchange X's hot wallets and the flagged funder of the local label file. */
let venues: { deposit: Address; withdrawal: Address; funder: Address } | undefined;
function benchVenues(): { deposit: Address; withdrawal: Address; funder: Address } {
  if (venues) return venues;
  const labels = loadLabelBook("local");
  const venue = labels.venue("seeded-exchange-x");
  const funder = labels.flaggedAddresses().find((a) => labels.flags(a).includes("scam"));
  if (!venue || venue.addresses.length < 2 || !funder) throw new Error("content/labels.json lacks seeded-exchange-x or a scam flag");
  venues = { deposit: venue.addresses[0] as Address, withdrawal: venue.addresses[1] as Address, funder };
  return venues;
}

/** Sender and recipient of bench transfer `i`. */
function transferOf(i: number): { from: Address; to: Address } {
  const v = benchVenues();
  if (i % 10 === 0) return { from: user(pick(i, "dep")), to: v.deposit };
  if (i % 20 === 5) return { from: v.withdrawal, to: user(pick(i, "wd")) };
  if (i % 200 === 7) return { from: v.funder, to: user(pick(i, "fund")) };
  const from = pick(i, "from");
  return { from: user(from), to: user((from + 1 + pick(i, "to")) % USERS) };
}

async function buildChain(rpcUrl: string): Promise<{ fromBlock: number; toBlock: number }> {
  const rpc = rpcOf(rpcUrl);
  const minter = devnetAccounts()[0]?.address as Address;
  const v = benchVenues();
  const senders = [...Array.from({ length: USERS }, (_, i) => user(i)), v.deposit, v.withdrawal, v.funder];
  // Explicit nonces: anvil may handle a batch's calls concurrently, and two from one sender would collide.
  const nonces = new Map<string, number>();
  const [minterNonce] = (await rpc([{ method: "eth_getTransactionCount", params: [minter, "pending"] }])) as string[];
  nonces.set(minter, Number(minterNonce));
  const tx = (from: string, data: string) => {
    const nonce = nonces.get(from) ?? 0;
    nonces.set(from, nonce + 1);
    return {
      method: "eth_sendTransaction",
      params: [
        {
          from,
          to: base.usdc.address,
          data,
          nonce: toHex(nonce),
          gas: "0x249f0",
          maxFeePerGas: "0x77359400",
          maxPriorityFeePerGas: "0xf4240",
        },
      ],
    };
  };
  await rpc([
    { method: "evm_setAutomine", params: [false] },
    { method: "anvil_autoImpersonateAccount", params: [true] },
  ]);
  await rpc(senders.map((a) => ({ method: "anvil_setBalance", params: [a, toHex(10n ** 20n)] })));
  for (let i = 0; i < senders.length; i += 500) {
    await rpc(
      senders
        .slice(i, i + 500)
        .map((to) =>
          tx(minter, encodeFunctionData({ abi: usdcAbi, functionName: "mint", args: [to, to === v.withdrawal ? 10n ** 17n : 10n ** 14n] })),
        ),
    );
    await rpc([{ method: "evm_mine", params: [] }]);
  }
  const [head] = (await rpc([{ method: "eth_blockNumber", params: [] }])) as string[];
  const fromBlock = Number(head) + 1;
  const started = Date.now();
  const busy = TRANSFERS / PER_BLOCK;
  for (let b = 0; b < busy; b++) {
    await rpc(
      Array.from({ length: PER_BLOCK }, (_, k) => {
        const i = b * PER_BLOCK + k;
        const { from, to } = transferOf(i);
        return tx(from, encodeFunctionData({ abi: usdcAbi, functionName: "transfer", args: [to, amountOf(i)] }));
      }),
    );
    await rpc([{ method: "evm_mine", params: [] }]);
    await rpc([{ method: "anvil_mine", params: [toHex(BLOCKS / busy - 1), "0x0"] }]);
    if ((b + 1) % 100 === 0) {
      process.stdout.write(`  built ${(b + 1) * (BLOCKS / busy)} of ${BLOCKS} blocks (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    }
  }
  await rpc([
    { method: "evm_setAutomine", params: [true] },
    { method: "anvil_autoImpersonateAccount", params: [false] },
  ]);
  const [end] = (await rpc([{ method: "eth_blockNumber", params: [] }])) as string[];
  return { fromBlock, toBlock: Number(end) };
}

async function benchChain(workDir: string): Promise<BenchChain> {
  const key = createHash("sha256")
    .update(
      `${PLAN_VERSION}:${BLOCKS}:${TRANSFERS}:${PER_BLOCK}:${USERS}:${JSON.stringify(benchVenues())}:${compileContracts().sourceHash}`,
    )
    .digest("hex")
    .slice(0, 16);
  const stateFile = path.join(CACHE_DIR, `chain-${key}.json.gz`);
  const windowFile = path.join(CACHE_DIR, `chain-${key}.window.json`);
  if (existsSync(stateFile) && existsSync(windowFile)) {
    const t = Date.now();
    const chain = await loadCachedChain(stateFile, JSON.parse(readFileSync(windowFile, "utf8")) as BenchChain["window"], workDir);
    console.log(`Loaded the entity bench chain from ${stateFile} in ${((Date.now() - t) / 1000).toFixed(1)} s.`);
    return chain;
  }
  console.log(`Building the entity bench chain once (${BLOCKS} blocks, ${TRANSFERS} USDC transfers); later runs reuse ${CACHE_DIR}/.`);
  const t = Date.now();
  const devnet = await startDevnet({ dataDir: workDir, port: 0, persist: false });
  try {
    const window = await buildChain(devnet.rpcUrl);
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

/** A sender whose whale-sized transfers go on for three hops in later blocks (found in the plan, not the chain). */
function threeHopStart(): Address {
  const large: { block: number; from: Address; to: Address }[] = [];
  for (let i = 3; i < TRANSFERS; i += 100) large.push({ block: Math.floor(i / PER_BLOCK), ...transferOf(i) });
  const next = (at: Address, after: number) => large.filter((e) => e.from === at && e.block > after);
  for (const e1 of large) for (const e2 of next(e1.to, e1.block)) if (next(e2.to, e2.block).length > 0) return e1.from;
  throw new Error("the bench plan has no three-hop path of whale-sized transfers");
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Run the entity benchmarks and print their table. */
export async function benchEntity(): Promise<void> {
  const workDir = mkdtempSync(path.join(tmpdir(), "bench-entity-"));
  const cleanups: (() => Promise<void>)[] = [async () => rmSync(workDir, { recursive: true, force: true })];
  try {
    const chain = await benchChain(workDir);
    cleanups.unshift(() => chain.stop());
    const stubs = await startUpstreamStubs();
    cleanups.unshift(() => stubs.close());
    const client = createChainClient(base.chainAt([chain.rpcUrl]), rpcTransport([chain.rpcUrl]));
    const payTo = devnetAccounts()[1]?.address as Address;
    const settings = (): AnalyticsSettings => ({
      mode: "local",
      upstreams: {
        dexscreenerUrl: stubs.urls.dexscreener,
        defillamaUrl: stubs.urls.defillama,
        defillamaCoinsUrl: stubs.urls.defillamaCoins,
        hyperliquidUrl: stubs.urls.hyperliquid,
        timeoutMs: 8_000,
      },
      entityBudget: { maxLogs: 250_000, maxMs: 60_000 },
    });
    const ctx = (route: FunctionContext["route"], analytics: AnalyticsSettings): FunctionContext => ({
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
      chain: client,
      log: createLogger("silent"),
      store: undefined as never, // the entity functions never touch the store
      analytics,
      requestId: "bench",
      payment: null,
      route,
      now: () => new Date(),
    });
    const w = { to_block: chain.window.toBlock, blocks: BLOCKS };
    const busiest = user(0);
    const whaleStart = threeHopStart();
    const cases: [string, RouteFunction, FunctionContext["route"], Record<string, unknown>][] = [
      ["exchange-flow (USDC)", exchangeFlowFn as RouteFunction, exchangeFlow, { token: "USDC", ...w }],
      ["portfolio", portfolioFn as RouteFunction, portfolio, { address: busiest, ...w }],
      ["counterparties", counterpartiesFn as RouteFunction, counterparties, { address: busiest, ...w }],
      ["trace (3 hops, min 100,000 USD)", traceFn as RouteFunction, trace, { from: whaleStart, max_hops: 3, min_usd: 100_000, ...w }],
      ["trace (3 hops, min 4,500 USD)", traceFn as RouteFunction, trace, { from: busiest, max_hops: 3, min_usd: 4_500, ...w }],
      ["venue-users (exchange X)", venueUsersFn as RouteFunction, venueUsers, { venue: "seeded-exchange-x", ...w }],
    ];
    const rows: string[][] = [];
    for (const [name, fn, route, input] of cases) {
      const cold: number[] = [];
      let answer: Record<string, unknown> = {};
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        answer = (await fn.run(input as never, ctx(route, settings()))) as Record<string, unknown>;
        cold.push(performance.now() - t);
      }
      const shared = settings();
      await fn.run(input as never, ctx(route, shared));
      const warm: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        await fn.run(input as never, ctx(route, shared));
        warm.push(performance.now() - t);
      }
      const budget = answer.budget as { logs_read: number } | undefined;
      const detail =
        name.startsWith("trace") && answer.reached
          ? `hops ${(answer.hops as unknown[]).length}, nodes ${(answer.nodes as unknown[]).length}, reached ${JSON.stringify(
              Object.fromEntries(Object.entries(answer.reached as Record<string, number>).filter(([, n]) => n > 0)),
            )}`
          : name.startsWith("venue")
            ? `users ${answer.users_total}`
            : name.startsWith("exchange")
              ? `cex transfers ${(answer.by_class as Record<string, { transfers: number }>).cex?.transfers}`
              : name.startsWith("counterparties")
                ? `counterparties ${answer.total_counterparties}`
                : "";
      rows.push([
        name,
        `${median(cold).toFixed(0)} ms`,
        `${median(warm).toFixed(0)} ms`,
        budget ? String(budget.logs_read) : "-",
        String(answer.truncated ?? "-"),
        detail,
      ]);
    }
    // use-cases reads no chain: its cost is the search over the compiled use cases (the function
    // itself needs the Astro bundle's compiled content, so the index is built here from the file).
    if (!existsSync(COMPILED_CONTENT_FILE)) await compileContent(process.cwd());
    const compiled = JSON.parse(readFileSync(COMPILED_CONTENT_FILE, "utf8")) as CompiledContent;
    const searchTimes: number[] = [];
    const useCases = new UseCaseIndex(compiled.entity_use_cases);
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      useCases.search("exchange treasury team watch inflows to our hot wallets");
      searchTimes.push(performance.now() - t);
    }
    rows.unshift([
      "use-cases (search only)",
      `${median(searchTimes).toFixed(2)} ms`,
      "-",
      "0",
      "-",
      `${compiled.entity_use_cases.length} use cases`,
    ]);
    const header = ["route", `p50 cold (${RUNS} runs)`, `p50 warm (${RUNS} runs)`, "logs read", "truncated", "answer"];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
    const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i] as number)).join("  ")}`;
    console.log(
      `\nentity intelligence: ${BLOCKS} blocks (${chain.window.fromBlock}-${chain.window.toBlock}), ${TRANSFERS} USDC transfers, ${USERS} users, anvil direct`,
    );
    console.log([line(header), line(widths.map((n) => "-".repeat(n))), ...rows.map(line)].join("\n"));
    for (const [route, cold, warm, logs] of rows) {
      reportTarget({ target: `- (${route})`, figure: `p50 cold ${cold}, warm ${warm}`, reference: `logs read ${logs}`, ok: null });
    }
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchEntity().then(
    () => process.exit(0),
    (error) => {
      console.error("bench-entity failed:", error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
