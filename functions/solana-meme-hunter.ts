/** `POST /v1/meme-hunter` on Solana: DexScreener's newest Solana tokens, each mint's own risk read on chain. */
import { SOLANA_VERDICT_RULES, solanaMemeHunter } from "../spec/routes/solana.ts";
import { defineFunction } from "../src/context.ts";
import { pairPriceUsd, pairsDeepestFirst, priceOf } from "../src/solana/dexscreener.ts";
import { solanaMethodology } from "../src/solana/methodology.ts";
import { mintRisk, solanaReads, verdictOf } from "../src/solana/reads.ts";

export default defineFunction(solanaMemeHunter, async (input, ctx) => {
  const reads = solanaReads(ctx.solana);
  const limit = input.limit ?? 20;
  const minLiquidity = input.min_liquidity_usd ?? 0;
  const latest = await reads.dex.latestMints();
  const mints = latest.value.slice(0, limit);
  const pairs = mints.length ? await reads.dex.pairsOf(mints) : [];
  const now = ctx.now ? ctx.now().getTime() : Date.now();
  const tokens = await Promise.all(
    mints.map(async (mint) => {
      const deepest = pairsDeepestFirst(pairs, mint)[0];
      const risk = await mintRisk(reads, mint);
      const liquidity = deepest?.liquidity?.usd ?? null;
      // The mint's own USD price (on its deepest pair that prices it, either side) values a transfer fee's cap.
      const { verdict, reasons } = verdictOf(risk, deepest ? liquidity : null, minLiquidity, priceOf(pairs, mint));
      const side = deepest ? (deepest.baseToken.address === mint ? deepest.baseToken : deepest.quoteToken) : null;
      return {
        mint,
        symbol: side?.symbol ?? null,
        pair: deepest
          ? {
              address: deepest.pairAddress,
              dex: deepest.dexId,
              quote_symbol: deepest.baseToken.address === mint ? deepest.quoteToken.symbol : deepest.baseToken.symbol,
              price_usd: pairPriceUsd(deepest, mint),
              liquidity_usd: liquidity,
              volume_24h_usd: deepest.volume?.h24 ?? null,
              created_at: deepest.pairCreatedAt ? new Date(deepest.pairCreatedAt).toISOString() : null,
              age_minutes: deepest.pairCreatedAt ? Math.max(0, Math.floor((now - deepest.pairCreatedAt) / 60_000)) : null,
            }
          : null,
        risk,
        verdict,
        verdict_reasons: reasons,
      };
    }),
  );
  return {
    network: reads.settings.network,
    profiles_listed: latest.value.length,
    tokens,
    verdict_rules: { ...SOLANA_VERDICT_RULES },
    methodology: solanaMethodology("meme-hunter"),
  };
});
