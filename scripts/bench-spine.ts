/**
 * Benchmarks of the service spine:
 * 1. A free GET of a small JSON document through the whole stack (Express, guards, x402,
 *    Astro, dispatcher) against a bare node:http server answering the same bytes, side by
 *    side, loaded by autocannon in a separate process.
 * 2. Paid calls on the local chain, split into verify, function and settle (from the
 *    service's own timings), and the service's own overhead: total minus those three.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureBuild } from "../src/build-stamp.ts";
import { loadConfig } from "../src/config.ts";
import { startDevnet } from "../src/local/devnet/devnet.ts";
import { createLogger } from "../src/log.ts";
import { startService } from "../src/server/service.ts";
import { measurePaidCalls, paidLineSink, percentile } from "./bench-paid.ts";
import { reportTarget } from "./bench-report.ts";

const QUICK = process.env.BENCH_QUICK === "1";
const DURATION_S = Number(process.env.BENCH_SECONDS ?? (QUICK ? 1 : 5));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PAID_CALLS = Number(process.env.BENCH_PAID_CALLS ?? (QUICK ? 20 : 60));

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Load `url` from a separate process (the servers live in this one, so it must not block). */
async function autocannon(url: string): Promise<Load> {
  const cli = path.resolve("node_modules/autocannon/autocannon.js");
  const child = spawn(process.execPath, [cli, "-j", "-c", String(CONNECTIONS), "-d", String(DURATION_S), url]);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0) throw new Error(`autocannon failed: ${stderr}`);
  const out = JSON.parse(stdout) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    errors: number;
    non2xx: number;
  };
  return { rps: out.requests.average, p50: out.latency.p50, p99: out.latency.p99, errors: out.errors + out.non2xx };
}

/** Run the spine benchmarks and print their tables. */
export async function benchSpine(): Promise<void> {
  await ensureBuild();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-bench-"));
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const lines: Record<string, unknown>[] = [];
  // Only the paid calls' log lines are kept; parsing every line would load the server under test.
  const log = createLogger("info", {}, paidLineSink(lines));
  // No status feed: its probes of the public market APIs would run beside the measurements.
  const service = await startService({
    config: loadConfig({ PORT: "0", LOG_LEVEL: "info", DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: "0" }),
    devnet,
    log,
    statusFeed: false,
  });
  // The same service without the document cache, to measure the Astro dispatch path itself.
  const uncached = await startService({
    config: loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: "0" }),
    devnet,
    store: service.services.store,
    documentCache: false,
    maintenance: false,
  });

  try {
    // 1. Free GET, full stack vs bare node:http with the same bytes.
    const freePath = process.env.BENCH_FREE_PATH ?? "/api/pricing";
    const sample = await fetch(`${service.url}${freePath}`);
    const bytes = Buffer.from(await sample.arrayBuffer());
    const contentType = sample.headers.get("content-type") ?? "application/json";
    const bare = createServer((_req, res) => {
      res.writeHead(200, { "content-type": contentType, "content-length": bytes.length });
      res.end(bytes);
    });
    await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
    const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}${freePath}`;
    await autocannon(`${service.url}${freePath}`); // warm-up (JIT) of the service
    const bareLoad = await autocannon(bareUrl);
    const fullLoad = await autocannon(`${service.url}${freePath}`);
    await autocannon(`${uncached.url}${freePath}`);
    const astroLoad = await autocannon(`${uncached.url}${freePath}`);
    bare.close();
    console.log(
      `\nFree GET ${freePath} (${bytes.length} bytes), ${CONNECTIONS} connections, ${DURATION_S} s each, autocannon in its own process`,
    );
    console.table({
      "bare node:http": { "req/s": Math.round(bareLoad.rps), "p50 ms": bareLoad.p50, "p99 ms": bareLoad.p99, errors: bareLoad.errors },
      "full stack (document cache)": {
        "req/s": Math.round(fullLoad.rps),
        "p50 ms": fullLoad.p50,
        "p99 ms": fullLoad.p99,
        errors: fullLoad.errors,
      },
      "full stack, rendered by Astro each time": {
        "req/s": Math.round(astroLoad.rps),
        "p50 ms": astroLoad.p50,
        "p99 ms": astroLoad.p99,
        errors: astroLoad.errors,
      },
    });
    console.log(
      `full stack / bare = ${((100 * fullLoad.rps) / bareLoad.rps).toFixed(1)}% (target >= 50%); through Astro each time: ${((100 * astroLoad.rps) / bareLoad.rps).toFixed(1)}%`,
    );
    reportTarget({
      target: `free GET ${freePath} through the whole stack >= 50% of bare node:http`,
      figure: `${Math.round(fullLoad.rps)} req/s = ${((100 * fullLoad.rps) / bareLoad.rps).toFixed(1)}%`,
      reference: `bare node:http ${Math.round(bareLoad.rps)} req/s`,
      ok: fullLoad.rps >= 0.5 * bareLoad.rps,
    });

    // 2. Paid calls, pre-signed so the buyer's signing time is not counted.
    const paid = await measurePaidCalls(service.url, (devnet.buyers[0] as { privateKey: `0x${string}` }).privateKey, PAID_CALLS, lines);
    const row = (values: number[]) => ({
      p50: +percentile(values, 50).toFixed(2),
      p90: +percentile(values, 90).toFixed(2),
      max: +Math.max(...values).toFixed(2),
    });
    console.log(`\nPaid POST /api/payment-verify on the local chain, ${paid.verify.length} sequential calls (ms)`);
    console.table({
      "verify (facilitator + chain)": row(paid.verify),
      "function (incl. its chain reads)": row(paid.fn),
      "settle (facilitator + chain)": row(paid.settle),
      "server total": row(paid.total),
      "service overhead = total - the three": row(paid.overhead),
      "client-observed total": row(paid.client),
    });
    const overhead = paid.overhead;
    console.log(
      `service overhead p50 = ${percentile(overhead, 50).toFixed(2)} ms (targets: < 3 ms on PostgreSQL, < 5 ms on the embedded database; this run: SQLite)`,
    );
    reportTarget({
      target: "a paid call's own overhead p50 < 5 ms (SQLite)",
      figure: `${percentile(overhead, 50).toFixed(2)} ms`,
      reference: `verify ${percentile(paid.verify, 50).toFixed(1)} ms, function ${percentile(paid.fn, 50).toFixed(1)} ms, settle ${percentile(paid.settle, 50).toFixed(1)} ms`,
      ok: percentile(overhead, 50) < 5,
    });
  } finally {
    await uncached.close();
    await service.close();
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchSpine().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
