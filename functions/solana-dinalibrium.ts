/** `POST /v1/dinalibrium` on Solana: a token's price on each Raydium, Orca and Meteora pair against their liquidity-weighted price. */
import { solanaDinalibrium } from "../spec/routes/solana.ts";
import { defineFunction } from "../src/context.ts";
import { NotFoundError } from "../src/errors.ts";
import { solana } from "../src/networks/solana.ts";
import { pairsDeepestFirst } from "../src/solana/dexscreener.ts";
import { solanaMethodology } from "../src/solana/methodology.ts";
import { solanaReads } from "../src/solana/reads.ts";
import { pegStatus, round } from "../src/token-risk/equilibrium.ts";

/** The venues priced, by DexScreener's dex id. */
export const SOLANA_VENUES = ["raydium", "orca", "meteora"] as const;
/** The curated symbols and whether each is a stablecoin. */
export const SOLANA_SYMBOLS: Record<string, { mint: string; stablecoin: boolean }> = {
  SOL: { mint: "So11111111111111111111111111111111111111112", stablecoin: false },
  USDC: { mint: solana.usdc.address, stablecoin: true },
  USDT: { mint: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", stablecoin: true },
};

export default defineFunction(solanaDinalibrium, async (input, ctx) => {
  const reads = solanaReads(ctx.solana);
  const wanted = input.token
    ? [SOLANA_SYMBOLS[input.token.toUpperCase()]?.mint ?? input.token]
    : [SOLANA_SYMBOLS.SOL?.mint as string, SOLANA_SYMBOLS.USDC?.mint as string];
  const pairs = await reads.dex.pairsOf(wanted);
  const tokens = wanted.map((mint) => {
    // A pair prices the token when it is the base side (DexScreener's priceUsd is the base token's).
    const venues = pairsDeepestFirst(pairs, mint).filter(
      (p) =>
        p.baseToken.address === mint && p.priceUsd && (SOLANA_VENUES as readonly string[]).includes(p.dexId) && (p.liquidity?.usd ?? 0) > 0,
    );
    if (venues.length === 0) return null;
    const stablecoin = Object.values(SOLANA_SYMBOLS).some((s) => s.mint === mint && s.stablecoin);
    const liquidity = venues.reduce((s, p) => s + (p.liquidity?.usd ?? 0), 0);
    const weighted = venues.reduce((s, p) => s + Number(p.priceUsd) * (p.liquidity?.usd ?? 0), 0) / liquidity;
    const priced = venues.map((p) => {
      const price = Number(p.priceUsd);
      return {
        pair: p.pairAddress,
        dex: p.dexId,
        quote_symbol: p.quoteToken.symbol,
        price_usd: price,
        liquidity_usd: p.liquidity?.usd ?? 0,
        deviation_bps: round((price / weighted - 1) * 10_000, 2),
        peg: stablecoin ? pegStatus((price - 1) * 10_000) : null,
      };
    });
    const cheapest = priced.reduce((a, b) => (b.price_usd < a.price_usd ? b : a));
    const dearest = priced.reduce((a, b) => (b.price_usd > a.price_usd ? b : a));
    const gap = priced.length > 1 ? round((dearest.price_usd / cheapest.price_usd - 1) * 10_000, 2) : null;
    return {
      mint,
      symbol: venues[0]?.baseToken.symbol as string,
      stablecoin,
      weighted_price_usd: round(weighted, 8),
      venues: priced,
      peg: stablecoin ? pegStatus((weighted - 1) * 10_000) : null,
      max_gap_bps: gap,
      max_gap_between: gap === null ? null : [cheapest.pair, dearest.pair],
    };
  });
  const found = tokens.filter((t) => t !== null);
  if (found.length === 0) {
    throw new NotFoundError(`No Raydium, Orca or Meteora pair prices ${input.token ?? "SOL or USDC"} on Solana.`, {
      token: input.token ?? null,
    });
  }
  return { network: reads.settings.network, tokens: found, methodology: solanaMethodology("dinalibrium") };
});
