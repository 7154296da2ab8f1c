/**
 * Sellers built with the libraries sellers use, each set up as its README's quick start shows
 * (network Base mainnet and a price of $0.10 or $0.01 where the README leaves a placeholder),
 * pointed at the local stand-in facilitator (./facilitator.ts). Versions are pinned in
 * package.json, so a new library version that changes its 402 answer changes a zoo row.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Middleware } from "@dexterai/x402/server";
import { createMiddleware as faremeterExpress } from "@faremeter/middleware/express";
import { serve } from "@hono/node-server";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware as x402Express, x402ResourceServer as x402ExpressServer } from "@x402/express";
import { paymentMiddleware as x402Hono, x402ResourceServer as x402HonoServer } from "@x402/hono";
import express from "express";
import { Hono } from "hono";
import { paymentMiddleware as x402ExpressV1 } from "x402-express";
import { base } from "../../../src/networks/base.ts";
import { BASE_USDC } from "./facilitator.ts";

/** A running zoo seller. */
export interface ZooSeller {
  url: string;
  method: "GET" | "POST";
  close(): Promise<void>;
}

/** The payTo every zoo seller quotes on EVM networks. */
export const ZOO_PAY_TO = "0x1111111111111111111111111111111111111111";
/** The payTo of the Solana sellers. */
export const ZOO_SOLANA_PAY_TO = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

const PATH = "/protected-route";

function listening(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    const done = () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    if (server.listening) done();
    else {
      server.once("listening", done);
      server.once("error", reject);
    }
  });
}

async function running(server: Server, path: string): Promise<ZooSeller> {
  const origin = await listening(server);
  return {
    url: `${origin}${path}`,
    method: "GET",
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `@x402/express` quick start: x402ResourceServer with the exact EVM scheme, one priced route. */
export async function x402ExpressQuickStart(facilitatorUrl: string): Promise<ZooSeller> {
  const app = express();
  const resourceServer = new x402ExpressServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(base.id, new ExactEvmScheme());
  app.use(
    x402Express(
      {
        [`GET ${PATH}`]: {
          accepts: { scheme: "exact", price: "$0.10", network: base.id, payTo: ZOO_PAY_TO },
          description: "Access to premium content",
        },
      },
      resourceServer,
    ),
  );
  app.get(PATH, (_req, res) => {
    res.json({ message: "This content is behind a paywall" });
  });
  return running(app.listen(0, "127.0.0.1"), PATH);
}

/** `@x402/hono` quick start on `@hono/node-server`. */
export async function x402HonoQuickStart(facilitatorUrl: string): Promise<ZooSeller> {
  const app = new Hono();
  const resourceServer = new x402HonoServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(base.id, new ExactEvmScheme());
  app.use(
    x402Hono(
      {
        [`GET ${PATH}`]: {
          accepts: { scheme: "exact", price: "$0.10", network: base.id, payTo: ZOO_PAY_TO },
          description: "Access to premium content",
        },
      },
      resourceServer,
    ),
  );
  app.get(PATH, (c) => c.json({ message: "This content is behind a paywall" }));
  return running(serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server, PATH);
}

/** `x402-express` 1.x quick start (x402 v1): payTo and a route price, network `base`. */
export async function x402ExpressV1QuickStart(facilitatorUrl: string): Promise<ZooSeller> {
  const app = express();
  app.use(
    x402ExpressV1(
      ZOO_PAY_TO,
      { [PATH]: { price: "$0.10", network: "base", config: { description: "Access to premium content" } } },
      { url: facilitatorUrl as `${string}://${string}` },
    ),
  );
  app.get(PATH, (_req, res) => {
    res.json({ message: "This content is behind a paywall" });
  });
  return running(app.listen(0, "127.0.0.1"), PATH);
}

/**
 * `@faremeter/middleware` 0.22.0 with a remote facilitator and `accepts` (its README's
 * `facilitatorURL` + `accepts` mode), by default (x402 v1 only) or with v2 switched on.
 */
export async function faremeterSeller(facilitatorUrl: string, options: { v2: boolean }): Promise<ZooSeller> {
  const app = express();
  app.get(
    PATH,
    await faremeterExpress({
      facilitatorURL: facilitatorUrl,
      accepts: [
        { scheme: "exact", network: "base", payTo: ZOO_PAY_TO, maxAmountRequired: "100000", asset: BASE_USDC, maxTimeoutSeconds: 60 },
      ],
      ...(options.v2 ? { supportedVersions: { x402v1: true, x402v2: true } } : {}),
    }),
    (_req, res) => {
      res.json({ message: "This content is behind a paywall" });
    },
  );
  return running(app.listen(0, "127.0.0.1"), PATH);
}

/** `@dexterai/x402` 2.0.0: its quick start (Solana) or its multi-chain EVM example (Base and Polygon). */
export async function dexterSeller(facilitatorUrl: string, options: { chain: "solana" | "evm" }): Promise<ZooSeller> {
  const app = express();
  const config =
    options.chain === "solana"
      ? { payTo: ZOO_SOLANA_PAY_TO, amount: "0.01", facilitatorUrl }
      : { payTo: ZOO_PAY_TO, amount: "0.01", network: [base.id, "eip155:137"], facilitatorUrl };
  app.get("/api/protected", x402Middleware(config), (_req, res) => {
    res.json({ data: "protected content" });
  });
  return running(app.listen(0, "127.0.0.1"), "/api/protected");
}
