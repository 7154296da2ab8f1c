/**
 * `POST /api/x402-trust`: score one origin now, exactly as the leaderboard crawl does, with its
 * standing in the latest leaderboard and its earlier crawl scores. A URL with a path is probed
 * as given; a bare origin is probed at its representative catalogue endpoint (or at its root
 * when the catalogue does not list it).
 */
import { x402Trust } from "../spec/routes/intel.ts";
import { defineFunction } from "../src/context.ts";
import { probeOrigin } from "../src/intel/assess-origin.ts";
import { representativeEndpoint } from "../src/intel/catalogue.ts";
import { eip3009Probe } from "../src/intel/eip3009-probe.ts";
import { intelOf } from "../src/intel/intel-services.ts";
import { lastVerifiedByPurchase, originHistory, originStanding } from "../src/intel/leaderboard.ts";
import { payToReputation } from "../src/intel/reputation.ts";
import { assessTrust, penaltyTexts } from "../src/intel/trust-score.ts";
import { TargetNotAllowedError } from "../src/outbound/safe-fetch.ts";
import { normaliseEndpointUrl } from "../src/upstreams/directory-entry.ts";

export default defineFunction(x402Trust, async (input, ctx) => {
  const url = normaliseEndpointUrl(input.url);
  if (!url) {
    throw new TargetNotAllowedError("Only absolute http and https URLs can be scored.", {
      url: input.url.slice(0, 200),
      reason: "malformed_url",
    });
  }
  const intel = intelOf(ctx);
  // Refuse a forbidden target before spending anything on the catalogue.
  await intel.fetcher.preflight(url);
  const { origin, pathname } = new URL(url);
  const snapshot = await intel.catalogue.read();
  const listed = snapshot.endpoints.filter((e) => e.origin === origin);
  const exact = listed.find((e) => e.url === url);
  const target = pathname !== "/" || listed.length === 0 ? { url, method: exact?.method ?? null } : representativeEndpoint(listed);

  const probedAt = ctx.now();
  const probe = await probeOrigin(
    intel.fetcher,
    target,
    (payTo, network) =>
      payToReputation(payTo, network, { chain: ctx.chain, network: ctx.config.network, usdc: ctx.config.usdc, now: () => ctx.now() }),
    { eip3009Probe: eip3009Probe(ctx.chain, ctx.config.network) },
  );
  // Read from the trust runs' purchases: this request never buys anything.
  const [standing, history, verified] = await Promise.all([
    originStanding(ctx.store, origin),
    originHistory(ctx.store, origin),
    lastVerifiedByPurchase(ctx.store, [origin]).then((m) => m.get(origin) ?? null),
  ]);
  const assessment = assessTrust(probe.report, probe.reputation, verified);
  return {
    origin,
    endpoint: target.url,
    method: probe.method,
    in_catalogue: listed.length > 0,
    endpoints: listed.length,
    score: assessment.score,
    verdict: assessment.verdict,
    penalties: penaltyTexts(assessment.penalties),
    reputation: probe.reputation,
    check: probe.report,
    leaderboard: standing,
    history,
    verified_by_purchase: verified && { ...verified, summary: `verified by purchase at ${verified.at}: ${verified.outcome}` },
    probed_at: probedAt.toISOString(),
  };
});
