/**
 * The routes of the secondary site on Base (`/v1/`): token-risk tools for traders deciding in
 * seconds whether a token is safe to touch, the two analytics routes it shares with the
 * primary site (one function each, two route entries), and its free `/health`.
 */
import { Type } from "@sinclair/typebox";
import { base } from "../../src/networks/base.ts";
import { defineRoute, type RouteDef } from "../route.ts";
import { Address, ClosedObject, FREE_GET, Literals, Nullable } from "../schemas.ts";
import { HoneypotSimulation, RiskVerdict } from "../token-risk-schemas.ts";
import { defiSentiment, Methodology, RecentBlocks, UPSTREAM_ERRORS, walletProfile } from "./analytics.ts";

/** `GET /health` (free): whether the site reads a live chain, and how fresh its head is. */
export const baseToolsHealth = defineRoute({
  method: "GET",
  path: "/health",
  operationId: "getBaseToolsHealth",
  summary: "Health of the Base token-risk tools: network, chain head and its age",
  description:
    "Free. Whether this site can read its chain: the network it reads and settles on, the latest block number and how many seconds ago that block was produced (a stalled node shows a growing age), and the service build.",
  tags: ["free"],
  ...FREE_GET,
  response: Type.Object({
    status: Literals(["ok", "degraded"], {
      description: "degraded when the chain cannot be read, or (in production) its head is older than 60 seconds",
    }),
    network: Type.String({ examples: [base.id] }),
    chain_head: Nullable(Type.Integer(), { description: "the latest block number; null when the chain cannot be read" }),
    head_age_seconds: Nullable(Type.Integer(), { description: "seconds since the latest block's timestamp" }),
    version: Type.String(),
  }),
});

/** `POST /v1/honeypot-check`: a buy, a transfer and a sell simulated on the chain, with the owner's powers. */
export const honeypotCheck = defineRoute({
  method: "POST",
  path: "/v1/honeypot-check",
  operationId: "v1HoneypotCheck",
  summary: "Honeypot check: simulate a buy, a transfer and a sell of a Base token, with its taxes and owner privileges",
  description:
    "Simulates on Base itself, by eth_call with state overrides (nothing is mined): a buy of amount_usd (default 100) of the token through its deepest pool on the curated factories (v2-style or concentrated liquidity), a transfer between two fresh addresses and a sell back. Answers whether each step works, the buy, sell and transfer taxes, revert reasons, declared limits, the owner's privileged functions found in the bytecode (through a proxy's implementation) and a verdict (honeypot, high_tax, caution, ok) with every reason.",
  tags: ["token risk"],
  price: 0.05,
  body: ClosedObject({
    token: Address,
    amount_usd: Type.Optional(
      Type.Number({ minimum: 1, maximum: 100_000, default: 100, description: "USD value of the simulated buy, default 100" }),
    ),
  }),
  response: Type.Object({ ...HoneypotSimulation.properties, methodology: Methodology }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { token: "0x940181a94A35A4569E4529A3CDfB74e38FD98631", amount_usd: 100 } },
});

/** Meme-hunter defaults and limits (its window, `blocks`, is bounded by the shared `RecentBlocks`). */
export const MEME_HUNTER_DEFAULTS = { blocks: 1_800, min_liquidity_usd: 5_000, limit: 20, max_limit: 100 } as const;

/** `POST /v1/meme-hunter`: the new pairs of a recent window, checked and ranked. */
export const memeHunter = defineRoute({
  method: "POST",
  path: "/v1/meme-hunter",
  operationId: "v1MemeHunter",
  summary: "New-pair hunter: pairs created on Base DEXes in recent blocks, with liquidity, trading, honeypot verdict and a risk score",
  description:
    "Reads the PairCreated and PoolCreated logs of the curated factories (Uniswap v2 and v3, Aerodrome, Aerodrome Slipstream) in the last `blocks` blocks (default 1,800, about an hour; at most 43,200), keeps new tokens paired with a quote token and at least min_liquidity_usd (default 5,000) of liquidity, and answers each with its age, liquidity, buys, sells, unique buyers, the share of the token received by its top 10 receivers, pulled liquidity, the honeypot check's verdict and a 0-100 risk score with its inputs and weights, least risky first (at most `limit`, default 20, maximum 100).",
  tags: ["token risk"],
  price: 0.1,
  body: ClosedObject({
    blocks: RecentBlocks,
    min_liquidity_usd: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1e12, default: 5000, description: "least liquidity in USD a pair needs, default 5000" }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MEME_HUNTER_DEFAULTS.max_limit, default: 20, description: "pairs listed, default 20" }),
    ),
  }),
  response: Type.Object({
    from_block: Type.Integer(),
    to_block: Type.Integer(),
    blocks_scanned: Type.Integer(),
    factories_scanned: Type.Integer(),
    pairs_created: Type.Integer({ description: "creation logs of the curated factories in the window" }),
    new_token_pairs: Type.Integer({ description: "of them, pairs of a token outside the curated list with a quote token" }),
    above_min_liquidity: Type.Integer(),
    pairs: Type.Array(
      Type.Object({
        pair: Address,
        token: Address,
        symbol: Nullable(Type.String()),
        dex: Type.String(),
        quote_symbol: Type.String(),
        created_block: Type.Integer(),
        age_minutes: Type.Integer({ minimum: 0 }),
        liquidity_usd: Type.Number({ description: "twice the quote side's value" }),
        buys: Type.Integer(),
        sells: Type.Integer(),
        unique_buyers: Type.Integer(),
        top10_share_pct: Nullable(Type.Number(), {
          description: "share of the token received in the window (outside its pools) that went to the 10 largest receivers",
        }),
        liquidity_removed: Type.Boolean({ description: "at least half of the quote side added in the window was withdrawn" }),
        liquidity_removed_pct: Type.Number(),
        verdict: RiskVerdict,
        verdict_reasons: Type.Array(Type.String()),
        risk_score: Type.Number({ minimum: 0, maximum: 100, description: "0 least risky, 100 most: the sum of the contributions" }),
        risk_inputs: Type.Array(
          Type.Object({
            name: Type.String(),
            value: Type.Union([Type.Number(), Type.String()]),
            scaled: Type.Number({ description: "the input on a 0-100 risk scale" }),
            weight: Type.Number(),
            contribution: Type.Number({ description: "scaled x weight" }),
          }),
        ),
      }),
    ),
    scoring: Type.Object({
      weights: Type.Record(Type.String(), Type.Number()),
      verdict_points: Type.Record(Type.String(), Type.Number()),
      deep_liquidity_usd: Type.Number({
        description: "liquidity that scores 0 on thin_liquidity (log scale from 1 USD, which scores 100)",
      }),
      removed_threshold_pct: Type.Number(),
    }),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { blocks: 1800, min_liquidity_usd: 5000, limit: 20 } },
});

const PegStatus = Literals(["on_peg", "drifting", "depegged"], {
  description: "stablecoins: on_peg under 10 bps from the peg, drifting under 100 bps, else depegged",
});

/** `POST /v1/dinalibrium`: a token's price equilibrium across Base venues. */
export const dinalibrium = defineRoute({
  method: "POST",
  path: "/v1/dinalibrium",
  operationId: "v1Dinalibrium",
  summary: "Price equilibrium: a token's implied price in each Base pool, its deviation from the reference and the gaps after fees",
  description:
    "For a token (an address or a curated symbol; default: USDC, USDbC, DAI, WETH and cbBTC), every pool of it against a curated token on the curated factories: the USD price it implies (from reserves or sqrtPriceX96), its liquidity, its deviation from the reference price in basis points (a stablecoin's peg, else the market price) and what is left after the pool's fee; for stablecoins a peg status per pool and overall (on_peg under 10 bps, drifting under 100 bps, depegged); and the widest gap between two pools, before and after both fees.",
  tags: ["token risk"],
  price: 0.1,
  body: ClosedObject({
    token: Type.Optional(
      Type.String({
        pattern: "^(0x[0-9a-fA-F]{40}|[A-Za-z0-9]{1,20})$",
        description: "a token address or a curated symbol (USDC, USDbC, DAI, WETH, cbBTC); default: all five",
      }),
    ),
  }),
  response: Type.Object({
    block_number: Type.Integer({ description: "every pool was read at this block" }),
    tokens: Type.Array(
      Type.Object({
        token: Address,
        symbol: Type.String(),
        stablecoin: Type.Boolean(),
        reference_price_usd: Type.Number(),
        reference_source: Literals(["peg", "dexscreener", "defillama"]),
        pools: Type.Array(
          Type.Object({
            pool: Address,
            dex: Type.String(),
            kind: Type.String(),
            counter_symbol: Type.String(),
            counter: Address,
            fee_bps: Type.Number(),
            price_in_counter: Type.Number({ description: "whole counter tokens per whole token" }),
            implied_price_usd: Type.Number(),
            liquidity_usd: Type.Number({ description: "twice the counter side's value" }),
            deviation_bps: Type.Number({ description: "(implied / reference - 1) x 10,000" }),
            gap_after_fee_bps: Type.Number({ description: "|deviation_bps| less the pool's fee, at least 0" }),
            peg: Nullable(PegStatus),
          }),
        ),
        pools_skipped: Type.Integer({ description: "pools found but not priced (no price, empty reserves)" }),
        weighted_deviation_bps: Nullable(Type.Number(), { description: "liquidity-weighted mean deviation" }),
        peg: Nullable(PegStatus),
        max_gap_bps: Nullable(Type.Number(), { description: "the widest difference between two pools' implied prices" }),
        max_gap_after_fees_bps: Nullable(Type.Number()),
        max_gap_between: Nullable(Type.Array(Address, { minItems: 2, maxItems: 2 }), {
          description: "the cheaper pool, then the dearer one",
        }),
      }),
    ),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS, "not_found"],
  example: { input: { token: "USDC" } },
});

/** `POST /v1/wallet-profile`: the primary site's wallet profile, answered by the same function. */
export const walletProfileV1 = defineRoute({
  ...walletProfile,
  path: "/v1/wallet-profile",
  operationId: "v1WalletProfile",
});

/** `POST /v1/defi-sentiment`: the primary site's sentiment, answered by the same function. */
export const defiSentimentV1 = defineRoute({
  ...defiSentiment,
  path: "/v1/defi-sentiment",
  operationId: "v1DefiSentiment",
  example: { input: { asset: "ETH", protocol: "aave" } },
});

/** The secondary site's routes, in listing order. */
export const baseToolsRoutes: readonly RouteDef[] = [
  baseToolsHealth,
  honeypotCheck,
  memeHunter,
  dinalibrium,
  walletProfileV1,
  defiSentimentV1,
];
