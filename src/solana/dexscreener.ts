/**
 * DexScreener on Solana: the latest token profiles and the pairs of mints, through the Base
 * adapter set to chain `solana` (which sends base58 addresses, case-sensitive, as given).
 */
import { Type } from "@sinclair/typebox";
import { DEXSCREENER_TTL_MS, type DexPair, DexScreener, pairsDeepestFirst as pairsOnChainDeepestFirst } from "../upstreams/dexscreener.ts";
import { type Cached, TtlCache } from "../upstreams/ttl-cache.ts";

export const DEXSCREENER_SOLANA_CHAIN = "solana";

const Profile = Type.Object({ chainId: Type.String(), tokenAddress: Type.String() });

/** The Solana side of DexScreener. */
export class SolanaDexScreener extends DexScreener {
  readonly #profiles = new TtlCache<string[]>(DEXSCREENER_TTL_MS, { maxEntries: 2 });

  constructor(baseUrl: string, timeoutMs: number) {
    super(baseUrl, timeoutMs, DEXSCREENER_SOLANA_CHAIN);
  }

  /** The Solana mints of the latest token profiles (`GET /token-profiles/latest/v1`), newest first. */
  latestMints(): Promise<Cached<string[]>> {
    return this.#profiles.get("latest", async () => {
      const profiles = await this.read("/token-profiles/latest/v1", Type.Array(Profile));
      return [...new Set(profiles.filter((p) => p.chainId === DEXSCREENER_SOLANA_CHAIN).map((p) => p.tokenAddress))];
    });
  }

  /** The Solana pairs of `mints` (`GET /tokens/v1/solana/{a,b,...}`). */
  async pairsOf(mints: readonly string[]): Promise<DexPair[]> {
    return (await this.tokensPairs(mints)).value.filter((p) => p.chainId === DEXSCREENER_SOLANA_CHAIN);
  }
}

/** Pairs trading `mint`, deepest first (liquidity, then 24 h volume, then address: never DexScreener's order). */
export function pairsDeepestFirst(pairs: readonly DexPair[], mint: string): DexPair[] {
  return pairsOnChainDeepestFirst(pairs, mint, DEXSCREENER_SOLANA_CHAIN);
}

/**
 * The USD price of `mint` on `pair`: DexScreener's priceUsd is the base token's, and priceNative
 * the base token's price in the quote token, so a quote-side mint is worth priceUsd / priceNative.
 */
export function pairPriceUsd(pair: DexPair, mint: string): number | null {
  const base = Number(pair.priceUsd);
  if (!(base > 0)) return null;
  if (pair.baseToken.address === mint) return base;
  const native = Number(pair.priceNative);
  return native > 0 ? base / native : null;
}

/** The USD price of `mint` on its deepest pair that prices it, on either side; null when none does. */
export function priceOf(pairs: readonly DexPair[], mint: string): number | null {
  for (const pair of pairsDeepestFirst(pairs, mint)) {
    const price = pairPriceUsd(pair, mint);
    if (price !== null) return price;
  }
  return null;
}
