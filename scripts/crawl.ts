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
import { createPublicClient, http } from "viem";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { ConfigError, loadConfig } from "../src/config.ts";
import { runCrawl } from "../src/intel/crawl.ts";
import { createIntelServices } from "../src/intel/intel-services.ts";
import { LOCAL_BUYER_INDEX, trustPurchases } from "../src/intel/purchase-config.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { CDP_DISCOVERY_URL } from "../src/upstreams/directory-cdp.ts";
import { X402_LIST_URL } from "../src/upstreams/directory-x402-list.ts";
import { createProgress, type Progress } from "./progress.ts";
import { openStoreForTool, storeDescription } from "./store-tool.ts";

/** The local chain described by `file`, when it answers. */
type DevnetFile = { rpcUrl: string; payTo: `0x${string}`; buyers?: { privateKey: `0x${string}` }[] };

async function runningDevnet(file: string): Promise<DevnetFile | undefined> {
  if (!existsSync(file)) return undefined;
  try {
    const info = JSON.parse(readFileSync(file, "utf8")) as DevnetFile;
    await createPublicClient({ transport: http(info.rpcUrl, { timeout: 1_000, retryCount: 0 }) }).getChainId();
    return info;
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
    let devnetBuyer: `0x${string}` | undefined;
    if (config.mode === "local") {
      // The service's chain when it is running (its devnet.json answers), else start it here.
      let devnet = await runningDevnet(path.join(config.dataDir, "devnet.json"));
      if (!devnet) {
        const { startDevnet } = await import("../src/local/devnet/devnet.ts");
        const started = await startDevnet({ dataDir: config.dataDir, port: config.anvilPort, persist: true });
        stops.push(started.stop);
        devnet = started;
      }
      rpcUrls = [devnet.rpcUrl];
      devnetBuyer = devnet.buyers?.[LOCAL_BUYER_INDEX]?.privateKey;
      if (!config.intel.cdpDiscoveryUrl && !config.intel.x402ListUrl) {
        const { startDemoCatalogue } = await import("../src/local/sellers/demo-catalogue.ts");
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
      // Local mode's own demo catalogue lists loopback sellers; ALLOW_LOOPBACK_TARGETS=1 (local
      // mode only, refused in production by the config) lets any local catalogue be crawled,
      // as the service's scheduled crawl does.
      crawlAllowLoopback: demo || (config.mode === "local" && config.intel.allowLoopbackTargets),
      crawlConcurrency: config.intel.crawlConcurrency,
      crawlOriginTimeoutMs: config.intel.crawlOriginTimeoutSeconds * 1000,
    });
    const chain = base.chainAt(rpcUrls);
    const chainClient = createChainClient(chain, rpcTransport(rpcUrls));
    const purchases = trustPurchases(config, chainClient, devnetBuyer);
    if (purchases) {
      const b = purchases.budget;
      console.log(
        `Verified by purchase: buying once from each seller judged payable, from ${purchases.buyer.address}, at most $${b.per_run_usd} this run, ` +
          `$${b.per_origin_usd} per origin, sellers quoting at most $${b.price_cap_usd} (TRUST_PURCHASES=0 turns it off).`,
      );
    }
    console.log(
      `Crawling ${demo ? "the local demo catalogue" : `${cdpUrl} and ${listUrl}`} with ${config.intel.crawlConcurrency} origins at once, ` +
        `${config.intel.crawlOriginTimeoutSeconds} s per origin, into ${storeDescription(config)}...`,
    );
    // Created once the catalogue is read, so its first line already knows the total.
    let progress: Progress | undefined;
    const result = await runCrawl({
      store,
      catalogue: intel.catalogue,
      fetcher: intel.crawl.fetcher,
      chain: { client: chainClient, network: config.network, usdc: config.usdc.address },
      ...(purchases ? { purchases } : {}),
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
        ...(result.purchases
          ? [
              `  bought    ${result.purchases.made} purchases, signed ${Number(result.purchases.signed_atomic) / 1e6} USDC, charged ${Number(result.purchases.charged_atomic) / 1e6} USDC on chain`,
            ]
          : []),
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
