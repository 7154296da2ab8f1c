/**
 * Starting the whole service from a configuration: chain client, facilitator, Astro
 * handler and HTTP server. Used by `npm start` (src/server/main.ts), the tests and the
 * benchmarks, so all three run the same code.
 */
import { randomBytes } from "node:crypto";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import type { FacilitatorClient } from "@x402/core/server";
import type { PublicClient, Transport } from "viem";
import packageJson from "../../package.json" with { type: "json" };
import type { allRoutes } from "../../spec/routes.ts";
import { baseToolsSite, primarySite } from "../../spec/sites.ts";
import type { AnalyticsSettings } from "../analytics/services.ts";
import { authorizationReader } from "../chain/authorization.ts";
import { baseChain, createChainClient, rpcTransport } from "../chain/client.ts";
import type { Config } from "../config.ts";
import type { Services } from "../context.ts";
import { runCrawl } from "../intel/crawl.ts";
import { startCrawlSchedule } from "../intel/crawl-schedule.ts";
import { createIntelServices, type IntelSettings } from "../intel/intel-services.ts";
import { createLogger, type Logger } from "../log.ts";
import type { Resolver } from "../outbound/safe-fetch.ts";
import { createRemoteFacilitator, createSelfFacilitator } from "../payments/facilitator.ts";
import { PaymentGate } from "../payments/gate.ts";
import { type InFlightRegistry, memoryInFlightRegistry, storeInFlightRegistry } from "../payments/inflight.ts";
import { startLedgerMaintenance } from "../payments/upkeep.ts";
import { claimPgliteDir, releasePgliteDir, storeLocationOf } from "../store/configured.ts";
import { openStore, type Store } from "../store/store.ts";
import { CDP_DISCOVERY_URL } from "../upstreams/directory-cdp.ts";
import { X402_LIST_URL } from "../upstreams/directory-x402-list.ts";
import { type AstroHandler, createApp, loadAstroHandler, siteRouter } from "./app.ts";

/** What local mode's devnet provides to the service. */
export interface DevnetEndpoints {
  rpcUrl: string;
  payTo: `0x${string}`;
  facilitator: { address: `0x${string}`; privateKey: `0x${string}` };
}

/** Options of `startService`; everything but `config` has a production default. */
export interface StartServiceOptions {
  config: Config;
  /** Required in local mode: the running devnet. */
  devnet?: DevnetEndpoints;
  log?: Logger;
  /** Replace the transport functions read the chain through (tests: a failing RPC stub). */
  readTransport?: Transport;
  /** Replace the facilitator (tests). */
  facilitator?: FacilitatorClient;
  astro?: AstroHandler;
  distDir?: string;
  inFlight?: InFlightRegistry;
  /** An open store to use (and leave open on close); default: open the configured one. */
  store?: Store;
  /** This instance's id in the ledger and the in-flight leases. */
  instance?: string;
  /** Run ledger upkeep (reconcile, purge) every minute; default true. */
  maintenance?: boolean;
  /** Serve cacheable free documents from memory; default true (off only to benchmark the Astro path). */
  documentCache?: boolean;
  /** Let caller-chosen URLs reach loopback (tests); default: the config's (local mode only). Refused in production mode. */
  allowLoopbackTargets?: boolean;
  /** Let the trust crawl reach loopback (local mode's demo catalogue of local sellers). Refused in production mode. */
  crawlAllowLoopback?: boolean;
  /** Replace DNS resolution of outbound fetches (tests). */
  resolve?: Resolver;
  /** Delay before the scheduled crawl first checks whether a crawl is due; default 5 s. */
  crawlFirstCheckMs?: number;
  /** Chain analytics settings to use instead of the config's (tests: scanner bounds, upstream URLs). */
  analytics?: AnalyticsSettings;
}

/** A running service. */
export interface RunningService {
  url: string;
  server: Server;
  /**
   * The secondary site's URL: its own port in local mode; in production the primary's URL, where
   * it answers requests naming SECONDARY_HOST (undefined when no secondary host is configured).
   */
  secondaryUrl: string | undefined;
  services: Services;
  payTo: `0x${string}`;
  facilitatorAddress: `0x${string}` | undefined;
  close(): Promise<void>;
}

/** Start the service and listen on `config.host:config.port` (port 0 picks a free one). */
export async function startService(options: StartServiceOptions): Promise<RunningService> {
  const { config } = options;
  const log = options.log ?? createLogger(config.logLevel);
  const local = config.mode === "local";
  if (local && !options.devnet) throw new Error("local mode needs a running devnet");
  const allowLoopbackTargets = options.allowLoopbackTargets ?? config.intel.allowLoopbackTargets;
  if (!local && (allowLoopbackTargets || options.crawlAllowLoopback)) {
    throw new Error("loopback targets are never allowed in production mode");
  }

  const rpcUrls = local ? [options.devnet?.rpcUrl as string] : config.rpcUrls;
  const chain = baseChain(rpcUrls);
  const transport = rpcTransport(rpcUrls);
  const payTo = (local ? options.devnet?.payTo : config.payTo) as `0x${string}`;

  let facilitatorAddress: `0x${string}` | undefined;
  let facilitator = options.facilitator;
  if (!facilitator) {
    const setting = config.facilitator;
    if (setting.kind === "remote") facilitator = createRemoteFacilitator(setting.url, setting.cdp, config.payments.timeoutMs);
    else {
      const key = setting.kind === "self" ? setting.privateKey : (options.devnet?.facilitator.privateKey as `0x${string}`);
      const self = createSelfFacilitator(key, chain, transport, config.network);
      facilitatorAddress = self.address;
      facilitator = self;
    }
  }

  const ownStore = !options.store;
  const location = storeLocationOf(config);
  if (ownStore && location.kind === "pglite") claimPgliteDir(location.dir as string);
  const store = options.store ?? (await openStore(location));
  const instance = options.instance ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;

  const intelSettings: IntelSettings = {
    cdpDiscoveryUrl: config.intel.cdpDiscoveryUrl ?? CDP_DISCOVERY_URL,
    x402ListUrl: config.intel.x402ListUrl ?? X402_LIST_URL,
    allowLoopbackTargets,
    crawlAllowLoopback: options.crawlAllowLoopback ?? false,
    crawlConcurrency: config.intel.crawlConcurrency,
    crawlOriginTimeoutMs: config.intel.crawlOriginTimeoutSeconds * 1000,
    ...(options.resolve ? { resolve: options.resolve } : {}),
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
    analytics: options.analytics ?? { mode: config.mode, upstreams: config.upstreams },
    chat: config.chat,
  };
  const authorizations = authorizationReader(createChainClient(chain, transport), config.usdc.address);
  const stopMaintenance = options.maintenance === false ? () => {} : startLedgerMaintenance(store, authorizations, payTo, log);
  const crawlInterval = config.intel.crawlIntervalMinutes ?? 0;
  // The schedule runs here, outside the Astro bundle, with its own fetcher and catalogue.
  const intel = createIntelServices(intelSettings);
  const stopCrawls =
    crawlInterval > 0
      ? startCrawlSchedule({
          intervalMinutes: crawlInterval,
          store,
          log,
          ...(options.crawlFirstCheckMs !== undefined ? { firstCheckMs: options.crawlFirstCheckMs } : {}),
          crawl: (signal) =>
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
            }),
        })
      : async () => {};

  const astro = options.astro ?? (await loadAstroHandler(options.distDir ?? "dist"));
  const lease = config.payments.leaseSeconds;
  // One gate per site, so each site's challenges quote its own origin; they share the
  // facilitator, the store (ledger, kept answers) and the in-flight claims.
  const inFlight = options.inFlight ?? (store.engine === "postgres" ? storeInFlightRegistry(store, lease) : memoryInFlightRegistry(lease));
  const gateFor = (siteRoutes: typeof allRoutes, publicUrl: string | undefined) =>
    new PaymentGate({
      routes: siteRoutes,
      config: { ...config, publicUrl },
      payTo,
      facilitator,
      store,
      // PGlite serves one process, so one instance: memory suffices and a crash leaves no stale claim.
      // On PostgreSQL several instances share the leases.
      inFlight,
      instance,
      authorizations,
      log,
    });
  const clientDir = `${options.distDir ?? "dist"}/client`;
  const documentCacheOn = options.documentCache ?? true;
  const app = createApp({
    config,
    services,
    gate: gateFor(primarySite.routes, config.publicUrl),
    astro,
    clientDir,
    documentCache: documentCacheOn,
  });
  const secondaryPublicUrl = config.secondary.publicUrl;
  const secondaryServices: Services = { ...services, config: { ...services.config, publicUrl: secondaryPublicUrl } };
  const secondaryApp = createApp({
    config,
    site: baseToolsSite,
    publicUrl: secondaryPublicUrl,
    services: secondaryServices,
    gate: gateFor(baseToolsSite.routes, secondaryPublicUrl),
    astro,
    clientDir,
    documentCache: documentCacheOn,
  });

  // Production: one port, the site chosen by host name. Local mode: the secondary site on its own port.
  const byHost = new Map(config.secondary.host ? [[config.secondary.host, secondaryApp]] : []);
  const server = await listen(byHost.size > 0 ? siteRouter(app, byHost) : app, config.port, config.host);
  const secondaryServer = local ? await listen(secondaryApp, config.secondary.port, config.host) : undefined;
  for (const s of [server, secondaryServer]) if (s) harden(s);
  const urlOf = (s: Server) => {
    const { port } = s.address() as AddressInfo;
    const host = config.host.includes(":") ? `[${config.host}]` : config.host;
    return `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;
  };
  const url = urlOf(server);
  return {
    url,
    server,
    secondaryUrl: secondaryServer ? urlOf(secondaryServer) : config.secondary.host ? url : undefined,
    services,
    payTo,
    facilitatorAddress,
    close: async () => {
      stopMaintenance();
      await stopCrawls();
      await Promise.all(
        [server, secondaryServer].map(
          (s) =>
            s &&
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
      if (ownStore) await store.close();
      if (ownStore && location.kind === "pglite") releasePgliteDir(location.dir as string);
    },
  };
}

/** Listen on `host:port` (0: a free port). */
function listen(handler: RequestListener, port: number, host: string): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const s = createServer(handler);
    s.once("error", reject);
    s.listen(port, host, () => {
      s.off("error", reject);
      resolve(s);
    });
  });
}

/** Time limits and the CONNECT answer every listener shares. */
function harden(server: Server): void {
  // Node hands CONNECT to a listener instead of Express: answer it like any unknown method.
  server.on("connect", (_req, socket) => {
    const body = JSON.stringify({
      error: { code: "method_not_allowed", message: "CONNECT is not answered here.", docs: "/errors#method_not_allowed" },
    });
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD, POST\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 120_000;
}
