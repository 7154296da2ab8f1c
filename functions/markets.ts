/**
 * `GET /api/markets` (free): the watched Base tokens priced through their deepest pair on
 * DexScreener, or DefiLlama's coins API when DexScreener fails, each with its source and age.
 */
import { getAddress } from "viem";
import { type MarketPair, markets } from "../spec/routes/analytics.ts";
import { methodologyFor } from "../src/analytics/methodology.ts";
import { llamaCoinKey, llamaPrice, priceFromPairs, type TokenPrice } from "../src/analytics/price-source.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { WATCHLIST, type WatchedToken } from "../src/analytics/watchlist.ts";
import { defineFunction } from "../src/context.ts";
import { UpstreamError } from "../src/errors.ts";

export default defineFunction(markets, async (_input, ctx) => {
  const { dexscreener, defillama } = analyticsOf(ctx);
  const now = ctx.now().getTime();
  const row = (token: WatchedToken, price: TokenPrice, change: number | null): MarketPair => ({
    symbol: token.symbol,
    token_address: getAddress(token.address),
    pair: price.pair ? `${price.pair.base_symbol}/${price.pair.quote_symbol}` : null,
    price_usd: price.price_usd,
    change_24h_pct: change,
    liquidity_usd: price.pair?.liquidity_usd ?? null,
    volume_24h_usd: price.pair?.volume_24h_usd ?? null,
    dex_id: price.pair?.dex_id ?? null,
    pair_address: price.pair?.address ?? null,
    source: price.source,
    fetched_at: new Date(price.fetchedAt).toISOString(),
    age_seconds: Math.max(0, Math.floor((now - price.fetchedAt) / 1000)),
  });

  const rows = new Map<string, MarketPair>();
  let dexFailure: unknown;
  try {
    const pairs = await dexscreener.tokensPairs(WATCHLIST.map((t) => t.address));
    for (const token of WATCHLIST) {
      const price = priceFromPairs(token.address, pairs.value, pairs.fetchedAt);
      if (price) rows.set(token.symbol, row(token, price, price.change_24h_pct));
    }
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    dexFailure = error;
    ctx.log.warn("dexscreener failed for markets; using defillama coins", { error });
  }

  const missing = WATCHLIST.filter((t) => !rows.has(t.symbol));
  if (missing.length > 0) {
    const keys = missing.map((t) => llamaCoinKey(t.address));
    try {
      const [coinPrices, changes] = await Promise.all([defillama.coinPrices(keys), defillama.coinChanges24h(keys)]);
      for (const token of missing) {
        const key = llamaCoinKey(token.address);
        const coin = coinPrices.value[key];
        if (!coin) continue;
        const price = llamaPrice(token.address, coin, Math.min(coinPrices.fetchedAt, changes.fetchedAt));
        rows.set(token.symbol, row(token, price, changes.value[key] ?? null));
      }
    } catch (error) {
      // Both sources down: there is nothing honest to show.
      if (dexFailure || rows.size === 0) throw dexFailure ?? error;
      ctx.log.warn("defillama coins failed for markets; answering with the pairs DexScreener gave", { error });
    }
  }
  if (rows.size === 0)
    throw dexFailure ?? new UpstreamError("upstream_error", "prices", "No price source answered for the watched tokens.");

  return {
    pairs: WATCHLIST.flatMap((t) => rows.get(t.symbol) ?? []),
    generated_at: new Date(now).toISOString(),
    note: "Third-party data (DexScreener, DefiLlama), may be delayed; a token missing from the list had no price from either source.",
    methodology: methodologyFor("markets"),
  };
});
