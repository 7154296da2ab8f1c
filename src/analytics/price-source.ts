/**
 * USD prices of Base tokens: the deepest Base pair on DexScreener, DefiLlama's coins API when
 * DexScreener has no usable pair or fails. Prices stay decimal strings so that USD thresholds
 * can be compared exactly (usd-value.ts).
 */
import { type Address, getAddress, isAddressEqual } from "viem";
import { UpstreamError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { DefiLlama } from "../upstreams/defillama.ts";
import { type DexPair, type DexScreener, pairLiquidityUsd, pairsDeepestFirst, pairVolume24hUsd } from "../upstreams/dexscreener.ts";
import { divideDecimals, parseDecimal } from "./usd-value.ts";

/** A token's USD price and where it came from. */
export interface TokenPrice {
  token: Address;
  /** Decimal string, e.g. "3120.45". */
  price_usd: string;
  /** 24 h change in percent when the source gives one for this token. */
  change_24h_pct: number | null;
  source: "dexscreener" | "defillama";
  /** How the price was read from the pair: as its base token, or derived from a pair quoting it. */
  method: "base_token_price" | "derived_from_quote" | "defillama_coins";
  /** The pair the price was read from. */
  pair: ReturnType<typeof describePair> | null;
  /** Epoch ms when this service fetched the data. */
  fetchedAt: number;
}

/** The pair facts answers show. */
export function describePair(pair: DexPair) {
  return {
    address: getAddress(pair.pairAddress),
    dex_id: pair.dexId,
    base_symbol: pair.baseToken.symbol,
    quote_symbol: pair.quoteToken.symbol,
    liquidity_usd: pairLiquidityUsd(pair),
    volume_24h_usd: pairVolume24hUsd(pair),
  };
}

/**
 * The price of `token` from DexScreener pairs: the deepest pair where it is the base token;
 * else, from the deepest pair quoting it, base price / price of base in quote units.
 */
export function priceFromPairs(token: Address, pairs: readonly DexPair[], fetchedAt: number): TokenPrice | undefined {
  const ordered = pairsDeepestFirst(pairs, token);
  const asBase = ordered.find((p) => isAddressEqual(p.baseToken.address as Address, token) && p.priceUsd);
  if (asBase?.priceUsd) {
    return {
      token: getAddress(token),
      price_usd: parseDecimal(asBase.priceUsd).toFixed(),
      change_24h_pct: asBase.priceChange?.h24 ?? null,
      source: "dexscreener",
      method: "base_token_price",
      pair: describePair(asBase),
      fetchedAt,
    };
  }
  const asQuote = ordered.find((p) => p.priceUsd && Number(p.priceNative) > 0);
  if (asQuote?.priceUsd) {
    return {
      token: getAddress(token),
      price_usd: divideDecimals(parseDecimal(asQuote.priceUsd), parseDecimal(asQuote.priceNative)),
      change_24h_pct: null,
      source: "dexscreener",
      method: "derived_from_quote",
      pair: describePair(asQuote),
      fetchedAt,
    };
  }
  return undefined;
}

/** The DefiLlama coins key of a Base token. */
export function llamaCoinKey(token: Address): string {
  return `base:${token.toLowerCase()}`;
}

/** A price from DefiLlama's coins API, which names no pair and no 24 h change with it. */
export function llamaPrice(token: Address, coin: { price: number }, fetchedAt: number): TokenPrice {
  return {
    token: getAddress(token),
    price_usd: parseDecimal(coin.price).toFixed(),
    change_24h_pct: null,
    source: "defillama",
    method: "defillama_coins",
    pair: null,
    fetchedAt,
  };
}

/** Prices for the analytics, shared by all requests. */
export class PriceSource {
  readonly #dex: DexScreener;
  readonly #llama: DefiLlama;
  readonly #log: Logger;

  constructor(dex: DexScreener, llama: DefiLlama, log: Logger) {
    this.#dex = dex;
    this.#llama = llama;
    this.#log = log;
  }

  /** The USD price of `token`; an `UpstreamError` (502/503/504) when neither source can give one. */
  async price(token: Address): Promise<TokenPrice> {
    let dexFailure: unknown;
    try {
      const pairs = await this.#dex.tokenPairs(token);
      const price = priceFromPairs(token, pairs.value, pairs.fetchedAt);
      if (price) return price;
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      dexFailure = error;
      this.#log.warn("dexscreener failed; using defillama coins", {
        token,
        error,
        cause: error.cause instanceof Error ? error.cause.message : undefined,
      });
    }
    const key = llamaCoinKey(token);
    try {
      const coins = await this.#llama.coinPrices([key]);
      const coin = coins.value[key];
      if (coin) return llamaPrice(token, coin, coins.fetchedAt);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      this.#log.warn("defillama coins failed too", { token, error, cause: error.cause instanceof Error ? error.cause.message : undefined });
      throw dexFailure ?? error;
    }
    if (dexFailure) throw dexFailure;
    throw new UpstreamError("upstream_error", "prices", `Neither DexScreener nor DefiLlama has a USD price for ${getAddress(token)}.`);
  }

  /**
   * USD prices of many tokens in as few calls as the sources allow: DexScreener's multi-token
   * endpoint (30 addresses per call), then one DefiLlama coins call for the tokens it has no
   * usable pair for. A token neither source prices is absent from the map; an `UpstreamError`
   * only when no source answered at all.
   */
  async prices(tokens: readonly Address[]): Promise<Map<Address, TokenPrice>> {
    const wanted = [...new Set(tokens.map((t) => getAddress(t)))];
    const found = new Map<Address, TokenPrice>();
    if (wanted.length === 0) return found;
    let dexFailure: unknown;
    try {
      const pairs = await this.#dex.tokensPairs(wanted);
      for (const token of wanted) {
        const price = priceFromPairs(token, pairs.value, pairs.fetchedAt);
        if (price) found.set(token, price);
      }
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      dexFailure = error;
      this.#log.warn("dexscreener failed; using defillama coins", { tokens: wanted.length, error });
    }
    const missing = wanted.filter((t) => !found.has(t));
    if (missing.length === 0) return found;
    try {
      const coins = await this.#llama.coinPrices(missing.map(llamaCoinKey));
      for (const token of missing) {
        const coin = coins.value[llamaCoinKey(token)];
        if (coin) found.set(token, llamaPrice(token, coin, coins.fetchedAt));
      }
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      this.#log.warn("defillama coins failed", { tokens: missing.length, error });
      if (dexFailure) throw dexFailure;
    }
    return found;
  }

  /** The deepest Base pair trading `token` (as base or quote) and how many pairs DexScreener lists. */
  async deepestPair(token: Address): Promise<{ pair: DexPair | null; pairsFound: number; fetchedAt: number }> {
    const pairs = await this.#dex.tokenPairs(token);
    const ordered = pairsDeepestFirst(pairs.value, token);
    return { pair: ordered[0] ?? null, pairsFound: ordered.length, fetchedAt: pairs.fetchedAt };
  }
}
