/** The one search index over the compiled knowledge base, built on first use and shared by `kb/search`, `kb/ask` and the chat. */
import { catalog } from "./catalog.ts";
import { type KbHit, KbIndex } from "./kb-index.ts";

let index: KbIndex | undefined;

/** The index of the compiled entries. */
export function kbIndex(): KbIndex {
  index ??= new KbIndex(catalog.kb.entries);
  return index;
}

/** How many of the closest entries a "no answer" note names. */
const CLOSEST = 3;

/**
 * What `kb/ask` says when no entry clearly answers: that none does, and the closest entries
 * by title and id (or, when nothing matches at all, what the knowledge base covers).
 */
export function noAnswerNote(matches: readonly KbHit[]): string {
  const closest = matches.slice(0, CLOSEST).map((m) => `“${m.title}” (${m.id})`);
  if (closest.length === 0) {
    return `No entry of the knowledge base answers this. Its ${catalog.kb.entries.length} entries cover x402 payments, USDC and Base, and running paid agents: GET /api/kb lists them.`;
  }
  return `No entry clearly answers this question. The closest ${closest.length === 1 ? "is" : "are"} ${closest.join(", ")}; ask again in the words of the one you mean.`;
}
