/**
 * Starting the whole service from a configuration: chain client, facilitator, Astro
 * handler and HTTP server. Used by `npm start` (src/server/main.ts), the tests and the
 * benchmarks, so all three run the same code.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import path from "node:path";
import type { KeyPairSigner } from "@solana/kit";
import type { FacilitatorClient } from "@x402/core/server";
import type { PublicClient, Transport } from "viem";
import packageJson from "../../package.json" with { type: "json" };
import { routeKey } from "../../spec/route.ts";
import type { allRoutes } from "../../spec/routes.ts";
import { baseToolsSite, primarySite, solanaSite } from "../../spec/sites.ts";
import type { AnalyticsSettings } from "../analytics/services.ts";
import { authorizationReader } from "../chain/authorization.ts";
import { createChainClient, rpcTransport } from "../chain/client.ts";
import { type Config, ConfigError, checkSignInOrigin } from "../config.ts";
import type { Services } from "../context.ts";
import { errorBody } from "../errors.ts";
import { runCrawl } from "../intel/crawl.ts";
import { trustCrawlJob } from "../intel/crawl-schedule.ts";
import { type IntelSettings, intelOf } from "../intel/intel-services.ts";
import { LOCAL_BUYER_INDEX, trustPurchases } from "../intel/purchase-config.ts";
import { createLogger, type Logger } from "../log.ts";
import { createMetrics, observedCrawl, observedStore } from "../metrics/metrics.ts";
import { evmNetwork, svmNetwork } from "../networks/index.ts";
import { HEARTBEAT_MS, type Heartbeat, registerInstance, startHeartbeat, unregisterInstance } from "../operations/instances.ts";
import { type JobDefinition, type JobName, startJobs } from "../operations/jobs.ts";
import { generateStatus, type JobSchedule, PROBE_TIMEOUT_MS, STATUS_INTERVAL_SECONDS } from "../operations/status-feed.ts";
import { upstreamProbes } from "../operations/upstream-probes.ts";
import type { Resolver } from "../outbound/safe-fetch.ts";
import { createRemoteFacilitator, createSelfFacilitator } from "../payments/facilitator.ts";
import { type GateOptions, PaymentGate } from "../payments/gate.ts";
import { memoryInFlightRegistry, storeInFlightRegistry } from "../payments/inflight.ts";
import type { PaymentScheme } from "../payments/scheme.ts";
import { BASE_TIMING, LOCAL_TIMING } from "../payments/settlement-sender.ts";
import { declaresSignIn } from "../payments/sign-in.ts";
import { ledgerUpkeepJob } from "../payments/upkeep.ts";
import { openServiceStore, releaseEmbedded, storeLocationOf } from "../store/configured.ts";
import type { Store } from "../store/store.ts";
import { DEXSCREENER_DEFAULT_URL } from "../upstreams/dexscreener.ts";
import { CDP_DISCOVERY_URL } from "../upstreams/directory-cdp.ts";
import { X402_LIST_URL } from "../upstreams/directory-x402-list.ts";
import { type AppOptions, type AstroHandler, createApp, loadAstroHandler, siteRouter } from "./app.ts";
import { trackConnections } from "./connections.ts";
import { drainable } from "./middleware/drain.ts";

/** What local mode's devnet provides to the service. */
export interface DevnetEndpoints {
  rpcUrl: string;
  payTo: `0x${string}`;
  facilitator: { address: `0x${string}`; privateKey: `0x${string}` };
  /** The funded buyers; the trust runs' purchases pay from one of them in local mode. */
  buyers?: readonly { address: `0x${string}`; privateKey: `0x${string}` }[];
}

/** What local mode's Solana provides to the Solana site. */
export interface SolanaEndpoints {
  rpcUrl: string;
  network: string;
  usdcMint: string;
  payTo: string;
  /** The fee payer the in-process facilitator co-signs with. */
  feePayer: KeyPairSigner;
}

/** Options of `startService`; everything but `config` has a production default. */
export interface StartServiceOptions {
  config: Config;
  /** Required in local mode: the running devnet. */
  devnet?: DevnetEndpoints;
  /** Local mode: the running local Solana; without it local mode serves no Solana site. */
  solana?: SolanaEndpoints;
  /** Replace the Solana site's facilitator (tests). */
  solanaFacilitator?: FacilitatorClient;
  log?: Logger;
  /** Replace the transport functions read the chain through (tests: a failing RPC stub). */
  readTransport?: Transport;
  /** Replace the facilitator (tests). */
  facilitator?: FacilitatorClient;
  astro?: AstroHandler;
  /** An open store to use (and leave open on close); default: open the configured one. */
  store?: Store;
  /**
   * The configured store, already being opened by the caller (`openServiceStore`: `npm start`
   * opens it while the local chain starts); the service closes it, as one it opened itself.
   */
  openingStore?: Promise<Store>;
  /** This instance's id in the ledger and the in-flight leases. */
  instance?: string;
  /** Run ledger upkeep (reconcile, purge) every minute; default true. */
  maintenance?: boolean;
  /** Generate the status document at start and every 540 s; default: as `maintenance`. */
  statusFeed?: boolean;
  /** Replace job intervals (tests: seconds instead of minutes). */
  jobIntervalsMs?: Partial<Record<JobName, number>>;
  /** How often due times are checked (default 5 s) and a job's lease (default 60 s). */
  jobTiming?: { tickMs?: number; leaseMs?: number };
  /** The heartbeat period (default 30 s). */
  heartbeatMs?: number;
  /** The process this instance says it runs in (tests: two "processes" in one). */
  processId?: string;
  /** Serve cacheable free documents from memory; default true (off only to benchmark the Astro path). */
  documentCache?: boolean;
  /** Let caller-chosen URLs reach loopback (tests); default: the config's (local mode only). Refused in production mode. */
  allowLoopbackTargets?: boolean;
  /** Let the trust crawl reach loopback (local mode's demo catalogue of local sellers). Refused in production mode. */
  crawlAllowLoopback?: boolean;
  /** Replace DNS resolution of outbound fetches (tests). */
  resolve?: Resolver;
  /** Chain analytics settings to use instead of the config's (tests: scanner bounds, upstream URLs). */
  analytics?: AnalyticsSettings;
  /** Told when each step of the start is done (`npm start` logs how long each took). */
  onPhase?: (phase: StartPhase) => void;
  /** The clock of the rate limits and of the functions (which ads are active); tests move it. Default: the system clock. */
  now?: () => Date;
}

/** The steps of `startService`, in order. */
export type StartPhase = "store_open" | "instance_registered" | "astro_loaded" | "apps_created" | "listening";

/** A running service. */
export type RunningService = Awaited<ReturnType<typeof startService>>;

/**
 * How long a graceful stop waits for requests in flight by default: long enough for a paid call
 * that has verified its payment to settle and answer.
 */
export const DRAIN_MS = 30_000;

/** Start the service and listen on `config.host:config.port` (port 0 picks a free one). */
export async function startService(options: StartServiceOptions) {
  const { config } = options;
  const log = options.log ?? createLogger(config.logLevel);
  const local = config.mode === "local";
  if (local && !options.devnet) throw new Error("local mode needs a running devnet");
  const allowLoopbackTargets = options.allowLoopbackTargets ?? config.intel.allowLoopbackTargets;
  if (!local && (allowLoopbackTargets || options.crawlAllowLoopback)) {
    throw new Error("loopback targets are never allowed in production mode");
  }
  checkSignInOrigin(config, primarySite.routes.filter(declaresSignIn).map(routeKey));

  // The Solana fee-payer key is checked before anything is opened: a bad key refuses the start.
  const solanaFeePayer = await solanaFeePayerOf(config, local, options.solanaFacilitator !== undefined);
  const rpcUrls = local ? [options.devnet?.rpcUrl as string] : config.rpcUrls;
  const chain = evmNetwork(config.network).chainAt(rpcUrls);
  const transport = rpcTransport(rpcUrls);
  const payTo = (local ? options.devnet?.payTo : config.payTo) as `0x${string}`;

  let facilitatorAddress: `0x${string}` | undefined;
  let facilitator = options.facilitator;
  let heartbeat: Heartbeat | undefined;
  if (!facilitator) {
    const setting = config.facilitator;
    if (setting.kind === "remote") facilitator = createRemoteFacilitator(setting.url, setting.cdp, config.payments.timeoutMs);
    else {
      const key = setting.kind === "self" ? setting.privateKey : (options.devnet?.facilitator.privateKey as `0x${string}`);
      // Receipts are polled at the chain's pace, and never past the settlement's own time budget.
      const timing = { ...(local ? LOCAL_TIMING : BASE_TIMING), receiptTimeoutMs: config.payments.timeoutMs };
      const self = createSelfFacilitator(key, chain, transport, config.network, {
        timing,
        log: log.child({ component: "facilitator" }),
        // The heartbeat starts after registration, below; until then nothing is paid.
        maySettle: () => heartbeat?.maySettle() ?? Promise.resolve(true),
      });
      facilitatorAddress = self.address;
      facilitator = self;
    }
  }

  const ownStore = !options.store;
  const location = storeLocationOf(config);
  const embeddedFile = ownStore && location.kind === "sqlite" ? location.file : undefined;
  if (embeddedFile) {
    const earlier = path.join(config.dataDir, "pglite");
    if (existsSync(earlier)) {
      log.warn(
        `${earlier} holds the embedded PGlite database of an earlier version, which this one does not read: its state (ledger, balances, leaderboard runs) is now kept in ${embeddedFile}. Read the old ledger with an earlier build's npm run ledger, or remove the folder.`,
      );
    }
  }
  const metrics = createMetrics();
  // openServiceStore claims the embedded file (a second service on it is refused) and opens it.
  const openedStore = options.store ?? (await (options.openingStore ?? openServiceStore(config)));
  const store = observedStore(openedStore, metrics);
  const phase = options.onPhase ?? (() => {});
  phase("store_open");
  const instance = options.instance ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;

  const intelSettings: IntelSettings = {
    cdpDiscoveryUrl: config.intel.cdpDiscoveryUrl ?? CDP_DISCOVERY_URL,
    x402ListUrl: config.intel.x402ListUrl ?? X402_LIST_URL,
    allowLoopbackTargets,
    crawlAllowLoopback: options.crawlAllowLoopback ?? false,
    crawlConcurrency: config.intel.crawlConcurrency,
    crawlOriginTimeoutMs: config.intel.crawlOriginTimeoutSeconds * 1000,
    ...(options.resolve ? { resolve: options.resolve } : {}),
    purchases: {
      enabled:
        config.intel.purchases.enabled && (config.intel.purchases.buyerPrivateKey !== undefined || options.devnet?.buyers !== undefined),
      budget: config.intel.purchases.budget,
    },
  };

  const services: Services = {
    config: {
      mode: config.mode,
      network: config.network,
      chainId: config.chainId,
      usdc: config.usdc.address,
      payTo,
      publicUrl: config.publicUrl,
      ownershipProofs: config.ownershipProofs,
      version: packageJson.version,
      validateResponses: local,
    },
    chain: createChainClient(chain, options.readTransport ?? transport) as PublicClient,
    log,
    store,
    intel: intelSettings,
    analytics: options.analytics ?? { mode: config.mode, upstreams: config.upstreams, entityBudget: config.entityIntel },
    chatLlm: config.chatLlm,
    ...(options.now ? { now: options.now } : {}),
  };
  const authorizations = authorizationReader(createChainClient(chain, transport), config.usdc.address);

  const intervals = options.jobIntervalsMs ?? {};
  const crawlMinutes = config.intel.crawlIntervalMinutes ?? 0;
  const crawlIntervalMs = crawlMinutes > 0 ? (intervals.trust_crawl ?? crawlMinutes * 60_000) : null;
  const maintenance = options.maintenance !== false;
  const statusFeed = options.statusFeed ?? maintenance;
  // The schedule shares the endpoints' intelligence services (one catalogue cache, one set of fetchers).
  const intel = intelOf({ intel: intelSettings });
  const jobs: JobDefinition[] = [];
  if (crawlIntervalMs !== null)
    jobs.push(
      trustCrawlJob({
        intervalMs: crawlIntervalMs,
        store,
        crawl: (signal) =>
          observedCrawl(metrics, (onProgress) =>
            runCrawl({
              store,
              catalogue: intel.catalogue,
              fetcher: intel.crawl.fetcher,
              chain: { client: services.chain, network: config.network, usdc: config.usdc.address },
              concurrency: intel.crawl.concurrency,
              originTimeoutMs: intel.crawl.originTimeoutMs,
              trigger: "schedule",
              log,
              signal,
              purchases: trustPurchases(config, services.chain, options.devnet?.buyers?.[LOCAL_BUYER_INDEX]?.privateKey),
              onProgress,
            }),
          ),
      }),
    );
  if (statusFeed) {
    const schedules: JobSchedule[] = [
      crawlIntervalMs === null
        ? { name: "trust_crawl", intervalMs: null, disabledReason: "CRAWL_INTERVAL_MINUTES is 0 on this deployment" }
        : { name: "trust_crawl", intervalMs: crawlIntervalMs },
      { name: "ledger_upkeep", intervalMs: maintenance ? (intervals.ledger_upkeep ?? 60_000) : null },
      { name: "status", intervalMs: intervals.status ?? STATUS_INTERVAL_SECONDS * 1000 },
    ];
    const rpc = local
      ? [{ label: "anvil (local chain)", url: rpcUrls[0] as string }]
      : rpcUrls.map((url, i) => ({ label: `RPC ${i + 1} (${new URL(url).host})`, url }));
    const probes = upstreamProbes({
      ...config.upstreams,
      cdpDiscoveryUrl: intelSettings.cdpDiscoveryUrl,
      x402ListUrl: intelSettings.x402ListUrl,
      usdc: config.usdc.address,
      timeoutMs: Math.min(config.upstreams.timeoutMs, PROBE_TIMEOUT_MS),
    });
    const statusFacilitator = facilitator;
    jobs.push({
      name: "status",
      intervalMs: intervals.status ?? STATUS_INTERVAL_SECONDS * 1000,
      runAtStart: true,
      async run() {
        const doc = await generateStatus({
          store,
          instance,
          rpc,
          facilitator: statusFacilitator,
          network: config.network,
          upstreams: probes,
          jobs: schedules,
        });
        return `overall ${doc.overall}`;
      },
    });
  }

  const astro = options.astro ?? (await loadAstroHandler());
  phase("astro_loaded");
  const lease = config.payments.leaseSeconds;
  // One gate per site, so each site's challenges quote its own origin; they share the
  // facilitator, the store (ledger, kept answers) and the in-flight claims.
  const inFlight = store.engine === "postgres" ? storeInFlightRegistry(store, lease) : memoryInFlightRegistry(lease);
  const gateFor = (siteRoutes: typeof allRoutes, publicUrl: string | undefined, site?: Partial<GateOptions>) =>
    new PaymentGate({
      routes: siteRoutes,
      config: { ...config, publicUrl },
      payTo,
      facilitator,
      store,
      // The embedded database serves one service process, so one instance: memory suffices and a crash leaves no stale claim.
      // On PostgreSQL several instances share the leases.
      inFlight,
      instance,
      authorizations,
      log,
      observer: metrics.payments,
      ...site,
    });
  const primaryGate = gateFor(primarySite.routes, config.publicUrl);
  const secondaryGate = gateFor(baseToolsSite.routes, config.secondary.publicUrl);
  const drain = drainable();
  // Every site's application shares the drain, the Astro handler, the built files and the metrics.
  const appFor = (site: Pick<AppOptions, "site" | "services" | "gate">) =>
    createApp({
      drain,
      config,
      ...site,
      astro,
      documentCache: options.documentCache ?? true,
      metrics,
    });
  const app = appFor({ services, gate: primaryGate });
  const secondaryServices: Services = { ...services, config: { ...services.config, publicUrl: config.secondary.publicUrl } };
  const secondaryApp = appFor({ site: baseToolsSite, services: secondaryServices, gate: secondaryGate });

  const solanaParts = await solanaSiteOf({
    config,
    local,
    services,
    endpoints: options.solana,
    facilitator: options.solanaFacilitator,
    feePayer: solanaFeePayer,
  });
  const solana = solanaParts && {
    ...solanaParts,
    gate: gateFor(solanaSite.routes, solanaParts.publicUrl, {
      payTo: solanaParts.payTo as `0x${string}`,
      facilitator: solanaParts.facilitator,
      authorizations: solanaParts.authorizations,
      scheme: solanaParts.scheme,
    }),
  };
  const solanaApp = solana ? appFor({ site: solanaSite, services: solana.services, gate: solana.gate }) : undefined;

  // Production: one port, the site chosen by host name. Local mode: the secondary and Solana sites on their own ports.
  const byHost = new Map(config.secondary.host ? [[config.secondary.host, secondaryApp]] : []);
  if (solanaApp && config.solana.host) byHost.set(config.solana.host, solanaApp);
  phase("apps_created");
  // Registered just before serving: a second process settling with the same key is refused here,
  // and a start refused earlier (a challenge over the header budget, say) leaves no heartbeat behind.
  const instanceInfo = {
    id: instance,
    version: packageJson.version,
    settlementAddress: facilitatorAddress,
    ...(options.processId ? { process: options.processId } : {}),
  };
  try {
    await registerInstance(store, instanceInfo, {
      log,
      heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS,
      // A claimed embedded database file is this process's alone (claimEmbedded).
      exclusiveStore: embeddedFile !== undefined,
    });
  } catch (error) {
    await solana?.close();
    if (ownStore) {
      await store.close().catch(() => {});
      if (embeddedFile) releaseEmbedded(embeddedFile);
    }
    throw error;
  }
  phase("instance_registered");
  heartbeat = startHeartbeat(store, instanceInfo, log, options.heartbeatMs ?? HEARTBEAT_MS);
  const listening = await Promise.allSettled([
    listen(byHost.size > 0 ? siteRouter(app, byHost) : app, config.port, config.host),
    local ? listen(secondaryApp, config.secondary.port, config.host) : undefined,
    local && solanaApp ? listen(solanaApp, config.solana.port, config.host) : undefined,
  ]);
  const refused = listening.find((r) => r.status === "rejected");
  if (refused) {
    // A port in use: remove the heartbeat, or a restart would wait for it to go quiet and the
    // status feed would count a dead instance for 15 minutes.
    for (const r of listening) if (r.status === "fulfilled") r.value?.close();
    heartbeat.stop();
    await unregisterInstance(store, instance).catch(() => {});
    await solana?.close();
    if (ownStore) {
      await store.close().catch(() => {});
      if (embeddedFile) releaseEmbedded(embeddedFile);
    }
    throw refused.reason;
  }
  const [server, secondaryServer, solanaServer] = listening.map((r) => (r as PromiseFulfilledResult<Server | undefined>).value) as [
    Server,
    Server | undefined,
    Server | undefined,
  ];
  const listeners = [server, secondaryServer, solanaServer].filter((s): s is Server => s !== undefined).map(trackConnections);
  phase("listening");
  // Added once the sites are built: the Solana site's scheme finds its open payments on its own chain.
  if (maintenance) {
    const schemes = solana ? [solana.scheme] : [];
    jobs.push(ledgerUpkeepJob(store, authorizations, payTo, log, intervals.ledger_upkeep ?? 60_000, schemes));
  }
  // The jobs start once the service answers: their first runs (the status document) would
  // otherwise compete with the start for the event loop.
  const scheduler = startJobs({ store, instance, log, jobs, ...(options.jobTiming ?? {}) });
  const urlOf = (s: Server) => {
    const { port } = s.address() as AddressInfo;
    const host = config.host.includes(":") ? `[${config.host}]` : config.host;
    return `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;
  };
  const url = urlOf(server);
  // Local mode: sign-ins bind to the origin each site listens on (production: its public URL).
  primaryGate.listeningAt(url);
  if (secondaryServer) secondaryGate.listeningAt(urlOf(secondaryServer));
  if (solanaServer) solana?.gate.listeningAt(urlOf(solanaServer));
  let stopped: Promise<{ drained: boolean; inFlight: number }> | undefined;
  const shutdown = (drainMs: number) => {
    stopped ??= (async () => {
      drain.start();
      // No new connections from now on, and the idle ones closed, but not those whose answer a
      // slow client is still taking (src/server/connections.ts). A request on a connection left
      // open is answered 503 with Connection: close (the drain middleware); the connections
      // still open once no answer is in flight are closed then.
      const busy = drain.sockets();
      const closed = Promise.all(listeners.map((l) => l.stop(busy)));
      const drained = await drain.idle(drainMs);
      const inFlight = drain.inFlight;
      for (const l of listeners) l.closeAll();
      await closed;
      heartbeat?.stop();
      await scheduler.stop();
      await solana?.close();
      await unregisterInstance(store, instance).catch((error: unknown) =>
        log.warn("could not remove the heartbeat", { error: error as Error }),
      );
      if (ownStore) await store.close();
      if (embeddedFile) releaseEmbedded(embeddedFile);
      return { drained, inFlight };
    })();
    return stopped;
  };
  return {
    url,
    server,
    /**
     * The secondary site's URL: its own port in local mode; in production the primary's URL, where
     * it answers requests naming SECONDARY_HOST (undefined when no secondary host is configured).
     */
    secondaryUrl: secondaryServer ? urlOf(secondaryServer) : config.secondary.host ? url : undefined,
    /** The Solana site's origin: its own port in local mode, the primary's with SOLANA_HOST in production; undefined: none. */
    solanaUrl: solanaServer ? urlOf(solanaServer) : solanaApp && config.solana.host ? url : undefined,
    services,
    payTo,
    facilitatorAddress,
    /** This instance's id (heartbeats, leases, ledger rows, job runs). */
    instance,
    /** The scheduled jobs (run one now with `jobs.runNow`). */
    jobs: scheduler,
    /**
     * Stop gracefully: stop accepting connections, let requests in flight finish (paid calls
     * settle and answer) for up to `drainMs` (default `DRAIN_MS`, 30 s), stop the jobs, remove the heartbeat and close the
     * store. Resolves with whether every request finished in time.
     */
    shutdown: (opts: { drainMs?: number } = {}) => shutdown(opts.drainMs ?? DRAIN_MS),
    /** Stop at once: `shutdown` without waiting for requests in flight. */
    close: async (): Promise<void> => {
      await shutdown(0);
    },
  };
}

/**
 * What the Solana site's gate and application are made of: local mode's chain and fee payer, or
 * production's RPC, payTo and facilitator (a fee-payer key or a remote URL). Undefined when the site is off.
 */
async function solanaSiteOf(args: {
  config: Config;
  local: boolean;
  services: Services;
  endpoints: SolanaEndpoints | undefined;
  facilitator: FacilitatorClient | undefined;
  /** Production's fee payer (SOLANA_FEE_PAYER_KEY), checked before anything was opened. */
  feePayer: KeyPairSigner | undefined;
}) {
  const { config, local, endpoints } = args;
  if (local ? !endpoints : !config.solana.enabled) return undefined;
  const { svmScheme } = await import("../solana/x402.ts");
  const { svmPaymentReader } = await import("../solana/settlements.ts");
  const entry = svmNetwork(solanaSite.networks[0]);
  const network = endpoints?.network ?? entry.id;
  const usdcMint = endpoints?.usdcMint ?? entry.usdc.address;
  const rpcUrl = endpoints?.rpcUrl ?? (config.solana.rpcUrls[0] as string);
  const payTo = endpoints?.payTo ?? (config.solana.payTo as string);
  let facilitator = args.facilitator;
  let closeFacilitator = async () => {};
  if (!facilitator) {
    const setting = config.solana.facilitator;
    if (setting.kind === "remote") facilitator = createRemoteFacilitator(setting.url, undefined, config.payments.timeoutMs);
    else {
      const feePayer = endpoints?.feePayer ?? args.feePayer;
      if (!feePayer) throw new Error("the Solana site needs a fee payer: local mode's, or SOLANA_FEE_PAYER_KEY");
      const { svmFacilitatorThread } = await import("../solana/facilitator-thread.ts");
      const thread = svmFacilitatorThread(feePayer, rpcUrl, network);
      facilitator = thread;
      closeFacilitator = thread.close;
    }
  }
  const publicUrl = local ? undefined : config.solana.publicUrl;
  const services: Services = {
    ...args.services,
    // The functions see the site's own network, asset and payTo (a CAIP-2 id of another family than the type names).
    config: {
      ...args.services.config,
      publicUrl,
      network: network as `eip155:${number}`,
      usdc: usdcMint as `0x${string}`,
      payTo: payTo as `0x${string}`,
    },
    solana: {
      network,
      rpcUrl,
      usdcMint,
      dexscreenerUrl: config.upstreams.dexscreenerUrl ?? DEXSCREENER_DEFAULT_URL,
      timeoutMs: config.upstreams.timeoutMs,
    },
  };
  // Challenges name the fee payer only: the buyer reads a blockhash from its own RPC (src/solana/x402.ts says why).
  const scheme = svmScheme(network, usdcMint, { rpcUrl, payTo });
  // A settlement reported failed, or a retry of a payment left open: the chain says whether it was paid.
  const authorizations = svmPaymentReader(scheme.settlementOf as NonNullable<PaymentScheme["settlementOf"]>);
  return { services, publicUrl, scheme, payTo, facilitator, authorizations, close: closeFacilitator };
}

/** Production's Solana fee payer from SOLANA_FEE_PAYER_KEY: its two halves must agree, and it must not be payTo. */
async function solanaFeePayerOf(config: Config, local: boolean, replaced: boolean): Promise<KeyPairSigner | undefined> {
  const setting = config.solana.facilitator;
  if (local || replaced || !config.solana.enabled || setting.kind !== "self") return undefined;
  const { signerFromSecret } = await import("../solana/keys.ts");
  // The public half is the fee payer every challenge names: a key whose halves disagree would sign as someone else.
  const feePayer = await signerFromSecret(setting.secretKey).catch((error: unknown) => {
    throw new ConfigError([`SOLANA_FEE_PAYER_KEY is not a valid Solana key pair (${(error as Error).message}); its value is not shown`]);
  });
  if (feePayer.address === config.solana.payTo) {
    throw new ConfigError(["SOLANA_PAY_TO is the fee payer's address; the facilitator refuses to settle a payment to its own fee payer"]);
  }
  return feePayer;
}

/**
 * Listen on `host:port` (0: a free port), with the time limits and the CONNECT answer every
 * listener shares; an error before listening (the port is taken) rejects.
 */
async function listen(handler: RequestListener, port: number, host: string): Promise<Server> {
  const server = createServer(handler).listen(port, host);
  // Node hands CONNECT to a listener instead of Express: answer it like any unknown method.
  server.on("connect", (_req, socket) => {
    const body = JSON.stringify(errorBody("method_not_allowed", "CONNECT is not answered here."));
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD, POST\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 120_000;
  await once(server, "listening");
  return server;
}
