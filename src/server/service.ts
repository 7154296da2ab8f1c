/**
 * Starting the whole service from a configuration: chain client, facilitator, Astro
 * handler and HTTP server. Used by `npm start` (src/server/main.ts), the tests and the
 * benchmarks, so all three run the same code.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import type { FacilitatorClient } from "@x402/core/server";
import type { PublicClient, Transport } from "viem";
import packageJson from "../../package.json" with { type: "json" };
import { routes } from "../../spec/routes.ts";
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
import { type AstroHandler, createApp, loadAstroHandler } from "./app.ts";

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
    analytics: options.analytics ?? { mode: config.mode, upstreams: config.upstreams, entityBudget: config.entityIntel },
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
  const gate = new PaymentGate({
    routes,
    config,
    payTo,
    facilitator,
    store,
    // PGlite serves one process, so one instance: memory suffices and a crash leaves no stale claim.
    // On PostgreSQL several instances share the leases.
    inFlight: options.inFlight ?? (store.engine === "postgres" ? storeInFlightRegistry(store, lease) : memoryInFlightRegistry(lease)),
    instance,
    authorizations,
    log,
  });
  const app = createApp({
    config,
    services,
    gate,
    astro,
    clientDir: `${options.distDir ?? "dist"}/client`,
    documentCache: options.documentCache ?? true,
  });

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
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
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  return {
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`,
    server,
    services,
    payTo,
    facilitatorAddress,
    close: async () => {
      stopMaintenance();
      await stopCrawls();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (ownStore) await store.close();
      if (ownStore && location.kind === "pglite") releasePgliteDir(location.dir as string);
    },
  };
}
