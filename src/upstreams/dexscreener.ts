/**
 * DexScreener (keyless, 300 requests/min): the DEX pairs of Base tokens. Shapes follow
 * /work/shared/reference/upstream-apis.md §1; fields the service does not read are not
 * checked, and the ones it reads may be null where DexScreener leaves them out.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { expectShape, fetchUpstreamJson } from "./http-json.ts";
import { type Cached, readInBatches, TtlCache } from "./ttl-cache.ts";

const UPSTREAM = "dexscreener";
/** The public API. */
export const DEXSCREENER_DEFAULT_URL = "https://api.dexscreener.com";
/** DexScreener's chain slug for Base (its API does not take the numeric chain id). */
export const DEXSCREENER_BASE_CHAIN = "base";
/** How long pairs are reused: prices move, but agents asking twice a minute need not cost two calls. */
export const DEXSCREENER_TTL_MS = 30_000;
/** DexScreener's limit of addresses per `/tokens/v1` call. */
const TOKENS_PER_CALL = 30;

const OptionalNumber = Type.Optional(Type.Union([Type.Number(), Type.Null()]));
const TokenRef = Type.Object({ address: Type.String(), name: Type.String(), symbol: Type.String() });

/** One pair as DexScreener describes it (only the fields the service reads are checked). */
export const DexPair = Type.Object({
  chainId: Type.String(),
  dexId: Type.String(),
  url: Type.Optional(Type.String()),
  pairAddress: Type.String(),
  labels: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  baseToken: TokenRef,
  quoteToken: TokenRef,
  priceNative: Type.String(),
  priceUsd: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  volume: Type.Optional(Type.Union([Type.Object({ h24: OptionalNumber }), Type.Null()])),
  priceChange: Type.Optional(Type.Union([Type.Object({ h24: OptionalNumber }), Type.Null()])),
  liquidity: Type.Optional(Type.Union([Type.Object({ usd: OptionalNumber }), Type.Null()])),
  pairCreatedAt: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
});
export type DexPair = Static<typeof DexPair>;

const PairList = Type.Array(DexPair);

/** Liquidity in USD of a pair, 0 when DexScreener does not know it. */
export function pairLiquidityUsd(pair: DexPair): number {
  return pair.liquidity?.usd ?? 0;
}

/** 24 h volume in USD of a pair, 0 when not given. */
export function pairVolume24hUsd(pair: DexPair): number {
  return pair.volume?.h24 ?? 0;
}

/**
 * The pairs on `chain` that trade `token`, deepest first: by liquidity in USD, ties broken by
 * 24 h volume, then by pair address so the order never depends on DexScreener's. Base's hex
 * addresses compare in any case; other chains' (Solana's base58, case-sensitive) as given.
 */
export function pairsDeepestFirst(pairs: readonly DexPair[], token: string, chain = DEXSCREENER_BASE_CHAIN): DexPair[] {
  const key = (address: string) => (chain === DEXSCREENER_BASE_CHAIN ? address.toLowerCase() : address);
  const seen = new Set<string>();
  return pairs
    .filter((p) => p.chainId === chain)
    .filter((p) => key(p.baseToken.address) === key(token) || key(p.quoteToken.address) === key(token))
    .filter((p) => !seen.has(key(p.pairAddress)) && seen.add(key(p.pairAddress)))
    .sort(
      (a, b) =>
        pairLiquidityUsd(b) - pairLiquidityUsd(a) ||
        pairVolume24hUsd(b) - pairVolume24hUsd(a) ||
        key(a.pairAddress).localeCompare(key(b.pairAddress)),
    );
}

/**
 * The DexScreener adapter of one chain (Base unless told): validated pairs, cached briefly.
 * Base's hex addresses are sent lower-cased; other chains' (base58 is case-sensitive) as given.
 */
export class DexScreener {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #chain: string;
  readonly #cache = new TtlCache<DexPair[]>(DEXSCREENER_TTL_MS, { maxEntries: 2_000 });

  constructor(baseUrl: string, timeoutMs: number, chain = DEXSCREENER_BASE_CHAIN) {
    this.#baseUrl = baseUrl.replace(/\/+$/, "");
    this.#timeoutMs = timeoutMs;
    this.#chain = chain;
  }

  /** Every pair of one token on the chain (`GET /token-pairs/v1/{chain}/{token}`), with when it was fetched. */
  tokenPairs(token: string): Promise<Cached<DexPair[]>> {
    const address = this.#sent(token);
    return this.#cache.get(`pairs:${address}`, () => this.read(`/token-pairs/v1/${this.#chain}/${address}`, PairList));
  }

  /** Pairs of several tokens in as few calls as DexScreener allows (`GET /tokens/v1/{chain}/{a,b,...}`). */
  async tokensPairs(tokens: readonly string[]): Promise<Cached<DexPair[]>> {
    const pairs = await readInBatches(
      tokens.map((t) => this.#sent(t)),
      TOKENS_PER_CALL,
      (list) => this.#cache.get(`tokens:${list}`, () => this.read(`/tokens/v1/${this.#chain}/${list}`, PairList)),
    );
    return { value: pairs.value.flat(), fetchedAt: pairs.fetchedAt };
  }

  /** What DexScreener answers at `path`, checked against the shape read. */
  protected async read<S extends TSchema>(path: string, shape: S): Promise<Static<S>> {
    const { body } = await fetchUpstreamJson({ upstream: UPSTREAM, url: `${this.#baseUrl}${path}`, timeoutMs: this.#timeoutMs });
    return expectShape(UPSTREAM, shape, body);
  }

  /** `address` as this chain's API takes it. */
  #sent(address: string): string {
    return this.#chain === DEXSCREENER_BASE_CHAIN ? address.toLowerCase() : address;
  }
}
