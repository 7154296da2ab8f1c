/**
 * What the chat engine reads, and how a function's context provides it. The engine fetches
 * nothing itself: prices, the watched markets, Hyperliquid's perpetuals, gas, DefiLlama's
 * protocol TVL and the knowledge base come from the same functions and adapters the other routes use, so a chat
 * answer and `GET /api/markets` or `POST /api/gas-tracker` agree, and an upstream failure is
 * the same `UpstreamError` (502/503/504, never charged).
 */
import type { Static } from "@sinclair/typebox";
import type { Address } from "viem";
import gasTrackerFunction from "../../functions/gas-tracker.ts";
import marketsFunction from "../../functions/markets.ts";
import type { gasTracker, MarketPair } from "../../spec/routes/analytics.ts";
import type { TokenPrice } from "../analytics/price-source.ts";
import { analyticsOf } from "../analytics/services.ts";
import { kbIndex } from "../content/kb.ts";
import type { KbAnswer } from "../content/kb-index.ts";
import type { FunctionContext } from "../context.ts";
import type { Logger } from "../log.ts";
import type { LlamaProtocolSummary, ProtocolTvl } from "../upstreams/defillama.ts";
import type { PerpAsset } from "../upstreams/hyperliquid.ts";
import type { Cached } from "../upstreams/ttl-cache.ts";

/** The gas figures the chat quotes: the fields of `POST /api/gas-tracker`'s answer it reads. */
export type GasReading = Pick<
  Static<typeof gasTracker.response>,
  "chain_id" | "block_number" | "base_fee_gwei" | "priority_fee_gwei" | "eth_price_usd" | "price_source" | "usd_estimate"
>;

/** The data sources of the chat engine. Each may throw an `UpstreamError`. */
export interface ChatDeps {
  /** The watched Base tokens with price and 24 h change (`GET /api/markets`'s rows). */
  markets(): Promise<{ pairs: MarketPair[] }>;
  /** The USD price of any Base token by address (DexScreener's deepest pair, DefiLlama as fallback). */
  tokenPrice(token: Address): Promise<TokenPrice>;
  /** Hyperliquid's listed perpetuals by upper-case name, with when they were fetched. */
  perps(): Promise<Cached<ReadonlyMap<string, PerpAsset>>>;
  /** Gas on the served chain now (`POST /api/gas-tracker`'s answer). */
  gas(): Promise<GasReading>;
  /** DefiLlama's protocols by lower-case slug (`POST /api/defi-sentiment`'s list). */
  protocols(): Promise<Cached<ReadonlyMap<string, LlamaProtocolSummary>>>;
  /** A protocol's TVL and 24 h change on DefiLlama, a parent slug (`aave`) answering its versions' aggregate. */
  protocolTvl(slug: string): Promise<Cached<ProtocolTvl>>;
  /** The knowledge-base index (`kb/ask`'s). */
  kb: { ask(question: string): KbAnswer };
  /** The clock: stamps figures whose source gives no fetch time (gas). */
  now(): Date;
  log: Logger;
}

/**
 * The chat's data sources from a function's context: the markets and gas-tracker functions
 * run with this context, the price source and Hyperliquid adapter of `analyticsOf(ctx)`, and
 * the compiled knowledge base.
 *
 * @example
 * const answer = await answerChat(input.message, chatDepsFromContext(ctx), chatConfig.llm);
 */
export function chatDepsFromContext(ctx: FunctionContext): ChatDeps {
  return {
    markets: () => marketsFunction.run({}, { ...ctx, route: marketsFunction.route }),
    tokenPrice: (token) => analyticsOf(ctx).prices.price(token),
    perps: () => analyticsOf(ctx).hyperliquid.perps(),
    gas: () => gasTrackerFunction.run({}, { ...ctx, route: gasTrackerFunction.route }),
    protocols: () => analyticsOf(ctx).defillama.protocols(),
    protocolTvl: (slug) => analyticsOf(ctx).defillama.protocolTvl(slug),
    kb: kbIndex(),
    now: () => ctx.now(),
    log: ctx.log.child({ component: "chat" }),
  };
}
