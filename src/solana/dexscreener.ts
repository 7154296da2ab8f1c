/**
 * DexScreener on Solana: the latest token profiles and the pairs of mints. Base58 addresses are
 * case-sensitive, so they are sent as given (the Base adapter lower-cases hex addresses).
 */
import { Type } from "@sinclair/typebox";
import { DexPair } from "../upstreams/dexscreener.ts";
import { expectShape, fetchUpstreamJson } from "../upstreams/http-json.ts";
import { type Cached, TtlCache } from "../upstreams/ttl-cache.ts";

const UPSTREAM = "dexscreener";
export const DEXSCREENER_SOLANA_CHAIN = "solana";
const TOKENS_PER_CALL = 30;
const TTL_MS = 30_000;

const Profile = Type.Object({ chainId: Type.String(), tokenAddress: Type.String() });

/** The Solana side of DexScreener. */
export class SolanaDexScreener {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #pairs = new TtlCache<DexPair[]>(TTL_MS, { maxEntries: 2_000 });
  readonly #profiles = new TtlCache<string[]>(TTL_MS, { maxEntries: 2 });

  constructor(baseUrl: string, timeoutMs: number) {
    this.#baseUrl = baseUrl.replace(/\/+$/, "");
    this.#timeoutMs = timeoutMs;
  }

  /** The Solana mints of the latest token profiles (`GET /token-profiles/latest/v1`), newest first. */
  latestMints(): Promise<Cached<string[]>> {
    return this.#profiles.get("latest", async () => {
      const { body } = await fetchUpstreamJson({
        upstream: UPSTREAM,
        url: `${this.#baseUrl}/token-profiles/latest/v1`,
        timeoutMs: this.#timeoutMs,
      });
      const profiles = expectShape(UPSTREAM, Type.Array(Profile), body);
      return [...new Set(profiles.filter((p) => p.chainId === DEXSCREENER_SOLANA_CHAIN).map((p) => p.tokenAddress))];
    });
  }

  /** The Solana pairs of `mints` (`GET /tokens/v1/solana/{a,b,...}`). */
  async pairsOf(mints: readonly string[]): Promise<DexPair[]> {
    const unique = [...new Set(mints)].sort();
    const batches: string[][] = [];
    for (let i = 0; i < unique.length; i += TOKENS_PER_CALL) batches.push(unique.slice(i, i + TOKENS_PER_CALL));
    const results = await Promise.all(
      batches.map((batch) =>
        this.#pairs.get(batch.join(","), async () => {
          const { body } = await fetchUpstreamJson({
            upstream: UPSTREAM,
            url: `${this.#baseUrl}/tokens/v1/${DEXSCREENER_SOLANA_CHAIN}/${batch.join(",")}`,
            timeoutMs: this.#timeoutMs,
          });
          return expectShape(UPSTREAM, Type.Array(DexPair), body);
        }),
      ),
    );
    return results.flatMap((r) => r.value).filter((p) => p.chainId === DEXSCREENER_SOLANA_CHAIN);
  }
}

/** Pairs trading `mint`, deepest first (liquidity, then 24 h volume, then address: never DexScreener's order). */
export function pairsDeepestFirst(pairs: readonly DexPair[], mint: string): DexPair[] {
  const seen = new Set<string>();
  return pairs
    .filter((p) => p.baseToken.address === mint || p.quoteToken.address === mint)
    .filter((p) => !seen.has(p.pairAddress) && seen.add(p.pairAddress))
    .sort(
      (a, b) =>
        (b.liquidity?.usd ?? 0) - (a.liquidity?.usd ?? 0) ||
        (b.volume?.h24 ?? 0) - (a.volume?.h24 ?? 0) ||
        a.pairAddress.localeCompare(b.pairAddress),
    );
}

/** The USD price of `mint` from its deepest pair where it is the base token; null when none prices it. */
export function priceOf(pairs: readonly DexPair[], mint: string): number | null {
  const pair = pairsDeepestFirst(pairs, mint).find((p) => p.baseToken.address === mint && p.priceUsd);
  return pair ? Number(pair.priceUsd) : null;
}
