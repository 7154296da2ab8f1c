/**
 * Local x402 sellers of known behaviour: a conforming v2 seller and the ways real ones go
 * wrong (v1 only, challenge only in the body, decimal amount, no payTo, free 200, very
 * expensive, slow, dead). They serve the local-mode demo catalogue, the crawl benchmark and
 * the tests. Each is a real HTTP server on a loopback address (127.0.0.2 and friends work on
 * Linux without setup), answering every path but its discovery documents alike. The conforming
 * seller serves a call that carries a payment (without settling it).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { base } from "../../networks/base.ts";
import { v1Option, v2Option } from "../stubs/directory-stubs.ts";
import { closeServer, listen } from "../stubs/loopback.ts";

/** Every way a seller can behave, for loops. */
export const SELLER_KINDS = [
  "conforming_v2",
  "v1_only",
  "body_only",
  "decimal_amount",
  "missing_pay_to",
  "free_200",
  "expensive",
  "slow",
  "dead",
] as const;

/** How a seller behaves. */
export type SellerKind = (typeof SELLER_KINDS)[number];

/** One seller to start. */
export interface SellerSpec {
  kind: SellerKind;
  /** Loopback address to listen on; default 127.0.0.1. */
  host?: string;
  /** Receiving address quoted; default a fixed test address. */
  payTo?: `0x${string}`;
  /** How long `slow` waits before answering; default 30 s. */
  slowMs?: number;
}

/** A running seller. */
export interface RunningSeller {
  spec: SellerSpec;
  origin: string;
  /** The paid endpoint the directories list. */
  url: string;
  method: "GET" | "POST";
  close(): Promise<void>;
}

/** USDC on Base. */
const USDC = base.usdc.address;
const DEFAULT_PAY_TO = "0x000000000000000000000000000000000000dEaD";

/** The endpoint path every seller sells. */
export const SELLER_PATH = "/api/data";

function v2Challenge(spec: SellerSpec, url: string): Record<string, unknown> {
  // $0.01; $25 for `expensive`.
  const amount = spec.kind === "expensive" ? "25000000" : spec.kind === "decimal_amount" ? "0.01" : "10000";
  const option = v2Option(base.id, amount, spec.payTo ?? DEFAULT_PAY_TO);
  if (spec.kind === "missing_pay_to") delete option.payTo;
  return {
    x402Version: 2,
    error: "Payment required",
    resource: { url, description: `demo ${spec.kind} seller`, mimeType: "application/json" },
    accepts: [option],
    extensions: { bazaar: { info: { input: { type: "http", method: "GET" } }, schema: {} } },
  };
}

function v1Challenge(spec: SellerSpec, url: string): Record<string, unknown> {
  return {
    x402Version: 1,
    error: "X-PAYMENT header is required",
    accepts: [v1Option({ url, amount: "10000", payTo: spec.payTo ?? DEFAULT_PAY_TO, description: "demo v1 seller" }, "base")],
  };
}

/** Whether a kind serves /.well-known/x402 and /openapi.json. */
function servesDiscovery(kind: SellerKind): boolean {
  return kind !== "v1_only" && kind !== "free_200";
}

function handler(spec: SellerSpec, origin: () => string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = (req.url ?? "/").split("?")[0];
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (path === "/.well-known/x402" || path === "/openapi.json") {
      if (!servesDiscovery(spec.kind)) return json(404, { error: "not found" });
      return path === "/.well-known/x402"
        ? json(200, { version: 1, resources: [`GET ${SELLER_PATH}`] })
        : json(200, {
            openapi: "3.1.0",
            info: { title: "demo seller", version: "1" },
            paths: {
              [SELLER_PATH]: {
                get: { "x-payment-info": { protocols: ["x402"], price: "0.01", network: base.id, asset: USDC, amount: "10000" } },
              },
            },
          });
    }
    const url = `${origin()}${path}`;
    switch (spec.kind) {
      case "free_200":
        return json(200, { data: "free" });
      case "v1_only":
        return json(402, v1Challenge(spec, url));
      case "body_only":
        return json(402, v2Challenge(spec, url));
      case "slow": {
        const timer = setTimeout(() => json(402, v2Challenge(spec, url)), spec.slowMs ?? 30_000);
        res.on("close", () => clearTimeout(timer));
        return;
      }
      default: {
        // A paid call to the conforming seller is served (a trust run verifying it by purchase
        // gets an answer); it has no facilitator, so nothing is settled and nothing charged.
        if (spec.kind === "conforming_v2" && typeof req.headers["payment-signature"] === "string") {
          return json(200, { data: "demo paid answer" });
        }
        const challenge = v2Challenge(spec, url);
        return json(402, challenge, { "PAYMENT-REQUIRED": Buffer.from(JSON.stringify(challenge)).toString("base64") });
      }
    }
  };
}

/**
 * Start one seller. A `dead` seller keeps its port but drops every connection at once, so no
 * HTTP answer ever comes (a released port could be handed to another seller).
 */
export async function startSeller(spec: SellerSpec): Promise<RunningSeller> {
  const host = spec.host ?? "127.0.0.1";
  let origin = "";
  const server = createServer(handler(spec, () => origin));
  if (spec.kind === "dead") server.on("connection", (socket) => socket.destroy());
  const port = await listen(server, host);
  origin = `http://${host}:${port}`;
  return { spec, origin, url: `${origin}${SELLER_PATH}`, method: "GET", close: () => closeServer(server) };
}

/** Start many sellers; `close` stops them all. */
export async function startSellers(specs: readonly SellerSpec[]): Promise<{ sellers: RunningSeller[]; close(): Promise<void> }> {
  const sellers: RunningSeller[] = [];
  try {
    // Batches keep the number of listen() calls in flight modest.
    for (let i = 0; i < specs.length; i += 50) {
      sellers.push(...(await Promise.all(specs.slice(i, i + 50).map(startSeller))));
    }
  } catch (error) {
    await Promise.all(sellers.map((s) => s.close()));
    throw error;
  }
  return { sellers, close: async () => void (await Promise.all(sellers.map((s) => s.close()))) };
}
