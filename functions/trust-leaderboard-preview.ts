/** `GET /api/trust-leaderboard/preview` (free): the leaderboard document with the top 10 only. */
import { trustLeaderboardPreview } from "../spec/routes/intel.ts";
import { defineFunction } from "../src/context.ts";
import { documentContext, previewLeaderboard } from "../src/intel/leaderboard.ts";

export default defineFunction(trustLeaderboardPreview, async (_input, ctx) =>
  previewLeaderboard(ctx.store, documentContext(ctx.config, ctx.intel?.purchases)),
);
