/**
 * Bm25Index ranks as MiniSearch does (src/content/bm25-index.ts): on a three-document corpus
 * the scores are the BM25+ formula worked out by hand, and MiniSearch gives the same; prefix
 * and fuzzy matches weigh what MiniSearch's weights say; repeated query terms count twice;
 * ties go to the document indexed first; empty and stop-word-only queries find nothing; the
 * top k are the first k of the whole ranking. On 300 generated entries with realistic
 * vocabulary every question's top 10 carries MiniSearch's scores, typos and all.
 */
import path from "node:path";
import MiniSearch from "minisearch";
import { describe, expect, it } from "vitest";
import { prng, realisticKbCorpus } from "../scripts/content/kb-corpus.ts";
import type { KbEntry } from "../spec/content-schema.ts";
import { Bm25Index, boundedLevenshtein, tokenize } from "../src/content/bm25-index.ts";
import { fuzzyFor, KB_BOOST, KbIndex, prefixFor, processTerm } from "../src/content/kb-index.ts";

interface Doc {
  id: string;
  title: string;
  body: string;
}

const DOCS: Doc[] = [
  { id: "d0", title: "Apple pie", body: "apple apple banana" },
  { id: "d1", title: "Banana split", body: "cherry" },
  { id: "d2", title: "Cherry tart", body: "apple cherry cherry cherry" },
  { id: "d3", title: "Kiwi", body: "the kiwi" },
  { id: "d4", title: "Kiwi", body: "the kiwi" },
];

const lower = (term: string) => (term === "the" || term.length < 2 ? null : term.toLowerCase());
const options = { prefix: (t: string) => t.length >= 3, fuzzy: (t: string) => (t.length >= 5 ? 0.2 : false) } as const;
const ours = new Bm25Index(DOCS, { boost: { title: 2, body: 1 }, extract: (d, f) => d[f], processTerm: lower, ...options });
const theirs = new MiniSearch<Doc>({
  fields: ["title", "body"],
  processTerm: lower,
  searchOptions: { boost: { title: 2, body: 1 }, combineWith: "OR", ...options },
});
theirs.addAll(DOCS);

const ranked = (query: string, limit = 10) => ours.search(query, limit).map((h) => [DOCS[h.doc]?.id, h.score]);
const reference = (query: string) => theirs.search(query).map((r) => [r.id, r.score]);

// BM25+ with k 1.2, b 0.7, d 0.5 over 5 documents. Field lengths count distinct tokens as
// written ("the" included): titles 2, 2, 2, 1, 1 (mean 1.6); bodies 2, 1, 2, 2, 2 (mean 1.8).
const idf = (df: number) => Math.log(1 + (5 - df + 0.5) / (df + 0.5));
const bm25 = (tf: number, df: number, length: number, mean: number) =>
  idf(df) * (0.5 + (tf * 2.2) / (tf + 1.2 * (1 - 0.7 + (0.7 * length) / mean)));
const APPLE_D0 = 2 * bm25(1, 1, 2, 1.6) + bm25(2, 2, 2, 1.8); // title x2, body
const APPLE_D2 = bm25(1, 2, 2, 1.8);
const CHERRY_D2 = 2 * bm25(1, 1, 2, 1.6) + bm25(3, 2, 2, 1.8);
const CHERRY_D1 = bm25(1, 2, 1, 1.8);

describe("Bm25Index on a hand-computed corpus", () => {
  it("scores one term with BM25+ per field, the title boosted, as MiniSearch does", () => {
    expect(ranked("apple")).toEqual([
      ["d0", expect.closeTo(APPLE_D0, 12)],
      ["d2", expect.closeTo(APPLE_D2, 12)],
    ]);
    expect(reference("apple")).toEqual(ranked("apple").map(([id, s]) => [id, expect.closeTo(s as number, 12)]));
  });

  it("sums the terms and multiplies by how many of them matched", () => {
    expect(ranked("apple cherry")).toEqual([
      ["d2", expect.closeTo((APPLE_D2 + CHERRY_D2) * 2, 12)],
      ["d0", expect.closeTo(APPLE_D0, 12)],
      ["d1", expect.closeTo(CHERRY_D1, 12)],
    ]);
    expect(reference("apple cherry")).toEqual(ranked("apple cherry").map(([id, s]) => [id, expect.closeTo(s as number, 12)]));
  });

  it("counts a repeated query term twice, and once in the matched-terms factor", () => {
    expect(ranked("apple Apple")).toEqual([
      ["d0", expect.closeTo(2 * APPLE_D0, 12)],
      ["d2", expect.closeTo(2 * APPLE_D2, 12)],
    ]);
    expect(reference("apple Apple")).toEqual(ranked("apple Apple").map(([id, s]) => [id, expect.closeTo(s as number, 12)]));
  });

  it("weighs a prefix match 0.375 x length / (length + 0.3 x extra letters)", () => {
    const weight = (0.375 * 5) / (5 + 0.3 * 2); // "app" -> "apple"
    expect(ranked("app")).toEqual([
      ["d0", expect.closeTo(weight * APPLE_D0, 12)],
      ["d2", expect.closeTo(weight * APPLE_D2, 12)],
    ]);
    expect(reference("app")).toEqual(ranked("app").map(([id, s]) => [id, expect.closeTo(s as number, 12)]));
    expect(ranked("ap")).toEqual([]); // prefix from 3 letters only
  });

  it("weighs a fuzzy match 0.45 x length / (length + edits), within a fifth of the letters", () => {
    const weight = (0.45 * 6) / (6 + 1); // "chery" -> "cherry", one edit
    expect(ranked("chery")).toEqual([
      ["d2", expect.closeTo(weight * CHERRY_D2, 12)],
      ["d1", expect.closeTo(weight * CHERRY_D1, 12)],
    ]);
    expect(reference("chery")).toEqual(ranked("chery").map(([id, s]) => [id, expect.closeTo(s as number, 12)]));
    expect(ranked("cheryy x")).toHaveLength(2); // 6 letters: still one edit
    expect(ranked("chrryy")).toEqual([]); // two edits away
    expect(ranked("kiwo")).toEqual([]); // 4 letters: no fuzzy matching
  });

  it("puts the document indexed first ahead on a tie, also when only the top one is kept", () => {
    const [first, second] = ours.search("kiwi", 10);
    expect(first?.score).toBe(second?.score);
    expect([first?.doc, second?.doc]).toEqual([3, 4]);
    expect(ours.search("kiwi", 1).map((h) => h.doc)).toEqual([3]);
  });

  it("finds nothing for an empty, punctuation-only or stop-word-only query, or for limit 0", () => {
    expect(ours.search("", 10)).toEqual([]);
    expect(ours.search(" ?! ", 10)).toEqual([]);
    expect(ours.search("the a", 10)).toEqual([]);
    expect(ours.search("apple", 0)).toEqual([]);
  });

  it("keeps the top k: the first k of the whole ranking", () => {
    const all = ours.search("apple cherry kiwi banana", 10);
    expect(all.map((h) => h.doc)).toEqual([0, 2, 1, 3, 4]);
    expect(theirs.search("apple cherry kiwi banana").map((r) => r.id)).toEqual(["d0", "d2", "d1", "d3", "d4"]);
    for (let k = 1; k <= 5; k++) expect(ours.search("apple cherry kiwi banana", k)).toEqual(all.slice(0, k));
  });
});

describe("Bm25Index against MiniSearch on generated entries", () => {
  const entries = realisticKbCorpus({ contentDir: path.resolve(import.meta.dirname, "../content"), entries: 300 });
  const kb = new KbIndex(entries);
  const ms = new MiniSearch<KbEntry>({
    fields: ["title", "tags", "answer"],
    extractField: (entry, field) => {
      const value = entry[field as keyof KbEntry];
      return Array.isArray(value) ? value.join(" ") : String(value ?? "");
    },
    processTerm,
    searchOptions: { boost: { ...KB_BOOST }, combineWith: "OR", prefix: prefixFor, fuzzy: fuzzyFor },
  });
  ms.addAll(entries);
  // Questions made of each entry's words, every third word cut to a prefix and every fifth with two letters swapped.
  const questions = entries.slice(0, 120).map((e, i) =>
    `${e.title} ${e.tags[0]}`
      .split(" ")
      .map((w, j) =>
        j % 3 === 2 && w.length > 5
          ? w.slice(0, 4)
          : (i + j) % 5 === 0 && w.length > 4
            ? w.slice(0, 1) + w.slice(2, 3) + w.slice(1, 2) + w.slice(3)
            : w,
      )
      .join(" "),
  );

  it("gives every question's top 10 MiniSearch's scores, in its order but for ties", () => {
    let ties = 0;
    for (const q of questions) {
      const mine = kb.search(q, 10);
      const ref = ms.search(q).slice(0, 10);
      expect(mine.map((h) => h.score)).toEqual(ref.map((r) => expect.closeTo(r.score, 9)));
      const same = mine.every((h, i) => h.id === ref[i]?.id);
      if (!same) {
        ties++;
        // Any difference in order is among equal scores.
        for (const [i, h] of mine.entries())
          if (h.id !== ref[i]?.id) expect(mine.filter((o) => o.score === h.score).length).toBeGreaterThan(1);
      }
    }
    expect(ties).toBeLessThan(questions.length / 10);
  });
});

describe("Bm25Index over text beyond ASCII", () => {
  // The build interns tokens by their span of text and a hash of its code units, in tables that
  // start small: thousands of distinct words (accents, CJK, code points beyond U+FFFF, case
  // variants of one term) between separators beyond ASCII make the tables grow many times.
  const random = prng(11);
  const syllables = ["ka", "Ré", "ß", "日本", "𝒜", "lo", "ÉTÉ", "mi", "語", "𝒷x", "nu", "Ça"];
  const separators = [" ", "、", " — ", "\u00a0", " 𐎟 ", "。", ", "];
  const word = () =>
    Array.from({ length: 1 + Math.floor(random() * 4) }, () => syllables[Math.floor(random() * syllables.length)]).join("");
  const text = (words: number) =>
    Array.from({ length: words }, (_, i) => (i === 0 ? "" : separators[Math.floor(random() * separators.length)]) + word()).join("");
  const docs = Array.from({ length: 400 }, (_, i) => ({ id: `u${i}`, title: text(3), body: text(40) }));
  const lowerCase = (term: string) => (term.length < 2 ? null : term.toLowerCase());
  const mine = new Bm25Index(docs, { boost: { title: 2, body: 1 }, extract: (d, f) => d[f], processTerm: lowerCase });
  const theirs = new MiniSearch<(typeof docs)[number]>({
    fields: ["title", "body"],
    processTerm: lowerCase,
    searchOptions: { boost: { title: 2, body: 1 }, combineWith: "OR" },
  });
  theirs.addAll(docs);

  it("holds every distinct term and scores every document's title as MiniSearch does", () => {
    expect(mine.vocabularySize).toBe(theirs.termCount);
    expect(mine.vocabularySize).toBeGreaterThan(3000);
    for (const doc of docs) {
      const ours = mine.search(doc.title, 10);
      const all = theirs.search(doc.title);
      const ref = all.slice(0, 10);
      expect(ours.map((h) => h.score)).toEqual(ref.map((r) => expect.closeTo(r.score, 12)));
      // Any difference in order is among equal scores (the other one may rank just past the 10th).
      for (const [i, h] of ours.entries())
        if (docs[h.doc]?.id !== ref[i]?.id) expect(all.filter((r) => Math.abs(r.score - h.score) < 1e-12).length).toBeGreaterThan(1);
    }
  });
});

describe("the tokenizer and the edit distance", () => {
  it("splits text exactly as MiniSearch's /[\\n\\r\\p{Z}\\p{P}]+/u, empty first and last tokens included", () => {
    const samples = [
      "",
      " ",
      "a",
      " a b? ",
      "x402.org, fee—€5 «hi» $100 a+b=c",
      "eth_getLogs\u00a0x\u2028y",
      "𝒜𝒷 ok 𐎟 end",
      "日本語、テスト。",
    ];
    for (const text of samples) expect(tokenize(text)).toEqual(text.split(/[\n\r\p{Z}\p{P}]+/u));
  });

  it("computes the Levenshtein distance up to the bound and reports anything farther as bound + 1", () => {
    expect(boundedLevenshtein("kitten", "sitting", 3)).toBe(3);
    expect(boundedLevenshtein("kitten", "sitting", 2)).toBe(3);
    expect(boundedLevenshtein("flaw", "lawn", 2)).toBe(2);
    expect(boundedLevenshtein("abc", "abc", 0)).toBe(0);
    expect(boundedLevenshtein("abc", "", 3)).toBe(3);
    expect(boundedLevenshtein("abcdef", "ab", 2)).toBe(3);
  });
});
