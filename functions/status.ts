/** `GET /api/status.json`: the newest stored status document, the same bytes on every instance. */
import { status } from "../spec/routes/status.ts";
import { defineFunction } from "../src/context.ts";
import { ServiceError } from "../src/errors.ts";
import { latestStatusBody } from "../src/operations/status-feed.ts";

export default defineFunction(status, async (_input, ctx) => {
  const body = await latestStatusBody(ctx.store);
  if (body === null) {
    throw new ServiceError("unavailable", "The first status document is being generated; retry in a few seconds.", {
      headers: { "Retry-After": "5" },
    });
  }
  return JSON.parse(body);
});
