/** `GET /api/trust-leaderboard`: the latest crawl's leaderboard document with rows. */
import { getTrustLeaderboard } from "../spec/routes/intel.ts";
import { defineFunction } from "../src/context.ts";
import { documentContext, fullLeaderboard } from "../src/intel/leaderboard.ts";

export default defineFunction(getTrustLeaderboard, async (input, ctx) =>
  fullLeaderboard(ctx.store, documentContext(ctx.config, ctx.intel?.purchases), { limit: input.limit ?? 25, order: input.order ?? "best" }),
);
