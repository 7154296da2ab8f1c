/**
 * What a function in `functions/` receives besides its input. Functions never see
 * Express or Astro objects: everything they need arrives here.
 */

import type { Static, TObject, TSchema } from "@sinclair/typebox";
import type { PublicClient } from "viem";
import type { RouteDef } from "../spec/route.ts";
import type { SiteId } from "../spec/sites.ts";
import type { AnalyticsSettings } from "./analytics/services.ts";
import type { ChatLlmConfig } from "./chat/config.ts";
import type { ServiceError } from "./errors.ts";
import type { IntelSettings } from "./intel/intel-services.ts";
import type { Logger } from "./log.ts";
import type { CallLimits } from "./mcp/remote.ts";
import type { BalanceDebit } from "./payments/balances.ts";
import type { PaymentGate } from "./payments/gate.ts";
import type { DecodedPayment, PayloadProblem } from "./payments/payload.ts";
import type { Store } from "./store/store.ts";

/** Settings a function may read (never secrets). */
export interface FunctionConfig {
  mode: "local" | "production";
  network: `eip155:${number}`;
  chainId: number;
  usdc: `0x${string}`;
  payTo: `0x${string}`;
  publicUrl: string | undefined;
  /**
   * Signatures of the public origin by the `payTo` key, published in `/openapi.json`
   * (Config.ownershipProofs). Absent or empty: none, except local mode's, made on the spot.
   */
  ownershipProofs?: readonly string[];
  version: string;
  /** Check every answer against its response schema (on in local mode and tests). */
  validateResponses: boolean;
}

/** Long-lived services shared by all requests, built once at start. */
export interface Services {
  config: FunctionConfig;
  /** Reads the chain the service settles on. */
  chain: PublicClient;
  log: Logger;
  /** The durable store (SQLite or PostgreSQL). */
  store: Store;
  /**
   * x402 intelligence settings: directories, outbound policy, crawl bounds; functions
   * get the fetcher and catalogue from them with `intelOf`. Always set by `startService`;
   * optional only so hand-built test contexts stay valid.
   */
  intel?: IntelSettings;
  /**
   * Chain analytics settings: labels scope, market-data URLs, scanner bounds;
   * functions get the scanner, classifier, labels and price source built from them with
   * `analyticsOf`. Always set by `startService`; optional only so hand-built test contexts stay valid.
   */
  analytics?: AnalyticsSettings;
  /**
   * The chat's LLM engine, with its key (null: the built-in engine). Always set by `startService`;
   * optional only so hand-built test contexts stay valid (absent: the built-in engine).
   */
  chatLlm?: ChatLlmConfig | null;
  /** The clock functions read through `ctx.now()` (tests move it); absent: the system clock. */
  now?: () => Date;
  /** The Solana site's RPC and market data (set on that site's services only). */
  solana?: import("./solana/reads.ts").SolanaSettings;
}

/** A payment that the facilitator verified for this request and that settles after a 2xx answer. */
export interface VerifiedPayment {
  /** `"POST /api/x"`: the route the payment was quoted for. */
  route: string;
  payer: `0x${string}`;
  /** Atomic units of `asset`. */
  amount: string;
  asset: `0x${string}`;
  network: string;
  /** The EIP-3009 authorisation nonce (`0x` when a prepaid balance pays). */
  nonce: `0x${string}`;
  /** Set when the payer's prepaid balance pays instead of a transfer: debit it as the function's last step. */
  balance?: BalanceDebit;
}

/** What Express hands the Astro handler in `locals` for every request (src/server/app.ts). */
export interface ApiLocals {
  services: Services;
  requestId: string;
  /** The path Express routed: the dispatcher matches routes on it, never on the Host-derived URL. */
  path: string;
  /** The site the request came to (by host name or port): only its routes answer. */
  site: SiteId;
  /** The payment gate every paid route goes through (src/payments/gate.ts). */
  gate: Pick<PaymentGate, "handle" | "signIn">;
  /** The route Express matched for `path` (src/server/middleware/route-match.ts), so the dispatcher does not search again. */
  matched?: { path: string; route: RouteDef | ServiceError };
  /**
   * The request's payment header as its site's scheme decoded it, once per request (for the rate
   * limits, then the gate); undefined when nobody decoded it yet.
   */
  payment?: () => DecodedPayment | PayloadProblem | undefined;
  /**
   * Set by a page whose content is the build's and its sponsored slot's only: the service may hold
   * it for its `Cache-Control` max-age (src/middleware.ts). Pages showing live data leave it unset.
   */
  holdPage?: boolean;
  /** The HTTP rate limits of this request's client, for calls it carries that count as requests of their own (MCP tool calls). */
  calls?: CallLimits;
}

/** The per-call context of a function. */
export interface FunctionContext extends Services {
  requestId: string;
  payment: VerifiedPayment | null;
  /** The wallet signed in with Sign-In-With-X, on a route that needs one (`RouteDef.signIn`). */
  signedIn?: `0x${string}`;
  route: RouteDef;
  now(): Date;
}

/** The validated input of a route: its body for POST, its query for GET, with path parameters. */
export type RouteInput<R extends RouteDef> = R["body"] extends TObject
  ? Static<R["body"]>
  : R["query"] extends TObject
    ? Static<R["query"]>
    : Record<string, never>;

/** The answer of a route. */
export type RouteOutput<R extends RouteDef> = R["response"] extends TSchema ? Static<R["response"]> : never;

/** A function module's default export: the route it answers and how. */
export interface RouteFunction<R extends RouteDef = RouteDef> {
  route: R;
  run(input: RouteInput<R>, ctx: FunctionContext): Promise<RouteOutput<R>>;
}

/** Bind a function to its route entry so its input and output are typed by the route's schemas. */
export function defineFunction<R extends RouteDef>(
  route: R,
  run: (input: RouteInput<R>, ctx: FunctionContext) => Promise<RouteOutput<R>>,
): RouteFunction<R> {
  return { route, run };
}
