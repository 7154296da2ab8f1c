/**
 * Which tokens an entity answer prices. A window can touch hundreds of tokens (airdropped spam
 * above all), and each 30 of them cost a DexScreener call, whose 300 calls a minute the whole
 * service shares: so one answer prices at most the most active ones, and lists the rest as
 * unpriced without asking.
 */
import type { Address } from "viem";
import { ENTITY_LIMITS } from "../../spec/routes/entity-intel.ts";
import type { PriceSource } from "../analytics/price-source.ts";
import type { TransferLog } from "../chain/log-scanner.ts";
import { pricesOf } from "./entities.ts";

/** The most tokens one answer asks prices for: two DexScreener calls, two DefiLlama calls at most. */
export const MAX_PRICED_TOKENS: number = ENTITY_LIMITS.pricedTokens;

/**
 * The tokens to price among those `logs` moved, at most `max`: `first` (the ones the answer
 * always needs) and then the most active by transfer count, ties by address; and the others,
 * most active first.
 */
export function tokensToPrice(
  logs: readonly TransferLog[],
  max: number = MAX_PRICED_TOKENS,
  first: readonly Address[] = [],
): { priced: Address[]; notLookedUp: Address[] } {
  const counts = new Map<Address, number>();
  for (const log of logs) counts.set(log.token, (counts.get(log.token) ?? 0) + 1);
  const wanted = [...new Set(first)];
  const ranked = [...counts]
    .filter(([token]) => !wanted.includes(token))
    .sort(([a, n], [b, m]) => m - n || a.toLowerCase().localeCompare(b.toLowerCase()))
    .map(([token]) => token);
  const all = [...wanted, ...ranked];
  return { priced: all.slice(0, max), notLookedUp: all.slice(max) };
}

/** Prices of at most `max` of the tokens `logs` moved, `first` first (see {@link tokensToPrice}), and the tokens not looked up. */
export async function cappedPrices(
  prices: PriceSource,
  logs: readonly TransferLog[],
  { max = MAX_PRICED_TOKENS, first = [] }: { max?: number; first?: readonly Address[] } = {},
) {
  const { priced, notLookedUp } = tokensToPrice(logs, max, first);
  return { priced: await pricesOf(prices, priced), notLookedUp };
}
