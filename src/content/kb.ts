/** The one search index over the compiled knowledge base, built on first use and shared by `kb/search` and `kb/ask`. */
import { catalog } from "./catalog.ts";
import { KbIndex } from "./kb-index.ts";

let index: KbIndex | undefined;

/** The index of the compiled entries. */
export function kbIndex(): KbIndex {
  index ??= new KbIndex(catalog.kb.entries);
  return index;
}
