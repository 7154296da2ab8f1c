/**
 * Spawns and supervises a local anvil node configured to look like Base. Kept by hand rather than
 * prool's anvil instance: that one needs anvil's per-request log on stdout (no --silent) to see it
 * ready and buffers it for the life of the node, and has no kill after a grace period.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isMainThread } from "node:worker_threads";
import { createPublicClient, http } from "viem";
import { TEST_MNEMONIC } from "../../chain/addresses.ts";
import { base } from "../../networks/base.ts";
import { processAlive } from "../../process-alive.ts";
import { listen } from "../stubs/loopback.ts";

/** Options for {@link startAnvil}. */
export type AnvilOptions = {
  /** 0 picks a free port. */
  port?: number | undefined;
  /** Loaded at start if it exists, dumped periodically and on exit. */
  stateFile?: string | undefined;
};

/** A running anvil node. */
export type AnvilInstance = {
  rpcUrl: string;
  /** Terminates anvil gracefully (it dumps its state file on SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
};

// Base-shaped block environment: Base's base fee sits around 0.001-0.01 gwei (1e6-1e7 wei) and
// its block gas limit is in the 150M range. Anvil still suggests a 1 gwei priority fee; we keep
// that rather than pass --disable-min-priority-fee, which makes eth_gasPrice drop the tip while
// eth_maxPriorityFeePerGas keeps it, and viem then builds transactions with tip > fee cap.
const BASE_FEE_WEI = 1_000_000n;
const BLOCK_GAS_LIMIT = 150_000_000n;
// Seconds between state dumps: bounds what a crash (SIGKILL, power loss) can lose.
const STATE_INTERVAL_S = 5;
const STOP_GRACE_MS = 10_000;
// How long to wait for the RPC to answer eth_chainId before giving up.
const START_TIMEOUT_MS = 20_000;
const HOST = "127.0.0.1";
const STDERR_KEEP_CHARS = 8_000;

const require = createRequire(import.meta.url);
const liveChildren = new Set<ChildProcess>();

// Past a few hundred blocks anvil writes older blocks' states to a cache folder (about 150 kB a
// block) and never removes it: by default a new folder in ~/.foundry/anvil/tmp at every start,
// which filled this project's disks. Each node gets its own folder, named for our process,
// removed once the node exits; a folder whose process is gone (killed before its node stopped)
// is removed at the next start.
const CACHE_PREFIX = "x402-anvil-cache-";

function stateCacheDir(): string {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(name.startsWith(CACHE_PREFIX) ? name.slice(CACHE_PREFIX.length).split("-")[0] : Number.NaN);
    if (Number.isInteger(pid) && !processAlive(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
  return mkdtempSync(join(tmpdir(), `${CACHE_PREFIX}${process.pid}-`));
}

/** Starts anvil and resolves once its RPC answers eth_chainId. */
export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilInstance> {
  const pickPort = (options.port ?? 0) === 0;
  // A freshly picked port can be taken between our probe and anvil's bind; retry only then.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce({ ...options, port: pickPort ? await findFreePort() : options.port });
    } catch (error) {
      if (!pickPort || attempt >= 3 || !(error instanceof PortInUseError)) throw error;
    }
  }
}

class PortInUseError extends Error {}

async function startOnce(options: AnvilOptions): Promise<AnvilInstance> {
  const port = options.port ?? 0;
  const chainId = base.chainId;

  // Otherwise a leftover anvil on the same port would answer our readiness probe while ours fails to bind.
  if ((await probePort(port)) === undefined) {
    throw new PortInUseError(`anvil: ${HOST}:${port} is already in use (a previous devnet still running?)`);
  }

  const args = [
    ...["--host", HOST, "--port", String(port), "--chain-id", String(chainId)],
    ...["--mnemonic", TEST_MNEMONIC, "--accounts", "10", "--balance", "10000"],
    ...["--base-fee", String(BASE_FEE_WEI), "--gas-limit", String(BLOCK_GAS_LIMIT)],
    // OP-stack EVM (Base is an OP chain): deposit transactions and OP's EIP-1559 parameters, so the
    // base fee decays ~0.4% per idle block (Ethereum rules: 12.5%, reaching 7 wei after 100 blocks).
    ...["--network", "optimism"],
    "--silent",
  ];
  const cacheDir = stateCacheDir();
  args.push("--cache-path", cacheDir);
  if (options.stateFile) args.push("--state", options.stateFile, "--state-interval", String(STATE_INTERVAL_S));

  const { command, prefixArgs } = resolveAnvilCommand();
  const child = spawn(command, [...prefixArgs, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-STDERR_KEEP_CHARS);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let spawnError: Error | undefined;
  child.once("error", (error) => {
    spawnError = error;
    liveChildren.delete(child);
  });

  liveChildren.add(child);
  installExitHooks();
  child.once("exit", () => liveChildren.delete(child));
  child.once("close", () => rmSync(cacheDir, { recursive: true, force: true }));

  const rpcUrl = `http://${HOST}:${port}`;
  const stop = () => terminate(child, exited);
  const probe = createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 1_000 }) });

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (true) {
    if (spawnError) throw new Error(`anvil: could not spawn ${command}: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      const reason = `anvil exited early (code ${child.exitCode ?? child.signalCode}):\n${output.trim()}`;
      throw /address already in use|Address in use/i.test(output) ? new PortInUseError(reason) : new Error(reason);
    }
    const answered = await probe.getChainId().catch(() => undefined);
    if (answered !== undefined) {
      if (answered !== chainId) {
        await stop();
        throw new Error(`anvil at ${rpcUrl} reports chain id ${answered}, expected ${chainId}`);
      }
      return { rpcUrl, stop };
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`anvil did not answer eth_chainId on ${rpcUrl} within ${START_TIMEOUT_MS} ms:\n${output.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function resolveAnvilCommand(): { command: string; prefixArgs: string[] } {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const binaryName = process.platform === "win32" ? "anvil.exe" : "anvil";
  try {
    const manifest = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`);
    const binary = join(dirname(manifest), "bin", binaryName);
    if (existsSync(binary)) return { command: binary, prefixArgs: [] };
  } catch {
    // Platform package missing (e.g. optional deps skipped): the wrapper knows other locations.
  }
  return { command: process.execPath, prefixArgs: [require.resolve("@foundry-rs/anvil/bin.mjs")] };
}

async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** Listen on `port` (0: a free one) and close again: the port, or undefined when it is taken. */
async function probePort(port: number): Promise<number | undefined> {
  const server = createServer();
  const bound = await listen(server, HOST, port).catch(() => undefined);
  await new Promise((resolve) => server.close(resolve));
  return bound;
}

async function findFreePort(): Promise<number> {
  const port = await probePort(0);
  if (port === undefined) throw new Error("no free port");
  return port;
}

let exitHooksInstalled = false;

// Anvil must not outlive us. On normal exit: SIGTERM it synchronously (it then dumps its state on
// its own). On SIGINT/SIGTERM/SIGHUP with no other listener: stop it gracefully, then re-raise so
// the default exit still happens. If the application listens too, it owns shutdown order (e.g.
// drain HTTP before stopping the chain), so we stay out of the way and rely on the exit hook.
function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on("exit", () => {
    for (const child of liveChildren) child.kill("SIGTERM");
  });
  if (!isMainThread) return; // Signals are only delivered to the main thread.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const handler = () => {
      if (process.listenerCount(signal) > 1) return;
      process.off(signal, handler);
      const stopping = [...liveChildren].map((child) =>
        terminate(child, new Promise<void>((resolve) => child.once("exit", () => resolve()))),
      );
      void Promise.allSettled(stopping).then(() => process.kill(process.pid, signal));
    };
    process.on(signal, handler);
  }
}
