/**
 * A large knowledge base with realistic vocabulary, to measure search at scale. Real text has
 * tens of thousands of distinct words whose frequencies follow Zipf's law (a few words are in
 * most documents, most words in a handful), and each document is about a topic whose words
 * cluster. A corpus made of a few hundred words repeated has neither property and makes every
 * question match most entries, which no real knowledge base does.
 *
 * The words are the real ones of `content/` (playbooks, SOPs, KB entries, howtos: the
 * service's own domain) plus a deterministic lexicon of English-like words (syllables, stems
 * with common suffixes) ranked into one Zipf distribution; each entry mixes words of that
 * distribution with words of its own topic. The same seed gives the same corpus.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
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

function markdownFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) markdownFiles(full, out);
    else if (name.endsWith(".md")) out.push(full);
  }
  return out;
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

/** Sampler of ranks 0..n-1 with probability proportional to 1/(rank+1)^s (Zipf). */
function zipf(n: number, s: number, random: () => number): () => number {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += 1 / (i + 1) ** s;
    cumulative[i] = total;
  }
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Options of `realisticKbCorpus`. */
export interface CorpusOptions {
  /** Where the real words come from (the repository's `content/`). */
  contentDir: string;
  /** Entries to generate. */
  entries: number;
  seed?: number;
  /** Size of the whole vocabulary (real words first, then synthetic ones); default 60,000. */
  vocabulary?: number;
}

/** The commonest English words, which carry no topic; they head the generated frequency ranking. */
export const FUNCTION_WORDS = (
  "the of and to a in is it you that he was for on are with as his they be at one have this from or had by but what some we can " +
  "out other were all there when up use your how said an each she which do their if will way about many then them would so these"
).split(" ");

const CATEGORIES = ["payments", "base", "x402", "agents", "operations", "security", "data"];

/** `entries` KB entries over a Zipf-distributed vocabulary with topical clusters. */
export function realisticKbCorpus({ contentDir, entries, seed = 15, vocabulary = 60_000 }: CorpusOptions): KbEntry[] {
  const real = contentWords(contentDir);
  const lexicon = [...real, ...syntheticLexicon(Math.max(0, vocabulary - real.length), seed, new Set(real))];
  const random = prng(seed * 7919);
  // Ranks shuffled once so that real and synthetic words share the head and the tail.
  for (let i = lexicon.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [lexicon[i], lexicon[j]] = [lexicon[j] as string, lexicon[i] as string];
  }
  // As in English, the commonest words are function words ("the", "of", "to"), which carry no topic.
  const head = FUNCTION_WORDS.filter((w) => !lexicon.includes(w));
  lexicon.unshift(...FUNCTION_WORDS.filter((w) => lexicon.includes(w)), ...head);
  const common = zipf(lexicon.length, 1.05, random);
  const word = () => lexicon[common()] as string;
  const out: KbEntry[] = [];
  for (let i = 0; i < entries; i++) {
    // A topic: 12 words that this entry repeats, drawn from the whole vocabulary's middle and tail.
    const topic = Array.from({ length: 12 }, () => lexicon[200 + Math.floor(random() * (lexicon.length - 200))] as string);
    const fromTopic = () => topic[Math.floor(random() * topic.length)] as string;
    const sentence = (n: number) => Array.from({ length: n }, () => (random() < 0.3 ? fromTopic() : word())).join(" ");
    const title = `${sentence(5 + Math.floor(random() * 5))}?`;
    const answer = Array.from({ length: 6 + Math.floor(random() * 6) }, () => `${sentence(12 + Math.floor(random() * 14))}.`).join(" ");
    out.push({
      id: `gen-${i}`,
      title,
      category: CATEGORIES[i % CATEGORIES.length] as string,
      tags: [fromTopic(), fromTopic(), word()],
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
