/**
 * Knowledge-base search: a BM25+ index (MiniSearch's ranking, prefix and fuzzy matching; see
 * `Bm25Index`) over each entry's title, tags and answer, with the title weighted most.
 * `kb/search` lists the ranked matches; `kb/ask` also decides whether the top match is
 * confident enough to hand over its full answer (see `isConfident`).
 */
import type { KbEntry, KbEntrySummary } from "../../spec/content-schema.ts";
import { type Bm25Hit, Bm25Index } from "./bm25-index.ts";

/** One ranked match. */
export interface KbHit extends KbEntrySummary {
  /** The BM25+ score, on MiniSearch's scale (higher is better); comparable only within one query. */
  score: number;
}

/** What `ask` answers. */
export interface KbAnswer {
  matches: KbHit[];
  /** The top match's full entry when it is confident, else null. */
  best: KbEntry | null;
}

/** Field weights: a word in the title says more about an entry than the same word in its answer. */
export const KB_BOOST = { title: 3, tags: 2, answer: 1 } as const;

/**
 * The confidence rule of `kb/ask`: the top match is confident when its score is at least
 * `minScore` AND it leads the second match by at least `minLead` (top / second). Tuned on the
 * 15 real entries with 30 paraphrased questions (test/content-kb-relevance.test.ts): real
 * questions score about 25-540, while one-word or off-topic ones ("payment", "x402", "install
 * docker") stay under 20; a lead under 1.25 means two entries answer about equally well, and
 * the caller then gets the ranked list instead of a guess.
 */
export const KB_CONFIDENCE = { minScore: 25, minLead: 1.25 } as const;

/** How many matches `ask` lists. */
export const KB_ASK_MATCHES = 5;

/** How many matches `search` lists. */
export const KB_SEARCH_MATCHES = 10;

// Words that carry no topic: without this, "how do I ..." would rank entries whose titles are questions.
const STOP_WORDS = new Set(
  (
    "a an and are as at be but by can do does for from how i if in into is it its me my of on or our so that the their then there " +
    "these this to was we what when where which who why will with you your should would could"
  ).split(" "),
);

/** Lower-case a term and drop stop words and single letters (shared by every search over the content). */
export function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return STOP_WORDS.has(lower) || lower.length < 2 ? null : lower;
}

/** Whether a ranked list's top hit is confident under `KB_CONFIDENCE`. */
export function isConfident(hits: readonly { score: number }[]): boolean {
  const [top, second] = hits;
  if (!top || top.score < KB_CONFIDENCE.minScore) return false;
  return !second || top.score / second.score >= KB_CONFIDENCE.minLead;
}

/** Prefix matching for words of 3+ letters ("verif" finds "verifier"). */
export const prefixFor = (term: string): boolean => term.length >= 3;

/** Fuzzy matching for words of 5+ letters: one typo per 5 letters (MiniSearch's fraction 0.2). */
export const fuzzyFor = (term: string): number | false => (term.length >= 5 ? 0.2 : false);

/** A search index over a set of entries. */
export class KbIndex {
  readonly #index: Bm25Index<KbEntry, keyof typeof KB_BOOST>;
  readonly #entries: readonly KbEntry[];

  constructor(entries: readonly KbEntry[]) {
    this.#entries = entries;
    this.#index = new Bm25Index(entries, {
      boost: KB_BOOST,
      extract: (entry, field) => (field === "tags" ? entry.tags.join(" ") : entry[field]),
      processTerm,
      prefix: prefixFor,
      fuzzy: fuzzyFor,
    });
  }

  /** Every entry matching `query`, best first, at most `limit`. */
  search(query: string, limit: number = KB_SEARCH_MATCHES): KbHit[] {
    return this.#index.search(query, limit).map((hit) => this.#hit(hit));
  }

  #hit({ doc, score }: Bm25Hit): KbHit {
    const entry = this.#entries[doc] as KbEntry;
    return { id: entry.id, title: entry.title, category: entry.category, score };
  }

  /** The ranked matches of a question and, when the top one is confident, its full entry. */
  ask(question: string): KbAnswer {
    const ranked = this.#index.search(question, Math.max(KB_ASK_MATCHES, 2));
    const top = ranked[0];
    return {
      matches: ranked.slice(0, KB_ASK_MATCHES).map((hit) => this.#hit(hit)),
      best: top && isConfident(ranked) ? (this.#entries[top.doc] as KbEntry) : null,
    };
  }
}
