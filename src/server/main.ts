/**
 * `npm start`: check the configuration, build if the build is missing or stale, start the
 * local chain in local mode, then serve. SIGTERM or Ctrl-C stops gracefully (calls in flight
 * finish) and keeps the chain's state; a second one stops at once.
 */
import module from "node:module";
import path from "node:path";
import type { startService as StartService } from "./service.ts";

// Node keeps the compiled code of every module it loads (about 2,200, most of them libraries) in
// the data folder, so a restart skips compiling them again: it halves the imports of a warm
// start. Enabled before anything else is imported, which is why the rest comes by `import()`.
// An entry whose source changed is not used; NODE_COMPILE_CACHE (another folder) or
// NODE_DISABLE_COMPILE_CACHE=1 take precedence.
module.enableCompileCache?.(path.resolve(process.env.DATA_DIR || "data", "compile-cache"));

async function main(): Promise<void> {
  // Milliseconds since the process started at the end of each step, logged once serving: what a
  // restart spends where (Node and the imports before `main` runs, then each step below).
  const phases: Record<string, number> = {};
  const mark = (phase: string) => {
    phases[phase] = Math.round(performance.now());
  };
  mark("node_started");
  const [{ buildIsCurrent, ensureBuild }, { ConfigError, loadConfig }, { captureConsole, createLogger }] = await Promise.all([
    import("../build-stamp.ts"),
    import("../config.ts"),
    import("../log.ts"),
  ]);
  mark("config_imported");
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Cannot start: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }

  if (!buildIsCurrent()) {
    console.log("The build is missing or older than the sources: building first (npm run build)...");
    await ensureBuild();
  }
  mark("build_checked");

  // Local mode's chain (the network entry's, src/networks/) first: anvil runs in its own process,
  // and spawning it before the service's ~2,200 modules start loading (one thread evaluates them
  // in turn) lets it load its state while they do, instead of after them.
  const devnetStarting =
    config.mode === "local"
      ? import("../networks/index.ts").then(({ evmNetwork }) =>
          evmNetwork(config.network).local.start({ dataDir: config.dataDir, port: config.anvilPort, persist: true }),
        )
      : undefined;
  devnetStarting?.catch(() => {});
  // Local mode's Solana runs in this process (litesvm): it seeds while anvil starts.
  const solanaStarting =
    config.mode === "local"
      ? import("../local/solana/devnet.ts").then(({ startLocalSolana }) =>
          startLocalSolana({ dataDir: config.dataDir, rpcPort: config.solana.rpcPort }),
        )
      : undefined;
  solanaStarting?.catch(() => {});

  // The service's modules and the built Astro bundle load while the local chain starts (anvil
  // runs in its own process): neither waits for the other.
  const serviceModules = Promise.all([
    import("./service.ts"),
    import("./app.ts").then(({ loadAstroHandler }) => loadAstroHandler()),
    // What local mode starts after the chain (the scenario check, the local stand-ins), loaded now.
    config.mode === "local"
      ? Promise.all([
          import("../local/devnet/scenario.ts"),
          import("../local/sellers/demo-catalogue.ts"),
          import("../local/stubs/upstream-stubs.ts"),
        ])
      : undefined,
  ]).then(([service, astro]) => {
    mark("service_imported");
    return { startService: service.startService as typeof StartService, drainMs: service.DRAIN_MS, astro };
  });
  serviceModules.catch(() => {});
  // The store opens at the same time (it does not need the chain); the service closes it.
  const openingStore = import("../store/configured.ts").then(async ({ openServiceStore }) => {
    const store = await openServiceStore(config);
    mark("store_open");
    return store;
  });
  openingStore.catch(() => {});
  const log = createLogger(config.logLevel);
  let devnet: import("../local/devnet/devnet.ts").Devnet | undefined;
  if (devnetStarting) {
    devnet = await devnetStarting;
    mark("devnet_ready");
  }

  // Local mode without directory settings: local stand-ins of the directories listing demo
  // sellers and this service, so directory search and the trust crawl work offline.
  let demo: import("../local/sellers/demo-catalogue.ts").DemoCatalogue | undefined;
  let serviceConfig = config;
  if (devnet && !config.intel.cdpDiscoveryUrl && !config.intel.x402ListUrl) {
    const { startDemoCatalogue } = await import("../local/sellers/demo-catalogue.ts");
    demo = await startDemoCatalogue({ ...(config.port ? { serviceUrl: `http://127.0.0.1:${config.port}` } : {}), payTo: devnet.payTo });
    serviceConfig = {
      ...config,
      intel: {
        ...config.intel,
        cdpDiscoveryUrl: demo.cdpUrl,
        x402ListUrl: demo.x402ListUrl,
        crawlIntervalMinutes: config.intel.crawlIntervalMinutes ?? 60,
      },
    };
  }

  // Local mode: seed the analytics scenario on a new chain (a seeded chain is left as it is), and
  // serve the market-data APIs from local stand-ins unless their URLs are set in the environment.
  let marketStubs: import("../local/stubs/upstream-stubs.ts").UpstreamStubs | undefined;
  let scenario: import("../local/devnet/scenario.ts").ScenarioGroundTruth | undefined;
  if (devnet) {
    const { seedScenario, staleScenario } = await import("../local/devnet/scenario.ts");
    scenario = await seedScenario({
      rpcUrl: devnet.rpcUrl,
      minter: devnet.facilitator,
      groundTruthFile: `${config.dataDir}/scenario.json`,
    });
    const stale = staleScenario(scenario, config.dataDir);
    if (stale) log.warn(`${stale}: its answers may differ from the documented examples; delete ${config.dataDir} to seed afresh`);
    const u = serviceConfig.upstreams;
    if (!u.dexscreenerUrl || !u.defillamaUrl || !u.defillamaCoinsUrl || !u.hyperliquidUrl) {
      const { startUpstreamStubs } = await import("../local/stubs/upstream-stubs.ts");
      marketStubs = await startUpstreamStubs();
      const stub = marketStubs.urls;
      serviceConfig = {
        ...serviceConfig,
        upstreams: {
          ...u,
          dexscreenerUrl: u.dexscreenerUrl ?? stub.dexscreener,
          defillamaUrl: u.defillamaUrl ?? stub.defillama,
          defillamaCoinsUrl: u.defillamaCoinsUrl ?? stub.defillamaCoins,
          hyperliquidUrl: u.hyperliquidUrl ?? stub.hyperliquid,
        },
      };
    }
  }

  mark("scenario_and_stubs_ready");

  let service: Awaited<ReturnType<typeof StartService>>;
  let solana: Awaited<ReturnType<typeof import("../local/solana/devnet.ts").startLocalSolana>> | undefined;
  try {
    solana = await solanaStarting;
    const { startService, astro } = await serviceModules;
    // The heartbeat period (default 30 s) sets how long a paused instance may stay silent before
    // another may take its settlement key over; tests shorten it.
    const heartbeat = process.env.INSTANCE_HEARTBEAT_MS;
    if (heartbeat !== undefined && !/^[1-9][0-9]{2,6}$/.test(heartbeat)) {
      console.error(`Cannot start: INSTANCE_HEARTBEAT_MS must be a whole number of milliseconds from 100; found "${heartbeat}"`);
      process.exit(2);
    }
    service = await startService({
      config: serviceConfig,
      log,
      ...(heartbeat ? { heartbeatMs: Number(heartbeat) } : {}),
      astro,
      openingStore,
      onPhase: (phase) => {
        if (phase !== "store_open") mark(phase);
      },
      ...(devnet ? { devnet } : {}),
      ...(solana
        ? {
            solana: {
              rpcUrl: solana.rpcUrl,
              network: solana.scenario.network,
              usdcMint: solana.scenario.usdcMint,
              payTo: solana.scenario.payTo,
              feePayer: solana.scenario.feePayer.signer,
            },
          }
        : {}),
      ...(demo ? { crawlAllowLoopback: true } : {}),
    });
  } catch (error) {
    // Refused (another instance settles with this key, the database is unreachable): stop what was started.
    await solana?.stop();
    await demo?.close();
    await marketStubs?.close();
    await devnet?.stop();
    throw error;
  }
  if (solana && service.solanaUrl) {
    const { solanaDevnetInfo, writeSolanaDevnetInfo } = await import("../local/solana/devnet.ts");
    writeSolanaDevnetInfo(path.join(config.dataDir, "devnet.json"), solanaDevnetInfo(solana, service.solanaUrl));
  }
  const { tryItCommand } = await import("./try-it.ts");
  const lines =
    config.mode === "local" && devnet
      ? [
          "",
          `  LOCAL MODE: a development chain on this machine, not Base mainnet. Test USDC only.`,
          `  Service        ${service.url}   (routes: ${service.url}/ , ${service.url}/openapi.json)`,
          `  Secondary site ${service.secondaryUrl}   (Base token-risk tools under /v1/, SECONDARY_PORT=${config.secondary.port}; ${service.secondaryUrl}/openapi.json)`,
          ...(solana
            ? [
                `  Solana site    ${service.solanaUrl}   (tools under /v1/ paid in USDC on ${solana.scenario.network}, SOLANA_PORT=${config.solana.port})`,
                `  Solana chain   ${solana.rpcUrl}   (litesvm in this process, JSON-RPC; ${solana.seeded ? "seeded now" : "state of an earlier start"} in ${config.dataDir}/solana-state.bin; fee payer ${solana.scenario.feePayer.address}, payTo ${solana.scenario.payTo}, ${solana.scenario.buyers.length} buyers in devnet.json)`,
              ]
            : []),
          `  Chain (anvil)  ${devnet.rpcUrl}   chain id ${devnet.chainId}, state in ${config.dataDir}/anvil-state.json`,
          `  USDC           ${devnet.usdc}   (EIP-3009, "USD Coin" v2, 6 decimals)`,
          `  Pay-to         ${devnet.payTo}`,
          `  Facilitator    ${devnet.facilitator.address}   (pays gas for settlement)`,
          `  Buyers         ${devnet.buyers.length} funded accounts, keys in ${config.dataDir}/devnet.json`,
          `  Try it         ${tryItCommand(service.url, config.dataDir)}`,
          ...(demo
            ? [
                `  Directories    local stand-ins of CDP Bazaar and x402 List listing ${demo.origins} origins (demo sellers on 127.0.0.1 and this service)`,
                `                 ${demo.cdpUrl}`,
                `                 ${demo.x402ListUrl}`,
                `  Leaderboard    ${service.url}/leaderboard   (${serviceConfig.intel.crawlIntervalMinutes ? `crawled a few seconds after start, then every ${serviceConfig.intel.crawlIntervalMinutes} min` : "CRAWL_INTERVAL_MINUTES=0: no scheduled crawl"})`,
              ]
            : []),
          ...(marketStubs
            ? [
                `  Market data    local stand-ins of DexScreener, DefiLlama and Hyperliquid serving fixtures/upstreams/ at ${marketStubs.urls.dexscreener.replace(/\/dexscreener$/, "")}`,
              ]
            : []),
          scenario
            ? `  Seeded chain   ${scenario.transfers.length} transfers in blocks ${scenario.startBlock}-${scenario.endBlock} (ground truth in ${config.dataDir}/scenario.json); try ${service.url}/methodology`
            : "  Seeded chain   seeded by an earlier start (no ground truth file)",
          "",
        ]
      : [
          "",
          `  PRODUCTION MODE on ${config.network}`,
          `  Service        ${service.url}${config.publicUrl ? `   (public URL ${config.publicUrl})` : ""}`,
          config.secondary.host
            ? `  Secondary site requests for host ${config.secondary.host} on the same port (public URL ${config.secondary.publicUrl}): Base token-risk tools under /v1/`
            : "  Secondary site off (set SECONDARY_HOST to serve the /v1/ token-risk tools by host name)",
          config.solana.enabled
            ? `  Solana site    requests for host ${config.solana.host} (public URL ${config.solana.publicUrl}): tools under /v1/ paid in USDC on Solana; RPC ${new URL(config.solana.rpcUrls[0] as string).host}; ${config.solana.facilitator.kind === "remote" ? `facilitator ${config.solana.facilitator.url}` : "fee payer key set (self-hosted facilitator)"}`
            : "  Solana site    off (set SOLANA_HOST, SOLANA_RPC_URL, SOLANA_PAY_TO and SOLANA_FEE_PAYER_KEY or SOLANA_FACILITATOR_URL)",
          `  RPC            ${config.rpcUrls.length} URL(s), used in order with fallback`,
          `  Pay-to         ${service.payTo}`,
          `  Facilitator    ${config.facilitator.kind === "remote" ? config.facilitator.url : `self-hosted, gas paid by ${service.facilitatorAddress}`}`,
          "",
        ];
  // The banner is for humans, so it is printed as plain text; from here on every line on
  // stdout is JSON: libraries printing through console (x402 echoes undecodable payment
  // headers, caller-chosen bytes) are logged as "library output" lines (src/log.ts).
  console.log(lines.join("\n"));
  captureConsole(log);
  log.info("started", { ms_since_process_start: phases });

  // SIGTERM or SIGINT: stop accepting, let calls in flight settle and answer (up to 30 s), stop
  // the jobs, close the store, stop the local stand-ins, and the local chain last (settlements
  // in flight need it). A second signal exits at once.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn("second signal: exiting at once", { signal });
      process.exit(130);
    }
    stopping = true;
    // Loaded already: the service is running.
    const { drainMs } = await serviceModules;
    log.info(`stopping: no new connections; calls in flight get up to ${drainMs / 1000} s to finish`, { signal });
    let code = 0;
    try {
      const { drained, inFlight } = await service.shutdown();
      if (!drained) log.warn("stopped with calls still in flight; the ledger upkeep resolves them from the chain", { in_flight: inFlight });
    } catch (error) {
      log.error("stopping the service failed", { error: error as Error });
      code = 1;
    }
    await demo?.close();
    await marketStubs?.close();
    await solana?.stop();
    await devnet?.stop();
    log.info("stopped", { signal });
    process.exit(code);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error) => {
  console.error("Cannot start:", error instanceof Error ? error.message : error);
  process.exit(1);
});
