/**
 * The compiled content at run time. `scripts/content/compile.ts` writes it to
 * `.generated/content.json` before the Astro build; Vite inlines it here, so it lives in
 * `dist/server` only (it holds the paid steps and answers) and never in `dist/client`.
 */
import { Value } from "@sinclair/typebox/value";
import { CompiledContent, type CompiledPlaybook, type CompiledSop } from "../../spec/content-schema.ts";

// A glob rather than a plain import: the file exists only after a build, and a glob keeps
// `tsc --noEmit` working on a fresh clone while still being bundled at build time.
const found = import.meta.glob<unknown>("../../.generated/content.json", { eager: true, import: "default" });

function load(): CompiledContent {
  const data = found["../../.generated/content.json"];
  if (data === undefined) throw new Error("The content is not compiled: run `npm run build` (it writes .generated/content.json).");
  if (!Value.Check(CompiledContent, data)) {
    const first = [...Value.Errors(CompiledContent, data)][0];
    throw new Error(`.generated/content.json does not match spec/content-schema.ts at ${first?.path}: ${first?.message}; rebuild.`);
  }
  return data;
}

/** Everything compiled from `content/`. */
export const catalog: CompiledContent = load();

/** The compiled playbook with this id, if any. */
export function playbookById(id: string): CompiledPlaybook | undefined {
  return catalog.playbooks.find((p) => p.item.id === id);
}

/** The compiled SOP with this slug, if any. */
export function sopBySlug(slug: string): CompiledSop | undefined {
  return catalog.sops.find((s) => s.index.slug === slug);
}
