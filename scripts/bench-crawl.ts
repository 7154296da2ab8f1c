/**
 * Benchmark of the trust crawl: origins probed per second in a crawl of 1,000 local
 * fake origins on 16 loopback addresses, 10% of them slow (answering after the time limit)
 * or dead (dropping every connection), listed by local stand-ins of both directories, with
 * payTo reputations read on a local chain and every row written to an in-memory store. Runs
 * once per concurrency bound and prints the bound and the per-origin time limit it used.
 * Before it, checks per second against the seller zoo (test/support/zoo/zoo.ts): every library
 * and hand-made seller checked over and over, the reference client signing each option.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { checkConformance } from "../src/intel/conformance.ts";
import { runCrawl } from "../src/intel/crawl.ts";
import { createIntelServices } from "../src/intel/intel-services.ts";
import { startDevnet } from "../src/local/devnet/devnet.ts";
import { type SellerKind, startSellers } from "../src/local/sellers/demo-sellers.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { createSafeFetcher } from "../src/outbound/safe-fetch.ts";
import { openStore } from "../src/store/store.ts";
import { cdpItems, type ListedEndpoint, startLocalDirectories, x402ListItems } from "../src/upstreams/directory-fixtures.ts";
import { startZoo, ZOO } from "../test/support/zoo/zoo.ts";
import { reportTarget } from "./bench-report.ts";

const QUICK = process.env.BENCH_QUICK === "1";
const ORIGINS = Number(process.env.BENCH_CRAWL_ORIGINS ?? (QUICK ? 200 : 1_000));
const BOUNDS = (process.env.BENCH_CRAWL_CONCURRENCY ?? (QUICK ? "128" : "32,128")).split(",").map(Number);
const ORIGIN_TIMEOUT_MS = Number(process.env.BENCH_CRAWL_ORIGIN_TIMEOUT_MS ?? (QUICK ? 2_000 : 5_000));
const ZOO_ROUNDS = Number(process.env.BENCH_ZOO_ROUNDS ?? (QUICK ? 5 : 20));
const ZOO_CONCURRENCY = Number(process.env.BENCH_ZOO_CONCURRENCY ?? 16);

/**
 * Checks per second against the zoo. The sellers that are slow by design (the dead one and
 * the slow /openapi.json) are left out of the rounds: they measure a time limit, not the checker.
 */
async function benchZoo(): Promise<void> {
  const rows = ZOO.filter((r) => !r.id.startsWith("slow ") && r.id !== "drops every connection");
  const zoo = await startZoo(rows);
  const fetcher = createSafeFetcher({ allowLoopback: true });
  try {
    const urls = Array.from({ length: ZOO_ROUNDS }, () => zoo.sellers.map((s) => s.seller.url)).flat();
    await Promise.all(zoo.sellers.map((s) => checkConformance(fetcher, { url: s.seller.url, method: "GET" })));
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: ZOO_CONCURRENCY }, async () => {
        while (next < urls.length) await checkConformance(fetcher, { url: urls[next++] as string, method: "GET" });
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`\nSeller zoo: ${rows.length} sellers (libraries and hand-made), ${ZOO_ROUNDS} rounds, ${ZOO_CONCURRENCY} checks at once`);
    console.table({
      zoo: { checks: urls.length, "elapsed s": +seconds.toFixed(2), "checks/s": +(urls.length / seconds).toFixed(1) },
    });
    reportTarget({
      target: "- (x402-check against the seller zoo)",
      figure: `${(urls.length / seconds).toFixed(1)} checks/s`,
      reference: `${zoo.sellers.length} sellers, ${ZOO_CONCURRENCY} checks at once`,
      ok: null,
    });
  } finally {
    await zoo.close();
  }
}

/** The mix of a realistic catalogue: 90% answering in various states, 5% slow, 5% dead. */
function kindOf(i: number): SellerKind {
  const slot = i % 20;
  if (slot === 0) return "slow";
  if (slot === 1) return "dead";
  const answering: SellerKind[] = [
    "conforming_v2",
    "conforming_v2",
    "conforming_v2",
    "v1_only",
    "body_only",
    "decimal_amount",
    "missing_pay_to",
    "free_200",
    "expensive",
  ];
  return answering[slot % answering.length] as SellerKind;
}

/** Run the crawl benchmark and print its table. */
export async function benchCrawl(): Promise<void> {
  await benchZoo();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-bench-crawl-"));
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const payTos = devnet.buyers.map((b) => b.address);
  const { sellers, close } = await startSellers(
    Array.from({ length: ORIGINS }, (_, i) => ({
      kind: kindOf(i),
      host: `127.0.0.${2 + (i % 16)}`,
      payTo: payTos[i % payTos.length],
      slowMs: 60_000,
    })),
  );
  const listed: ListedEndpoint[] = sellers.map((s, i) => ({
    url: s.url,
    method: s.method,
    amount: "10000",
    payTo: payTos[i % payTos.length] as string,
    description: `seller ${i}`,
    name: `seller ${i}`,
  }));
  const directories = await startLocalDirectories({ cdp: cdpItems(listed), x402List: x402ListItems(listed.filter((_, i) => i % 2 === 0)) });
  const chain = createChainClient(base.chainAt([devnet.rpcUrl]), rpcTransport([devnet.rpcUrl]));
  const log = createLogger("silent");
  const rows: Record<string, Record<string, string | number>> = {};
  try {
    for (const concurrency of BOUNDS) {
      const store = await openStore({ kind: "sqlite", file: undefined });
      // The production fetcher and catalogue, with loopback allowed for the fake origins only.
      const intel = createIntelServices({
        cdpDiscoveryUrl: directories.cdpUrl,
        x402ListUrl: directories.x402ListUrl,
        allowLoopbackTargets: false,
        crawlAllowLoopback: true,
        crawlConcurrency: concurrency,
        crawlOriginTimeoutMs: ORIGIN_TIMEOUT_MS,
      });
      const started = performance.now();
      const result = await runCrawl({
        store,
        catalogue: intel.catalogue,
        fetcher: intel.crawl.fetcher,
        chain: { client: chain, network: base.id, usdc: devnet.usdc },
        concurrency,
        originTimeoutMs: ORIGIN_TIMEOUT_MS,
        trigger: "bench",
        log,
      });
      const seconds = (performance.now() - started) / 1000;
      await store.close();
      reportTarget({
        target: `- (trust crawl, concurrency ${concurrency})`,
        figure: `${(result.origins_total / seconds).toFixed(1)} origins/s`,
        reference: `${result.origins_total} origins, ${result.unreachable} slow or dead, ${ORIGIN_TIMEOUT_MS / 1000} s limit each`,
        ok: null,
      });
      rows[`concurrency ${concurrency}`] = {
        origins: result.origins_total,
        "slow+dead": result.unreachable,
        "per-origin limit s": ORIGIN_TIMEOUT_MS / 1000,
        "elapsed s": +seconds.toFixed(2),
        "origins/s": +(result.origins_total / seconds).toFixed(1),
        pay: result.verdicts.pay,
        caution: result.verdicts.pay_with_caution,
        avoid: result.verdicts.avoid,
      };
    }
    console.log(
      `\nTrust crawl: ${ORIGINS} local fake origins on 16 loopback addresses, 10% slow (answer after the limit) or dead (connection dropped), ` +
        `3 requests per origin (endpoint, /.well-known/x402, /openapi.json), the reference client signing each payable option, payTo reputations read on a local chain, rows written to SQLite (in memory)`,
    );
    console.table(rows);
    console.log(
      "The slow origins dominate: each holds a slot for the whole per-origin limit, so a round of them costs one limit. Default bound: CRAWL_CONCURRENCY=32; raise it for larger catalogues.",
    );
  } finally {
    await directories.close();
    await close();
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchCrawl().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
