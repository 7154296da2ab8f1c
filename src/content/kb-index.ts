/**
 * Knowledge-base search on MiniSearch (BM25+ per field, prefix and fuzzy matching) over each
 * entry's title, the questions it is asked as, its tags and its answer, the first two weighted
 * most. `kb/search` lists the ranked matches; `kb/ask` also decides whether the top match
 * answers the question (see `isConfident`).
 */
import MiniSearch, { type SearchResult } from "minisearch";
import type { KbEntry, KbEntrySummary } from "../../spec/content-schema.ts";

/** One ranked match. */
export interface KbHit extends KbEntrySummary {
  /** MiniSearch's BM25+ score (higher is better); comparable only within one query. */
  score: number;
  /** How many of the query's distinct terms the entry matched. */
  matchedTerms: number;
}

/** Field weights: a word of the title or of a question the entry is asked as says more than the same word in its answer. */
export const KB_BOOST = { title: 3, asked_as: 3, tags: 2, answer: 1 } as const;

/**
 * The confidence rule of `kb/ask`: the top match answers when its score is at least `minScore`,
 * it leads the second match by at least `minLead` (top / second), AND it shares at least
 * `minCoverage` of the question's words. Tuned on the 15 real entries with the buyer-worded
 * questions of test/kb-answers.test.ts: questions an entry answers score far above
 * `minScore` and share at least 60% of their words with it; one-word or off-topic ones stay
 * under it or share one word ("stake ETH with Lido" shares only "eth"), and one shared word is
 * never enough (`minShared`: the one word "eth" scores 29.6 on the entry on who pays the gas,
 * whose title names ETH, yet that entry does not answer "eth"); a lead under
 * `minLead` means two entries answer about equally well, and the caller then gets the
 * ranked list instead of a guess.
 */
export const KB_CONFIDENCE = { minScore: 25, minLead: 1.25, minCoverage: 0.5, minShared: 2 } as const;

/** How many matches `ask` lists. */
export const KB_ASK_MATCHES = 5;

/** How many matches `search` lists. */
export const KB_SEARCH_MATCHES = 10;

// Words that carry no topic: without this, "how do I ..." would rank entries whose titles are questions.
const STOP_WORDS = new Set(
  (
    "a an and are as at be but by can do does for from how i if in into is it its me my of on or our so that the their then there " +
    "these this to was we what when where which who why will with you your should would could get got"
  ).split(" "),
);

/** Lower-case a term and drop stop words and single letters (shared by every search over the content). */
export function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return STOP_WORDS.has(lower) || lower.length < 2 ? null : lower;
}

/** The distinct search terms of a text, as the index sees them. */
export function searchTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const token of MiniSearch.getDefault("tokenize")(text)) {
    const term = processTerm(token);
    if (term) terms.add(term);
  }
  return terms;
}

/** Whether a ranked list's top hit answers a question of `questionTerms` distinct terms under `KB_CONFIDENCE`. */
export function isConfident(hits: readonly { score: number; queryTerms: readonly string[] }[], questionTerms: number): boolean {
  const [top, second] = hits;
  if (!top || top.score < KB_CONFIDENCE.minScore) return false;
  if (top.queryTerms.length < KB_CONFIDENCE.minShared || top.queryTerms.length < KB_CONFIDENCE.minCoverage * questionTerms) return false;
  return !second || top.score / second.score >= KB_CONFIDENCE.minLead;
}

/** Prefix matching for words of 3+ letters ("verif" finds "verifier"). */
export const prefixFor = (term: string): boolean => term.length >= 3;

/** Fuzzy matching for words of 5+ letters: one typo (`KB_MAX_FUZZY`). */
export const fuzzyFor = (term: string): number | false => (term.length >= 5 ? 0.2 : false);

/**
 * At most one typo per word: two edits on a long word multiply the terms tried, and took
 * kb/ask's p99 at 1,000 entries from about 1.5 ms to about 9 ms (scripts/bench-search.ts).
 */
export const KB_MAX_FUZZY = 1;

/** A document's field as the indexes read it: a list's items joined by spaces. */
export const fieldText = (value: unknown): string => (Array.isArray(value) ? value.join(" ") : String(value ?? ""));

/** A search index over a set of entries. */
export class KbIndex {
  readonly #index: MiniSearch<KbEntry>;
  readonly #byId: ReadonlyMap<string, KbEntry>;

  constructor(entries: readonly KbEntry[]) {
    this.#byId = new Map(entries.map((e) => [e.id, e]));
    const extractField = (entry: KbEntry, field: string) => fieldText(entry[field as keyof KbEntry]);
    const known = new Set<string>();
    for (const entry of entries)
      for (const field of Object.keys(KB_BOOST)) for (const term of searchTerms(extractField(entry, field))) known.add(term);
    this.#index = new MiniSearch<KbEntry>({
      fields: Object.keys(KB_BOOST),
      extractField,
      processTerm,
      // A word the entries use is matched as it is (and by prefix); only a word none uses may be a typo.
      searchOptions: {
        boost: { ...KB_BOOST },
        combineWith: "OR",
        prefix: prefixFor,
        fuzzy: (term) => (known.has(term) ? false : fuzzyFor(term)),
        maxFuzzy: KB_MAX_FUZZY,
      },
    });
    this.#index.addAll(entries);
  }

  /** Every entry matching `query`, best first, at most `limit`. */
  search(query: string, limit: number = KB_SEARCH_MATCHES): KbHit[] {
    return this.#index
      .search(query)
      .slice(0, limit)
      .map((hit) => this.#hit(hit));
  }

  #hit({ id, score, queryTerms }: SearchResult): KbHit {
    const entry = this.#byId.get(id) as KbEntry;
    return { id: entry.id, title: entry.title, category: entry.category, score, matchedTerms: queryTerms.length };
  }

  /** The ranked matches of a question and, when the top one is confident, its full entry. */
  ask(question: string) {
    const ranked = this.#index.search(question);
    const top = ranked[0];
    return {
      matches: ranked.slice(0, KB_ASK_MATCHES).map((hit) => this.#hit(hit)),
      // The top match's full entry when it answers the question, else null.
      best: top && isConfident(ranked, searchTerms(question).size) ? (this.#byId.get(top.id) as KbEntry) : null,
    };
  }
}
