/**
 * The free index of entity intelligence (`GET /api/entity-intel`), also rendered by the
 * `/entity-intel` page: the paid routes with their prices and what they answer, the curated
 * addresses this service names, and the method and limits every answer states.
 */
import type { Static } from "@sinclair/typebox";
import { type entityIntelIndex, entityPaidRoutes } from "../../spec/routes/entity-intel.ts";
import type { LabelBook } from "../analytics/labels.ts";
import { COMMON_NOT_CHECKED, METHOD_FACTS } from "../analytics/methodology.ts";

/** The index document. */
type EntityIndexDocument = Static<typeof entityIntelIndex.response>;

/** What each paid route answers, in the index's words. */
const ANSWERS: Record<string, string> = {
  "/api/entity-intel/use-cases":
    "role or task to an ordered plan across these endpoints, each step with the route, why and an example body",
  "/api/entity-intel/exchange-flow":
    "inflow/outflow of a token split by verified venue class (cex, dex, bridge, mixer), with top counterparties",
  "/api/entity-intel/portfolio": "holdings with USD values (ETH included, unpriced tokens listed) and activity for a wallet",
  "/api/entity-intel/counterparties": "who an address transacts with: class, first/last seen, volumes each way, curated flags",
  "/api/entity-intel/trace": "hop-by-hop flow with flags for where-did-the-money-go questions, and where each path stops",
  "/api/entity-intel/venue-users": "venue view: users, value segments, VIP candidates, users gone quiet, flagged funders",
};

/** Build the index document for a service (its version and public origin name the provider). */
export function entityIndexDocument(config: { version: string; publicUrl: string | undefined }, labels: LabelBook): EntityIndexDocument {
  return {
    provider: `x402-chain-data-service ${config.version}${config.publicUrl ? ` (${config.publicUrl})` : ""}`,
    not_nansen:
      "Not Nansen, Arkham or any analytics vendor, and not affiliated with one: every answer is computed per call from public Base chain data with its method stated, and entity names and flags come only from this service's curated label file, each entry with its source.",
    // The free page that renders this document with the use cases.
    source_thread: "/entity-intel",
    price_usdc_per_call: entityPaidRoutes[0].price,
    endpoints: entityPaidRoutes.map((r) => ({ route: r.path, price_usd: r.price, answers: ANSWERS[r.path] ?? r.summary })),
    labels_configured: labels.addresses(),
    methodology: { ...METHOD_FACTS },
    not_checked: [...COMMON_NOT_CHECKED],
  };
}
