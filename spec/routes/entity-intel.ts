/**
 * Entity intelligence: who an address is, where money went, who uses a venue; six paid
 * answers computed from public Base chain data, a free index and the use cases that plan
 * across them. Every windowed route takes `blocks` and an optional `to_block`, so a past
 * window can be asked for (a historical question, or the same answer twice).
 */
import { type Static, Type } from "@sinclair/typebox";
import { defineRoute, type RouteDef } from "../route.ts";
import { Address, ClosedObject, FREE_DOCUMENT, Literals, Nullable, TxHash } from "../schemas.ts";
import { DecimalString } from "../token-risk-schemas.ts";
import { Labels, Methodology, UPSTREAM_ERRORS } from "./analytics.ts";

/** What every paid entity route shares: its tag and its price in USD. */
const PAID_ENTITY_ROUTE = { tags: ["entity intelligence"], price: 0.1 } as const;

/** Defaults and limits of the entity routes' inputs. */
export const ENTITY_LIMITS = {
  blocks: 1_800,
  portfolioBlocks: 43_200,
  maxBlocks: 43_200,
  top: 10,
  maxTop: 50,
  limit: 20,
  maxLimit: 100,
  maxHops: 3,
  maxMaxHops: 5,
  minUsd: 1_000,
  /** Distinct tokens one answer asks prices for (two DexScreener calls); the rest are listed unpriced. */
  pricedTokens: 60,
} as const;

const Blocks = (fallback: number) =>
  Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: ENTITY_LIMITS.maxBlocks,
      default: fallback,
      description: `blocks in the window, ending at to_block (default ${fallback}, at most ${ENTITY_LIMITS.maxBlocks}: one day of 2-second blocks)`,
    }),
  );

const ToBlock = Type.Optional(
  Type.Integer({
    minimum: 0,
    description:
      "the window's last block (default: the latest block). Name a past block to answer a historical question, or to get the same answer again while the chain moves on",
  }),
);

/** A token: `USDC`, `WETH` or a token address. */
const TokenInput = (description: string, fallback?: string) =>
  Type.String({
    pattern: "^(USDC|WETH|0x[0-9a-fA-F]{40})$",
    description,
    examples: ["USDC"],
    ...(fallback ? { default: fallback } : {}),
  });

/** What kind of entity an address is: a curated venue class, else its class from interface probes. */
export const EntityClass = Literals(["cex", "dex", "bridge", "mixer", "wallet", "token", "contract", "zero_address"], {
  description:
    "cex, bridge or mixer: a curated venue of the label file; dex: a curated DEX venue or a pair, pool or router by interface probes; otherwise the probe class (wallet, token, contract, zero_address)",
});
export type EntityClass = Static<typeof EntityClass>;

/** A curated warning. */
export const Flag = Literals(["exploit", "phishing", "mixer", "scam"]);

const Flags = Type.Array(Flag, { description: "curated flags (exploit, phishing, mixer, scam) from the label file; empty when none" });

/** How much of the window a scan read, and what it cost. */
const Budget = Type.Object({
  logs_read: Type.Integer({ minimum: 0, description: "Transfer logs read from the chain for this answer" }),
  ms: Type.Integer({ minimum: 0, description: "time spent" }),
  max_logs: Type.Integer({ description: "the log budget of one answer" }),
  max_ms: Type.Integer({ description: "the time budget of one answer" }),
});

/** The coverage fields every windowed answer carries. */
const Coverage = {
  from_block: Type.Integer({ description: "first block of the window asked for" }),
  to_block: Type.Integer({ description: "last block of the window" }),
  truncated: Type.Boolean({
    description: "true when the time or log budget ran out: only blocks covered_from_block..to_block were read (the newest part)",
  }),
  covered_from_block: Type.Integer({ description: "the oldest block actually read; equals from_block when not truncated" }),
  budget: Budget,
};

/** Tokens an answer left unpriced without asking: one answer prices at most the most active ones. */
const NotLookedUp = Type.Array(Address, {
  description: `tokens moved past the ${ENTITY_LIMITS.pricedTokens} with the most transfers in the window, not sent to the price APIs (also in unpriced_tokens)`,
});

/** An address as the answers describe it. */
export const Described = { address: Address, class: EntityClass, labels: Labels, flags: Flags };

/** How the answer was made and what it does not check. */
const Explained = { methodology: Methodology, not_checked: Type.Array(Type.String()) };

const UsdOrNull = Nullable(Type.Number(), { description: "USD, rounded to the cent; null when the token has no price" });

// ---------------------------------------------------------------------------------------------

/** `GET /api/entity-intel` (free): the index document. */
export const entityIntelIndex = defineRoute({
  method: "GET",
  path: "/api/entity-intel",
  operationId: "getEntityIntelIndex",
  summary: "Entity intelligence index: routes, curated labels, method",
  description:
    "Free. What the entity-intelligence routes answer and cost, the curated addresses this service names, how the answers are computed (chain, transfers, prices, classes, labels) and what is not checked. The use cases that plan across the routes are at /entity-intel.",
  tags: ["free", "entity intelligence"],
  ...FREE_DOCUMENT,
  response: ClosedObject({
    provider: Type.String(),
    not_nansen: Type.String({ description: "disclaimer: not affiliated with any analytics vendor; names only from the curated file" }),
    source_thread: Type.String({ description: "where the use cases and this document are rendered for people" }),
    price_usdc_per_call: Type.Number(),
    endpoints: Type.Array(Type.Object({ route: Type.String(), price_usd: Type.Number(), answers: Type.String() })),
    labels_configured: Type.Array(Type.String(), { description: "every address the curated label file names on this network" }),
    methodology: Type.Object({
      chain: Type.String(),
      transfers: Type.String(),
      prices: Type.String(),
      classes: Type.String(),
      labels: Type.String(),
    }),
    not_checked: Type.Array(Type.String()),
  }),
});

/** One step of a plan. */
export const PlanStep = ClosedObject({
  step: Type.Integer({ minimum: 1 }),
  route: Type.String({ description: "the paid route to call, e.g. /api/entity-intel/exchange-flow" }),
  why: Type.String({ description: "what this step answers and why it comes here" }),
  example_body: Type.Record(Type.String(), Type.Unknown(), { description: "a valid request body for the route" }),
});

const UseCaseRef = Type.Object({ id: Type.String(), title: Type.String() });

/** `POST /api/entity-intel/use-cases`. */
export const entityUseCases = defineRoute({
  method: "POST",
  path: "/api/entity-intel/use-cases",
  operationId: "entityIntelUseCases",
  summary: "Entity intelligence plan for a role or task",
  description:
    "Matches `role` and/or `task` against the curated use cases (exchange treasury watch, a token team watching for dumps, incident response, venue growth, VIP outreach, airdrop-farm detection, whale following, counterparty due diligence, ...) and answers the best one's ordered plan: each step names the route, why, and a valid example body. Other matches are listed as alternatives; no match is a 404 listing the use cases, not charged.",
  ...PAID_ENTITY_ROUTE,
  body: ClosedObject({
    role: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "who you are, e.g. exchange treasury team" })),
    task: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: "what you want to find out" })),
  }),
  response: Type.Object({
    query: Type.Object({ role: Nullable(Type.String()), task: Nullable(Type.String()) }),
    matched: UseCaseRef,
    summary: Type.String(),
    plan: Type.Array(PlanStep),
    alternatives: Type.Array(UseCaseRef, { description: "other use cases that match, best first (at most 3)" }),
    ...Explained,
  }),
  errors: [...UPSTREAM_ERRORS, "not_found"],
  example: { input: { role: "token team", task: "see if large holders are sending our token to exchanges" } },
});

/** Flows of one venue class. */
const ClassFlow = Type.Object({
  inflow: DecimalString,
  outflow: DecimalString,
  net: DecimalString,
  inflow_usd: UsdOrNull,
  outflow_usd: UsdOrNull,
  net_usd: UsdOrNull,
  transfers: Type.Integer({ description: "transfers into or out of venues of this class" }),
});

const ResolvedToken = {
  token: Type.String({ description: "the token as asked: USDC, WETH or its address" }),
  token_address: Address,
  symbol: Nullable(Type.String()),
  decimals: Type.Integer(),
  price_usd: Nullable(DecimalString, { description: "the token's current USD price; null when no source has one" }),
  price_source: Type.Union([Type.Literal("dexscreener"), Type.Literal("defillama"), Type.Null()]),
};

/** `POST /api/entity-intel/exchange-flow`. */
export const exchangeFlow = defineRoute({
  method: "POST",
  path: "/api/entity-intel/exchange-flow",
  operationId: "entityIntelExchangeFlow",
  summary: "Token inflow/outflow by venue class, top counterparties",
  description:
    "Reads the token's Transfer logs to and from every curated venue address (exchange hot-wallet clusters, bridges, DEX pools and routers, mixers) in the window, filtered on the indexed from/to topics, never every transfer of the token. Inflow and outflow per venue class in token units and USD (current price), transfers inside one venue's cluster left out; the top non-venue counterparties by USD. `to_block` names a past window.",
  ...PAID_ENTITY_ROUTE,
  body: ClosedObject({
    token: Type.Optional(TokenInput('"USDC" (default), "WETH" or a token address', "USDC")),
    blocks: Blocks(ENTITY_LIMITS.blocks),
    to_block: ToBlock,
    top: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: ENTITY_LIMITS.maxTop,
        default: ENTITY_LIMITS.top,
        description: "counterparties listed, default 10",
      }),
    ),
  }),
  response: Type.Object({
    ...ResolvedToken,
    ...Coverage,
    venues_scanned: Type.Integer({ description: "curated venue addresses whose transfers were read" }),
    by_class: Type.Record(Type.String(), ClassFlow, {
      description: "per venue class: cex, dex and bridge always, and every other class present (mixer)",
    }),
    top_counterparties: Type.Array(
      Type.Object({
        ...Described,
        inflow_usd: UsdOrNull,
        outflow_usd: UsdOrNull,
        inflow: DecimalString,
        outflow: DecimalString,
      }),
      { description: "addresses outside the venues, by what they sent into venues (inflow) plus what they got from them (outflow)" },
    ),
    ...Explained,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { token: "USDC", blocks: 1800 } },
});

/** One holding of a portfolio. */
const Holding = Type.Object({
  token: Type.Union([Address, Type.Literal("ETH")], { description: "token address, or ETH for the native balance" }),
  symbol: Nullable(Type.String()),
  decimals: Type.Integer(),
  balance: DecimalString,
  price_usd: Nullable(DecimalString),
  value_usd: UsdOrNull,
  price_source: Type.Union([Type.Literal("dexscreener"), Type.Literal("defillama"), Type.Null()]),
});

/** `POST /api/entity-intel/portfolio`. */
export const portfolio = defineRoute({
  method: "POST",
  path: "/api/entity-intel/portfolio",
  operationId: "entityIntelPortfolio",
  summary: "Wallet holdings in USD and activity in a window",
  description:
    "Finds the tokens an address moved in the window (Transfer logs with it as from or to, every token), reads ETH and each token's balance at to_block (USDC and WETH always), prices them in one batch (DexScreener, DefiLlama for what it lacks) and sums the value; tokens without a price are listed under unpriced. Activity: transfers in and out, tokens touched, first and last block seen.",
  ...PAID_ENTITY_ROUTE,
  body: ClosedObject({ address: Address, blocks: Blocks(ENTITY_LIMITS.portfolioBlocks), to_block: ToBlock }),
  response: Type.Object({
    ...Described,
    block_number: Type.Integer({ description: "balances are read at this block (to_block)" }),
    holdings: Type.Array(Holding, { description: "non-zero balances, largest USD value first, unpriced last" }),
    total_value_usd: Type.Number({ description: "sum of the priced holdings" }),
    unpriced: Type.Array(
      Type.Object({
        token: Address,
        symbol: Nullable(Type.String()),
        balance: DecimalString,
        reason: Literals(["no_price", "not_looked_up"], {
          description: `no_price: neither price API has one; not_looked_up: past the ${ENTITY_LIMITS.pricedTokens} tokens one answer prices (USDC, WETH, then the most transfers in the window)`,
        }),
      }),
    ),
    activity: Type.Object({
      window_blocks: Type.Integer(),
      transfers_in: Type.Integer(),
      transfers_out: Type.Integer(),
      tokens_touched: Type.Integer(),
      first_seen_block: Nullable(Type.Integer()),
      last_seen_block: Nullable(Type.Integer()),
    }),
    ...Coverage,
    ...Explained,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { address: "0x4200000000000000000000000000000000000006" } },
});

const Seen = Type.Object({ block: Type.Integer(), timestamp: Type.String({ description: "the block's time, ISO 8601 UTC" }) });

/** `POST /api/entity-intel/counterparties`. */
export const counterparties = defineRoute({
  method: "POST",
  path: "/api/entity-intel/counterparties",
  operationId: "entityIntelCounterparties",
  summary: "Who an address transacts with: class, flags, first/last seen",
  description:
    "Transfer logs with the address as from or as to in the window (one token, or every token), grouped by the other side: class (curated venue or interface probes), labels, flags, first and last block seen with their times, transfers each way and USD volume each way at current prices. Ranked by total USD volume.",
  ...PAID_ENTITY_ROUTE,
  body: ClosedObject({
    address: Address,
    token: Type.Optional(TokenInput('"USDC", "WETH" or a token address; default every token')),
    blocks: Blocks(ENTITY_LIMITS.blocks),
    to_block: ToBlock,
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: ENTITY_LIMITS.maxLimit, default: ENTITY_LIMITS.limit, description: "rows listed, default 20" }),
    ),
  }),
  response: Type.Object({
    ...Described,
    token: Nullable(Address, { description: "the token asked for; null: every token" }),
    total_counterparties: Type.Integer(),
    counterparties: Type.Array(
      Type.Object({
        ...Described,
        first_seen: Seen,
        last_seen: Seen,
        transfers_in: Type.Integer({ description: "transfers from it to the address" }),
        transfers_out: Type.Integer({ description: "transfers from the address to it" }),
        volume_in_usd: Type.Number(),
        volume_out_usd: Type.Number(),
      }),
    ),
    unpriced_tokens: Type.Array(Address, { description: "tokens moved that have no price: their amounts are not in the USD volumes" }),
    tokens_not_looked_up: NotLookedUp,
    ...Coverage,
    ...Explained,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { address: "0x4200000000000000000000000000000000000006", limit: 20 } },
});

/** Why a trace stops at a node, in the order the answer's `reached` counts them. */
export const TERMINALS = [
  "cex",
  "bridge",
  "dex",
  "no_further_transfers",
  "tokens_not_priced",
  "fan_out_limit",
  "budget",
  "max_hops",
] as const;
export const Terminal = Literals(TERMINALS, {
  description: `cex, bridge, dex: the money reached a venue; no_further_transfers: nothing at or above min_usd moved on in the window; tokens_not_priced: nothing priced at or above min_usd moved on, but some of what moved on is in tokens past the ${ENTITY_LIMITS.pricedTokens} one answer prices (see tokens_not_looked_up), so their worth is unknown; fan_out_limit: it went on to more addresses than the trace follows; budget: the time or log budget ran out first; max_hops: the trace stopped at max_hops`,
});
export type Terminal = Static<typeof Terminal>;

/** `POST /api/entity-intel/trace`. */
export const trace = defineRoute({
  method: "POST",
  path: "/api/entity-intel/trace",
  operationId: "entityIntelTrace",
  summary: "Where money went, hop by hop, and why each path stops",
  description:
    "From an address (or the transfers of a transaction), follows transfers worth at least min_usd that happen after the money arrived (direction out) or before it left (direction in), one hop per round, up to max_hops. A path stops at an exchange, a bridge or a DEX, where nothing moves on, where the money fans out to too many addresses, or when the budget runs out; every node says which. One indexed-topic query per hop for the whole frontier.",
  ...PAID_ENTITY_ROUTE,
  body: ClosedObject({
    from: Type.Union([Address, TxHash], { description: "an address, or a transaction hash whose transfers start the trace" }),
    token: Type.Optional(TokenInput('"USDC", "WETH" or a token address; default every priced token')),
    direction: Type.Optional(
      Literals(["out", "in"], {
        default: "out",
        description: '"out" (where it went, default) or "in" (where it came from)',
      }),
    ),
    max_hops: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: ENTITY_LIMITS.maxMaxHops,
        default: ENTITY_LIMITS.maxHops,
        description: "hops followed, default 3, at most 5",
      }),
    ),
    min_usd: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1e12,
        default: ENTITY_LIMITS.minUsd,
        description: "smallest transfer followed in USD, default 1000",
      }),
    ),
    blocks: Blocks(ENTITY_LIMITS.blocks),
    to_block: ToBlock,
  }),
  response: Type.Object({
    origin: Type.String({ description: "the address or transaction the trace starts from" }),
    origin_kind: Literals(["address", "transaction"]),
    direction: Literals(["out", "in"]),
    token: Nullable(Address),
    min_usd: Type.Number(),
    max_hops: Type.Integer(),
    from_block: Type.Integer(),
    to_block: Type.Integer(),
    hops: Type.Array(
      Type.Object({
        hop: Type.Integer({ minimum: 1 }),
        edges: Type.Array(
          Type.Object({
            from: Address,
            to: Address,
            token: Address,
            symbol: Nullable(Type.String()),
            amount: DecimalString,
            amount_usd: Type.Number(),
            tx_hash: TxHash,
            block: Type.Integer(),
            log_index: Type.Integer(),
          }),
        ),
      }),
    ),
    nodes: Type.Array(
      Type.Object({
        address: Address,
        hop: Type.Integer({ minimum: 0, description: "the hop that first reached it (0: where the trace starts)" }),
        class: EntityClass,
        labels: Labels,
        flags: Flags,
        terminal: Nullable(Terminal, { description: "why the path stops here; null when it goes on" }),
      }),
    ),
    reached: Type.Record(Type.String(), Type.Integer(), { description: "nodes by terminal kind" }),
    truncated: Type.Boolean(),
    tokens_not_looked_up: NotLookedUp,
    budget: Budget,
    ...Explained,
  }),
  errors: [...UPSTREAM_ERRORS, "not_found"],
  example: { input: { from: "0x4200000000000000000000000000000000000006", max_hops: 3, min_usd: 1000 } },
});

/** `POST /api/entity-intel/venue-users`. */
export const venueUsers = defineRoute({
  method: "POST",
  path: "/api/entity-intel/venue-users",
  operationId: "entityIntelVenueUsers",
  summary: "Venue users: segments, VIPs, gone quiet, flagged funders",
  description:
    "For a venue (a curated venue id, which may be a cluster of addresses, or any address): every address that sent to or received from it in the window, with its USD volume; value segments; the largest users as VIP candidates; users active in the window's first half and silent in its last quarter; and users that received money from a curated flagged address.",
  ...PAID_ENTITY_ROUTE,
  body: ClosedObject({
    venue: Type.String({
      pattern: "^(0x[0-9a-fA-F]{40}|[a-z0-9]+(-[a-z0-9]+)*)$",
      description: "a venue id from the label file (see GET /api/entity-intel) or an address",
      examples: ["base-l2-standard-bridge"],
    }),
    token: Type.Optional(TokenInput('"USDC", "WETH" or a token address; default every token')),
    blocks: Blocks(ENTITY_LIMITS.blocks),
    to_block: ToBlock,
  }),
  response: Type.Object({
    venue: Type.Object({
      id: Nullable(Type.String(), { description: "the curated venue id; null for an address not in the label file" }),
      address: Address,
      addresses: Type.Array(Address, { description: "the venue's cluster" }),
      class: EntityClass,
      labels: Labels,
    }),
    token: Nullable(Address),
    users_total: Type.Integer(),
    segments: Type.Array(
      Type.Object({
        name: Type.String(),
        min_usd: Type.Number(),
        max_usd: Nullable(Type.Number(), { description: "exclusive; null: no upper bound" }),
        users: Type.Integer(),
        volume_usd: Type.Number(),
      }),
    ),
    vip_candidates: Type.Array(Type.Object({ address: Address, volume_usd: Type.Number(), transfers: Type.Integer() })),
    gone_quiet: Type.Array(Type.Object({ address: Address, last_seen_block: Type.Integer(), volume_usd_before: Type.Number() })),
    flagged_funders: Type.Array(Type.Object({ user: Address, funder: Address, flags: Flags })),
    tokens_not_looked_up: NotLookedUp,
    flagged_funders_scan: Type.Object(
      {
        truncated: Type.Boolean({ description: "true when the budget ran out before every block of the window was read for funders" }),
        covered_from_block: Type.Integer({
          description: "the oldest block read for funders; equals from_block when not truncated, to_block + 1 when none could be read",
        }),
      },
      {
        description:
          "the read of what curated flagged addresses sent in the window, made after the users' read with what it left of the budget; the top-level truncated and covered_from_block describe the users' read",
      },
    ),
    unpriced_tokens: Type.Array(Address),
    ...Coverage,
    ...Explained,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { venue: "base-l2-standard-bridge", blocks: 1800 } },
});

/** The paid entity routes, in the order the index lists them. */
export const entityPaidRoutes = [entityUseCases, exchangeFlow, portfolio, counterparties, trace, venueUsers] as const;

/** The entity-intelligence routes, in listing order. */
export const entityIntelRoutes: readonly RouteDef[] = [entityIntelIndex, ...entityPaidRoutes];
