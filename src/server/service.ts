/**
 * Starting the whole service from a configuration: chain client, facilitator, Astro
 * handler and HTTP server. Used by `npm start` (src/server/main.ts), the tests and the
 * benchmarks, so all three run the same code.
 */

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FacilitatorClient } from "@x402/core/server";
import type { PublicClient, Transport } from "viem";
import packageJson from "../../package.json" with { type: "json" };
import { baseChain, createChainClient, rpcTransport } from "../chain/client.ts";
import type { Config } from "../config.ts";
import type { Services } from "../context.ts";
import { createLogger, type Logger } from "../log.ts";
import { type AstroHandler, createApp, loadAstroHandler } from "./app.ts";
import type { InFlightRegistry } from "./middleware/in-flight-guard.ts";
import { createRemoteFacilitator, createSelfFacilitator } from "./payments.ts";

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

  const rpcUrls = local ? [options.devnet?.rpcUrl as string] : config.rpcUrls;
  const chain = baseChain(rpcUrls);
  const transport = rpcTransport(rpcUrls);
  const payTo = (local ? options.devnet?.payTo : config.payTo) as `0x${string}`;

  let facilitatorAddress: `0x${string}` | undefined;
  let facilitator = options.facilitator;
  if (!facilitator) {
    const setting = config.facilitator;
    if (setting.kind === "remote") facilitator = createRemoteFacilitator(setting.url, setting.cdp);
    else {
      const key = setting.kind === "self" ? setting.privateKey : (options.devnet?.facilitator.privateKey as `0x${string}`);
      const self = createSelfFacilitator(key, chain, transport, config.network);
      facilitatorAddress = self.address;
      facilitator = self;
    }
  }

  const services: Services = {
    config: {
      mode: config.mode,
      network: config.network,
      chainId: config.chainId,
      usdc: config.usdc.address,
      payTo,
      publicUrl: config.publicUrl,
      version: packageJson.version,
      validateResponses: local,
    },
    chain: createChainClient(chain, options.readTransport ?? transport) as PublicClient,
    log,
  };

  const astro = options.astro ?? (await loadAstroHandler(options.distDir ?? "dist"));
  const app = createApp({
    config,
    services,
    facilitator,
    astro,
    clientDir: `${options.distDir ?? "dist"}/client`,
    ...(options.inFlight ? { inFlight: options.inFlight } : {}),
  });

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host, (error?: Error) => (error ? reject(error) : resolve(s)));
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
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
