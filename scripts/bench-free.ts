/**
 * Free routes against bare node:http, with the logger writing its normal output (one JSON
 * line per request, to a file as it would to a pipe or terminal). For each path the bare server
 * answers the same bytes with the same content type; autocannon loads both from its own
 * process, interleaved, so both see the same machine. The previous synchronous logger (one
 * `writeSync` per line) is measured in the same run as a second reference for the logger choice.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureBuild } from "../src/build-stamp.ts";
import { loadConfig } from "../src/config.ts";
import { startDevnet } from "../src/local/devnet/devnet.ts";
import { createLogger, flushLogs, type Logger } from "../src/log.ts";
import { startService } from "../src/server/service.ts";
import { reportTarget } from "./bench-report.ts";

const QUICK = process.env.BENCH_QUICK === "1";
// Three interleaved rounds of 3 s (bare, service, old logger, then again): this VM's speed drifts
// by tens of percent within a minute, and interleaving puts each ratio's two sides in the same
// stretch. --quick: one round of 1 s, 1 s warm-ups, and without the old logger's reference.
const DURATION_S = Number(process.env.BENCH_SECONDS ?? (QUICK ? 1 : 3));
const WARM_UP_S = QUICK ? 1 : DURATION_S;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));

async function autocannon(url: string, seconds = DURATION_S): Promise<number> {
  const cli = path.resolve("node_modules/autocannon/autocannon.js");
  const child = spawn(process.execPath, [cli, "-j", "-c", String(CONNECTIONS), "-d", String(seconds), url]);
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0) throw new Error("autocannon failed");
  const out = JSON.parse(stdout) as { requests: { average: number }; errors: number; non2xx: number };
  if (out.errors + out.non2xx > 0) throw new Error(`${url}: ${out.errors} errors, ${out.non2xx} non-2xx`);
  return out.requests.average;
}

/** The logger this service had before: JSON.stringify and a synchronous write per line. */
function syncLogger(fd: number, base: Record<string, unknown> = {}): Logger {
  const emit = (level: string, msg: string, fields?: Record<string, unknown>) =>
    writeSync(fd, `${JSON.stringify({ t: new Date().toISOString(), level, msg, ...base, ...fields })}\n`);
  return {
    debug: () => {},
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => syncLogger(fd, { ...base, ...fields }),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Run the free-route benchmark and print its table. */
export async function benchFree(): Promise<void> {
  await ensureBuild();
  const dir = mkdtempSync(path.join(tmpdir(), "x402-bench-free-"));
  const devnet = await startDevnet({ dataDir: dir, port: 0, persist: false });
  const logFd = openSync(path.join(dir, "service.log"), "a");
  const oldFd = openSync(path.join(dir, "service-sync.log"), "a");
  // The free budget stays on (its bucket is taken on every request, as in production), at its
  // maximum, so that one benchmarking client is not refused.
  const config = loadConfig({
    PORT: "0",
    LOG_LEVEL: "info",
    DATA_DIR: dir,
    CRAWL_INTERVAL_MINUTES: "0",
    RATE_LIMIT_PER_MINUTE: "1000000",
  });
  const endpoints = { rpcUrl: devnet.rpcUrl, payTo: devnet.payTo, facilitator: devnet.facilitator };
  const service = await startService({ config, devnet: endpoints, log: createLogger("info", {}, { fd: logFd }), maintenance: false });
  const before = QUICK
    ? undefined
    : await startService({
        config,
        devnet: endpoints,
        store: service.services.store,
        log: syncLogger(oldFd),
        maintenance: false,
      });
  const rows: Record<string, Record<string, number | string>> = {};
  try {
    for (const url of ["/api/pricing", "/api/kb", "/"]) {
      const sample = await fetch(`${service.url}${url}`);
      const bytes = Buffer.from(await sample.arrayBuffer());
      const type = sample.headers.get("content-type") ?? "application/octet-stream";
      const bare = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { "content-type": type, "content-length": bytes.length });
        res.end(bytes);
      });
      await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
      const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}${url}`;
      await autocannon(`${service.url}${url}`, WARM_UP_S); // warm-up (JIT)
      if (before) await autocannon(`${before.url}${url}`, WARM_UP_S);
      const bareRps: number[] = [];
      const ours: number[] = [];
      const old: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        bareRps.push(await autocannon(bareUrl));
        ours.push(await autocannon(`${service.url}${url}`));
        if (before) old.push(await autocannon(`${before.url}${url}`));
      }
      bare.close();
      // Each round's ratio is of two runs next to each other; the median of the rounds' ratios is reported.
      const ratios = ours.map((r, i) => (100 * r) / (bareRps[i] as number));
      const oldRatios = old.map((r, i) => (100 * r) / (bareRps[i] as number));
      const floor = url === "/" ? 40 : 60;
      reportTarget({
        target: `free GET ${url} >= ${floor}% of bare node:http`,
        figure: `${Math.round(median(ours))} req/s = ${median(ratios).toFixed(1)}% (rounds ${ratios.map((r) => r.toFixed(0)).join(", ")})`,
        reference: `bare node:http ${Math.round(median(bareRps))} req/s`,
        ok: median(ratios) >= floor,
      });
      rows[`GET ${url} (${bytes.length} bytes)`] = {
        "bare req/s": Math.round(median(bareRps)),
        "service req/s": Math.round(median(ours)),
        "service / bare %": +median(ratios).toFixed(1),
        "per round %": ratios.map((r) => r.toFixed(0)).join(" "),
        "with the old sync logger %": before ? +median(oldRatios).toFixed(1) : "-",
        target: url === "/" ? ">= 40%" : ">= 60%",
      };
    }
  } finally {
    await before?.close();
    await service.close();
    flushLogs();
    closeSync(logFd);
    closeSync(oldFd);
    await devnet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\nFree routes vs bare node:http, ${CONNECTIONS} connections, ${DURATION_S} s each, median of ${ROUNDS} interleaved round(s)' ratios, logger writing one line per request to a file`,
  );
  console.table(rows);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchFree().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
