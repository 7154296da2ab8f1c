/** `GET /api/entity-intel` (free): the entity-intelligence index document. */
import { entityIntelIndex } from "../spec/routes/entity-intel.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { defineFunction } from "../src/context.ts";
import { entityIndexDocument } from "../src/entity-intel/index-document.ts";

export default defineFunction(entityIntelIndex, async (_input, ctx) => entityIndexDocument(ctx.config, analyticsOf(ctx).labels));
