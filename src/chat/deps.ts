/**
 * What the chat engine reads, and how a function's context provides it. The engine fetches
 * nothing itself: prices, the watched markets, Hyperliquid's perpetuals, gas, DefiLlama's
 * protocol TVL and the knowledge base come from the same functions and adapters the other routes use, so a chat
 * answer and `GET /api/markets` or `POST /api/gas-tracker` agree, and an upstream failure is
 * the same `UpstreamError` (502/503/504, never charged).
 */
import type { Address } from "viem";
import gasTrackerFunction from "../../functions/gas-tracker.ts";
import marketsFunction from "../../functions/markets.ts";
import { analyticsOf } from "../analytics/services.ts";
import { kbIndex } from "../content/kb.ts";
import type { FunctionContext } from "../context.ts";

/** The data sources of the chat engine. Each may throw an `UpstreamError`. */
export type ChatDeps = ReturnType<typeof chatDepsFromContext>;

/**
 * The chat's data sources from a function's context: the markets and gas-tracker functions
 * run with this context, the price source and Hyperliquid adapter of `analyticsOf(ctx)`, and
 * the compiled knowledge base.
 *
 * @example
 * const answer = await answerChat(input.message, chatDepsFromContext(ctx), ctx.chatLlm);
 */
export function chatDepsFromContext(ctx: FunctionContext) {
  return {
    /** The watched Base tokens with price and 24 h change (`GET /api/markets`'s rows). */
    markets: () => marketsFunction.run({}, { ...ctx, route: marketsFunction.route }),
    /** The USD price of any Base token by address (DexScreener's deepest pair, DefiLlama as fallback). */
    tokenPrice: (token: Address) => analyticsOf(ctx).prices.price(token),
    /** Hyperliquid's listed perpetuals by upper-case name, with when they were fetched. */
    perps: () => analyticsOf(ctx).hyperliquid.perps(),
    /** Gas on the served chain now (`POST /api/gas-tracker`'s answer). */
    gas: () => gasTrackerFunction.run({}, { ...ctx, route: gasTrackerFunction.route }),
    /** DefiLlama's protocols by lower-case slug (`POST /api/defi-sentiment`'s list). */
    protocols: () => analyticsOf(ctx).defillama.protocols(),
    /** A protocol's TVL and 24 h change on DefiLlama, a parent slug (`aave`) answering its versions' aggregate. */
    protocolTvl: (slug: string) => analyticsOf(ctx).defillama.protocolTvl(slug),
    /** The knowledge-base index (`kb/ask`'s). */
    kb: kbIndex(),
    /** The clock: stamps figures whose source gives no fetch time (gas). */
    now: () => ctx.now(),
    log: ctx.log.child({ component: "chat" }),
  };
}
