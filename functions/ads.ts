/** `GET /api/ads`: the sponsored placements active at the moment of the request (free). */
import { listAds } from "../spec/routes/content.ts";
import { activeAds } from "../src/content/ads.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(listAds, async (_input, ctx) => activeAds(ctx.now()));
