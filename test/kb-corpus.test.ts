/**
 * The generated knowledge base the search benchmark measures (scripts/content/kb-corpus.ts)
 * is shaped like the real one: question titles, three tags, answers of 150-400 words of real
 * prose from content/, names of its own per entry, and the same corpus for the same seed.
 */
import path from "node:path";
import { expect, it } from "vitest";
import { contentWords, distinctTerms, proseSentences, realisticKbCorpus, syntheticLexicon } from "../scripts/content/kb-corpus.ts";
import { KB_ANSWER_WORDS } from "../spec/content-schema.ts";

const contentDir = path.resolve(import.meta.dirname, "../content");
const corpus = realisticKbCorpus({ contentDir, entries: 1_000 });

it("has 1,000 well-formed entries with answers as long as the real ones", () => {
  expect(corpus).toHaveLength(1_000);
  expect(new Set(corpus.map((e) => e.id)).size).toBe(1_000);
  for (const e of corpus) {
    expect(e.title).toMatch(/^[A-Z].*\?$/);
    expect(e.tags).toHaveLength(3);
    const words = e.answer.split(" ").length;
    expect(words).toBeGreaterThanOrEqual(KB_ANSWER_WORDS.min);
    expect(words).toBeLessThanOrEqual(KB_ANSWER_WORDS.max);
  }
  expect(new Set(corpus.map((e) => e.title)).size).toBeGreaterThan(990);
});

it("is made of the real prose of content/ and names of its own", () => {
  const real = contentWords(contentDir);
  expect(real).toContain("facilitator");
  const terms = distinctTerms(corpus);
  expect(real.filter((w) => terms.has(w)).length).toBeGreaterThan(real.length / 2);
  expect(terms.size).toBeGreaterThan(real.length);
  expect(
    proseSentences("---\nid: x\n---\nFirst one here is long enough. ```\ncode. ```\n# Head\nThe `a` and **b** are [c](d) right here."),
  ).toEqual(["First one here is long enough.", "The a and b are c right here."]);
});

it("is the same for the same seed", () => {
  const again = realisticKbCorpus({ contentDir, entries: 200 });
  expect(again).toEqual(realisticKbCorpus({ contentDir, entries: 200 }));
  expect(realisticKbCorpus({ contentDir, entries: 200, seed: 16 })).not.toEqual(again);
  expect(new Set(syntheticLexicon(5_000, 1)).size).toBe(5_000);
});
