/**
 * A full-text index with MiniSearch's ranking (BM25+ per field, field boosts, prefix and fuzzy
 * term expansion, OR of the query's terms, the score multiplied by how many of them matched),
 * laid out for speed: the vocabulary is one sorted array (a prefix is a contiguous range found
 * by binary search), fuzzy candidates come from an index of the terms' bigrams by length and
 * position and are checked by a banded edit distance, and each term's postings per field are
 * typed arrays holding the document and its BM25+ score, computed once at build. A query adds
 * into one score array per index and keeps the top k without sorting the rest. Each distinct
 * query term is expanded and scored once, however often it occurs.
 *
 * Scores are MiniSearch's (node_modules/minisearch/dist/es/index.js, `executeQuerySpec`,
 * `termResults`, `calcBM25Score`, `search`) to floating-point rounding, so thresholds tuned on
 * MiniSearch's scale keep their meaning; test/bm25-index.test.ts checks both on the same corpora.
 * Where MiniSearch leaves ties in the order documents were first matched, this index puts the
 * document indexed first ahead.
 */

/** MiniSearch's tokenizer: any run of Unicode spaces, line breaks or punctuation separates terms. */
const SEPARATOR = /^[\n\r\p{Z}\p{P}]$/u;
const ASCII_SEPARATOR = Uint8Array.from({ length: 128 }, (_, code) => (SEPARATOR.test(String.fromCharCode(code)) ? 1 : 0));
const otherSeparators = new Map<number, boolean>();

function isSeparator(codePoint: number): boolean {
  if (codePoint < 128) return ASCII_SEPARATOR[codePoint] === 1;
  let separator = otherSeparators.get(codePoint);
  if (separator === undefined) {
    separator = SEPARATOR.test(String.fromCodePoint(codePoint));
    if (otherSeparators.size < 4096) otherSeparators.set(codePoint, separator);
  }
  return separator;
}

/** FNV-1a's 32-bit offset basis and prime: a token's hash is built as its code units are scanned. */
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
/**
 * A token's hash keeps 30 bits: V8 holds such numbers as small integers (Smis), while a full
 * 32-bit one may be boxed on the heap when passed to a function V8 did not inline (no effect
 * measured on the benchmark corpus; a precaution that costs one AND per token).
 */
const SMALL = 0x3fffffff;

/**
 * The tokens of a text as spans (`start`, `end`) with the hash of their code units, one per
 * `next()`, exactly as `text.split(/[\n\r\p{Z}\p{P}]+/u)` gives them (MiniSearch's default):
 * empty first and last ones included, which count in a field's length. A scan with a table for
 * ASCII is several times faster than the Unicode-property regular expression, and spans let the
 * build look a token up without slicing a string for each occurrence (see `TokenTable`).
 */
class TokenSpans {
  text = "";
  start = 0;
  end = 0;
  hash = 0;
  #at = 0;
  #done = true;

  reset(text: string): void {
    this.text = text;
    this.#at = 0;
    this.#done = false;
  }

  /** Moves to the next token; false when there is none left. */
  next(): boolean {
    if (this.#done) return false;
    const text = this.text;
    const length = text.length;
    let i = this.#at;
    let hash = FNV_OFFSET;
    this.start = i;
    while (i < length) {
      const code = text.charCodeAt(i);
      let width = 1;
      if (code < 128) {
        if (ASCII_SEPARATOR[code] === 0) {
          hash = Math.imul(hash ^ code, FNV_PRIME);
          i++;
          continue;
        }
      } else {
        // Beyond ASCII the separator test needs the whole code point (a few separators lie beyond U+FFFF).
        const codePoint = text.codePointAt(i) as number;
        width = codePoint > 0xffff ? 2 : 1;
        if (!isSeparator(codePoint)) {
          hash = Math.imul(hash ^ code, FNV_PRIME);
          if (width === 2) hash = Math.imul(hash ^ text.charCodeAt(i + 1), FNV_PRIME);
          i += width;
          continue;
        }
      }
      this.end = i;
      this.hash = hash & SMALL;
      i += width;
      while (i < length) {
        const next = text.codePointAt(i) as number;
        if (!isSeparator(next)) break;
        i += next > 0xffff ? 2 : 1;
      }
      this.#at = i;
      return true;
    }
    this.end = length;
    this.hash = hash & SMALL;
    this.#done = true;
    return true;
  }
}

/** The tokens of `text` exactly as `text.split(/[\n\r\p{Z}\p{P}]+/u)` gives them (MiniSearch's default). */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  const spans = new TokenSpans();
  spans.reset(text);
  while (spans.next()) tokens.push(text.slice(spans.start, spans.end));
  return tokens;
}

/**
 * A token's slot before masking: FNV's multiplications carry only upwards, so its low bits,
 * which the mask keeps, mix poorly (long probe runs); MurmurHash3's finalizer mixes them.
 */
function home(hash: number): number {
  let h = hash ^ (hash >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * The distinct tokens met so far, each with a dense id, found by a span of source text and its
 * hash (open addressing, linear probing). A `Map` keyed by the token would need a new string
 * sliced and hashed for each of the ~1.7 million occurrences in the 10,000-entry benchmark
 * corpus, which was most of the build; here a string is sliced only for a new token.
 */
class TokenTable {
  /** The tokens by id. */
  readonly tokens: string[] = [];
  /**
   * Two cells per slot: a token's hash and its id + 1 (0: empty); at most half the slots are
   * used. The hash sits next to the id so that a probe that misses reads one cache line.
   */
  #slots = new Int32Array(2 * 64);
  #mask = 63;
  /** The tokens' code units end to end: token `id` is [#starts[id], #starts[id + 1]) of #units. */
  #units = new Uint16Array(256);
  #starts = new Uint32Array(32);

  /** The id of `text` from `start` to `end` (whose hash is `hash`), added when new. */
  intern(text: string, start: number, end: number, hash: number): number {
    const length = end - start;
    const slots = this.#slots;
    let slot = home(hash) & this.#mask;
    for (;;) {
      const stored = slots[2 * slot + 1] as number;
      if (stored === 0) break;
      if (slots[2 * slot] === hash) {
        const id = stored - 1;
        const from = this.#starts[id] as number;
        if ((this.#starts[id + 1] as number) - from === length) {
          let j = 0;
          while (j < length && this.#units[from + j] === text.charCodeAt(start + j)) j++;
          if (j === length) return id;
        }
      }
      slot = (slot + 1) & this.#mask;
    }
    return this.#add(text, start, end, hash, slot);
  }

  #add(text: string, start: number, end: number, hash: number, slot: number): number {
    const id = this.tokens.length;
    this.tokens.push(text.slice(start, end));
    if (id + 2 > this.#starts.length) this.#starts = grown(this.#starts, id + 2);
    const from = this.#starts[id] as number;
    const to = from + end - start;
    if (to > this.#units.length) this.#units = grown(this.#units, to);
    for (let j = from; j < to; j++) this.#units[j] = text.charCodeAt(start + j - from);
    this.#starts[id + 1] = to;
    this.#slots[2 * slot] = hash;
    this.#slots[2 * slot + 1] = id + 1;
    if (2 * (id + 1) > this.#mask) this.#rehash();
    return id;
  }

  #rehash(): void {
    const mask = this.#mask * 2 + 1;
    const slots = new Int32Array(2 * (mask + 1));
    for (let old = 0; old <= this.#mask; old++) {
      const hash = this.#slots[2 * old] as number;
      const stored = this.#slots[2 * old + 1] as number;
      if (stored === 0) continue;
      let slot = home(hash) & mask;
      while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
      slots[2 * slot] = hash;
      slots[2 * slot + 1] = stored;
    }
    this.#slots = slots;
    this.#mask = mask;
  }
}

/**
 * A copy of `array` at least `size` long (doubling), for arrays that grow by pushing. The
 * build's growable arrays and tables start small on purpose: they then grow within the first
 * few documents, while V8 still interprets the build, instead of first growing in optimised
 * code, which V8 throws away when a path it has not seen runs or a field it took for constant
 * is reassigned (measured: a cold 10,000-entry build about a third faster).
 */
function grown<T extends Uint16Array | Uint32Array | Int32Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (n: number) => T)(Math.max(size, array.length * 2));
  bigger.set(array);
  return bigger;
}

/** BM25+ parameters: term-frequency saturation `k`, length normalisation `b`, lower bound `d`. */
export interface Bm25Params {
  k: number;
  b: number;
  d: number;
}

/** MiniSearch's defaults. */
export const BM25_DEFAULTS: Bm25Params = { k: 1.2, b: 0.7, d: 0.5 };

/** How much a term found by prefix or by fuzzy matching weighs at distance 0 (MiniSearch's defaults). */
export const EXPANSION_WEIGHTS = { prefix: 0.375, fuzzy: 0.45 } as const;

/** Terms this long or longer share their bigram lists in the fuzzy-matching index (positions are capped the same way). */
const LONG = 63;

/** Where a bigram stands in the bigram index's keys: the term's length and the bigram's position (both capped). */
const bigramPlace = (length: number, position: number): number => length * (LONG + 2) + Math.min(position, LONG + 1);

/**
 * The ids of the bigram index's lists, by bigram (two UTF-16 code units as one 32-bit number)
 * and place (`bigramPlace`): open addressing over one typed array. Both halves of a key
 * together exceed the small integers, so a Map keyed by their combination boxes and hashes a
 * double for each of the build's ~540,000 bigrams (10,000-entry benchmark corpus).
 */
class BigramKeys {
  /** Three cells per slot: bigram, place, list id + 1 (0: empty); at most half the slots are used. */
  #cells = new Int32Array(3 * 64);
  #mask = 63;
  size = 0;

  /** The list id of a key, -1 when there is none. */
  get(bigram: number, place: number): number {
    return (this.#cells[3 * this.#slot(bigram, place) + 2] as number) - 1;
  }

  /** The list id of a key, a new one (the next integer) when there is none. */
  add(bigram: number, place: number): number {
    const slot = this.#slot(bigram, place);
    const stored = this.#cells[3 * slot + 2] as number;
    if (stored !== 0) return stored - 1;
    this.#cells[3 * slot] = bigram;
    this.#cells[3 * slot + 1] = place;
    this.#cells[3 * slot + 2] = ++this.size;
    if (2 * this.size > this.#mask) this.#rehash();
    return this.size - 1;
  }

  /** The key's slot, or the empty one where it would go. */
  #slot(bigram: number, place: number): number {
    const cells = this.#cells;
    let slot = home(bigram ^ Math.imul(place, 0x9e3779b1)) & this.#mask;
    while (cells[3 * slot + 2] !== 0 && (cells[3 * slot] !== bigram || cells[3 * slot + 1] !== place)) slot = (slot + 1) & this.#mask;
    return slot;
  }

  #rehash(): void {
    const old = this.#cells;
    this.#mask = this.#mask * 2 + 1;
    this.#cells = new Int32Array(3 * (this.#mask + 1));
    for (let from = 0; from < old.length; from += 3) {
      if (old[from + 2] === 0) continue;
      const slot = this.#slot(old[from] as number, old[from + 1] as number);
      this.#cells[3 * slot] = old[from] as number;
      this.#cells[3 * slot + 1] = old[from + 1] as number;
      this.#cells[3 * slot + 2] = old[from + 2] as number;
    }
  }
}

/** MiniSearch's cap on a fuzzy edit distance given as a fraction of the term's length. */
const MAX_FUZZY = 6;

/** How a `Bm25Index` reads, splits and ranks documents. */
export interface Bm25IndexOptions<Doc, Field extends string> {
  /** The indexed fields, each with its weight (a term in a field of weight 3 counts 3 times as much). */
  boost: Readonly<Record<Field, number>>;
  /** The text of one field of a document. */
  extract(doc: Doc, field: Field): string;
  /** Normalises a term (index and query alike); null drops it (stop words). */
  processTerm(term: string): string | null;
  /** Whether a query term also matches the longer terms it begins (default: never). */
  prefix?: (term: string) => boolean;
  /**
   * The edit distance within which a query term matches other terms: a fraction of the term's
   * length below 1 (rounded, at most 6), or a distance from 1 up; false for none (default).
   */
  fuzzy?: (term: string) => number | false;
  /**
   * Fuzzy matching only for a query term with neither an exact nor a prefix match in the
   * vocabulary (a typo), not for every term as MiniSearch does (default false: as MiniSearch).
   * Much faster, but scores move: the knowledge base keeps MiniSearch's rule (see docs/decisions.md).
   */
  fuzzyOnlyUnknown?: boolean;
  bm25?: Bm25Params;
}

/** One ranked document: its position in the indexed array and its score (higher is better). */
export interface Bm25Hit {
  doc: number;
  score: number;
}

/** The first index in sorted `terms` whose term is not below `key`. */
function lowerBound(terms: readonly string[], key: string, from = 0): number {
  let lo = from;
  let hi = terms.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((terms[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Pass 1 of the build, one field at a time in document order: the terms in order of first
 * appearance, and one staged posting per (term, document, field) with its frequency. As the
 * postings come in document and field order, their document and field are not stored, only
 * where each field's run starts (`postings` before the field). What is read per token sits
 * together in typed arrays (fewer cache misses than one array per figure), and nothing is
 * allocated per token or per posting.
 */
class Staging {
  /** The terms, in order of first appearance: a term's id is its position. */
  readonly terms: string[] = [];
  readonly termId = new Map<string, number>();
  /** Per term, F + 1 cells: its frequency in the current field, then in how many documents each field holds it. */
  counts: Uint32Array;
  /** The staged postings: (term, frequency) pairs. */
  pairs = new Uint32Array(256);
  postings = 0;
  readonly #fields: number;
  readonly #processTerm: (term: string) => string | null;
  readonly #tokens = new TokenTable();
  readonly #spans = new TokenSpans();
  /** Per distinct raw token, processed once: its term's id (-1: dropped) and the field it was last counted in. */
  #raws = new Int32Array(2 * 32);
  #rawCount = 0;
  #stamp = 0;
  /** The current field's distinct terms (an array emptied per field would free its storage and reallocate it). */
  #seen = new Uint32Array(16);

  constructor(fields: number, processTerm: (term: string) => string | null) {
    this.#fields = fields;
    this.#processTerm = processTerm;
    this.counts = new Uint32Array((fields + 1) * 32);
  }

  /** Stages field `f` of the next document; its length as MiniSearch counts it: distinct tokens before processing (stop words included). */
  addField(text: string, f: number): number {
    const C = this.#fields + 1;
    const spans = this.#spans;
    const stamp = ++this.#stamp;
    let counts = this.counts;
    let raws = this.#raws;
    let seen = 0;
    let length = 0;
    spans.reset(text);
    while (spans.next()) {
      const raw = this.#tokens.intern(text, spans.start, spans.end, spans.hash);
      if (raw === this.#rawCount) {
        // A token not met before.
        this.#rawCount++;
        if (2 * this.#rawCount > raws.length) raws = this.#raws = grown(raws, 2 * this.#rawCount);
        const term = this.#processTerm(this.#tokens.tokens[raw] as string);
        let id = term ? this.termId.get(term) : -1;
        if (id === undefined) {
          id = this.terms.length;
          this.termId.set(term as string, id);
          this.terms.push(term as string);
          if (C * (id + 1) > counts.length) counts = this.counts = grown(counts, C * (id + 1));
        }
        raws[2 * raw] = id;
      }
      if (raws[2 * raw + 1] !== stamp) {
        raws[2 * raw + 1] = stamp;
        length++;
      }
      const id = raws[2 * raw] as number;
      if (id < 0) continue;
      if (counts[C * id] === 0) {
        if (seen === this.#seen.length) this.#seen = grown(this.#seen, seen + 1);
        this.#seen[seen++] = id;
      }
      counts[C * id] = (counts[C * id] as number) + 1;
    }
    let P = this.postings;
    if (2 * (P + seen) > this.pairs.length) this.pairs = grown(this.pairs, 2 * (P + seen));
    const pairs = this.pairs;
    // Indexed loops: until the optimising compiler takes over, `for...of` allocates an iterator result per element.
    for (let i = 0; i < seen; i++) {
      const id = this.#seen[i] as number;
      pairs[2 * P] = id;
      pairs[2 * P + 1] = counts[C * id] as number;
      P++;
      counts[C * id] = 0;
      counts[C * id + 1 + f] = (counts[C * id + 1 + f] as number) + 1;
    }
    this.postings = P;
    return length;
  }
}

/**
 * Pass 2 of the build: a counting sort of the staged postings by (term rank, field), documents
 * staying in order, each with its BM25+ score before weights. Returns the offsets (postings of
 * term rank t in field f are [offsets[t·F + f], offsets[t·F + f + 1])), documents and scores.
 * `from[doc·F + f]` is where the staged postings of that document's field start.
 */
function sortPostings(
  staging: Staging,
  rank: Uint32Array,
  from: Uint32Array,
  fieldLength: Uint32Array,
  averageLength: Float64Array,
  { k, b, d }: Bm25Params,
): [Uint32Array, Uint32Array, Float64Array] {
  const F = averageLength.length;
  const C = F + 1;
  const T = rank.length;
  const N = fieldLength.length / F;
  const P = staging.postings;
  const { counts, pairs } = staging;
  const offsets = new Uint32Array(T * F + 1);
  // MiniSearch's calcBM25Score: the field's document frequency counts documents, not occurrences.
  const idf = new Float64Array(T * F);
  for (let id = 0; id < T; id++) {
    for (let f = 0; f < F; f++) {
      const matching = counts[C * id + 1 + f] as number;
      offsets[(rank[id] as number) * F + f + 1] = matching;
      idf[(rank[id] as number) * F + f] = Math.log(1 + (N - matching + 0.5) / (matching + 0.5));
    }
  }
  for (let i = 1; i <= T * F; i++) offsets[i] = (offsets[i] as number) + (offsets[i - 1] as number);
  const fill = offsets.slice(0, T * F);
  const docs = new Uint32Array(P);
  const scores = new Float64Array(P);
  for (let doc = 0; doc < N; doc++) {
    for (let f = 0; f < F; f++) {
      const length = fieldLength[doc * F + f] as number;
      const norm = k * (1 - b + (b * length) / (averageLength[f] as number));
      const end = from[doc * F + f + 1] as number;
      for (let p = from[doc * F + f] as number; p < end; p++) {
        const key = (rank[pairs[2 * p] as number] as number) * F + f;
        const at = fill[key] as number;
        fill[key] = at + 1;
        const freq = pairs[2 * p + 1] as number;
        docs[at] = doc;
        scores[at] = (idf[key] as number) * (d + (freq * (k + 1)) / (freq + norm));
      }
    }
  }
  return [offsets, docs, scores];
}

/**
 * The bigram index of sorted `terms` (with \u0001 and \u0002, `^` and `$`, around each, as
 * `#withinDistance` pads the query), by counting sort as in `sortPostings`: the list ids by
 * (bigram, term length, position), and list g's terms in order are [offsets[g], offsets[g + 1]) of the terms array.
 */
function bigramIndex(terms: readonly string[]): [BigramKeys, Uint32Array, Uint32Array] {
  const T = terms.length;
  let grams = 0;
  for (let id = 0; id < T; id++) grams += (terms[id] as string).length + 1;
  const bigramOf = new Uint32Array(grams);
  const lists = new BigramKeys();
  const counts: number[] = [];
  let at = 0;
  for (let id = 0; id < T; id++) {
    const term = terms[id] as string;
    const length = Math.min(term.length, LONG);
    let first = 1;
    for (let i = 0; i <= term.length; i++) {
      const second = i < term.length ? term.charCodeAt(i) : 2;
      const list = lists.add((first << 16) | second, bigramPlace(length, i));
      if (list === counts.length) counts.push(0);
      counts[list] = (counts[list] as number) + 1;
      bigramOf[at++] = list;
      first = second;
    }
  }
  const offsets = new Uint32Array(counts.length + 1);
  for (let g = 0; g < counts.length; g++) offsets[g + 1] = (offsets[g] as number) + (counts[g] as number);
  const next = offsets.slice(0, counts.length);
  const termsOf = new Uint32Array(grams);
  at = 0;
  for (let id = 0; id < T; id++) {
    const end = at + (terms[id] as string).length + 1;
    for (; at < end; at++) {
      const g = bigramOf[at] as number;
      termsOf[next[g] as number] = id;
      next[g] = (next[g] as number) + 1;
    }
  }
  return [lists, offsets, termsOf];
}

/** An immutable BM25+ index over `docs`; hits name documents by their position in `docs`. */
export class Bm25Index<Doc, Field extends string = string> {
  /** The vocabulary, sorted by UTF-16 code units: a term's id is its position. */
  readonly #terms: string[];
  readonly #termId: Map<string, number>;
  /** Postings of term t in field f are [#offsets[t*F+f], #offsets[t*F+f+1]) of #docs and #scores. */
  readonly #offsets: Uint32Array;
  readonly #docs: Uint32Array;
  /** Each posting's BM25+ score before weights (term, field boost). */
  readonly #scores: Float64Array;
  readonly #boosts: Float64Array;
  readonly #fieldCount: number;
  readonly #prefix: (term: string) => boolean;
  readonly #fuzzy: (term: string) => number | false;
  readonly #processTerm: (term: string) => string | null;
  readonly #fuzzyOnlyUnknown: boolean;
  // Per-query scratch, sized once: the score sum, how many distinct query terms matched, and which query term last did.
  readonly #sum: Float64Array;
  readonly #matched: Uint32Array;
  readonly #lastTerm: Uint32Array;
  readonly #touched: Uint32Array;
  // The vocabulary's bigrams (with ^ and $ around each term): the terms holding bigram g, once per occurrence, in order.
  readonly #bigramLists: BigramKeys;
  readonly #bigramOffsets: Uint32Array;
  readonly #bigramTerms: Uint32Array;
  // Per-query scratch of fuzzy matching: bigrams shared with the query term, and the terms sharing any.
  readonly #sharedBigrams: Uint16Array;
  readonly #candidates: Uint32Array;

  /** Indexes `docs` (the build is one pass over the text, a counting sort of the postings, and the bigram index). */
  constructor(docs: readonly Doc[], options: Bm25IndexOptions<Doc, Field>) {
    const fields = Object.keys(options.boost) as Field[];
    const F = fields.length;
    const N = docs.length;
    this.#fieldCount = F;
    this.#boosts = Float64Array.from(fields, (f) => options.boost[f] || 1);
    this.#processTerm = options.processTerm;
    this.#prefix = options.prefix ?? (() => false);
    this.#fuzzy = options.fuzzy ?? (() => false);
    this.#fuzzyOnlyUnknown = options.fuzzyOnlyUnknown ?? false;

    // Pass 1: the terms and the staged postings, and the fields' lengths as BM25+ needs them.
    const staging = new Staging(F, this.#processTerm);
    const stagedFrom = new Uint32Array(N * F + 1);
    const fieldLength = new Uint32Array(N * F);
    const averageLength = new Float64Array(F);
    for (let doc = 0; doc < N; doc++) {
      for (let f = 0; f < F; f++) {
        stagedFrom[doc * F + f] = staging.postings;
        const length = staging.addField(options.extract(docs[doc] as Doc, fields[f] as Field), f);
        fieldLength[doc * F + f] = length;
        // MiniSearch's running mean, in its order of operations.
        averageLength[f] = ((averageLength[f] as number) * doc + length) / (doc + 1);
      }
    }
    stagedFrom[N * F] = staging.postings;
    const { terms: termText, termId: firstSeen } = staging;

    // The sorted vocabulary and each first-seen id's rank in it.
    const T = termText.length;
    // The default sort compares UTF-16 code units, as `<` does in `lowerBound`.
    this.#terms = termText.slice().sort();
    const rank = new Uint32Array(T);
    this.#termId = firstSeen;
    for (let r = 0; r < T; r++) {
      const term = this.#terms[r] as string;
      rank[firstSeen.get(term) as number] = r;
      firstSeen.set(term, r);
    }

    [this.#offsets, this.#docs, this.#scores] = sortPostings(
      staging,
      rank,
      stagedFrom,
      fieldLength,
      averageLength,
      options.bm25 ?? BM25_DEFAULTS,
    );
    this.#sum = new Float64Array(N);
    this.#matched = new Uint32Array(N);
    this.#lastTerm = new Uint32Array(N);
    this.#touched = new Uint32Array(N);

    [this.#bigramLists, this.#bigramOffsets, this.#bigramTerms] = bigramIndex(this.#terms);
    this.#sharedBigrams = new Uint16Array(T);
    this.#candidates = new Uint32Array(T);
  }

  /** How many distinct terms the index holds. */
  get vocabularySize(): number {
    return this.#terms.length;
  }

  /** The documents matching any term of `query`, best first, at most `limit`. */
  search(query: string, limit: number): Bm25Hit[] {
    // Each distinct term is scored once and counted as often as it occurs, as MiniSearch sums repeated terms.
    const occurrences = new Map<string, number>();
    for (const token of tokenize(query)) {
      const term = this.#processTerm(token);
      if (term) occurrences.set(term, (occurrences.get(term) ?? 0) + 1);
    }
    if (occurrences.size === 0 || limit <= 0) return [];
    let touched = 0;
    let queryTerm = 0;
    const add = (term: number, weight: number, times: number) => {
      const F = this.#fieldCount;
      for (let f = 0; f < F; f++) {
        const start = this.#offsets[term * F + f] as number;
        const end = this.#offsets[term * F + f + 1] as number;
        if (start === end) continue;
        const fieldWeight = weight * (this.#boosts[f] as number);
        for (let p = start; p < end; p++) {
          const doc = this.#docs[p] as number;
          this.#sum[doc] = (this.#sum[doc] as number) + times * (fieldWeight * (this.#scores[p] as number));
          if (this.#lastTerm[doc] !== queryTerm) {
            if (this.#matched[doc] === 0) this.#touched[touched++] = doc;
            this.#matched[doc] = (this.#matched[doc] as number) + 1;
            this.#lastTerm[doc] = queryTerm;
          }
        }
      }
    };
    for (const [term, times] of occurrences) {
      queryTerm++;
      const exact = this.#termId.get(term);
      if (exact !== undefined) add(exact, 1, times);
      const prefix = this.#prefix(term);
      let known = exact !== undefined;
      if (prefix) {
        // The weight decreases with the extra letters, more slowly than a fuzzy match's.
        for (let id = lowerBound(this.#terms, term); id < this.#terms.length; id++) {
          const found = this.#terms[id] as string;
          if (!found.startsWith(term)) break;
          if (found.length === term.length) continue;
          known = true;
          add(id, (EXPANSION_WEIGHTS.prefix * found.length) / (found.length + 0.3 * (found.length - term.length)), times);
        }
      }
      const fuzzy = known && this.#fuzzyOnlyUnknown ? false : this.#fuzzy(term);
      const distance = fuzzy === false ? 0 : fuzzy < 1 ? Math.min(MAX_FUZZY, Math.round(term.length * fuzzy)) : fuzzy;
      if (distance > 0) {
        for (const [id, edits] of this.#withinDistance(term, distance)) {
          const found = this.#terms[id] as string;
          // The exact term and the prefix matches are scored above, once.
          if (edits === 0 || (prefix && found.startsWith(term))) continue;
          add(id, (EXPANSION_WEIGHTS.fuzzy * found.length) / (found.length + edits), times);
        }
      }
    }
    return this.#top(touched, limit);
  }

  /** The best `limit` of the first `touched` documents (score × matched query terms), and the scratch reset. */
  #top(touched: number, limit: number): Bm25Hit[] {
    const best: Bm25Hit[] = [];
    for (let i = 0; i < touched; i++) {
      const doc = this.#touched[i] as number;
      const score = (this.#sum[doc] as number) * (this.#matched[doc] as number);
      this.#sum[doc] = 0;
      this.#matched[doc] = 0;
      this.#lastTerm[doc] = 0;
      if (best.length === limit) {
        const last = best[limit - 1] as Bm25Hit;
        if (score < last.score || (score === last.score && doc > last.doc)) continue;
        best.pop();
      }
      let at = best.length;
      while (at > 0) {
        const before = best[at - 1] as Bm25Hit;
        if (before.score > score || (before.score === score && before.doc < doc)) break;
        at--;
      }
      best.splice(at, 0, { doc, score });
    }
    return best;
  }

  /**
   * Every term within Levenshtein distance `max` of `query`, with its distance. Candidates come
   * from the vocabulary's bigram index: with `^` and `$` around both words, each edit removes at
   * most two of the query's |query| + 1 bigrams, so a term within `max` edits shares at least
   * |query| + 1 - 2·max of them (the q-gram lemma), each at most `max` positions from where the
   * query has it, and its length is within `max` of the query's (Gravano et al., "Approximate
   * string joins in a database (almost) for free", VLDB 2001). Only the lists of fitting lengths
   * and positions are counted; each candidate with enough bigrams is then checked by an edit
   * distance computed within the band of `max` diagonals. When the bound is not positive (a
   * short query, many edits), every term is checked.
   */
  #withinDistance(query: string, max: number): [number, number][] {
    const found: [number, number][] = [];
    const rows = new Uint16Array(2 * (query.length + 1));
    const needed = query.length + 1 - 2 * max;
    if (needed <= 0) {
      // Too short for the bigram filter: every term of a fitting length is a candidate.
      for (let id = 0; id < this.#terms.length; id++) {
        const edits = boundedLevenshtein(query, this.#terms[id] as string, max, rows);
        if (edits <= max) found.push([id, edits]);
      }
      return found;
    }
    // A bigram of the query at position i can only stand for one of the term's within `max` positions of i.
    const padded = `\u0001${query}\u0002`;
    const shortest = Math.min(LONG, Math.max(1, query.length - max));
    const longest = Math.min(LONG, query.length + max);
    const shared = this.#sharedBigrams;
    let candidates = 0;
    for (let i = 0; i + 1 < padded.length; i++) {
      const first = padded.charCodeAt(i);
      const second = padded.charCodeAt(i + 1);
      for (let length = shortest; length <= longest; length++) {
        for (let position = Math.max(0, i - max); position <= i + max; position++) {
          const list = this.#bigramLists.get((first << 16) | second, bigramPlace(length, position));
          if (list < 0) continue;
          const end = this.#bigramOffsets[list + 1] as number;
          for (let p = this.#bigramOffsets[list] as number; p < end; p++) {
            const term = this.#bigramTerms[p] as number;
            if (shared[term] === 0) this.#candidates[candidates++] = term;
            shared[term] = (shared[term] as number) + 1;
          }
        }
      }
    }
    for (let c = 0; c < candidates; c++) {
      const id = this.#candidates[c] as number;
      const enough = (shared[id] as number) >= needed;
      shared[id] = 0;
      if (!enough) continue;
      const term = this.#terms[id] as string;
      if (Math.abs(term.length - query.length) > max) continue;
      const edits = boundedLevenshtein(query, term, max, rows);
      if (edits <= max) found.push([id, edits]);
    }
    return found;
  }
}

/**
 * The Levenshtein distance of `a` and `b` when it is at most `max`, else `max + 1`: only the
 * cells within `max` of the diagonal are computed, and the walk stops when a row exceeds `max`.
 * `rows` is scratch of at least 2 × (|a| + 1) cells.
 */
export function boundedLevenshtein(a: string, b: string, max: number, rows: Uint16Array = new Uint16Array(2 * (a.length + 1))): number {
  const n = a.length + 1;
  const over = max + 1;
  if (Math.abs(a.length - b.length) > max) return over;
  let above = 0;
  let row = n;
  for (let j = 0; j < n; j++) rows[j] = j <= max ? j : over;
  for (let i = 1; i <= b.length; i++) {
    const code = b.charCodeAt(i - 1);
    const from = Math.max(1, i - max);
    const to = Math.min(n - 1, i + max);
    rows[row] = i <= max ? i : over;
    if (from > 1) rows[row + from - 1] = over;
    let least = rows[row] as number;
    for (let j = from; j <= to; j++) {
      const substitute = (rows[above + j - 1] as number) + (a.charCodeAt(j - 1) === code ? 0 : 1);
      const remove = (rows[above + j] as number) + 1;
      const insert = (rows[row + j - 1] as number) + 1;
      const value = Math.min(substitute, remove, insert, over);
      rows[row + j] = value;
      if (value < least) least = value;
    }
    if (to + 1 < n) rows[row + to + 1] = over;
    if (least > max) return over;
    [above, row] = [row, above];
  }
  return Math.min(rows[above + n - 1] as number, over);
}
