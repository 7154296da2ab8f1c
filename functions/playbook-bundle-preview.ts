/** `GET /api/compute/playbook-bundle`: the free preview of the bundle (ids, titles, owner requests). */
import { BUNDLE_PRICE_USDC } from "../spec/content-schema.ts";
import { getPlaybookBundle } from "../spec/routes/content.ts";
import { catalog } from "../src/content/catalog.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(getPlaybookBundle, async () => {
  const { bundle } = catalog;
  return {
    bundle: bundle.bundle,
    bundle_id: bundle.bundle_id,
    version: bundle.version,
    vendor: bundle.vendor,
    summary: bundle.summary,
    free: true as const,
    // The compiler refuses any other price in content/bundle.md, so the constant and the file agree.
    price_usdc: BUNDLE_PRICE_USDC,
    how_to_buy: bundle.how_to_buy,
    items_total: catalog.playbooks.length,
    items: catalog.playbooks.map((p) => p.preview),
  };
});
