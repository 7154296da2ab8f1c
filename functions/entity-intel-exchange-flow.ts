/**
 * `POST /api/entity-intel/exchange-flow`: a token's inflow and outflow per venue class over a
 * window, from the transfers to and from the curated venue addresses only, with the largest
 * counterparties outside the venues.
 */
import { type Address, formatUnits } from "viem";
import { ENTITY_LIMITS, exchangeFlow } from "../spec/routes/entity-intel.ts";
import { explained } from "../src/analytics/methodology.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { usdValue } from "../src/analytics/usd-value.ts";
import { defineFunction } from "../src/context.ts";
import { describe, factsOf, pricesOf, tokenInfos } from "../src/entity-intel/entities.ts";
import { bothWays, coverage, DEFAULT_BUDGET, resolveWindow, ScanBudget, scanBudgeted } from "../src/entity-intel/scan.ts";
import { tokenAddressOf } from "../src/entity-intel/token-input.ts";
import { InvalidRequestError } from "../src/errors.ts";

export default defineFunction(exchangeFlow, async (input, ctx) => {
  const { scanner, classifier, labels, prices } = analyticsOf(ctx);
  const budget = new ScanBudget(ctx.analytics?.entityBudget ?? DEFAULT_BUDGET);
  const tokenInput = input.token ?? "USDC";
  const token = tokenAddressOf(tokenInput, ctx.config.usdc) as Address;
  const window = await resolveWindow(scanner, input.blocks ?? ENTITY_LIMITS.blocks, input.to_block);
  const [infos, priced] = await Promise.all([tokenInfos(ctx.chain, [token]), pricesOf(prices, [token])]);
  const info = infos.get(token);
  if (!info) {
    throw new InvalidRequestError(`Invalid request: body.token (${token}) does not answer decimals(); it is not an ERC-20 token.`, [
      { field: "body.token", expected: '"USDC", "WETH" or the address of an ERC-20 token', received: tokenInput },
    ]);
  }
  const price = priced.get(token);

  const venues = labels.venues();
  const classOf = new Map<Address, { venue: string; cls: string }>();
  for (const v of venues) for (const a of v.addresses) classOf.set(a, { venue: v.id, cls: v.class });
  const venueAddresses = [...classOf.keys()];
  const result =
    venueAddresses.length === 0
      ? { logs: [], coveredFrom: window.fromBlock, truncated: false }
      : await scanBudgeted(scanner, bothWays(token, venueAddresses), window, budget);

  const rows = new Map<string, { inflow: bigint; outflow: bigint; transfers: number }>();
  const row = (cls: string) => {
    const r = rows.get(cls) ?? { inflow: 0n, outflow: 0n, transfers: 0 };
    rows.set(cls, r);
    return r;
  };
  for (const cls of ["cex", "dex", "bridge"]) row(cls);
  const others = new Map<Address, { inflow: bigint; outflow: bigint }>();
  const other = (a: Address) => {
    const o = others.get(a) ?? { inflow: 0n, outflow: 0n };
    others.set(a, o);
    return o;
  };
  for (const log of result.logs) {
    const from = classOf.get(log.from);
    const to = classOf.get(log.to);
    if (from && to && from.venue === to.venue) continue; // inside one cluster: not a flow
    if (to) {
      row(to.cls).inflow += log.value;
      row(to.cls).transfers++;
      if (!from) other(log.from).inflow += log.value;
    }
    if (from) {
      row(from.cls).outflow += log.value;
      row(from.cls).transfers++;
      if (!to) other(log.to).outflow += log.value;
    }
  }

  const usd = (amount: bigint) => (price ? usdValue(amount, info.decimals, price.exact) : null);
  const units = (amount: bigint) => formatUnits(amount, info.decimals);
  const byClass = Object.fromEntries(
    [...rows].map(([cls, r]) => [
      cls,
      {
        inflow: units(r.inflow),
        outflow: units(r.outflow),
        net: units(r.inflow - r.outflow),
        inflow_usd: usd(r.inflow),
        outflow_usd: usd(r.outflow),
        net_usd: usd(r.inflow - r.outflow),
        transfers: r.transfers,
      },
    ]),
  );
  const top = [...others]
    .sort(([a, x], [b, y]) => {
      const d = y.inflow + y.outflow - (x.inflow + x.outflow);
      return d > 0n ? 1 : d < 0n ? -1 : a.toLowerCase().localeCompare(b.toLowerCase());
    })
    .slice(0, input.top ?? ENTITY_LIMITS.top);
  const facts = await describe(
    top.map(([a]) => a),
    labels,
    classifier,
  );
  return {
    token: tokenInput,
    token_address: token,
    symbol: info.symbol,
    decimals: info.decimals,
    price_usd: price?.price_usd ?? null,
    price_source: price?.source ?? null,
    ...coverage(window, result, budget),
    venues_scanned: venueAddresses.length,
    by_class: byClass,
    top_counterparties: top.map(([address, o]) => ({
      address,
      ...factsOf(facts, address),
      inflow_usd: usd(o.inflow),
      outflow_usd: usd(o.outflow),
      inflow: units(o.inflow),
      outflow: units(o.outflow),
    })),
    ...explained("entity-intel/exchange-flow"),
  };
});
