/**
 * What each paid route asks to be paid, as the x402 resource server's routes config: one
 * exact-USDC option per paid route of the route table, with Bazaar discovery metadata and
 * the `payment-identifier` extension (a buyer's idempotency id) declared on every challenge.
 */
import type { RoutesConfig } from "@x402/core/server";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { atomicUsdc, type RouteDef, routeKey } from "../../spec/route.ts";
import type { Config } from "../config.ts";

/** Bazaar's description of a route's input and output. */
function discoveryOf(route: RouteDef) {
  const output = {
    schema: route.response as unknown as Record<string, unknown>,
    ...(route.example?.output ? { example: route.example.output } : {}),
  };
  const input = route.example?.input ?? {};
  return route.method === "POST"
    ? declareDiscoveryExtension({
        bodyType: "json",
        input,
        ...(route.body ? { inputSchema: route.body as unknown as Record<string, unknown> } : {}),
        output,
      })
    : declareDiscoveryExtension({
        input,
        ...(route.query ? { inputSchema: route.query as unknown as Record<string, unknown> } : {}),
        output,
      });
}

/** The x402 routes config of the paid routes among `routes`, keyed `"METHOD /path"`. */
export function paymentRoutes(routes: readonly RouteDef[], config: Config, payTo: `0x${string}`): RoutesConfig {
  const entries = routes
    .filter((route) => route.price !== null)
    .map((route) => [
      routeKey(route),
      {
        accepts: {
          scheme: "exact",
          network: config.network,
          payTo,
          price: {
            amount: atomicUsdc(route.price as number),
            asset: config.usdc.address,
            extra: { name: config.usdc.name, version: config.usdc.version },
          },
          maxTimeoutSeconds: config.maxTimeoutSeconds,
        },
        description: route.summary,
        mimeType: "application/json",
        ...(config.publicUrl ? { resource: `${config.publicUrl}${route.path}` } : {}),
        extensions: { ...discoveryOf(route), [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) },
      },
    ]);
  return Object.fromEntries(entries) as RoutesConfig;
}
