/**
 * What each paid route asks to be paid, as the x402 resource server's routes config: one
 * exact-USDC option per paid route of the route table, with Bazaar discovery metadata (input
 * and a compact output) and the `payment-identifier` extension (a buyer's idempotency id)
 * declared on every challenge.
 */
import type { HTTPRequestContext, RoutesConfig } from "@x402/core/server";
import type { AssetAmount } from "@x402/core/types";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { atomicUsdc, type RouteDef, routeKey } from "../../spec/route.ts";
import type { Config } from "../config.ts";
import { compactExample, outlineSchema, withoutAnnotations } from "../discovery/output-example.ts";
import { type PaymentScheme, usdcScheme } from "./scheme.ts";
import { declaresSignIn, SIWX_HEADER, signInDeclaration } from "./sign-in.ts";

/**
 * The most the whole header block of a 402 may take: nginx's default 4 KB proxy buffer
 * (`proxy_buffer_size`) must hold it with upstream keep-alive, with 512 bytes to spare for what
 * a proxy adds and for an origin longer than the one sized with.
 */
export const HEADER_BLOCK_BUDGET = 3584;

/**
 * What a 402's header block holds besides the PAYMENT-REQUIRED value: the status line, the
 * request id, the CORS headers, Cache-Control, Content-Type, Date, the connection headers and the
 * framing (380 bytes measured), plus up to 50 for the reason x402 puts in a refusal's `error`
 * and 28 for a buyer's own request id echoed instead of a UUID.
 */
const OTHER_HEADERS_ALLOWANCE = 480;

/** The most an unpaid challenge may take in base64, so that its header block stays within HEADER_BLOCK_BUDGET. */
export const CHALLENGE_BUDGET = HEADER_BLOCK_BUDGET - OTHER_HEADERS_ALLOWANCE;

/** An origin as long as a public one may reasonably be, for sizing challenges before PUBLIC_URL is known. */
const SIZING_ORIGIN = "https://api.example-x402-service.com";

/**
 * How much of a route's description its challenge carries, from most to least: each step drops
 * what a client can least do without, until the challenge fits CHALLENGE_BUDGET (see
 * paymentRoutes). `/openapi.json` always has the full schemas and examples.
 */
const DISCOVERY_STEPS = [
  { outline: true, ownExample: true, bare: false, inputSchema: true, inputExample: true },
  { outline: false, ownExample: true, bare: false, inputSchema: true, inputExample: true },
  { outline: false, ownExample: false, bare: false, inputSchema: true, inputExample: true },
  { outline: false, ownExample: false, bare: true, inputSchema: true, inputExample: true },
  { outline: false, ownExample: false, bare: true, inputSchema: false, inputExample: true },
  { outline: false, ownExample: false, bare: true, inputSchema: false, inputExample: false },
] as const;
type DiscoveryStep = (typeof DISCOVERY_STEPS)[number];

/**
 * Bazaar's description of a route's input and output at one step: the input schema keeps every
 * constraint and drops the prose; the output is the route's own example, or a compact one built
 * from its response schema (with bare values of each type when `bare`), with the schema's outline.
 */
function discoveryOf(route: RouteDef, step: DiscoveryStep) {
  const own = step.ownExample ? (route.example?.output as Record<string, unknown> | undefined) : undefined;
  const output = {
    example: own ?? compactExample(route.response, !step.bare),
    ...(step.outline ? { schema: outlineSchema(route.response) } : {}),
  };
  const input = (step.inputExample && route.example?.input) || {};
  const schema = step.inputSchema ? (route.method === "POST" ? route.body : route.query) : undefined;
  return route.method === "POST"
    ? declareDiscoveryExtension({ bodyType: "json", input, ...(schema ? { inputSchema: withoutAnnotations(schema) } : {}), output })
    : declareDiscoveryExtension({ input, ...(schema ? { inputSchema: withoutAnnotations(schema) } : {}), output });
}

/** The base64 length of the unpaid challenge a route entry produces (x402 adds `x402Version` and `error`). */
function challengeSize(
  entry: { accepts: Record<string, unknown>; description: string; mimeType: string; extensions: unknown },
  url: string,
  extraJsonBytes = 0,
) {
  const quoted = entry.accepts.price as AssetAmount | ((context: HTTPRequestContext) => AssetAmount);
  // A dynamic price is sized at its default: the amount's digits barely change the size.
  const price = typeof quoted === "function" ? quoted(DEFAULT_PRICE_CONTEXT) : quoted;
  const { price: _price, ...accepts } = entry.accepts;
  const challenge = {
    x402Version: 2,
    error: "Payment required",
    resource: { url, description: entry.description, mimeType: entry.mimeType },
    accepts: [{ ...accepts, amount: price.amount, asset: price.asset, extra: price.extra }],
    extensions: entry.extensions,
  };
  return Math.ceil((Buffer.byteLength(JSON.stringify(challenge)) + extraJsonBytes) / 3) * 4;
}

/** A request context without a query: a dynamic price falls back to the route's default. */
const DEFAULT_PRICE_CONTEXT = { adapter: { getUrl: () => SIZING_ORIGIN } } as unknown as HTTPRequestContext;

/**
 * What a route asks in USDC: its fixed price, or (`RouteDef.dynamicPrice`) the USD amount of that
 * query parameter, `price` when absent. The gate validates the query before quoting it.
 */
function priceOf(route: RouteDef, asset: PaymentScheme): AssetAmount | ((context: HTTPRequestContext) => AssetAmount) {
  const quote = (usd: number): AssetAmount => ({
    amount: atomicUsdc(usd),
    asset: asset.asset,
    extra: asset.assetExtra,
  });
  const param = route.dynamicPrice;
  if (!param) return quote(route.price ?? 0);
  return (context) => quote(quotedUsd(route, new URL(context.adapter.getUrl()).searchParams.get(param)));
}

/** The USD a route quotes for its `dynamicPrice` query value (null when absent): that number, else its `price`. */
export function quotedUsd(route: RouteDef, value: string | null): number {
  const usd = value === null || value === "" ? Number.NaN : Number(value);
  return Number.isFinite(usd) ? usd : (route.price as number);
}

/**
 * The x402 routes config of the paid routes among `routes`, keyed `"METHOD /path"`, quoting the
 * site's `scheme` (default: the EVM USDC of `config`). A route
 * whose challenge would pass CHALLENGE_BUDGET declares less of itself, step by step
 * (DISCOVERY_STEPS); one that passes it even so is a configuration error, refused here.
 */
export function paymentRoutes(routes: readonly RouteDef[], config: Config, payTo: string, scheme = usdcScheme(config)): RoutesConfig {
  const entries = routes
    // A free route read by signing in answers the same 402 form (price 0), which standard clients act on.
    .filter((route) => route.price !== null || route.signIn)
    .map((route) => {
      const origin = config.publicUrl ?? SIZING_ORIGIN;
      const url = `${origin}${route.path}`;
      const signsIn = declaresSignIn(route) && scheme.signIn;
      const entryWith = (step: DiscoveryStep) => ({
        accepts: {
          scheme: "exact",
          network: scheme.network,
          payTo,
          price: priceOf(route, scheme),
          maxTimeoutSeconds: config.maxTimeoutSeconds,
        },
        description: route.summary,
        mimeType: "application/json",
        ...(config.publicUrl ? { resource: url } : {}),
        extensions: {
          ...discoveryOf(route, step),
          [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
          // Declared here, filled in per challenge by the gate's extension (a fresh nonce, its origin).
          ...(signsIn ? { [SIWX_HEADER]: {} } : {}),
        },
      });
      // The declaration names the origin twice (domain and uri): sized with the one it will carry.
      const signIn = (at: string) =>
        signsIn ? Buffer.byteLength(JSON.stringify(signInDeclaration(at, `${at}${route.path}`, config.network))) : 0;
      // Fields the server scheme adds at run time (a Solana fee payer) count too.
      const extra = scheme.sizingExtra ? Buffer.byteLength(JSON.stringify(scheme.sizingExtra)) : 0;
      const added = signIn(origin) + extra;
      let entry = entryWith(DISCOVERY_STEPS[0]);
      for (const step of DISCOVERY_STEPS.slice(1)) {
        if (challengeSize(entry, url, added) <= CHALLENGE_BUDGET) break;
        entry = entryWith(step);
      }
      const size = challengeSize(entry, url, added);
      if (size > CHALLENGE_BUDGET) {
        // The origin is in it up to three times: when a shorter one would fit, the remedy is the operator's.
        const originTooLong =
          config.publicUrl !== undefined &&
          challengeSize(entry, `${SIZING_ORIGIN}${route.path}`, signIn(SIZING_ORIGIN) + extra) <= CHALLENGE_BUDGET;
        throw new Error(
          originTooLong
            ? `${routeKey(route)}: its 402 challenge takes ${size} bytes in base64, over ${CHALLENGE_BUDGET} with the public origin ${config.publicUrl} (${config.publicUrl?.length} characters): use a shorter public origin`
            : `${routeKey(route)}: its 402 challenge takes ${size} bytes in base64, over ${CHALLENGE_BUDGET}: shorten its summary, input schema or output example`,
        );
      }
      return [routeKey(route), entry];
    });
  return Object.fromEntries(entries) as RoutesConfig;
}
