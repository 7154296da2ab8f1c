/** The header links and footer of a site other than the primary: only the pages it serves. */
import type { SiteDef } from "../../spec/sites.ts";

/** Its header links: its landing page, discovery documents and error codes (it serves no reader pages). */
export const SITE_NAV = [
  { href: "/", label: "Routes" },
  { href: "/openapi.json", label: "OpenAPI" },
  { href: "/.well-known/x402", label: "/.well-known/x402" },
  { href: "/errors", label: "Error codes" },
] as const;

/** The network its footer says its paid routes settle on; undefined: the layout's (Base). */
export function paidOnOf(site: SiteDef): string | undefined {
  const network = site.networks[0];
  return network.startsWith("solana:") ? `Solana (${network})` : undefined;
}
