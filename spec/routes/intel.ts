/** x402 ecosystem intelligence routes: conformance checks, directory search, trust scores. */
import { type SchemaOptions, type Static, type TBoolean, Type } from "@sinclair/typebox";
import { CHECK_MEANINGS, CHECK_NAMES, type CheckName, RULES_VERSION } from "../../src/intel/conformance.ts";
import { PURCHASE_OUTCOME_MEANINGS, PURCHASE_OUTCOMES } from "../../src/intel/purchase.ts";
import { VERDICTS } from "../../src/intel/trust-score.ts";
import {
  CLIENT_FAMILIES,
  CLIENT_FAMILY_MEANINGS,
  MAX_ASSESSED_OPTIONS,
  MAX_TOKEN_READS,
  NOT_ASSESSED,
} from "../../src/intel/x402-clients.ts";
import { base } from "../../src/networks/base.ts";
import { defineRoute, type RouteDef } from "../route.ts";
import { ClosedObject, FREE_GET, Literals, Nullable } from "../schemas.ts";

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "absolute http or https URL of a public host (private, loopback and metadata addresses are refused)",
  examples: ["https://api.example.com/weather"],
});

/** The named boolean checks of a conformance report. */
export const ConformanceChecks = Type.Object(
  Object.fromEntries(CHECK_NAMES.map((name) => [name, Type.Boolean({ description: CHECK_MEANINGS[name] })])) as Record<CheckName, TBoolean>,
);

/** The name of one check. */
export const CheckNameSchema = Literals(CHECK_NAMES, { description: "a check name" });

/** One client family's answer. */
export const ClientAcceptanceSchema = Type.Object({
  family: Literals(CLIENT_FAMILIES, { description: CLIENT_FAMILIES.map((f) => `${f}: ${CLIENT_FAMILY_MEANINGS[f]}`).join("; ") }),
  accepts: Nullable(Type.Boolean(), {
    description: "true when this family produces a payment for at least one option; null when it could not be run here",
  }),
  reason: Nullable(Type.String(), { description: "the client's own error when it produces none" }),
});

/** Who refuses a payment: the client, its default spend controls, or a facilitator; null when none does. */
const RefusedBy = (options?: SchemaOptions) =>
  Type.Union([Type.Literal("client"), Type.Literal("spend_controls"), Type.Literal("facilitator"), Type.Null()], options);

/** The default client's spend control that refuses a payment; null when none does. */
const SpendControl = (options?: SchemaOptions) =>
  Type.Union([Type.Literal("spendControls.allowedAssets"), Type.Literal("spendControls.maxAmountPerPayment"), Type.Null()], options);

/** What `x402-check` answers (and `x402-trust` embeds as `check`). */
export const ConformanceReportSchema = Type.Object({
  url: Type.String(),
  method: Type.String(),
  final_url: Nullable(Type.String(), { description: "the URL that answered, after redirects" }),
  reachable: Type.Boolean(),
  status: Nullable(Type.Integer(), { description: "HTTP status of the unpaid call; null when there was no HTTP answer" }),
  error: Nullable(Type.String(), { description: "why the target was unreachable (kind: message)" }),
  payable: Nullable(Type.Boolean(), {
    description: `the client a buyer actually runs pays it, defaults included: the @x402/fetch quick start (@x402/core with the @x402/evm exact scheme, spend controls at their defaults: default assets such as USDC only, at most $1 per payment) read the 402 answer with its own parser and signed a payment for the option it pays (the first its spend controls let through; a later option is never tried), offline with a throwaway key (nothing sent), and a facilitator would settle it (no zero or burn payTo, not expired on arrival, the token's own signing domain, a token with an EIP-3009 transfer). Solana options are signed the same way by @x402/svm's exact client scheme. Only the first ${MAX_ASSESSED_OPTIONS} options are assessed. null when no option can be measured: every assessed option on a network family no client is run for here, or in a Solana mint other than USDC`,
  }),
  payable_reason: Nullable(Type.String(), {
    description: "the real cause when not payable: the client's own error, the spend control's message, or the facilitator's refusal",
  }),
  payable_refused_by: RefusedBy({
    description:
      "who refuses it: the client cannot sign it, its default spend controls refuse it, or a facilitator would not settle the payment",
  }),
  payable_with_default_client: Nullable(Type.Boolean(), {
    description: "the default client (spend controls at their defaults) signs a payment for at least one option, settleable or not",
  }),
  payable_with_loosened_controls: Nullable(Type.Boolean(), {
    description:
      "a client with spend controls off (spendControls: false) would pay, and a facilitator settle, the option it pays (the first it can sign)",
  }),
  refused_by_control: SpendControl({ description: "the default client's spend control that refuses it, when that is the cause" }),
  payable_options: Type.Array(
    Type.Object({
      index: Type.Integer({ minimum: 0, description: "position in accepts" }),
      payable: Nullable(Type.Boolean(), {
        description: `null when the option is not measured: on a network family no client is run for here, or after the first ${MAX_ASSESSED_OPTIONS} options (not assessed)`,
      }),
      reason: Nullable(Type.String(), {
        description: `why the option is not payable or not measured; "${NOT_ASSESSED}" for every option after the first ${MAX_ASSESSED_OPTIONS}`,
      }),
      refused_by: RefusedBy(),
      control: SpendControl(),
      payable_with_loosened_controls: Nullable(Type.Boolean()),
    }),
    {
      description: `the default client's answer for each option; only the first ${MAX_ASSESSED_OPTIONS} are assessed, and at most ${MAX_TOKEN_READS} tokens the EVM scheme does not know are read on chain per check, within the call's budget (a token not read is not judged)`,
    },
  ),
  clients: Type.Array(ClientAcceptanceSchema, { description: "which client families produce a payment" }),
  conformant: Type.Boolean({ description: "every protocol rule of the challenge's version holds (discovery is not part of it)" }),
  discoverable: Type.Boolean({
    description: "Bazaar metadata, a /.well-known/x402 discovery document and an OpenAPI document listing the route with a price",
  }),
  x402Version: Nullable(Type.Integer()),
  challenge_source: Type.Union([Type.Literal("header"), Type.Literal("body"), Type.Literal("both"), Type.Null()]),
  accepts: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: "the challenge's payment options as sent" }),
  price_usd: Nullable(Type.Number(), {
    description: "USD price of the USDC option (Base first); null when not in USDC or not atomic",
  }),
  pay_to: Nullable(Type.String(), { description: "receiving address of that option" }),
  network: Nullable(Type.String(), { description: "CAIP-2 network of that option (v1 names translated)" }),
  asset: Nullable(Type.String()),
  failed_checks: Type.Array(CheckNameSchema),
  failures: Type.Array(Type.Object({ check: CheckNameSchema, message: Type.String() }), {
    description: "each failed check with the sentence saying what it requires and, for option rules, which option fails it",
  }),
  checks: ConformanceChecks,
  discovery: Literals(["complete", "timeout"], {
    description: "timeout when a discovery document did not answer within its own, shorter budget (the rest of the answer is not held up)",
  }),
  discovery_urls: Type.Object({ well_known_url: Type.String(), openapi_url: Type.String() }),
  rules_version: Type.Integer({ description: `version of the rules applied; currently ${RULES_VERSION}` }),
  elapsed_ms: Type.Integer({ minimum: 0 }),
});
export type ConformanceReportSchema = Static<typeof ConformanceReportSchema>;

/** `POST /api/x402-check`: is this endpoint a conforming x402 seller, what does it charge, where does the money go. */
export const x402Check = defineRoute({
  method: "POST",
  path: "/api/x402-check",
  operationId: "checkX402Endpoint",
  summary: "Check an endpoint's x402 conformance, price and payTo",
  description: `Calls the URL once without payment (method and JSON body as given; budget 8 s) and answers three separate questions. payable: would the client a buyer actually runs pay it, defaults included? The @x402/fetch quick start (@x402/core with the @x402/evm exact scheme, spend controls at their defaults: default assets such as USDC only, at most $1 per payment) reads the 402 answer with its own parser and signs a payment for each option with a throwaway key, offline (nothing is sent, no money moves), and the payment must be one a facilitator settles (no zero or burn payTo, not expired on arrival, the token's own signing domain, a token with an EIP-3009 transfer). Only the first ${MAX_ASSESSED_OPTIONS} options are assessed (the rest are reported not assessed), and at most ${MAX_TOKEN_READS} tokens the EVM scheme does not know are read on chain, within the same 8 s budget. When not, payable_reason names the real cause and payable_refused_by who refuses it; payable_with_loosened_controls and refused_by_control tell a seller only a client with loosened spend controls would pay; clients says which client families (v2, v1 x402 1.x) accept it. conformant: every protocol rule of the challenge's version holds (v2: 402, challenge in PAYMENT-REQUIRED, CAIP-2 networks, amount as an atomic integer string, asset valid for the network, payTo, EIP-712 domain in extra for EIP-3009 tokens, a body matching the header; v1: its own rules). discoverable: Bazaar metadata, a /.well-known/x402 discovery document and an /openapi.json listing the route with a price, fetched in parallel within a shorter budget (3 s) so they never hold up the answer (discovery: timeout). Each check is a named boolean; failures gives each failed rule's sentence. Extracts the USD price and payTo. An unreachable target is an answer (reachable false, payable false). Private, loopback, link-local, CGNAT, multicast and cloud-metadata targets, non-http(s) URLs and redirects to any of them are refused with 400 target_not_allowed and not charged.`,
  tags: ["x402 intelligence"],
  price: 0.1,
  body: ClosedObject({
    url: Url,
    method: Type.Optional(
      Literals(["GET", "POST", "PUT", "PATCH", "DELETE"], {
        default: "POST",
        description: "HTTP method of the call; default POST",
      }),
    ),
    body: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "JSON object sent as the request body (not with GET)" })),
  }),
  response: ConformanceReportSchema,
  errors: ["invalid_request", "target_not_allowed"],
  example: { input: { url: "https://api.example.com/weather", method: "GET" } },
});

/** One endpoint of a directory search. */
export const DirectoryEndpoint = Type.Object({
  url: Type.String(),
  price_usd: Nullable(Type.Number()),
  sources: Type.Array(Type.String(), { description: "directories listing it: cdp_bazaar, x402_list" }),
  network: Nullable(Type.String(), { description: "CAIP-2 network (v1 names such as base normalised)" }),
  payTo: Nullable(Type.String()),
  description: Nullable(Type.String()),
  name: Nullable(Type.String()),
  method: Type.Union([Type.Literal("GET"), Type.Literal("POST"), Type.Null()]),
  tags: Type.Array(Type.String()),
});

/** `POST /api/x402-directory`: search the public x402 directories. */
export const x402Directory = defineRoute({
  method: "POST",
  path: "/api/x402-directory",
  operationId: "searchX402Directory",
  summary: "Search the public x402 directories (CDP Bazaar and x402 List)",
  description:
    "Searches the CDP Bazaar discovery API and x402 List, merged by URL (an endpoint listed by both shows both sources), with each directory's status (ok, timeout, error: ...). Filters: query (every word must appear in the URL, name, description or tags), network (CAIP-2 id or v1 name such as base), max_price_usd, limit (default 20, maximum 100). Endpoints listed by both directories come first, then by URL. The directories are cached for up to 5 minutes. When no directory answers the call fails with 503 and is not charged.",
  tags: ["x402 intelligence"],
  price: 0.1,
  body: ClosedObject({
    query: Type.Optional(Type.String({ maxLength: 200, description: "words to match" })),
    network: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: `network, e.g. ${base.id} or ${base.v1Name}` })),
    max_price_usd: Type.Optional(Type.Number({ minimum: 0, maximum: 1e9, description: "highest price per call in USD" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: "endpoints returned; default 20" })),
  }),
  response: Type.Object({
    query: Nullable(Type.String()),
    network: Nullable(Type.String()),
    max_price_usd: Nullable(Type.Number()),
    limit: Type.Integer(),
    sources: Type.Record(Type.String(), Type.String(), { description: "directory name to status: ok, timeout or error: <reason>" }),
    results: Type.Integer({ description: "endpoints returned" }),
    matched: Type.Integer({ description: "endpoints matching before the limit" }),
    fetched_at: Type.String({ description: "when the directories were read (ISO 8601)" }),
    endpoints: Type.Array(DirectoryEndpoint),
  }),
  errors: ["invalid_request", "unavailable"],
  example: { input: { query: "weather", network: base.id, max_price_usd: 0.05, limit: 10 } },
});

const VerdictSchema = Literals(VERDICTS);

/** The payTo reputation of a row. */
export const ReputationSchema = Type.Object({
  measured: Type.Boolean(),
  transfers: Nullable(Type.Integer(), { description: "incoming USDC transfers found (at most 25)" }),
  distinct_payers: Nullable(Type.Integer()),
  newest_age_hours: Nullable(Type.Number()),
  oldest_age_hours: Nullable(Type.Number()),
  window_blocks: Nullable(Type.Integer(), { description: "blocks scanned back from the latest" }),
  note: Type.String({ description: "in words; starts with 'NOT measured' when the RPC refused" }),
});

/** An origin's latest purchase by a trust run. */
export const PurchaseVerificationSchema = Type.Object({
  at: Type.String({ description: "when it was bought, ISO 8601 UTC" }),
  outcome: Literals(PURCHASE_OUTCOMES, {
    description: PURCHASE_OUTCOMES.map((o) => `${o}: ${PURCHASE_OUTCOME_MEANINGS[o]}`).join("; "),
  }),
  charged_usd: Type.Number({ description: "what the buyer was charged, read on chain" }),
  detail: Type.String(),
});

/** One scored origin. */
export const TrustRowSchema = Type.Object({
  rank: Type.Integer({ minimum: 1, description: "position by score (best first) in the run" }),
  origin: Type.String(),
  endpoint: Type.String({ description: "the representative endpoint probed" }),
  method: Type.String(),
  endpoints: Type.Integer({ description: "endpoints of this origin in the catalogue" }),
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  verdict: VerdictSchema,
  previous_score: Nullable(Type.Integer(), { description: "score in the previous run; null when not scored then" }),
  reachable: Type.Boolean(),
  status: Nullable(Type.Integer()),
  payable: Nullable(Type.Boolean(), {
    description: "a standard client can pay; null when not measured (or scored under rules version 1)",
  }),
  conformant: Type.Boolean(),
  discoverable: Type.Boolean(),
  failed_checks: Type.Array(Type.String(), { description: "check names of the run's rules version" }),
  penalties: Type.Array(Type.String()),
  price_usd: Nullable(Type.Number()),
  pay_to: Nullable(Type.String()),
  network: Nullable(Type.String()),
  x402_version: Nullable(Type.Integer()),
  reputation: ReputationSchema,
  latency_ms: Nullable(Type.Integer()),
  probed_at: Type.String(),
  last_verified_by_purchase: Nullable(PurchaseVerificationSchema, {
    description: "the origin's latest purchase by a trust run (any run); null when it was never bought from",
  }),
});
export type TrustRowSchema = Static<typeof TrustRowSchema>;

/** The trust leaderboard document (the free preview answers exactly this). */
export const TrustLeaderboardDocument = Type.Object({
  provider: Type.String(),
  what_it_is: Type.String(),
  price_usdc_per_call: Type.Number(),
  endpoints: Type.Array(Type.Object({ route: Type.String(), price_usd: Type.Number() })),
  freshness: Type.String({ description: "when the run finished, ISO 8601 UTC" }),
  coverage: Type.Object({
    origins_in_catalogue: Nullable(Type.Integer()),
    origins_scored: Type.Integer({ description: "origins that answered over HTTP and were scored" }),
    origins_total: Type.Integer({ description: "origins probed (scored + unreachable)" }),
    verdicts: Type.Object({ pay: Type.Integer(), pay_with_caution: Type.Integer(), avoid: Type.Integer() }),
  }),
  score_stats: Type.Object({
    median: Nullable(Type.Number()),
    mean: Nullable(Type.Number()),
    p90: Nullable(Type.Number()),
    unreachable: Type.Integer(),
  }),
  common_penalties: Type.Record(Type.String(), Type.Integer(), { description: "penalty text to the number of origins it applied to" }),
  free_preview_top_10: Type.Array(
    Type.Object({ origin: Type.String(), score: Type.Integer(), verdict: VerdictSchema, endpoints: Type.Integer() }),
  ),
  not_checked: Type.Array(Type.String()),
  caveat: Type.String(),
  verified_by_purchase: Type.Object({
    what_it_means: Type.String(),
    enabled: Type.Boolean({ description: "whether this deployment's trust runs buy (off by default in production)" }),
    budget: Nullable(Type.Object({ per_run_usd: Type.Number(), per_origin_usd: Type.Number(), price_cap_usd: Type.Number() }), {
      description: "the operator's budget; null when purchases are off",
    }),
  }),
});
export type TrustLeaderboardDocument = Static<typeof TrustLeaderboardDocument>;

/** The paid leaderboard: the document with the run and the requested rows. */
export const TrustLeaderboardFull = Type.Composite([
  TrustLeaderboardDocument,
  Type.Object({
    run: Type.Object({
      id: Type.Integer(),
      started_at: Type.String(),
      finished_at: Type.String(),
      trigger: Type.String(),
      rules_version: Type.Integer({ description: "version of the checks and scoring rules the run applied" }),
      sources: Type.Record(Type.String(), Type.String()),
      runs_total: Type.Integer({ description: "completed runs kept in the history" }),
    }),
    order: Literals(["best", "worst"]),
    limit: Type.Integer(),
    rows_matching: Type.Integer({ description: "rows matching the filters before the limit" }),
    rows: Type.Array(TrustRowSchema),
  }),
]);
export type TrustLeaderboardFull = Static<typeof TrustLeaderboardFull>;

const Limit = Type.Integer({ minimum: 1, maximum: 500, default: 25, description: "rows returned; default 25" });
const Order = Literals(["best", "worst"], { default: "best", description: "best (default) or worst first" });
const trustErrors = ["invalid_request", "unavailable"] as const;
const trustDescription =
  "Every origin in the public x402 catalogue (CDP Bazaar and x402 List), one representative endpoint probed each, scored 0-100 on 402 behaviour, payability by a standard client, challenge conformance, discovery documents, on-chain payTo reputation (last 25 incoming USDC transfers: count, distinct payers, age) and price sanity, with a verdict pay, pay_with_caution or avoid; a seller no standard client can pay is always avoid. The document carries the scoring rules (what_it_is), coverage, score statistics, common penalties and the top 10; rows follow ordered by score. Answers 503 (not charged) until a crawl has completed.";

/** `GET /api/trust-leaderboard`: the leaderboard with rows. */
export const getTrustLeaderboard = defineRoute({
  method: "GET",
  path: "/api/trust-leaderboard",
  operationId: "getTrustLeaderboard",
  summary: "x402 seller trust leaderboard",
  description: trustDescription,
  tags: ["x402 intelligence"],
  price: 0.05,
  query: ClosedObject({ limit: Type.Optional(Limit), order: Type.Optional(Order) }),
  response: TrustLeaderboardFull,
  errors: [...trustErrors],
  example: { input: { limit: 25, order: "worst" } },
});

/** `POST /api/trust-leaderboard`: the leaderboard with rows, filtered. */
export const postTrustLeaderboard = defineRoute({
  method: "POST",
  path: "/api/trust-leaderboard",
  operationId: "queryTrustLeaderboard",
  summary: "x402 seller trust leaderboard, filtered",
  description: `${trustDescription} The body filters rows by verdict and minimum score.`,
  tags: ["x402 intelligence"],
  price: 0.05,
  body: ClosedObject({
    limit: Type.Optional(Limit),
    order: Type.Optional(Order),
    verdict: Type.Optional({ ...VerdictSchema, description: "only rows with this verdict" }),
    min_score: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: "only rows scoring at least this" })),
  }),
  response: TrustLeaderboardFull,
  errors: [...trustErrors],
  example: { input: { limit: 10, order: "best", verdict: "pay", min_score: 80 } },
});

/** `GET /api/trust-leaderboard/preview`: the free document, top 10 only. */
export const trustLeaderboardPreview = defineRoute({
  method: "GET",
  path: "/api/trust-leaderboard/preview",
  operationId: "previewTrustLeaderboard",
  summary: "Trust leaderboard preview: top 10 and coverage",
  description:
    "Free. The trust leaderboard document of the latest completed crawl: scoring rules, coverage, score statistics, common penalties and the top 10 origins, without further rows. 503 until a crawl has completed.",
  tags: ["free"],
  ...FREE_GET,
  response: TrustLeaderboardDocument,
  errors: ["unavailable"],
});

/** One earlier crawl row of an origin. */
const HistoryItem = Type.Object({
  run_id: Type.Integer(),
  rules_version: Type.Integer({ description: "rules the run scored with; scores of different versions are not comparable" }),
  probed_at: Type.String(),
  score: Type.Integer(),
  verdict: VerdictSchema,
});

/** `POST /api/x402-trust`: score one origin now, the way the leaderboard does. */
export const x402Trust = defineRoute({
  method: "POST",
  path: "/api/x402-trust",
  operationId: "scoreX402Origin",
  summary: "Trust score of one x402 seller, probed now",
  description:
    "Scores one origin now exactly as the leaderboard crawl does. A URL with a path is probed as given; a bare origin is probed at its representative catalogue endpoint, or at its root when the catalogue does not list it. The method is the one a directory states, else GET, then POST when GET answers 404 or 405. Answers the score, verdict, penalties, payTo reputation, the check report (payable, conformant, discoverable), the origin's place in the latest leaderboard and its earlier crawl scores with the rules version of each. When a trust run bought from the origin, verified_by_purchase says when and what it got (from the last purchase; this call never buys anything), and a seller that took payment without serving is avoid. Refused targets are 400 target_not_allowed, not charged.",
  tags: ["x402 intelligence"],
  price: 0.05,
  body: ClosedObject({ url: Url }),
  response: Type.Object({
    origin: Type.String(),
    endpoint: Type.String({ description: "the endpoint probed" }),
    method: Type.String(),
    in_catalogue: Type.Boolean(),
    endpoints: Type.Integer({ description: "endpoints of this origin in the catalogue (0 when not listed)" }),
    score: Type.Integer({ minimum: 0, maximum: 100 }),
    verdict: VerdictSchema,
    penalties: Type.Array(Type.String()),
    reputation: ReputationSchema,
    check: ConformanceReportSchema,
    leaderboard: Nullable(
      Type.Object({
        run_id: Type.Integer(),
        freshness: Type.String(),
        rank: Type.Integer(),
        score: Type.Integer(),
        verdict: VerdictSchema,
      }),
    ),
    history: Type.Array(HistoryItem, { description: "this origin's crawl rows, newest first (at most 20)" }),
    verified_by_purchase: Nullable(Type.Intersect([PurchaseVerificationSchema, Type.Object({ summary: Type.String() })]), {
      description:
        "the origin's last purchase by a trust run ('verified by purchase at <time>: <outcome>'); null when never bought from. Never bought on this request.",
    }),
    probed_at: Type.String(),
  }),
  errors: ["invalid_request", "target_not_allowed"],
  example: { input: { url: "https://api.example.com" } },
});

/** The leaderboard's routes, for the document's `endpoints`. */
export const trustRoutes = [getTrustLeaderboard, postTrustLeaderboard, trustLeaderboardPreview, x402Trust] as const;

/** The x402 intelligence routes, in listing order. */
export const intelRoutes: readonly RouteDef[] = [
  x402Check,
  x402Directory,
  x402Trust,
  getTrustLeaderboard,
  postTrustLeaderboard,
  trustLeaderboardPreview,
];
