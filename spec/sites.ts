/**
 * The sites one process serves. Each site has its own origin (a host name in production, a port
 * in local mode), its own routes under its own path prefix, its own landing page and discovery
 * documents, and names the networks it reads and settles on; payments, the ledger, the store and
 * the chain client are shared. A site on another chain is one more entry here, with its routes.
 */
import { base } from "../src/networks/base.ts";
import { solana } from "../src/networks/solana.ts";
import type { CaipNetworkId } from "../src/networks/types.ts";
import type { RouteDef } from "./route.ts";
import { baseToolsRoutes } from "./routes/base-tools.ts";
import { solanaRoutes } from "./routes/solana.ts";
import { routes as primaryRoutes } from "./routes.ts";
import type { Tag } from "./tags.ts";

/** One site. */
export interface SiteDef {
  /** Stable id: names the built landing page (`/sites/<id>`) and the site in logs. */
  readonly id: "primary" | "base-tools" | "solana";
  /** The title of its landing page and of its `/openapi.json`. */
  readonly title: string;
  /** One paragraph: what the site answers, for the landing page and the OpenAPI description. */
  readonly description: string;
  /** The networks whose chain its routes read and on which its challenges ask to be paid (the first one). */
  readonly networks: readonly [CaipNetworkId, ...CaipNetworkId[]];
  /** The path prefix of its paid routes; the other sites' prefixes answer 404 here. */
  readonly apiPrefix: "/api/" | "/v1/";
  /** Its routes: the only ones its dispatcher, discovery documents and challenges know. */
  readonly routes: readonly RouteDef[];
  /** Where the build puts its landing page: `/` for the primary, `/sites/<id>` for the others (served at `/` of their origin). */
  readonly landing: string;
  /** Which of the built reader pages and page endpoints (`/mcp`) it serves besides its landing page: all of them, or the listed paths. */
  readonly pages: "all" | readonly string[];
  /** The free route an agent budgets with first, named in the OpenAPI guidance. */
  readonly budgetHint: string;
  /** How a buyer pays on its network, one sentence for the landing page and discovery documents; default: an EIP-3009 USDC authorisation. */
  readonly howToPay?: string;
  /** What a tag's routes answer here, for the landing page and `/openapi.json`, where spec/tags.ts's description is Base's. */
  readonly tagNotes?: Partial<Record<Tag, string>>;
}

/** The primary site: chain data, x402 intelligence and playbooks under `/api/`. */
export const primarySite: SiteDef = {
  id: "primary",
  title: "Pay-per-call chain data and playbooks",
  description: `Chain data, x402 intelligence and paid playbooks for agents. Paid routes are settled per call in USDC on Base (${base.id}) with x402 v2.`,
  networks: [base.id],
  apiPrefix: "/api/",
  routes: primaryRoutes,
  landing: "/",
  pages: "all",
  budgetHint: "GET /api/pricing lists every price, free; use the free indexes, previews and search first.",
};

/** The secondary site on Base: token-risk tools under `/v1/`. */
export const baseToolsSite: SiteDef = {
  id: "base-tools",
  title: "Token-risk tools on Base",
  description: `Token-risk tools for traders and trading agents on Base: a honeypot check simulated on the chain itself, a new-pair hunter, price equilibrium across venues, wallet profiles and DeFi sentiment. Paid per call in USDC on Base (${base.id}) with x402 v2.`,
  networks: [base.id],
  apiPrefix: "/v1/",
  routes: baseToolsRoutes,
  landing: "/sites/base-tools",
  // `/mcp`: the remote MCP server with this site's routes as tools (src/pages/mcp.ts).
  pages: ["/errors", "/mcp"],
  budgetHint: "GET /health is free; every /v1/ route states its price in this document and in its 402 challenge.",
};

/** The site on Solana: token-risk and market tools under `/v1/`, paid in USDC on Solana. */
export const solanaSite: SiteDef = {
  id: "solana",
  title: "Token-risk and market tools on Solana",
  description: `Token-risk and market tools for traders and trading agents on Solana: new tokens with each mint's authorities and Token-2022 extensions read on chain, price equilibrium across Raydium, Orca and Meteora, wallet profiles and DeFi sentiment. Paid per call in USDC on Solana (${solana.id}) with x402 v2.`,
  networks: [solana.id],
  apiPrefix: "/v1/",
  routes: solanaRoutes,
  landing: "/sites/solana",
  pages: ["/errors", "/mcp"],
  budgetHint: "Every /v1/ route states its price in this document and in its 402 challenge.",
  howToPay:
    "sign a USDC transfer (TransferChecked) to the quoted payTo with your Solana key, leaving the fee payer named in extra.feePayer to co-sign and pay the fee",
  tagNotes: {
    "token risk":
      "Token-risk tools on Solana for traders deciding whether a token is safe to touch: each new mint's authorities and Token-2022 extensions read on chain, and price equilibrium across Raydium, Orca and Meteora.",
    "chain analytics": "Answers computed from public Solana chain data and market APIs: wallet profiles and DeFi sentiment.",
  },
};

/** Every site, the primary first. */
export const sites: readonly SiteDef[] = [primarySite, baseToolsSite, solanaSite];

/** A site's id. */
export type SiteId = SiteDef["id"];

/** The site with `id` (a request's locals carry the site's id). */
export function siteById(id: SiteId): SiteDef {
  const found = sites.find((s) => s.id === id);
  if (!found) throw new Error(`no site ${id} in spec/sites.ts`);
  return found;
}
