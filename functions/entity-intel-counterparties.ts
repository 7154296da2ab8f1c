/**
 * `POST /api/entity-intel/counterparties`: everyone an address sent to or received from in the
 * window, with class, curated names and flags, first and last seen, and USD volume each way.
 */
import { type Address, getAddress } from "viem";
import { counterparties, ENTITY_LIMITS } from "../spec/routes/entity-intel.ts";
import { explained } from "../src/analytics/methodology.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { readChain } from "../src/chain/rpc-error.ts";
import { defineFunction } from "../src/context.ts";
import { describe, factsOf, tokenInfos, UsdSum } from "../src/entity-intel/entities.ts";
import { cappedPrices } from "../src/entity-intel/pricing.ts";
import { bothWays, coverage, DEFAULT_BUDGET, resolveWindow, ScanBudget, scanBudgeted } from "../src/entity-intel/scan.ts";
import { tokenAddressOf } from "../src/entity-intel/token-input.ts";

export default defineFunction(counterparties, async (input, ctx) => {
  const { scanner, classifier, labels, prices } = analyticsOf(ctx);
  const budget = new ScanBudget(ctx.analytics?.entityBudget ?? DEFAULT_BUDGET);
  const address = getAddress(input.address);
  const token = tokenAddressOf(input.token, ctx.config.usdc);
  const window = await resolveWindow(scanner, input.blocks ?? ENTITY_LIMITS.blocks, input.to_block);
  const result = await scanBudgeted(scanner, bothWays(token, address), window, budget);

  // Each way (in: from the counterparty to the address; out: the other way) counts its transfers and sums its amounts per token.
  type Way = { transfers: number; volume: Map<Address, bigint> };
  const way = (): Way => ({ transfers: 0, volume: new Map() });
  const rows = new Map<Address, { first: number; last: number; in: Way; out: Way }>();
  for (const log of result.logs) {
    const sides: [Address, "in" | "out"][] = [];
    if (log.to === address) sides.push([log.from, "in"]);
    if (log.from === address) sides.push([log.to, "out"]);
    for (const [other, direction] of sides) {
      const row = rows.get(other) ?? { first: log.blockNumber, last: log.blockNumber, in: way(), out: way() };
      rows.set(other, row);
      const { volume } = row[direction];
      volume.set(log.token, (volume.get(log.token) ?? 0n) + log.value);
      row[direction].transfers++;
      row.last = log.blockNumber;
    }
  }

  const tokens = [...new Set(result.logs.map((l) => l.token))];
  const [infos, { priced, notLookedUp }] = await Promise.all([tokenInfos(ctx.chain, tokens), cappedPrices(prices, result.logs)]);
  const usdOf = (volume: Map<Address, bigint>) => new UsdSum().addVolume(volume, infos, priced).usd();
  const ranked = [...rows]
    .map(([other, row]) => ({ other, row, volumeIn: usdOf(row.in.volume), volumeOut: usdOf(row.out.volume) }))
    .sort((a, b) => b.volumeIn + b.volumeOut - (a.volumeIn + a.volumeOut) || a.other.toLowerCase().localeCompare(b.other.toLowerCase()));
  const listed = ranked.slice(0, input.limit ?? ENTITY_LIMITS.limit);

  const blocks = [...new Set(listed.flatMap((r) => [r.row.first, r.row.last]))];
  const [facts, times] = await Promise.all([
    describe([address, ...listed.map((r) => r.other)], labels, classifier),
    readChain("reading block times", () => Promise.all(blocks.map((b) => ctx.chain.getBlock({ blockNumber: BigInt(b) })))),
  ]);
  const timeOf = new Map(times.map((b) => [Number(b.number), new Date(Number(b.timestamp) * 1000).toISOString()]));
  const seen = (block: number) => ({ block, timestamp: timeOf.get(block) as string });
  return {
    address,
    ...factsOf(facts, address, "wallet"),
    token: token ?? null,
    total_counterparties: rows.size,
    counterparties: listed.map(({ other, row, volumeIn, volumeOut }) => ({
      address: other,
      ...factsOf(facts, other),
      first_seen: seen(row.first),
      last_seen: seen(row.last),
      transfers_in: row.in.transfers,
      transfers_out: row.out.transfers,
      volume_in_usd: volumeIn,
      volume_out_usd: volumeOut,
    })),
    unpriced_tokens: tokens.filter((t) => !priced.has(t) || !infos.has(t)),
    tokens_not_looked_up: notLookedUp,
    ...coverage(window, result, budget),
    ...explained("entity-intel/counterparties"),
  };
});
