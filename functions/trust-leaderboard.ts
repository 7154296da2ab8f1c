/**
 * The trust leaderboard, read from the latest completed crawl: `GET /api/trust-leaderboard`
 * (the document with rows), `POST /api/trust-leaderboard` (rows filtered by verdict and minimum
 * score) and `GET /api/trust-leaderboard/preview` (free: the document with the top 10 only).
 */
import { getTrustLeaderboard, postTrustLeaderboard, trustLeaderboardPreview } from "../spec/routes/intel.ts";
import { defineFunction, type FunctionContext, type RouteFunction, type RouteInput } from "../src/context.ts";
import { documentContext, fullLeaderboard, previewLeaderboard } from "../src/intel/leaderboard.ts";

const contextOf = (ctx: FunctionContext) => documentContext(ctx.config, ctx.intel?.purchases);

/** The rows of GET (no filters) and POST. */
const rows = async (input: RouteInput<typeof postTrustLeaderboard>, ctx: FunctionContext) =>
  fullLeaderboard(ctx.store, contextOf(ctx), {
    limit: input.limit ?? 25,
    order: input.order ?? "best",
    verdict: input.verdict,
    min_score: input.min_score,
  });

const trustLeaderboard: readonly RouteFunction[] = [
  defineFunction(getTrustLeaderboard, rows),
  defineFunction(postTrustLeaderboard, rows),
  defineFunction(trustLeaderboardPreview, async (_input, ctx) => previewLeaderboard(ctx.store, contextOf(ctx))),
];
export default trustLeaderboard;
