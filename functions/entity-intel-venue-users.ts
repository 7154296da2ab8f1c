/**
 * `POST /api/entity-intel/venue-users`: who used a venue (a curated venue's cluster, or one
 * address) in the window: value segments, VIP candidates, users gone quiet, users funded by
 * curated flagged addresses.
 */
import { type Address, getAddress, isAddress } from "viem";
import { ENTITY_LIMITS, venueUsers } from "../spec/routes/entity-intel.ts";
import { explained, VENUE_SEGMENTS, VIP_LIST_LIMIT, VIP_MIN_USD } from "../src/analytics/methodology.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { defineFunction } from "../src/context.ts";
import { describe, factsOf, tokenInfos, UsdSum } from "../src/entity-intel/entities.ts";
import { cappedPrices } from "../src/entity-intel/pricing.ts";
import { bothWays, coverage, DEFAULT_BUDGET, resolveWindow, ScanBudget, scanBudgeted } from "../src/entity-intel/scan.ts";
import { tokenAddressOf } from "../src/entity-intel/token-input.ts";
import { venueUsersOf } from "../src/entity-intel/venue-users.ts";
import { InvalidRequestError } from "../src/errors.ts";

export default defineFunction(venueUsers, async (input, ctx) => {
  const { scanner, classifier, labels, prices } = analyticsOf(ctx);
  const budget = new ScanBudget(ctx.analytics?.entityBudget ?? DEFAULT_BUDGET);
  let venueId: string | null;
  let addresses: Address[];
  if (isAddress(input.venue, { strict: false })) {
    const address = getAddress(input.venue);
    venueId = labels.venueOf(address)?.id ?? null;
    addresses = [address];
  } else {
    const venue = labels.venue(input.venue);
    if (!venue) {
      const known = labels.venues().map((v) => v.id);
      throw new InvalidRequestError(`Invalid request: body.venue ("${input.venue}") is not a venue id of the label file.`, [
        { field: "body.venue", expected: `an address or one of the venue ids: ${known.join(", ")}`, received: input.venue },
      ]);
    }
    venueId = venue.id;
    addresses = venue.addresses;
  }
  const token = tokenAddressOf(input.token, ctx.config.usdc);
  const window = await resolveWindow(scanner, input.blocks ?? ENTITY_LIMITS.blocks, input.to_block);
  const result = await scanBudgeted(scanner, bothWays(token, addresses), window, budget);

  const users = venueUsersOf(result.logs, new Set(addresses));

  // Funding by curated flagged addresses: one read of what they sent in the window, with what the
  // users' read left of the budget.
  const flagged = labels.flaggedAddresses();
  const funding =
    flagged.length === 0 || users.size === 0
      ? { logs: [], coveredFrom: window.fromBlock, truncated: false }
      : await scanBudgeted(scanner, [{ from: flagged }], window, budget);

  const tokens = [...new Set(result.logs.map((l) => l.token))];
  const [infos, { priced, notLookedUp }, facts] = await Promise.all([
    tokenInfos(ctx.chain, tokens),
    cappedPrices(prices, result.logs),
    describe([addresses[0] as Address], labels, classifier),
  ]);
  const rows = [...users].map(([address, u]) => ({ address, u, usd: new UsdSum().addVolume(u.volume, infos, priced).usd() }));
  rows.sort((a, b) => b.usd - a.usd || a.address.toLowerCase().localeCompare(b.address.toLowerCase()));

  const segments = VENUE_SEGMENTS.map((s) => {
    const inside = rows.filter((r) => r.usd >= s.min_usd && (s.max_usd === null || r.usd < s.max_usd));
    const sum = new UsdSum();
    for (const r of inside) sum.addVolume(r.u.volume, infos, priced);
    return { name: s.name, min_usd: s.min_usd, max_usd: s.max_usd, users: inside.length, volume_usd: sum.usd() };
  });
  const n = window.toBlock - window.fromBlock + 1;
  const firstHalfEnd = window.fromBlock + Math.floor(n / 2) - 1;
  const lastQuarterStart = window.toBlock - Math.floor(n / 4) + 1;
  const quiet = rows.filter((r) => r.u.firstBlock <= firstHalfEnd && r.u.lastBlock < lastQuarterStart);

  const pairs = new Set<string>();
  const flaggedFunders: { user: Address; funder: Address; flags: ReturnType<typeof labels.flags> }[] = [];
  for (const log of funding.logs) {
    if (!users.has(log.to) || pairs.has(`${log.to}:${log.from}`)) continue;
    pairs.add(`${log.to}:${log.from}`);
    flaggedFunders.push({ user: log.to, funder: log.from, flags: labels.flags(log.from) });
  }

  return {
    venue: {
      id: venueId,
      address: addresses[0] as Address,
      addresses,
      class: factsOf(facts, addresses[0] as Address).class,
      labels: [...new Set(addresses.flatMap((a) => labels.names(a)))],
    },
    token: token ?? null,
    users_total: users.size,
    segments,
    vip_candidates: rows
      .filter((r) => r.usd >= VIP_MIN_USD)
      .slice(0, VIP_LIST_LIMIT)
      .map((r) => ({ address: r.address, volume_usd: r.usd, transfers: r.u.transfers })),
    gone_quiet: quiet.map((r) => ({ address: r.address, last_seen_block: r.u.lastBlock, volume_usd_before: r.usd })),
    flagged_funders: flaggedFunders,
    flagged_funders_scan: {
      truncated: funding.truncated,
      covered_from_block: funding.coveredFrom,
    },
    unpriced_tokens: tokens.filter((t) => !priced.has(t) || !infos.has(t)),
    tokens_not_looked_up: notLookedUp,
    // The users, segments and lists come from the venue's own read; the funders' read says its own coverage above.
    ...coverage(window, result, budget),
    ...explained("entity-intel/venue-users"),
  };
});
