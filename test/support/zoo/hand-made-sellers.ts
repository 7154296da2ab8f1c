/**
 * Hand-made sellers, each breaking one rule of src/intel/conformance.ts (or none: the
 * references), with their discovery documents served or broken as the row needs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { base as baseNetwork } from "../../../src/networks/base.ts";
import { BASE_USDC, SOLANA_USDC } from "./facilitator.ts";
import { ZOO_PAY_TO, ZOO_SOLANA_PAY_TO, type ZooSeller } from "./library-sellers.ts";

const PATH = "/api/data";

/** How a hand-made seller answers. */
export interface HandMadeSpec {
  /** The challenge, built from the seller's own URL; omit for a seller answering 200. */
  challenge?: (url: string) => Record<string, unknown>;
  /** Send the challenge in PAYMENT-REQUIRED; default true for v2 challenges, false for v1. */
  header?: boolean;
  /** The 402 body: the challenge itself (default), `{}`, or a body of its own. */
  body?: "challenge" | "empty" | ((url: string) => Record<string, unknown>);
  /** Discovery documents: served and valid (default), absent, a catch-all 200, an OpenAPI without prices, or a slow OpenAPI. */
  discovery?: "full" | "none" | "catch_all" | "unpriced_openapi" | "slow_openapi";
  /** Drop every connection without answering. */
  dead?: boolean;
  /** How long `slow_openapi` waits; default 5 s. */
  slowMs?: number;
}

/** A v2 Base USDC option; `change` edits it (undefined values delete the field). */
export function v2Option(change: Record<string, unknown> = {}): Record<string, unknown> {
  return withChanges(
    {
      scheme: "exact",
      network: baseNetwork.id,
      amount: "10000",
      asset: BASE_USDC,
      payTo: ZOO_PAY_TO,
      maxTimeoutSeconds: 300,
      extra: { name: "USD Coin", version: "2" },
    },
    change,
  );
}

/** A v1 Base USDC option, as x402-express 1.x writes one. */
export function v1Option(url: string, change: Record<string, unknown> = {}): Record<string, unknown> {
  return withChanges(
    {
      scheme: "exact",
      network: "base",
      maxAmountRequired: "10000",
      resource: url,
      description: "hand-made v1 seller",
      mimeType: "application/json",
      payTo: ZOO_PAY_TO,
      maxTimeoutSeconds: 60,
      asset: BASE_USDC,
      outputSchema: { input: { type: "http", method: "GET", discoverable: true } },
      extra: { name: "USD Coin", version: "2" },
    },
    change,
  );
}

/** A v2 Solana USDC option, with `change` applied (a key set to undefined is removed). */
export function solanaOption(change: Record<string, unknown> = {}): Record<string, unknown> {
  return withChanges(
    {
      scheme: "exact",
      network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      amount: "10000",
      asset: SOLANA_USDC,
      payTo: ZOO_SOLANA_PAY_TO,
      maxTimeoutSeconds: 300,
      extra: { feePayer: "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4" },
    },
    change,
  );
}

function withChanges(base: Record<string, unknown>, change: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base, ...change };
  for (const [k, v] of Object.entries(change)) if (v === undefined) delete out[k];
  return out;
}

/** A v2 challenge with Bazaar metadata around `accepts`. */
export function v2Challenge(url: string, accepts: Record<string, unknown>[]): Record<string, unknown> {
  return {
    x402Version: 2,
    error: "Payment required",
    resource: { url, description: "hand-made seller", mimeType: "application/json" },
    accepts,
    extensions: { bazaar: { info: { input: { type: "http", method: "GET" } }, schema: {} } },
  };
}

/** A v1 challenge around `accepts`. */
export function v1Challenge(accepts: Record<string, unknown>[]): Record<string, unknown> {
  return { x402Version: 1, error: "X-PAYMENT header is required", accepts };
}

export function discoveryAnswer(
  spec: HandMadeSpec,
  path: string,
  res: ServerResponse,
  json: (status: number, body: unknown) => void,
): boolean {
  if (path !== "/.well-known/x402" && path !== "/openapi.json") return false;
  const mode = spec.discovery ?? "full";
  if (mode === "none") json(404, { error: "not found" });
  else if (mode === "catch_all") json(200, { error: "not found" });
  else if (path === "/.well-known/x402") json(200, { version: 1, resources: [`GET ${PATH}`] });
  else {
    const priced = { "x-payment-info": { protocols: ["x402"], price: "0.01", network: baseNetwork.id, asset: BASE_USDC, amount: "10000" } };
    const doc = {
      openapi: "3.1.0",
      info: { title: "hand-made seller", version: "1.0.0" },
      paths: { [PATH]: { get: mode === "unpriced_openapi" ? { summary: "data" } : { summary: "data", ...priced } } },
    };
    if (mode === "slow_openapi") {
      const timer = setTimeout(() => json(200, doc), spec.slowMs ?? 5_000);
      res.on("close", () => clearTimeout(timer));
    } else json(200, doc);
  }
  return true;
}

/** Start one hand-made seller on 127.0.0.1. */
export async function startHandMade(spec: HandMadeSpec): Promise<ZooSeller> {
  let origin = "";
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (discoveryAnswer(spec, path, res, json)) return;
    if (spec.discovery === "catch_all" && path !== PATH) return json(200, { error: "not found" });
    const url = `${origin}${path}`;
    if (!spec.challenge) return json(200, { data: "free" });
    const challenge = spec.challenge(url);
    const header = spec.header ?? challenge.x402Version !== 1;
    const body = spec.body === "empty" ? {} : typeof spec.body === "function" ? spec.body(url) : challenge;
    json(402, body, header ? { "PAYMENT-REQUIRED": Buffer.from(JSON.stringify(challenge)).toString("base64") } : {});
  });
  if (spec.dead) server.on("connection", (socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}${PATH}`,
    method: "GET",
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
