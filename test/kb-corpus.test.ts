/**
 * The generated knowledge base the search benchmark measures (scripts/content/kb-corpus.ts)
 * has realistic vocabulary: at 10,000 entries at least 20,000 distinct terms, a Zipf-like
 * spread (no term in every entry, most terms in few), and the same corpus for the same seed.
 */
import path from "node:path";
import { expect, it } from "vitest";
import { contentWords, distinctTerms, FUNCTION_WORDS, realisticKbCorpus, syntheticLexicon } from "../scripts/content/kb-corpus.ts";

const contentDir = path.resolve(import.meta.dirname, "../content");
const corpus = realisticKbCorpus({ contentDir, entries: 10_000 });

it("has 10,000 well-formed entries with at least 20,000 distinct terms", () => {
  expect(corpus).toHaveLength(10_000);
  expect(new Set(corpus.map((e) => e.id)).size).toBe(10_000);
  for (const e of corpus.slice(0, 50)) {
    expect(e.title.endsWith("?")).toBe(true);
    expect(e.tags).toHaveLength(3);
    expect(e.answer.split(" ").length).toBeGreaterThanOrEqual(6 * 12);
  }
  expect(distinctTerms(corpus).size).toBeGreaterThanOrEqual(20_000);
});

it("spreads terms like real text: function words everywhere, no topic word in over 60% of entries, most terms in at most 5", () => {
  const docFreq = new Map<string, number>();
  for (const e of corpus) for (const t of distinctTerms([e])) docFreq.set(t, (docFreq.get(t) ?? 0) + 1);
  expect(docFreq.get("the")).toBeGreaterThan(9_900);
  const counts = [...docFreq].filter(([t]) => !FUNCTION_WORDS.includes(t)).map(([, n]) => n);
  expect(Math.max(...counts)).toBeLessThan(6_000);
  expect(counts.filter((n) => n <= 5).length / counts.length).toBeGreaterThan(0.5);
});

it("uses the real words of content/ and is the same for the same seed", () => {
  const real = contentWords(contentDir);
  expect(real).toContain("facilitator");
  expect(real).toContain("settlement");
  const terms = distinctTerms(corpus);
  expect(real.filter((w) => terms.has(w)).length).toBeGreaterThan(real.length / 2);
  const again = realisticKbCorpus({ contentDir, entries: 200 });
  expect(again).toEqual(realisticKbCorpus({ contentDir, entries: 200 }));
  expect(realisticKbCorpus({ contentDir, entries: 200, seed: 16 })).not.toEqual(again);
  expect(new Set(syntheticLexicon(5_000, 1)).size).toBe(5_000);
});
