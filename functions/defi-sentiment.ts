/**
 * `POST /api/defi-sentiment`: perpetual funding, open interest and 24 h price change of an
 * asset (Hyperliquid) and a protocol's TVL trend (DefiLlama), with a score whose every input
 * and weight is in the answer. The same method answers the secondary site's
 * `POST /v1/defi-sentiment` and, SOL when no asset or protocol is named, the Solana site's.
 */
import { defiSentiment } from "../spec/routes/analytics.ts";
import { defiSentimentV1 } from "../spec/routes/base-tools.ts";
import { solanaDefiSentiment } from "../spec/routes/solana.ts";
import { methodologyFor } from "../src/analytics/methodology.ts";
import { FULL_SCALE, NEUTRAL_FUNDING_8H_PCT, SENTIMENT_THRESHOLD, SENTIMENT_WEIGHTS, scoreSentiment } from "../src/analytics/sentiment.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { exactTimes, parseDecimal } from "../src/analytics/usd-value.ts";
import { defineFunction, type FunctionContext, type RouteFunction } from "../src/context.ts";
import { NotFoundError } from "../src/errors.ts";

// Tickers people use for the wrapped or bridged form of an asset that trades as a perpetual.
const ALIASES: Record<string, string> = { WETH: "ETH", CBETH: "ETH", WBTC: "BTC", CBBTC: "BTC" };

const defiSentimentFunctions: readonly RouteFunction[] = [
  defineFunction(defiSentiment, (input, ctx) => sentimentOf(input, ctx, "ETH")),
  defineFunction(defiSentimentV1, (input, ctx) => sentimentOf(input, ctx, "ETH")),
  defineFunction(solanaDefiSentiment, (input, ctx) => sentimentOf(input, ctx, "SOL")),
];
export default defiSentimentFunctions;

/** The sentiment of `input`, `defaultAsset` when it names neither asset nor protocol. */
async function sentimentOf(input: { asset?: string; protocol?: string }, ctx: FunctionContext, defaultAsset: string) {
  const { hyperliquid, defillama } = analyticsOf(ctx);
  const asset = input.asset ? input.asset.toUpperCase() : input.protocol ? null : defaultAsset;
  const protocol = input.protocol ?? null;

  const [perps, tvl] = await Promise.all([asset ? hyperliquid.perps() : null, protocol ? defillama.protocolTvl(protocol) : null]);

  let perp = null;
  if (asset && perps) {
    perp = perps.value.get(asset) ?? perps.value.get(ALIASES[asset] ?? "") ?? null;
    if (!perp) {
      throw new NotFoundError(`Hyperliquid lists no perpetual for "${input.asset}"; use a ticker such as ETH or BTC.`, {
        asset: input.asset,
        listed_examples: [...perps.value.keys()].slice(0, 20),
      });
    }
  }

  // Percent of an hourly fraction: x 100; Hyperliquid funds hourly, so the 8 h rate other venues quote is 8 hourly payments.
  const funding1h = perp ? Number(exactTimes(perp.funding_1h, 1n, 2)) : null;
  const funding8h = perp ? Number(exactTimes(perp.funding_1h, 8n, 2)) : null;
  const mark = perp ? Number(perp.mark_px) : null;
  const openInterest = perp ? Number(perp.open_interest) : null;
  const oiUsd = perp ? Number(parseDecimal(perp.open_interest).times(perp.mark_px).toNumber().toFixed(2)) : null;
  const prev = perp ? Number(perp.prev_day_px) : 0;
  const change24h = perp && prev > 0 && mark !== null ? Number(((mark / prev - 1) * 100).toFixed(6)) : null;
  const tvlChange = tvl?.value.change_24h_pct ?? null;

  const scored = scoreSentiment({ price_change_24h: change24h, funding_rate_8h: funding8h, tvl_change_24h: tvlChange });

  return {
    asset: perp ? perp.name : null,
    protocol: tvl ? tvl.value.slug : null,
    sentiment: scored.sentiment,
    score: scored.score,
    funding_rate_1h_pct: funding1h,
    funding_rate_8h_pct: funding8h,
    open_interest_contracts: openInterest,
    open_interest_usd: oiUsd,
    mark_price_usd: mark,
    price_change: { "24h_pct": change24h },
    protocol_tvl: tvl
      ? {
          slug: tvl.value.slug,
          name: tvl.value.name,
          tvl_usd: tvl.value.tvl_usd,
          change_24h_pct: tvlChange,
          change_source: tvl.value.change_source,
          ...(tvl.value.members ? { members: tvl.value.members } : {}),
        }
      : null,
    score_inputs: scored.inputs,
    scoring: {
      weights: { ...SENTIMENT_WEIGHTS },
      full_scale: { ...FULL_SCALE },
      neutral_funding_8h_pct: NEUTRAL_FUNDING_8H_PCT,
      thresholds: { bullish: SENTIMENT_THRESHOLD, bearish: -SENTIMENT_THRESHOLD },
    },
    sources: {
      hyperliquid: perps && asset ? { fetched_at: new Date(perps.fetchedAt).toISOString() } : null,
      defillama: tvl ? { fetched_at: new Date(tvl.fetchedAt).toISOString() } : null,
    },
    methodology: methodologyFor("defi-sentiment"),
  };
}
