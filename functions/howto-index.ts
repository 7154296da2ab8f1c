/** `GET /api/howto`: the free SOP index document. */
import { SOP_CATALOGUE } from "../spec/content-schema.ts";
import { getHowtoIndex } from "../spec/routes/content.ts";
import { catalog } from "../src/content/catalog.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(getHowtoIndex, async () => {
  const { howto } = catalog;
  return {
    service: howto.service,
    summary: howto.summary,
    free: true as const,
    sops_total: SOP_CATALOGUE.length,
    sops: catalog.sops.map((s) => s.index),
    how_to_buy: howto.how_to_buy,
    all_in_option: howto.all_in_option,
  };
});
