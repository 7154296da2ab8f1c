/** `POST /api/trust-leaderboard`: the latest crawl's leaderboard document with rows, filtered by verdict and minimum score. */
import { postTrustLeaderboard } from "../spec/routes/intel.ts";
import { defineFunction } from "../src/context.ts";
import { documentContext, fullLeaderboard } from "../src/intel/leaderboard.ts";

export default defineFunction(postTrustLeaderboard, async (input, ctx) =>
  fullLeaderboard(ctx.store, documentContext(ctx.config, ctx.intel?.purchases), {
    limit: input.limit ?? 25,
    order: input.order ?? "best",
    verdict: input.verdict,
    min_score: input.min_score,
  }),
);
