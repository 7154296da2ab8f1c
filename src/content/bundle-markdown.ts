/**
 * The one-document Markdown rendition of a bundle purchase (`format: "markdown"`): a header
 * naming the bundle, version and vendor, a table of contents, then each bought playbook as a
 * `##` section compiled by `scripts/content/compile.ts`.
 */
import type { BundleMeta, CompiledPlaybook } from "../../spec/content-schema.ts";

/** One Markdown document holding `playbooks` (in the order given). */
export function bundleMarkdown(bundle: BundleMeta, playbooks: readonly CompiledPlaybook[], itemsTotal: number): string {
  const count = playbooks.length === itemsTotal ? `all ${itemsTotal} playbooks` : `${playbooks.length} of ${itemsTotal} playbooks`;
  const contents = playbooks.map((p, i) => `${i + 1}. ${p.item.title} (\`${p.item.id}\`)`).join("\n");
  const header = `# ${bundle.bundle} ${bundle.version}\n\nBy ${bundle.vendor}. This document holds ${count}.\n\n${bundle.summary}\n\n${contents}\n`;
  return [header, ...playbooks.map((p) => p.markdown_section)].join("\n---\n\n");
}
