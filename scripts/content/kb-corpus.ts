/**
 * A knowledge base of 1,000 entries shaped like the real one, to measure search at the size a
 * real service's knowledge base reaches: question titles, a few tags, answers of 150-400 words
 * of real prose from `content/` (the service's own domain, its grammar and word frequencies),
 * each entry with names of its own (a deterministic lexicon of English-like words) as real
 * articles name their own tools and fields. The same seed gives the same corpus.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { KbEntry } from "../../spec/content-schema.ts";

/** A small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every `.md` file under `dir`, at any depth, by path. */
function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => path.join(dir, name));
}

/** Distinct lower-case words of the Markdown under `contentDir`, in order of first appearance. */
export function contentWords(contentDir: string): string[] {
  const seen = new Set<string>();
  for (const file of markdownFiles(contentDir)) {
    for (const word of readFileSync(file, "utf8")
      .toLowerCase()
      .match(/[a-z][a-z0-9]{2,}/g) ?? [])
      seen.add(word);
  }
  return [...seen];
}

const ONSETS = [
  "b",
  "c",
  "d",
  "f",
  "g",
  "h",
  "j",
  "k",
  "l",
  "m",
  "n",
  "p",
  "r",
  "s",
  "t",
  "v",
  "w",
  "z",
  "br",
  "cl",
  "cr",
  "dr",
  "fl",
  "gr",
  "pl",
  "pr",
  "sh",
  "st",
  "th",
  "tr",
  "ch",
  "sp",
];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"];
const CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ck", "rk", "nt", "x"];
const SUFFIXES = ["", "", "", "s", "ed", "ing", "er", "ion", "ity", "able", "ment", "ness", "ly", "ize", "ous", "al"];

/** `count` distinct English-like words, deterministic for `seed`. */
export function syntheticLexicon(count: number, seed: number, exclude: ReadonlySet<string> = new Set()): string[] {
  const random = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
  const words = new Set<string>();
  while (words.size < count) {
    const syllables = random() < 0.55 ? 1 : random() < 0.85 ? 2 : 3;
    let stem = "";
    for (let s = 0; s < syllables; s++) stem += pick(ONSETS) + pick(VOWELS) + (s === syllables - 1 ? pick(CODAS) : "");
    const word = stem + pick(SUFFIXES);
    if (word.length >= 4 && !exclude.has(word)) words.add(word);
  }
  return [...words];
}

/** Options of `realisticKbCorpus`. */
export interface CorpusOptions {
  /** Where the real text comes from (the repository's `content/`). */
  contentDir: string;
  /** Entries to generate. */
  entries: number;
  seed?: number;
}

const CATEGORIES = ["payments", "base-chain", "x402-protocol", "agents", "operations", "security", "data"];

/** The prose of a Markdown file: its sentences, without frontmatter, code blocks, tables or markup. */
export function proseSentences(markdown: string): string[] {
  const body = markdown
    .replace(/^---\n[\s\S]*?\n---\n/, "")
    .replace(/```[\s\S]*?```/g, " ")
    .split("\n")
    .filter((line) => !/^\s*(\||#|<)/.test(line))
    .join(" ")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/\[([^\]]+)\]\([^)]+\)/g, "$1")
    .replace(/\*\*|__|^\s*(?:[-*]|\d+\.)\s+/g, "")
    .replace(/\s+/g, " ");
  return (body.match(/[A-Z][^.!?]{20,300}[.!?](?=\s|$)/g) ?? []).map((s) => s.trim());
}

/** The questions of the real knowledge base's titles, the shapes generated titles take. */
const TITLE_SHAPES = [
  "How do I {a} {b} with {c}?",
  "Why does {a} {b} fail on {c}, and how do I fix it?",
  "What is {a} {b} and when should I use it?",
  "How should I set up {a} for {b} {c}?",
  "Which {a} works with {b} on {c}?",
  "Can {a} {b} be used without {c}?",
  "What does the {a} {b} field mean in {c}?",
  "How do I check that {a} {b} really happened?",
];

/**
 * `entries` KB entries shaped like the real ones: a question title naming its topic, a few
 * tags, and an answer of 150-400 words made of consecutive real sentences of one file under
 * `content/` (so the grammar, the domain vocabulary and its frequencies are real), where some
 * words are replaced by the entry's own topic words (product, tool and field names), as each
 * article of a real knowledge base has names of its own. The same seed gives the same corpus.
 */
export function realisticKbCorpus({ contentDir, entries, seed = 15 }: CorpusOptions): KbEntry[] {
  const files = markdownFiles(contentDir)
    .map((file) => proseSentences(readFileSync(file, "utf8")))
    .filter((sentences) => sentences.length >= 12);
  const real = new Set(contentWords(contentDir));
  // About four names of its own per entry, drawn from one shared pool so related entries share some.
  const names = syntheticLexicon(entries * 4, seed, real);
  const random = prng(seed * 7919);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
  const out: KbEntry[] = [];
  for (let i = 0; i < entries; i++) {
    const sentences = files[i % files.length] as string[];
    const topic = Array.from({ length: 4 }, () => pick(names));
    const words: string[] = [];
    let at = Math.floor(random() * sentences.length);
    const target = 150 + Math.floor(random() * 250);
    while (words.length < target) {
      for (const w of (sentences[at % sentences.length] as string).split(" ")) {
        words.push(w.length >= 6 && random() < 0.06 ? pick(topic) : w);
      }
      at++;
    }
    const answer = words.slice(0, 400).join(" ");
    const vocabulary = words.filter((w) => /^[a-z]{5,}$/.test(w));
    const title = pick(TITLE_SHAPES)
      .replace("{a}", topic[0] as string)
      .replace("{b}", pick(vocabulary))
      .replace("{c}", random() < 0.5 ? (topic[1] as string) : pick(vocabulary));
    out.push({
      id: `gen-${i}`,
      title: title.charAt(0).toUpperCase() + title.slice(1),
      category: CATEGORIES[i % CATEGORIES.length] as string,
      tags: [topic[0] as string, topic[1] as string, pick(vocabulary)],
      asked_as: [],
      answer,
      last_verified: "2026-01-01",
    });
  }
  return out;
}

/** The distinct terms of `entries` (title, tags and answer), as a search index would see them. */
export function distinctTerms(entries: readonly KbEntry[]): Set<string> {
  const terms = new Set<string>();
  for (const e of entries) {
    for (const text of [e.title, e.tags.join(" "), e.answer]) {
      for (const term of text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) terms.add(term);
    }
  }
  return terms;
}
