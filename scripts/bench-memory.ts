/**
 * Memory of the service on each store engine side by side (the embedded SQLite default, and
 * PostgreSQL when TEST_DATABASE_URL names a server), each start in a process of its own so
 * that one measurement cannot inherit another's heap:
 * - peak RSS while starting (the kernel's high-water mark, VmHWM), on a fresh data directory
 *   (first start after a clone) and on an existing one (every later start);
 * - RSS after 1,000 mixed requests (pages, static files, free JSON, KB search, 402 challenges,
 *   and a few paid calls that write the ledger);
 * next to a bare node:http process answering the same 1,000 requests, started the same way.
 * The service children run with the V8 flags of `npm start`; one more later start on SQLite
 * runs without them (or with `BENCH_NODE_FLAGS`), to show what they save and cost.
 * (PGlite, the embedded database before SQLite, was measured by this bench too: docs/decisions.md.)
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { reportTarget } from "./bench-report.ts";

const MIXED_REQUESTS = 1000;

/** Resident and peak resident memory of this process, MB (from /proc: the kernel's own figures). */
export function memoryMb(): { rss: number; peak: number; heap: number; external: number } {
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  // V8's share: the JavaScript heap in use, and memory outside it (buffers, WebAssembly memory).
  const usage = process.memoryUsage();
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  return {
    rss: Math.round(kb("VmRSS") / 1024),
    peak: Math.round(kb("VmHWM") / 1024),
    heap: mb(usage.heapUsed),
    external: mb(usage.external),
  };
}

/** The mixed request list: [method, path, body?], in the order sent. */
export function mixedRequests(n: number): [string, string, string?][] {
  const kinds: [string, string, string?][] = [
    ["GET", "/api/pricing"],
    ["GET", "/api/kb"],
    ["GET", "/"],
    ["GET", "/kb/"],
    ["GET", "/favicon.svg"],
    ["GET", "/openapi.json"],
    ["GET", "/.well-known/x402"],
    ["GET", "/api/health"],
    ["GET", "/api/kb/search?q=verify+usdc+payment"],
    ["GET", "/api/kb/search?q=eth_getLogs+range"],
    ["POST", "/api/kb/ask", JSON.stringify({ question: "who pays the gas" })],
    ["POST", "/api/payment-verify", JSON.stringify({ tx_hash: `0x${"ab".repeat(32)}` })],
    ["GET", "/leaderboard"],
    ["GET", "/no-such-page"],
  ];
  return Array.from({ length: n }, (_, i) => kinds[i % kinds.length] as [string, string, string?]);
}

/** Send the mixed requests to `baseUrl`, four at a time as a few agents would; `pay` answers every 50th (20 paid calls). */
async function runMixed(baseUrl: string, pay?: () => Promise<number>): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  const list = mixedRequests(MIXED_REQUESTS);
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const i = next++;
      const [method, url, body] = list[i] as [string, string, string?];
      const paid = pay && i % 50 === 49;
      const status = paid
        ? await pay()
        : await fetch(`${baseUrl}${url}`, {
            method,
            ...(body ? { body, headers: { "content-type": "application/json" } } : {}),
            redirect: "manual",
          }).then(async (r) => {
            await r.arrayBuffer();
            return r.status;
          });
      const key = paid ? `${status} paid POST /api/payment-verify` : `${status} ${method} ${url.split("?")[0]}`;
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return statuses;
}

/** What a child reports when it is ready, and again when asked after the load. */
interface Ready {
  url: string;
  startMs: number;
  rss: number;
  peak: number;
  heap: number;
  external: number;
}

/** Child: start the service with the embedded store in its data directory, then report memory when asked. */
async function serviceChild(): Promise<void> {
  const started = performance.now();
  if (process.env.BENCH_V8_FLAGS) (await import("node:v8")).setFlagsFromString(process.env.BENCH_V8_FLAGS);
  const [{ loadConfig }, { startService }, { createLogger }, { openSync }, { openStore }] = await Promise.all([
    import("../src/config.ts"),
    import("../src/server/service.ts"),
    import("../src/log.ts"),
    import("node:fs"),
    import("../src/store/store.ts"),
  ]);
  const env = JSON.parse(process.env.BENCH_CHILD as string) as {
    engine: "sqlite" | "postgres";
    dataDir: string;
    devnet: { rpcUrl: string; payTo: `0x${string}`; facilitator: { address: `0x${string}`; privateKey: `0x${string}` } };
  };
  mkdirSync(env.dataDir, { recursive: true });
  // The service logs as in production, to a file, so the logger's buffers count too.
  const logFd = openSync(path.join(env.dataDir, "service.log"), "a");
  // Opened here (as the service would), on the engine measured.
  const store = await openStore(
    env.engine === "postgres"
      ? { kind: "postgres", url: process.env.TEST_DATABASE_URL as string }
      : { kind: "sqlite", file: path.join(env.dataDir, "store.sqlite") },
  );
  const service = await startService({
    store,
    // No free-request budget: one load generator is one client, and every request must do its work.
    config: loadConfig({ PORT: "0", DATA_DIR: env.dataDir, LOG_LEVEL: "info", CRAWL_INTERVAL_MINUTES: "0", RATE_LIMIT_PER_MINUTE: "0" }),
    devnet: env.devnet,
    log: createLogger("info", {}, { fd: logFd }),
    maintenance: false,
  });
  const startMs = performance.now() - started;
  process.send?.({ url: service.url, startMs, ...memoryMb() } satisfies Ready);
  process.once("message", async () => {
    process.send?.({ url: service.url, startMs, ...memoryMb() } satisfies Ready);
    await service.close();
    await store.close();
    process.exit(0);
  });
}

/** Child: a bare node:http server answering every request with the same small JSON, for reference. */
async function bareChild(): Promise<void> {
  const body = Buffer.from('{"ok":true}');
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  process.send?.({ url, startMs: 0, ...memoryMb() } satisfies Ready);
  process.once("message", () => {
    process.send?.({ url, startMs: 0, ...memoryMb() } satisfies Ready);
    server.close();
    process.exit(0);
  });
}

/** The V8 flags `npm start` gives the service (package.json's start script), so the bench measures what runs. */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).filter((arg) => arg.startsWith("--"));
}

/**
 * Start a child, load it with the mix from this process, and collect its memory at start and
 * after, and how long the 1,000 requests took. A service child runs with the start script's V8
 * flags unless `env.BENCH_NODE_FLAGS` says otherwise ("" for none).
 */
async function measureChild(mode: "service" | "bare", env: Record<string, string>, pay?: (url: string) => Promise<number>) {
  const flags = mode === "service" ? (env.BENCH_NODE_FLAGS ?? startFlags().join(" ")).split(" ").filter(Boolean) : [];
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), [], {
    execArgv: [...process.execArgv, ...flags],
    env: { ...process.env, BENCH_MEMORY_CHILD: mode, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const replies: Ready[] = [];
  const waiters: ((r: Ready) => void)[] = [];
  proc.on("message", (m) => {
    const waiter = waiters.shift();
    if (waiter) waiter(m as Ready);
    else replies.push(m as Ready);
  });
  const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
  const nextReply = () =>
    Promise.race([
      new Promise<Ready>((resolve) => {
        const ready = replies.shift();
        if (ready) resolve(ready);
        else waiters.push(resolve);
      }),
      exited.then((code) => {
        throw new Error(`memory bench child (${mode}) exited ${code}`);
      }),
    ]);
  const start = await nextReply();
  const loadStarted = performance.now();
  const statuses = await runMixed(start.url, pay ? () => pay(start.url) : undefined);
  const loadMs = performance.now() - loadStarted;
  proc.send("measure");
  const after = await nextReply();
  await exited;
  return { start, after, statuses, loadMs };
}

/** Run the memory benchmark and print its table. */
export async function benchMemory(): Promise<void> {
  const { ensureBuild } = await import("../src/build-stamp.ts");
  const { startDevnet } = await import("../src/local/devnet/devnet.ts");
  const { signPayment } = await import("./buyer/sign-payment.ts");
  const { privateKeyToAccount } = await import("viem/accounts");
  const { decodePaymentRequiredHeader } = await import("@x402/core/http");
  await ensureBuild();
  const chainDir = mkdtempSync(path.join(tmpdir(), "x402-bench-mem-chain-"));
  const devnet = await startDevnet({ dataDir: chainDir, port: 0, persist: false });
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-bench-mem-"));
  const payer = (buyer: number) => {
    const account = privateKeyToAccount(devnet.buyers[buyer]?.privateKey as `0x${string}`);
    return async (url: string) => {
      const challengeRes = await fetch(`${url}/api/payment-verify`, { method: "POST" });
      const challenge = decodePaymentRequiredHeader(challengeRes.headers.get("payment-required") as string);
      const res = await fetch(`${url}/api/payment-verify`, {
        method: "POST",
        headers: { "content-type": "application/json", "payment-signature": await signPayment(challenge, account) },
        body: JSON.stringify({ tx_hash: `0x${"ab".repeat(32)}` }),
      });
      await res.arrayBuffer();
      return res.status;
    };
  };
  const engines = ["sqlite"];
  try {
    const childEnv = (engine: string) => ({
      BENCH_CHILD: JSON.stringify({
        engine,
        dataDir: path.join(dataDir, engine),
        devnet: { rpcUrl: devnet.rpcUrl, payTo: devnet.payTo, facilitator: devnet.facilitator },
      }),
    });
    const bare = await measureChild("bare", {});
    const measured: Record<string, { fresh: Awaited<ReturnType<typeof measureChild>>; warm: Awaited<ReturnType<typeof measureChild>> }> =
      {};
    let buyer = 0;
    for (const engine of engines) {
      const fresh = await measureChild("service", childEnv(engine), payer(buyer++));
      const warm = await measureChild("service", childEnv(engine), payer(buyer++));
      measured[engine] = { fresh, warm };
      // Printed as measured too, so a later failure keeps what was found.
      console.log(
        `${engine}: first start ${JSON.stringify(fresh.start)} → after ${JSON.stringify(fresh.after)}; later start ${JSON.stringify(warm.start)} → after ${JSON.stringify(warm.after)}`,
      );
    }
    // The default without the start script's V8 flags: what they save, and what they cost in time.
    // --quick leaves out this reference and the PostgreSQL one.
    const quick = process.env.BENCH_QUICK === "1";
    const plainFlags = process.env.BENCH_NODE_FLAGS ?? "";
    const unflagged =
      !quick && engines.includes("sqlite") && startFlags().length > 0
        ? await measureChild("service", { ...childEnv("sqlite"), BENCH_NODE_FLAGS: plainFlags }, payer(buyer++))
        : undefined;
    // The same service on a PostgreSQL server: what the process needs without an embedded database.
    const server =
      !quick && process.env.TEST_DATABASE_URL ? await measureChild("service", childEnv("postgres"), payer(buyer++)) : undefined;
    const row = (r: Awaited<ReturnType<typeof measureChild>>) => ({
      "start s": +(r.start.startMs / 1000).toFixed(2),
      "1,000 requests s": +(r.loadMs / 1000).toFixed(2),
      "peak at start MB": r.start.peak,
      "RSS at start MB": r.start.rss,
      "RSS after 1,000 MB": r.after.rss,
      "peak overall MB": r.after.peak,
      "JS heap used after MB": r.after.heap,
      "external after MB": r.after.external,
    });
    console.log(`\nMemory (RSS from /proc of the serving process alone, load sent from another)`);
    const names: Record<string, string> = { sqlite: "SQLite (default)" };
    console.table({
      "bare node:http, same 1,000 requests": row(bare),
      ...Object.fromEntries(
        Object.entries(measured).flatMap(([engine, m]) => [
          [`${names[engine] ?? engine}, first start (fresh data dir)`, row(m.fresh)],
          [`${names[engine] ?? engine}, later start (existing data dir)`, row(m.warm)],
        ]),
      ),
      ...(unflagged ? { [`SQLite, later start, V8 flags "${plainFlags}" instead of "${startFlags().join(" ")}"`]: row(unflagged) } : {}),
      ...(server ? { "PostgreSQL server (DATABASE_URL), reference": row(server) } : {}),
    });
    for (const [engine, m] of Object.entries(measured)) {
      const summary: Record<string, number> = {};
      for (const [key, n] of Object.entries(m.warm.statuses)) summary[key] = n;
      console.log(`answers of the ${engine} later start's 1,000 requests:`, JSON.stringify(summary));
      const worstAfter = Math.max(m.fresh.after.rss, m.warm.after.rss);
      const worstPeak = Math.max(m.fresh.start.peak, m.warm.start.peak);
      reportTarget({
        target: `RSS after 1,000 mixed requests < 250 MB (${names[engine] ?? engine})`,
        figure: `${worstAfter} MB`,
        reference: `bare node:http ${bare.after.rss} MB${server ? `, PostgreSQL server ${server.after.rss} MB` : ""}`,
        ok: worstAfter < 250,
      });
      reportTarget({
        target: `peak RSS at start < 400 MB (${names[engine] ?? engine})`,
        figure: `${worstPeak} MB`,
        reference: `bare node:http ${bare.start.peak} MB`,
        ok: worstPeak < 400,
      });
      console.log(
        `${names[engine] ?? engine}: RSS after 1,000 mixed requests ${worstAfter} MB (target < 250; bare node:http ${bare.after.rss} MB${server ? `, PostgreSQL server ${server.after.rss} MB` : ""}); peak at start ${worstPeak} MB (target < 400); later start ${(m.warm.start.startMs / 1000).toFixed(2)} s`,
      );
    }
  } finally {
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(chainDir, { recursive: true, force: true });
  }
}

const mode = process.env.BENCH_MEMORY_CHILD;
if (mode === "service") {
  serviceChild().catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else if (mode === "bare") {
  void bareChild();
} else if (import.meta.url === `file://${process.argv[1]}`) {
  benchMemory().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
