/**
 * `/.well-known/x402`: the discovery document crawlers such as x402scan read
 * (`{version: 1, resources: ["POST /api/..."], instructions}`), plus richer fields: each
 * paid resource's price, network and asset.
 */
import path from "node:path";
import { atomicUsdc, type RouteDef, routeKey } from "../../spec/route.ts";
import { primarySite, type SiteDef } from "../../spec/sites.ts";
import { networkById } from "../networks/index.ts";

/**
 * Where the build writes a site's document: the primary's in the static folder (served as it is),
 * the other sites' beside it, outside anything the static server serves.
 */
export function wellKnownFile(distDir: string, site: Pick<SiteDef, "id">): string {
  return site.id === primarySite.id ? path.join(distDir, "client/.well-known/x402") : path.join(distDir, "sites", site.id, "x402.json");
}

/** The `/.well-known/x402` document of `routes`, paid on the site's first network (default: the primary site's). */
export function buildWellKnown(
  routes: readonly RouteDef[],
  site: Pick<SiteDef, "networks" | "howToPay"> = primarySite,
): Record<string, unknown> {
  const paid = routes.filter((r) => r.price !== null);
  const network = site.networks[0];
  return {
    version: 1,
    resources: paid.map(routeKey),
    instructions: `Every resource is paid per call in USDC on ${networkById(network)?.name ?? network} with x402 v2 (scheme exact). Call it without payment to receive HTTP 402 with the challenge in the PAYMENT-REQUIRED header and the body; ${site.howToPay ?? "sign an EIP-3009 transferWithAuthorization for the quoted amount to the quoted payTo"}; repeat the call with the payload in X-Payment or PAYMENT-SIGNATURE. The answer comes with a PAYMENT-RESPONSE header naming the settlement transaction. Failed calls (any status >= 400) are never charged. Full schemas: /openapi.json.`,
    x402Version: 2,
    network,
    asset: networkById(network)?.usdc.address,
    openapi: "/openapi.json",
    endpoints: paid.map((r) => ({
      method: r.method,
      path: r.path,
      price_usd: r.price,
      amount: atomicUsdc(r.price as number),
      summary: r.summary,
      tags: [...r.tags],
    })),
  };
}
