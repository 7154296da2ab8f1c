/**
 * The trust score: every rule, its points and its penalty text in one table, and the verdict
 * thresholds. The leaderboard crawl and `x402-trust` score with `assessTrust`, and the
 * leaderboard document's `what_it_is` and `common_penalties` are written from this table,
 * so what a reader sees is exactly what is applied.
 */
import { base } from "../networks/base.ts";
import { type ConformanceReport, eip712DomainState, RULES_VERSION } from "./conformance.ts";
import type { PurchaseOutcome } from "./purchase.ts";
import type { Reputation } from "./reputation.ts";
import { MEASURED_OPTIONS } from "./x402-clients.ts";

/** Verdicts, best first. */
export const VERDICTS = ["pay", "pay_with_caution", "avoid"] as const;

/** A verdict on a seller. */
export type Verdict = (typeof VERDICTS)[number];

/** What a rule is about: the five areas the score covers. */
export type ScoreArea =
  | "402 behaviour"
  | "payability"
  | "challenge conformance"
  | "discovery documents"
  | "payTo reputation"
  | "price sanity"
  | "verified by purchase";

/** One scoring rule. */
export interface PenaltyRule {
  area: ScoreArea;
  /** Points taken from 100. */
  points: number;
  /** When true the verdict is `avoid` whatever the score: a buyer cannot pay safely. */
  blocking: boolean;
  /** The penalty text shown in rows and counted in `common_penalties`. */
  text: string;
}

/** Every penalty, keyed by a stable id. */
export const PENALTIES = {
  unreachable: { area: "402 behaviour", points: 100, blocking: true, text: "unreachable: no HTTP answer within the time limit" },
  refused: {
    area: "402 behaviour",
    points: 100,
    blocking: true,
    text: "not probed: the host resolves to a private, loopback or reserved address",
  },
  not_402: { area: "402 behaviour", points: 60, blocking: true, text: "does not answer an unpaid call with HTTP 402" },
  no_challenge: {
    area: "challenge conformance",
    points: 40,
    blocking: true,
    text: "402 without a readable payment challenge (PAYMENT-REQUIRED header or JSON body)",
  },
  not_payable: {
    area: "payability",
    points: 50,
    blocking: true,
    text: "no standard client can pay it: the default x402 client (the @x402/fetch quick start: @x402/core with @x402/evm) produces no payment for any option",
  },
  refused_by_spend_controls: {
    area: "payability",
    points: 50,
    blocking: true,
    text: "the default x402 client refuses to pay it: its spend controls allow only default assets (such as USDC) and at most $1 per payment",
  },
  facilitator_refuses: {
    area: "payability",
    points: 50,
    blocking: true,
    text: "no facilitator would settle the payment a client signs (zero or burn payTo, an already-expired timeout, a wrong signing domain, or an asset without an EIP-3009 transfer)",
  },
  purchase_charged_without_service: {
    area: "verified by purchase",
    points: 100,
    blocking: true,
    text: "verified by purchase: took the payment and did not serve the answer",
  },
  purchase_settled_twice: {
    area: "verified by purchase",
    points: 100,
    blocking: true,
    text: "verified by purchase: settled more than one payment for one call",
  },
  purchase_refused_after_signing: {
    area: "verified by purchase",
    points: 50,
    blocking: true,
    text: "verified by purchase: refused a signed payment and served nothing (a buyer signs and gets no answer)",
  },
  no_accepts: { area: "challenge conformance", points: 30, blocking: true, text: "challenge lists no payment options (accepts)" },
  no_pay_to: { area: "challenge conformance", points: 30, blocking: true, text: "no valid payTo address: where the money goes is unknown" },
  bad_amount: {
    area: "challenge conformance",
    points: 15,
    blocking: true,
    text: "amount missing or not an atomic integer string in its version's field (amount for v2, maxAmountRequired for v1)",
  },
  bad_asset: {
    area: "challenge conformance",
    points: 15,
    blocking: false,
    text: "asset not valid for its network (a token contract address on EVM networks)",
  },
  bad_network_id: {
    area: "challenge conformance",
    points: 10,
    blocking: false,
    text: `network not written as its version requires (CAIP-2 such as ${base.id} for v2, a name such as ${base.v1Name} for v1)`,
  },
  no_eip712_domain: {
    area: "challenge conformance",
    points: 10,
    blocking: false,
    text: "EVM option without the token's EIP-712 domain in extra.name/extra.version (needed to sign EIP-3009)",
  },
  wrong_eip712_domain: {
    area: "challenge conformance",
    points: 10,
    blocking: false,
    text: "EVM option names an EIP-712 domain in extra.name/extra.version that is not the token's: the token refuses signatures over it",
  },
  no_header: {
    area: "challenge conformance",
    points: 10,
    blocking: false,
    text: "challenge not where its version puts it (v2: the PAYMENT-REQUIRED header; v1: the JSON body)",
  },
  body_mismatch: {
    area: "challenge conformance",
    points: 25,
    blocking: false,
    text: "the body's challenge differs from the PAYMENT-REQUIRED header's: buyers reading one or the other are quoted different terms",
  },
  bad_accepts: {
    area: "challenge conformance",
    points: 10,
    blocking: false,
    text: "payment options miss scheme, network, asset, payTo or maxTimeoutSeconds (v1: also resource, description, mimeType)",
  },
  not_v2: { area: "challenge conformance", points: 5, blocking: false, text: "not x402 version 2" },
  payability_not_measured: {
    area: "payability",
    points: 0,
    blocking: false,
    text: `payability NOT measured: no option on ${MEASURED_OPTIONS}`,
  },
  no_bazaar: { area: "discovery documents", points: 3, blocking: false, text: "no Bazaar discovery metadata in the challenge" },
  no_well_known: { area: "discovery documents", points: 3, blocking: false, text: "no /.well-known/x402 discovery document" },
  no_openapi: {
    area: "discovery documents",
    points: 3,
    blocking: false,
    text: "no /openapi.json document listing the route with a price",
  },
  no_usdc_received: { area: "payTo reputation", points: 15, blocking: false, text: "payTo received no USDC in the scanned window" },
  few_payers: {
    area: "payTo reputation",
    points: 5,
    blocking: false,
    text: "payTo paid by fewer than 3 distinct payers (of its last 25 incoming USDC transfers)",
  },
  reputation_not_measured: {
    area: "payTo reputation",
    points: 0,
    blocking: false,
    text: "payTo reputation NOT measured (RPC refused, or payTo not on Base)",
  },
  price_unknown: { area: "price sanity", points: 5, blocking: false, text: "price not in USDC: no USD price can be derived" },
  price_zero: { area: "price sanity", points: 10, blocking: false, text: "quotes a zero price" },
  price_high: { area: "price sanity", points: 10, blocking: false, text: "price above $1 per call" },
  price_very_high: { area: "price sanity", points: 25, blocking: false, text: "price above $10 per call" },
} as const satisfies Record<string, PenaltyRule>;

/** A penalty id. */
export type PenaltyId = keyof typeof PENALTIES;

/** Score at or above which a seller can be `pay` (with its payTo seen receiving USDC). */
export const PAY_MIN_SCORE = 80;
/** Score below which a seller is `avoid`. */
export const AVOID_BELOW_SCORE = 50;
/** Fewer distinct payers than this draws `few_payers`. */
export const MIN_DISTINCT_PAYERS = 3;

/** The penalty a purchase's outcome draws, if any. */
export const PURCHASE_PENALTIES: Readonly<Partial<Record<PurchaseOutcome, PenaltyId>>> = {
  charged_without_service: "purchase_charged_without_service",
  settled_twice: "purchase_settled_twice",
  refused_after_signing: "purchase_refused_after_signing",
};

/**
 * Score one probed endpoint with its payTo reputation and, when it was verified by purchase,
 * the outcome of its latest purchase: a seller that took payment without serving is avoid,
 * whatever else it scores.
 */
export function assessTrust(
  report: ConformanceReport,
  reputation: Reputation,
  purchase?: { outcome: PurchaseOutcome } | null,
): TrustAssessment {
  const assessment = assessUnpaid(report, reputation);
  const penalty = purchase ? PURCHASE_PENALTIES[purchase.outcome] : undefined;
  return penalty ? withVerdict([...assessment.penalties, penalty], reputation) : assessment;
}

function assessUnpaid(report: ConformanceReport, reputation: Reputation): TrustAssessment {
  if (!report.reachable) return notScored("unreachable");
  const c = report.checks;
  const penalties: PenaltyId[] = [];
  if (!c.returns_402) penalties.push("not_402");
  else if (!c.has_challenge) penalties.push("no_challenge");
  else {
    if (report.payable === false) {
      const refused = report.payable_refused_by;
      penalties.push(
        refused === "spend_controls" ? "refused_by_spend_controls" : refused === "facilitator" ? "facilitator_refuses" : "not_payable",
      );
    } else if (report.payable === null) penalties.push("payability_not_measured");
    if (!c.challenge_transport) penalties.push("no_header");
    if (!c.body_matches_header) penalties.push("body_mismatch");
    if (report.x402Version !== 2) penalties.push("not_v2");
    if (!c.has_accepts) penalties.push("no_accepts");
    else {
      if (!c.accepts_fields) penalties.push("bad_accepts");
      if (!c.network_id) penalties.push("bad_network_id");
      if (!c.amount_field || !c.atomic_amount) penalties.push("bad_amount");
      if (!c.asset_for_network) penalties.push("bad_asset");
      if (!c.has_pay_to) penalties.push("no_pay_to");
      if (!c.eip712_domain) {
        const wrong = report.accepts.some((o) => eip712DomainState(o) === "wrong");
        penalties.push(wrong ? "wrong_eip712_domain" : "no_eip712_domain");
      }
    }
    if (!c.bazaar_metadata) penalties.push("no_bazaar");
    if (!reputation.measured) penalties.push("reputation_not_measured");
    else if (reputation.transfers === 0) penalties.push("no_usdc_received");
    else if ((reputation.distinct_payers ?? 0) < MIN_DISTINCT_PAYERS) penalties.push("few_payers");
    if (c.has_accepts && c.amount_field && c.atomic_amount) {
      const price = report.price_usd;
      if (price === null) penalties.push("price_unknown");
      else if (price === 0) penalties.push("price_zero");
      else if (price > 10) penalties.push("price_very_high");
      else if (price > 1) penalties.push("price_high");
    }
  }
  if (!c.well_known_x402) penalties.push("no_well_known");
  if (!c.openapi) penalties.push("no_openapi");
  return withVerdict(penalties, reputation);
}

/** The assessment of an origin with no answer to score: unreachable, or not probed because its host is refused. */
export function notScored(why: "unreachable" | "refused"): TrustAssessment {
  return { score: 0, verdict: "avoid", penalties: [why] };
}

function withVerdict(penalties: PenaltyId[], reputation: Reputation) {
  const score = Math.max(0, 100 - penalties.reduce((sum, id) => sum + PENALTIES[id].points, 0));
  const blocked = penalties.some((id) => PENALTIES[id].blocking);
  const received = reputation.measured && (reputation.transfers ?? 0) > 0;
  const measuredPayable = !penalties.includes("payability_not_measured");
  const verdict: Verdict =
    blocked || score < AVOID_BELOW_SCORE ? "avoid" : score >= PAY_MIN_SCORE && received && measuredPayable ? "pay" : "pay_with_caution";
  return { score, verdict, penalties };
}

/** The outcome of scoring one origin: its score, verdict and penalties. */
export type TrustAssessment = ReturnType<typeof withVerdict>;

/** The penalty texts of `ids`, in order. */
export function penaltyTexts(ids: readonly PenaltyId[]): string[] {
  return ids.map((id) => PENALTIES[id].text);
}

/** The leaderboard's `what_it_is`: what is probed and every rule, from the table above. */
export function describeScoring(): string {
  const rules = Object.values(PENALTIES as Record<string, PenaltyRule>)
    .filter((r) => r.points > 0)
    .map((r) => `${r.text} -${r.points}${r.blocking ? "*" : ""}`)
    .join("; ");
  return (
    "Every origin in the public x402 catalogue (the CDP Bazaar discovery API and x402 List, merged by URL), one representative endpoint " +
    "probed each without payment, scored 0-100 on 402 behaviour, payability, challenge conformance, discovery documents, on-chain payTo reputation " +
    "(its last 25 incoming USDC transfers on Base: count, distinct payers, age) and price sanity. " +
    "Payable means the client a buyer actually runs pays it, defaults included: the @x402/fetch quick start (@x402/core with the @x402/evm exact scheme, " +
    "spend controls at their defaults: default assets such as USDC only, at most $1 per payment) reads the 402 answer with its own parser and signs a payment " +
    "with a throwaway key, offline (nothing is sent), and a facilitator would settle it (no zero or burn payTo, not expired on arrival, the token's own " +
    "signing domain, a token with an EIP-3009 transfer). A seller only a client with loosened spend controls would pay is not payable. " +
    "Verified by purchase: when the operator turns it on, a run buys once from each seller judged payable, within a budget, and records what it got; " +
    "a seller that took payment without serving is avoid whatever else it scores. " +
    "Conformance follows the challenge's own version: for x402 v2, CAIP-2 network ids, an atomic amount in amount, an asset valid for its network, " +
    "the token's EIP-712 domain in extra, the challenge in the PAYMENT-REQUIRED header and a body matching it; for v1, the v1 rules. " +
    `Discovery documents are scored apart and never make a seller unpayable. Score = 100 minus penalties: ${rules}. ` +
    `Verdict: avoid when a penalty marked * applies (whatever the score: an unpayable seller is always avoid) or the score is below ${AVOID_BELOW_SCORE}; ` +
    `pay when the score is at least ${PAY_MIN_SCORE}, the payTo has received USDC and payability was measured; otherwise pay_with_caution. ` +
    `A reputation or payability that could not be measured is marked 'NOT measured' and never earns pay. Rules version ${RULES_VERSION}; ` +
    "runs scored under earlier rules say so in their run's rules_version."
  );
}

/** What the leaderboard does not check. */
export const NOT_CHECKED: readonly string[] = [
  "behaviour after payment, unless the origin was verified by purchase (one paid call, when the operator turns purchases on): then whether it served, took the payment without serving, refused the signed payment or settled twice; never what the answer contains",
  "uptime over time: each row is a point-in-time probe",
  "operator identity or company ownership",
  "content accuracy of the paid answers",
  `on-chain payTo reputation on chains other than Base (${base.id}): such rows say 'NOT measured'; Solana and other networks get the conformance checks only`,
  "payability on networks other than EVM (eip155:*) and Solana (solana:*), and of a Solana option in a mint other than USDC (no Solana RPC is read to learn its token program): such a seller's payability says 'NOT measured'",
  "settlement itself, unless verified by purchase: the unpaid probe checks offline what a facilitator refuses (zero or burn payTo, an expired timeout, a wrong signing domain, a token without EIP-3009) but sends nothing",
  "endpoints of an origin other than the one representative endpoint probed",
];

/** How to read the leaderboard. */
export const CAVEAT =
  "A high score means the seller's unpaid answer and challenge are well-formed, the default x402 client would pay it and a facilitator settle it, and its payTo receives USDC; unless the origin was verified by purchase, it does not vouch for what you get after paying. Probe again with POST /api/x402-trust before a large payment.";
