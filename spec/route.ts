/**
 * The shape of one entry of the route table. The table (`spec/routes.ts`) is the single
 * source of every route: the x402 payment config, request validation, dispatch to
 * `functions/`, `/openapi.json`, `/.well-known/x402` and the landing page all derive from it.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import type { ErrorCode } from "../src/errors.ts";
import type { Tag } from "./tags.ts";

/** One route of the service. */
export interface RouteDef {
  /** HTTP method; a path offered with two methods has two entries. */
  readonly method: "GET" | "POST";
  /** Absolute path under its site's prefix (`/api/`, `/v1/`) or a site's own free path such as `/health`; canonical (no trailing slash, no dot segments). */
  readonly path: string;
  /** Unique OpenAPI operationId, camelCase. */
  readonly operationId: string;
  /** One line for lists and the challenge's `resource.description`. */
  readonly summary: string;
  /** Longer Markdown-free description: what it answers and its limits. */
  readonly description: string;
  /** OpenAPI tags (declared with their descriptions in `spec/tags.ts`), first one groups the landing page. */
  readonly tags: readonly Tag[];
  /** Price per call in USD (settled in USDC), or `null` for a free route. */
  readonly price: number | null;
  /** Query-string parameters (strings coerced to the declared types). Absent: none allowed. */
  readonly query?: TObject;
  /** JSON body. Absent: no body expected (a body is ignored). */
  readonly body?: TObject;
  /** The 200 response. */
  readonly response: TSchema;
  /** Error codes the route can answer with, beyond the ones every route has (absent: none). */
  readonly errors?: readonly ErrorCode[];
  /**
   * `"process"`: a free GET whose answer depends only on the build and the configuration, so
   * it is computed once per process and then served from memory (skipping the Astro render).
   */
  readonly cache?: "process";
  /** The price is this query parameter's USD amount (x402 dynamic price); `price` is its default. */
  readonly dynamicPrice?: string;
  /** Free, but only for a wallet signed in with Sign-In-With-X; the function gets the wallet. */
  readonly signIn?: true;
  /** A wallet that bought this route may read it again by signing in (Sign-In-With-X) for this many days. */
  readonly signInRereadDays?: number;
  /** An example request input and output, for Bazaar discovery and the docs. */
  readonly example?: { readonly input?: Record<string, unknown>; readonly output?: unknown };
}

/** Identity helper that keeps the literal types of a route entry. */
export function defineRoute<const R extends RouteDef>(route: R): R {
  return route;
}

/** `"POST /api/x"`: the key used by the x402 routes config and `/.well-known/x402`. */
export function routeKey(route: Pick<RouteDef, "method" | "path">): string {
  return `${route.method} ${route.path}`;
}

/** `CreateX402Endpoint` from `create-x402-endpoint` or `createX402Endpoint`: operationIds and OpenAPI schema names. */
export function pascalCase(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

/** Atomic USDC units (6 decimals) of a USD price, as the decimal string x402 quotes. */
export function atomicUsdc(priceUsd: number): string {
  return String(Math.round(priceUsd * 1_000_000));
}
