/** `POST /api/compute/playbook-bundle`: the full playbooks, all of them or one topic, as JSON and optionally one Markdown document. */
import { buyPlaybookBundle } from "../spec/routes/content.ts";
import { bundleMarkdown } from "../src/content/bundle-markdown.ts";
import { catalog } from "../src/content/catalog.ts";
import { defineFunction } from "../src/context.ts";
import { NotFoundError } from "../src/errors.ts";

export default defineFunction(buyPlaybookBundle, async (input) => {
  let chosen = catalog.playbooks;
  if (input.topic !== undefined) {
    const one = catalog.playbooks.find((p) => p.item.id === input.topic);
    // A 404 is never settled, so asking for a topic that does not exist costs nothing.
    if (!one) {
      throw new NotFoundError(`No playbook "${input.topic}" in the bundle; topic must be one of the listed ids. You were not charged.`, {
        field: "topic",
        topic: input.topic,
        valid_topics: catalog.playbooks.map((p) => p.item.id),
      });
    }
    chosen = [one];
  }
  const { bundle } = catalog;
  return {
    bundle: bundle.bundle,
    bundle_id: bundle.bundle_id,
    version: bundle.version,
    items_total: catalog.playbooks.length,
    items_returned: chosen.length,
    topic_found: input.topic === undefined ? null : true,
    items: chosen.map((p) => p.item),
    ...(input.format === "markdown" ? { markdown: bundleMarkdown(bundle, chosen, catalog.playbooks.length) } : {}),
  };
});
