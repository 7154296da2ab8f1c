/** `POST /v1/meme-hunter`: the pairs created in a recent window, each checked and scored, least risky first. */
import { MEME_HUNTER_DEFAULTS, memeHunter } from "../spec/routes/base-tools.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { defineFunction } from "../src/context.ts";
import { riskDeps } from "../src/token-risk/assess.ts";
import { DEEP_LIQUIDITY_USD, huntNewPairs, REMOVED_THRESHOLD_PCT, RISK_WEIGHTS, VERDICT_POINTS } from "../src/token-risk/meme-hunter.ts";
import { tokenRiskMethodology } from "../src/token-risk/methodology.ts";

export default defineFunction(memeHunter, async (input, ctx) => {
  const result = await huntNewPairs(
    { ...riskDeps(ctx), scanner: analyticsOf(ctx).scanner },
    {
      blocks: input.blocks ?? MEME_HUNTER_DEFAULTS.blocks,
      minLiquidityUsd: input.min_liquidity_usd ?? MEME_HUNTER_DEFAULTS.min_liquidity_usd,
      limit: input.limit ?? MEME_HUNTER_DEFAULTS.limit,
    },
  );
  return {
    ...result,
    scoring: {
      weights: { ...RISK_WEIGHTS },
      verdict_points: { ...VERDICT_POINTS },
      deep_liquidity_usd: DEEP_LIQUIDITY_USD,
      removed_threshold_pct: REMOVED_THRESHOLD_PCT,
    },
    methodology: tokenRiskMethodology("meme-hunter"),
  };
});
