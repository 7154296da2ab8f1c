/**
 * The compiled content at run time. `scripts/content/compile.ts` writes it to
 * `.generated/content.json` before the Astro build; the server reads it from there, so it never
 * reaches `dist/client` (it holds the paid steps and answers).
 */
import { readFileSync } from "node:fs";
import { Value } from "@sinclair/typebox/value";
import { CompiledContent, type CompiledSop } from "../../spec/content-schema.ts";

function load(): CompiledContent {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(new URL("../../.generated/content.json", import.meta.url), "utf8"));
  } catch {
    throw new Error("The content is not compiled: run `npm run build` (it writes .generated/content.json).");
  }
  if (!Value.Check(CompiledContent, data)) {
    const first = [...Value.Errors(CompiledContent, data)][0];
    throw new Error(`.generated/content.json does not match spec/content-schema.ts at ${first?.path}: ${first?.message}; rebuild.`);
  }
  return data;
}

/** Everything compiled from `content/`. */
export const catalog: CompiledContent = load();

/** The compiled SOP with this slug, if any. */
export function sopBySlug(slug: string): CompiledSop | undefined {
  return catalog.sops.find((s) => s.index.slug === slug);
}
