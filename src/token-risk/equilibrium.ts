/**
 * The price equilibrium of a token across Base venues: every pool of it against a curated token
 * on the curated factories, the USD price each implies, its deviation from the reference price
 * (a stablecoin's peg, else the price source's price), what is left of it after the pool's fee,
 * and the widest gap between two pools.
 */
import type { Static } from "@sinclair/typebox";
import { getAddress } from "viem";
import type { dinalibrium } from "../../spec/routes/base-tools.ts";
import { type AssessDeps, pricePools } from "./assess.ts";
import { findPools, impliedPrice } from "./pools.ts";
import type { KnownToken } from "./venues.ts";

/** Peg thresholds in basis points. */
export const PEG_BPS = { onPeg: 10, drifting: 100 } as const;

/** The peg status of a deviation. */
export function pegStatus(deviationBps: number): NonNullable<VenuePrice["peg"]> {
  const d = Math.abs(deviationBps);
  return d < PEG_BPS.onPeg ? "on_peg" : d < PEG_BPS.drifting ? "drifting" : "depegged";
}

/** One token of the answer, and one pool of it. */
type TokenEquilibrium = Static<typeof dinalibrium.response>["tokens"][number];
type VenuePrice = TokenEquilibrium["pools"][number];

export const round = (x: number, digits: number) => Number(x.toFixed(digits));

/** The equilibrium of `token` at `blockNumber`. */
export async function tokenEquilibrium(deps: AssessDeps, token: KnownToken, blockNumber: bigint): Promise<TokenEquilibrium> {
  const counters = deps.venues.tokens.filter((t) => t.address !== token.address && (t.quote || t.peg_usd !== null));
  const [pools, reference] = await Promise.all([
    findPools(deps.chain, token.address, deps.venues.factories, counters, blockNumber).then((found) => pricePools(found, deps.prices)),
    token.peg_usd !== null
      ? Promise.resolve({ price: token.peg_usd, source: "peg" as const })
      : deps.prices.price(token.address).then((p) => ({ price: Number(p.price_usd), source: p.source })),
  ]);
  const venues: VenuePrice[] = [];
  for (const p of pools) {
    const inCounter = impliedPrice(p, token.decimals);
    if (inCounter === null || p.counterPriceUsd === null || p.liquidityUsd === null) continue;
    const implied = inCounter * p.counterPriceUsd;
    const deviation = (implied / reference.price - 1) * 10_000;
    venues.push({
      pool: p.address,
      dex: p.factory.name,
      kind: p.factory.kind,
      counter_symbol: p.counter.symbol,
      counter: p.counter.address,
      fee_bps: p.feeBps,
      price_in_counter: Number(inCounter.toPrecision(12)),
      implied_price_usd: Number(implied.toPrecision(12)),
      liquidity_usd: p.liquidityUsd,
      deviation_bps: round(deviation, 2),
      gap_after_fee_bps: round(Math.max(0, Math.abs(deviation) - p.feeBps), 2),
      peg: token.peg_usd !== null ? pegStatus(deviation) : null,
    });
  }
  venues.sort((a, b) => b.liquidity_usd - a.liquidity_usd);
  const liquidity = venues.reduce((sum, v) => sum + v.liquidity_usd, 0);
  const weighted = liquidity > 0 ? venues.reduce((sum, v) => sum + v.deviation_bps * v.liquidity_usd, 0) / liquidity : null;
  let gap: { bps: number; after: number; between: [string, string] } | null = null;
  for (const [i, a] of venues.entries()) {
    for (const b of venues.slice(i + 1)) {
      const bps = (Math.abs(a.implied_price_usd - b.implied_price_usd) / reference.price) * 10_000;
      if (!gap || bps > gap.bps) {
        const [low, high] = a.implied_price_usd <= b.implied_price_usd ? [a, b] : [b, a];
        gap = { bps, after: Math.max(0, bps - a.fee_bps - b.fee_bps), between: [low.pool, high.pool] };
      }
    }
  }
  return {
    token: getAddress(token.address),
    symbol: token.symbol,
    stablecoin: token.peg_usd !== null,
    reference_price_usd: reference.price,
    reference_source: reference.source,
    pools: venues,
    pools_skipped: pools.length - venues.length,
    weighted_deviation_bps: weighted === null ? null : round(weighted, 2),
    peg: token.peg_usd !== null && weighted !== null ? pegStatus(weighted) : null,
    max_gap_bps: gap ? round(gap.bps, 2) : null,
    max_gap_after_fees_bps: gap ? round(gap.after, 2) : null,
    max_gap_between: gap ? gap.between : null,
  };
}
