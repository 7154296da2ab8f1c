/**
 * `npm run crawl`: one trust-leaderboard crawl of every origin in the catalogue, recorded in
 * the configured store (PostgreSQL with DATABASE_URL, else the embedded database in DATA_DIR,
 * which only one process can open: stop the service first, or use PostgreSQL, or let the
 * service crawl on its own with CRAWL_INTERVAL_MINUTES). In local mode without directory
 * settings it crawls the offline demo catalogue and reads reputations on the local chain
 * (started here when it is not already running).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { ConfigError, loadConfig } from "../src/config.ts";
import { runCrawl } from "../src/intel/crawl.ts";
import { createIntelServices } from "../src/intel/intel-services.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { createProgress, type Progress } from "../src/progress.ts";
import { openStoreForTool, storeDescription } from "../src/store/configured.ts";
import { redact } from "../src/store/store.ts";
import { CDP_DISCOVERY_URL } from "../src/upstreams/directory-cdp.ts";
import { X402_LIST_URL } from "../src/upstreams/directory-x402-list.ts";

/** The local chain described by `file`, when it answers. */
async function runningDevnet(file: string): Promise<{ rpcUrl: string; payTo: `0x${string}` } | undefined> {
  if (!existsSync(file)) return undefined;
  try {
    const info = JSON.parse(readFileSync(file, "utf8")) as { rpcUrl: string; payTo: `0x${string}` };
    const res = await fetch(info.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    return res.ok ? info : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  // Checked before any work, so a refusal costs nothing.
  const store = await openStoreForTool(config);
  const log = createLogger(config.logLevel === "info" ? "warn" : config.logLevel);
  const stops: (() => Promise<void>)[] = [];
  try {
    let rpcUrls = config.rpcUrls;
    let cdpUrl = config.intel.cdpDiscoveryUrl ?? CDP_DISCOVERY_URL;
    let listUrl = config.intel.x402ListUrl ?? X402_LIST_URL;
    let demo = false;
    if (config.mode === "local") {
      // The service's chain when it is running (its devnet.json answers), else start it here.
      let devnet = await runningDevnet(path.join(config.dataDir, "devnet.json"));
      if (!devnet) {
        const { startDevnet } = await import("../src/devnet/devnet.ts");
        const started = await startDevnet({ dataDir: config.dataDir, port: config.anvilPort, persist: true });
        stops.push(started.stop);
        devnet = started;
      }
      rpcUrls = [devnet.rpcUrl];
      if (!config.intel.cdpDiscoveryUrl && !config.intel.x402ListUrl) {
        const { startDemoCatalogue } = await import("../src/intel/demo-catalogue.ts");
        const catalogue = await startDemoCatalogue({ payTo: devnet.payTo });
        stops.push(catalogue.close);
        cdpUrl = catalogue.cdpUrl;
        listUrl = catalogue.x402ListUrl;
        demo = true;
      }
    }

    stops.push(() => store.close());
    const intel = createIntelServices({
      cdpDiscoveryUrl: cdpUrl,
      x402ListUrl: listUrl,
      allowLoopbackTargets: false,
      // Only local mode's own demo catalogue lists loopback sellers.
      crawlAllowLoopback: demo,
      crawlConcurrency: config.intel.crawlConcurrency,
      crawlOriginTimeoutMs: config.intel.crawlOriginTimeoutSeconds * 1000,
    });
    const chain = base.chainAt(rpcUrls);
    console.log(
      `Crawling ${demo ? "the local demo catalogue" : `${cdpUrl} and ${listUrl}`} with ${config.intel.crawlConcurrency} origins at once, ` +
        `${config.intel.crawlOriginTimeoutSeconds} s per origin, into ${storeDescription(config, redact)}...`,
    );
    // Created once the catalogue is read, so its first line already knows the total.
    let progress: Progress | undefined;
    const result = await runCrawl({
      store,
      catalogue: intel.catalogue,
      fetcher: intel.crawl.fetcher,
      chain: { client: createChainClient(chain, rpcTransport(rpcUrls)), network: config.network, usdc: config.usdc.address },
      concurrency: intel.crawl.concurrency,
      originTimeoutMs: intel.crawl.originTimeoutMs,
      trigger: "cli",
      log,
      onProgress: (done, total) => {
        progress ??= createProgress({ label: "crawl", unit: "origins", total });
        progress.update(done, total);
      },
    });
    progress?.finish();
    const sources = Object.entries(result.sources)
      .map(([name, status]) => `${name} ${status}`)
      .join(", ");
    const { median, mean, p90 } = result.score_stats;
    console.log(
      [
        `Run ${result.run_id}: ${result.origins_total} origins in ${(result.elapsed_ms / 1000).toFixed(1)} s (directories: ${sources})`,
        `  coverage  ${result.origins_in_catalogue} in the catalogue, ${result.origins_scored} scored, ${result.unreachable} unreachable`,
        `  verdicts  pay ${result.verdicts.pay}, pay_with_caution ${result.verdicts.pay_with_caution}, avoid ${result.verdicts.avoid}`,
        `  scores    median ${median ?? "n/a"}, mean ${mean ?? "n/a"}, p90 ${p90 ?? "n/a"}`,
      ].join("\n"),
    );
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  }
}

main().catch((error) => {
  console.error(
    error instanceof ConfigError ? `Cannot crawl: ${error.message}` : `Crawl failed: ${error instanceof Error ? error.message : error}`,
  );
  process.exit(1);
});
