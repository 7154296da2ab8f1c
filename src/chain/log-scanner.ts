/**
 * ERC-20 `Transfer` logs over a block window, read the way public RPC providers allow:
 * `eth_getLogs` in chunks of 2,000 blocks aligned to multiples of 2,000, each an HTTP request
 * of its own (src/chain/client.ts never batches them), several in flight at an adaptive
 * concurrency (8 at first, halved when the provider rate-limits or fails, one more after each run
 * of successes, up to 16; the scanner lives as long as the service, so it learns its provider); a chunk halved (or cut to the limit the provider names) when the provider refuses
 * its range or its answer would be too large, ranges narrowed where logs are dense so no
 * answer grows past a few megabytes, and chunks at or below the finalized block cached, since
 * their logs can no longer change.
 */

import { LRUCache } from "lru-cache";
import pLimit, { type LimitFunction } from "p-limit";
import {
  type Address,
  encodeEventTopics,
  getAddress,
  type Hash,
  type Hex,
  HttpRequestError,
  numberToHex,
  type PublicClient,
  parseAbiItem,
  ResponseBodyTooLargeError,
  RpcRequestError,
  TimeoutError,
  toEventSelector,
} from "viem";
import { causeChain, readChain, toChainError } from "./rpc-error.ts";

/**
 * What to scan: one token (or every token when absent), an inclusive block window, optionally
 * only transfers from and/or to an address or any of a list of addresses (a topic OR-list,
 * filtered by the node on the indexed topics).
 */
export interface TransferQuery {
  token?: Address | undefined;
  fromBlock: number;
  toBlock: number;
  from?: Address | Address[] | undefined;
  to?: Address | Address[] | undefined;
}

/** How a scan went: for answers that state their coverage, for tests and for the benchmark. */
export interface ScanStats {
  /** Aligned chunks the window touched. */
  chunks: number;
  /** Chunks answered from the finalized-range cache. */
  cachedChunks: number;
  /** `eth_getLogs` requests sent, refused ones included. */
  requests: number;
  /** Requests the provider refused for their range, each followed by smaller ones. */
  refusals: number;
  /** The largest range the provider accepted so far (starts at the chunk size). */
  maxRange: number;
  /** Requests the provider rate-limited or failed, each retried after a pause at a lower concurrency. */
  throttled: number;
  /** Requests in flight allowed at the end of the scan (the adaptive limit). */
  concurrency: number;
}

/** Options of a {@link TransferScanner}. */
export interface ScannerOptions {
  /** Blocks per `eth_getLogs` request; 2,000 is what mainnet.base.org accepts. */
  chunkSize?: number;
  /** Requests in flight at first, halved when the provider pushes back and regained as requests succeed (up to 16; given: never above it). */
  concurrency?: number;
  /** Attempts of a request the provider rate-limits or fails before the scan fails. */
  attempts?: number;
  /** The first pause before retrying a throttled request (doubled each time, unless the provider names one). */
  retryBaseMs?: number;
}

/** Per-scan overrides (the benchmark compares concurrency 1 with the default). */
export interface ScanOptions {
  /** At most this many of this scan's requests in flight (within the scanner's shared limit). */
  concurrency?: number;
  /** Read and fill the finalized-range cache (default true). */
  useCache?: boolean;
  /**
   * Return only the transfers this accepts: applied to each chunk as it arrives (after the cache,
   * which keeps whole chunks), so a scan that wants a few of many never holds them all.
   * An allowance is still told every transfer of the window read.
   */
  keep?: (log: TransferLog) => boolean;
  /** What the scan may spend, asked before every request; when it runs out the scan stops early (see `coveredFrom`). */
  allowance?: ScanAllowance;
}

/**
 * A budget of work one answer may spend on `eth_getLogs`. The scanner asks it before every
 * request (so a scan stops within one request of running out, whatever the window) and tells it
 * the transfers of the window each request brought.
 */
export interface ScanAllowance {
  /**
   * Resolves true when one more request may leave now (it may wait for others to come back), false
   * when the budget is spent. `toBlock` is the last block the request reads, so an allowance may
   * let the newest requests go first.
   */
  acquire(toBlock?: number): Promise<boolean>;
  /** After each request `acquire` let through: the window's transfers it brought (0 when it failed). */
  release(transfers: number): void;
  /** Transfers of the window answered from the cache, without a request. */
  add(transfers: number): void;
  /** True once the budget is spent; asked again right before a request leaves and before a cached chunk is used. */
  exhausted(): boolean;
  /** Spend what is left: a read of the scan failed, so the scan fails and the requests still to go are of no use. */
  stop(): void;
}

/** What a scan found: the logs, how it went, and from which block on it read every chunk. */
export interface ScanOutcome<T> {
  /** In chain order; when the scan was stopped, only those of `coveredFrom..toBlock`. */
  logs: T[];
  stats: ScanStats;
  /**
   * The first block of the newest run of chunks read in full: the window's first block when
   * nothing stopped the scan, `toBlock + 1` when the allowance left not even the newest chunk.
   */
  coveredFrom: number;
}

/** The ERC-20 Transfer event (ERC-721's has an indexed third topic and does not decode as this). */
export const TRANSFER_EVENT = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

/** topic0 of the Transfer event. */
export const TRANSFER_TOPIC = toEventSelector(TRANSFER_EVENT);

/** The default chunk: mainnet.base.org's documented range limit. */
export const DEFAULT_CHUNK_SIZE = 2_000;
/** Requests in flight at first: enough to hide latency; rate limits bring it down. */
export const DEFAULT_SCAN_CONCURRENCY = 8;
/** How far a provider that keeps answering lets the limit grow, one step per run of successes. */
export const MAX_SCAN_CONCURRENCY = 16;
/** Logs kept in the finalized-range cache before the least recently used chunks are dropped. */
const CACHE_MAX_LOGS = 200_000;
/** When the node cannot name its finalized block: blocks this far below the head count as final. */
const FALLBACK_FINALITY_DEPTH = 900;
/**
 * Logs per answer the scanner aims below: about 650 bytes of JSON each, so about 2 MB, far from
 * viem's 10 MB limit (and under the 4 MB the transport accepts for log queries).
 */
export const TARGET_LOGS_PER_RESPONSE = 3_000;

// Providers word range refusals differently and give no stable code (-32602, -32005, -32600 and
// -32000 are all seen), so text is the only signal there is: these are the wordings of Base's
// public RPC, Alchemy, Infura, QuickNode, dRPC, 1RPC, Ankr and geth-style nodes.
const RANGE_REFUSAL =
  /block range|range (is )?too (large|wide|big)|too many blocks|max(imum)? (block )?range|range limit|exceeds? (the )?(max(imum)?|limit)|more than \d[\d,]* (results|logs)|query returned more than|response size|limited to (a )?\d|range should work|query timeout exceeded|too many (results|logs)|ranges? (over|above|greater than) \d/i;

/** The answer was larger than the transport reads (src/chain/client.ts caps log answers). */
const isTooLarge = (error: unknown) => causeChain(error).some((e) => e instanceof ResponseBodyTooLargeError);

/** What one error of a failure's chain says: its message, and the provider's own text where viem keeps it (`details`). */
function textsOf(e: Error): string[] {
  const details = (e as { details?: unknown }).details;
  return typeof details === "string" ? [e.message, details] : [e.message];
}

/** True when a failed `eth_getLogs` is the provider refusing the size of the range (not a real failure). */
export function isRangeRefusal(error: unknown): boolean {
  for (const e of causeChain(error)) {
    if (e instanceof HttpRequestError && e.status === 429) return false; // a rate limit, whatever the text says
    if (e instanceof ResponseBodyTooLargeError) return true; // an answer too large to read: a narrower range fits
    if (textsOf(e).some((text) => RANGE_REFUSAL.test(text))) return true;
  }
  return false;
}

/**
 * The largest range a refusal allows, when its text says: Alchemy and Infura suggest a
 * `[0x.., 0x..]` range; others name a number of blocks ("max block range of 500",
 * "up to a 2K block range", "limited to a 10,000 range").
 */
export function rangeLimitFromRefusal(error: unknown): number | undefined {
  const text = causeChain(error).flatMap(textsOf).join("\n");
  const suggested = /\[(0x[0-9a-f]+),\s*(0x[0-9a-f]+)\]/i.exec(text);
  if (suggested) {
    const size = Number(BigInt(suggested[2] as string) - BigInt(suggested[1] as string)) + 1;
    if (size > 0) return size;
  }
  const number = (digits: string, k: string | undefined) => Number(digits.replaceAll(",", "")) * (k ? 1_000 : 1);
  // Within one line: viem's message ends with its version number, right before the provider's text.
  const before = /(\d[\d,]*) ?(k)? ?blocks? range/i.exec(text);
  if (before) return number(before[1] as string, before[2]);
  const after = /(?:range|limit(?:ed)?|max(?:imum)?)[^0-9\n]{0,30}?(\d[\d,]*) ?(k\b)?/i.exec(text);
  if (after) return number(after[1] as string, after[2]);
  return undefined;
}

const RATE_LIMITED = /rate.?limit|too many requests|request limit|exceeded .*(quota|capacity|rate|compute units)|throughput|credits/i;

/**
 * A failure worth retrying more slowly: a rate limit (HTTP 429, JSON-RPC -32005 or the usual
 * wordings), a 5xx, no answer, or a timeout; `retryAfterMs` when the provider named a pause.
 */
export function providerPushback(error: unknown): { retryAfterMs?: number } | undefined {
  if (isRangeRefusal(error)) return undefined;
  let pushback: { retryAfterMs?: number } | undefined;
  for (const e of causeChain(error)) {
    if (e instanceof HttpRequestError) {
      if (e.status === 429 || e.status === undefined || e.status >= 500) {
        pushback ??= {};
        const header = e.headers?.get("retry-after");
        const after = header ? Number(header) : Number.NaN;
        if (Number.isFinite(after) && after >= 0) pushback.retryAfterMs = Math.min(after * 1000, 30_000);
      }
    } else if (e instanceof TimeoutError) pushback ??= {};
    else if (e instanceof RpcRequestError && (e.code === -32005 || RATE_LIMITED.test(e.message))) pushback ??= {};
  }
  return pushback;
}

/**
 * The lists one after another: a single list as it is, several copied once into a list of the
 * right size (`flat()` costs about four times the memory, on a scan's tens of thousands of logs).
 */
function joined<T>(parts: T[][]): T[] {
  return parts.length === 1 ? (parts[0] as T[]) : ([] as T[]).concat(...parts);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Thrown inside a scan when its allowance refuses a request: the chunk is left unread, not failed. */
const STOPPED = new Error("the scan's allowance is spent");

/**
 * The transfers of `logs` (a whole cached chunk) within `[from, to]`, with `keep` applied in the
 * same pass, and how many were within the window.
 */
function windowOf(logs: TransferLog[], from: number, to: number, keep: ((log: TransferLog) => boolean) | undefined) {
  const kept: TransferLog[] = [];
  let read = 0;
  for (const log of logs) {
    if (log.blockNumber < from || log.blockNumber > to) continue;
    read++;
    if (keep === undefined || keep(log)) kept.push(log);
  }
  return { kept, read };
}

/** How many of a piece's logs fall in the scan's window (all of them unless the piece is part of a whole cached chunk). */
function countWithin<T>(logs: T[], from: number, to: number, window: { from: number; to: number }, blockOf: (log: T) => number): number {
  if (from >= window.from && to <= window.to) return logs.length;
  let n = 0;
  for (const log of logs) {
    const block = blockOf(log);
    if (block >= window.from && block <= window.to) n++;
  }
  return n;
}

/** Reads Transfer logs for the analytics; one instance per RPC, shared by all requests. */
export class TransferScanner {
  readonly chunkSize: number;
  readonly #client: PublicClient;
  /** Requests in flight across every scan: p-limit, its concurrency moved by the provider's answers (below). */
  readonly #limit: LimitFunction;
  readonly #maxConcurrency: number;
  #successes = 0;
  /** Bumped at each decrease: failures of requests started before it do not decrease again. */
  #epoch = 0;
  readonly #attempts: number;
  readonly #retryBaseMs: number;
  /** Final chunks by query and range, the least recently used dropped first (an empty chunk counts as one log). */
  readonly #cache: LRUCache<string, TransferLog[]>;
  /** Learned from refusals: the largest range this provider accepts. */
  #maxRange: number;
  /** Narrower ranges for queries whose logs are dense, by query: answers stay near the target size. */
  readonly #denseRange = new LRUCache<string, number>({ max: 1_000 });

  constructor(client: PublicClient, options: ScannerOptions = {}) {
    this.#client = client;
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    const concurrency = options.concurrency ?? DEFAULT_SCAN_CONCURRENCY;
    const max = options.concurrency === undefined ? MAX_SCAN_CONCURRENCY : concurrency;
    this.#limit = pLimit(Math.max(1, concurrency));
    this.#maxConcurrency = Math.max(this.#limit.concurrency, max);
    this.#attempts = options.attempts ?? 4;
    this.#retryBaseMs = options.retryBaseMs ?? 200;
    this.#cache = new LRUCache({ maxSize: CACHE_MAX_LOGS, sizeCalculation: (logs) => logs.length || 1 });
    this.#maxRange = this.chunkSize;
  }

  /** The chain head and the finalized block, read together (one JSON-RPC batch). */
  async head(): Promise<{ latest: number; finalized: number }> {
    const [latest, finalized] = await Promise.all([
      readChain("reading the latest block number", () => this.#client.getBlockNumber({ cacheTime: 0 })),
      this.#client.getBlock({ blockTag: "finalized" }).then(
        (block) => Number(block.number),
        () => undefined, // Not every node names a finalized block: fall back to a fixed depth below.
      ),
    ]);
    const head = Number(latest);
    return { latest: head, finalized: Math.min(finalized ?? head - FALLBACK_FINALITY_DEPTH, head) };
  }

  /**
   * Every Transfer of `query.token` in `[fromBlock, toBlock]` (optionally from/to one address),
   * ordered by block and log index. `finalized` is the highest block whose chunk may be cached.
   * With an allowance that runs out, the chunks it left unread are missing: `coveredFrom` says
   * from which block on the answer is whole.
   */
  async transfers(query: TransferQuery, finalized: number, options: ScanOptions = {}): Promise<ScanOutcome<TransferLog>> {
    const token = query.token ? getAddress(query.token) : undefined;
    // OR-lists sorted (the node reads them as sets), so the filter itself is the query's key.
    const topics = encodeEventTopics({ abi: [TRANSFER_EVENT], args: { from: query.from, to: query.to } }).map((t) =>
      Array.isArray(t) ? t.toSorted() : t,
    );
    const { keep, allowance } = options;
    const scan = this.#scan<TransferLog>(
      options.concurrency,
      {
        filter: { ...(token ? { address: token } : {}), topics },
        what: "Transfer logs",
        decode: (raw) => transfersOf(raw, token),
      },
      allowance && { allowance, from: query.fromBlock, to: query.toBlock, blockOf: (log) => log.blockNumber },
    );
    const { stats } = scan;
    if (query.toBlock < query.fromBlock) return { logs: [], stats, coveredFrom: query.fromBlock };
    const useCache = options.useCache ?? true;
    const chunks = this.#chunks(query.fromBlock, query.toBlock);
    const tasks: (() => Promise<TransferLog[]>)[] = [];
    for (const [start, end] of chunks) {
      stats.chunks++;
      const from = Math.max(start, query.fromBlock);
      const to = Math.min(end, query.toBlock);
      if (useCache && end <= finalized) {
        // A final chunk is fetched whole so later windows that overlap it differently reuse it.
        const key = `${scan.read.key}:${start}-${end}`;
        const hit = this.#cache.get(key);
        if (hit) stats.cachedChunks++;
        tasks.push(async () => {
          if (hit && allowance?.exhausted()) throw STOPPED;
          const logs = hit ?? (await this.#fetchRange(start, end, scan));
          if (!hit) this.#cache.set(key, logs);
          const { kept, read } = windowOf(logs, from, to, keep);
          // A fetched chunk's pieces were counted as they came back.
          if (hit) allowance?.add(read);
          return kept;
        });
      } else {
        tasks.push(async () => {
          const logs = await this.#fetchRange(from, to, scan);
          return keep ? logs.filter(keep) : logs;
        });
      }
    }
    // Every chunk at once: the limits, not this loop, decide how many requests are in flight.
    // With an allowance the newest chunk starts first, so the requests that go before the others
    // (the first slots, equal places in the allowance's queue) are the ones the answer keeps when
    // it runs out; the results are put back in chain order.
    const started = await Promise.all(
      (allowance ? tasks.toReversed() : tasks).map((task) =>
        task().catch((error: unknown) => {
          if (error === STOPPED) return undefined;
          // This scan fails: the requests of its other chunks, and of every other scan
          // spending the same allowance, would be sent for an answer that is already lost.
          // A request that fails has stopped it already (before handing its slot on); this
          // covers any other failure of a chunk.
          allowance?.stop();
          throw error;
        }),
      ),
    );
    const parts = allowance ? started.reverse() : started;
    stats.maxRange = this.#maxRange;
    stats.concurrency = this.#limit.concurrency;
    // The newest chunks read in full, back to the first one the allowance left unread.
    let first = parts.length;
    while (first > 0 && parts[first - 1] !== undefined) first--;
    const coveredFrom = first === 0 ? query.fromBlock : first === parts.length ? query.toBlock + 1 : (chunks[first] as [number, number])[0];
    return { logs: joined((first === 0 ? parts : parts.slice(first)) as TransferLog[][]), stats, coveredFrom };
  }

  /**
   * Every log of `addresses` whose first topic is one of `events` in `[fromBlock, toBlock]`, in
   * chain order, read in chunks like the transfers (never cached); removed logs dropped.
   */
  async logs(query: { addresses: readonly Address[]; events: readonly Hex[]; fromBlock: number; toBlock: number }): Promise<RawLog[]> {
    if (query.addresses.length === 0) return [];
    const scan = this.#scan<RawLog>(undefined, {
      filter: { address: [...query.addresses], topics: [[...query.events]] },
      what: "logs",
      decode: (raw) => raw.filter((l) => !l.removed),
    });
    // Chunks and their pieces are joined in order, and each answer is in chain order: so is the whole.
    const parts = await Promise.all(
      this.#chunks(query.fromBlock, query.toBlock).map(([start, end]) =>
        this.#fetchRange(Math.max(start, query.fromBlock), Math.min(end, query.toBlock), scan),
      ),
    );
    return joined(parts);
  }

  /** A scan's statistics, its own cap on requests in flight, what it reads (keyed by its filter), and what it may spend. */
  #scan<T>(concurrency: number | undefined, read: Omit<LogRead<T>, "key">, budget?: Scan<T>["budget"]): Scan<T> {
    return {
      stats: {
        chunks: 0,
        cachedChunks: 0,
        requests: 0,
        refusals: 0,
        maxRange: this.#maxRange,
        throttled: 0,
        concurrency: this.#limit.concurrency,
      },
      limit: pLimit(concurrency || Number.POSITIVE_INFINITY),
      read: { ...read, key: JSON.stringify(read.filter) },
      budget,
    };
  }

  /** The aligned chunks `[start, end]` that `[fromBlock, toBlock]` touches. */
  #chunks(fromBlock: number, toBlock: number): [number, number][] {
    const chunks: [number, number][] = [];
    const size = this.chunkSize;
    for (let start = Math.floor(fromBlock / size) * size; start <= toBlock; start += size) chunks.push([start, start + size - 1]);
    return chunks;
  }

  // One range, split into pieces no larger than the provider is known to accept (and narrower
  // where this query's logs are dense), read in parallel; a refused piece is split again (to the
  // limit the refusal names, else in halves) until single blocks.
  async #fetchRange<T>(from: number, to: number, scan: Scan<T>): Promise<T[]> {
    const pieces: [number, number][] = [];
    const range = this.#rangeFor(scan.read.key);
    for (let start = from; start <= to; start += range) pieces.push([start, Math.min(to, start + range - 1)]);
    const reads = pieces.map(([start, end]) => this.#fetchPiece(start, end, scan));
    if (!scan.budget) return joined(await Promise.all(reads));
    // A piece that fails spends the allowance, so its siblings waiting for leave are refused and
    // may give up first: the failure, not their refusal, is what this range reports, or the scan
    // would call the range unread and answer without it.
    const settled = await Promise.allSettled(reads);
    const failed = settled.find((r) => r.status === "rejected" && r.reason !== STOPPED) ?? settled.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return joined(settled.map((r) => (r as PromiseFulfilledResult<T[]>).value));
  }

  #rangeFor(key: string): number {
    return Math.min(this.#maxRange, this.#denseRange.get(key) ?? Number.POSITIVE_INFINITY);
  }

  async #fetchPiece<T>(from: number, to: number, scan: Scan<T>): Promise<T[]> {
    const { key } = scan.read;
    const size = to - from + 1;
    const budget = scan.budget;
    for (let attempt = 1; ; attempt++) {
      // Every attempt is a request the allowance pays for, asked before taking any slot: a request
      // waiting on the budget holds none that other scans need.
      if (budget && !(await budget.allowance.acquire(to))) throw STOPPED;
      let brought = 0;
      let sent: { logs: T[] } | { error: unknown; pushback: { retryAfterMs?: number } | undefined } | "stopped" | undefined;
      try {
        // A slot of this scan's own cap, then one of the shared limit. What an answer teaches is learned
        // before the slot is freed, so the requests waiting for it see the narrower range or the lower limit.
        sent = await scan.limit(() =>
          this.#limit(async () => {
            // The budget ran out while this request waited for a slot.
            if (budget?.allowance.exhausted()) return "stopped" as const;
            const epoch = this.#epoch;
            // Learned while this piece waited for a slot: it is now too wide to send.
            if (size > this.#rangeFor(key)) return undefined;
            try {
              const answer = await this.#request(from, to, scan);
              this.#succeeded();
              this.#learnDensity(key, size, answer.count);
              if (budget) brought = countWithin(answer.logs, from, to, budget, budget.blockOf);
              return { logs: answer.logs };
            } catch (error) {
              const pushback = providerPushback(error);
              if (pushback) {
                scan.stats.throttled++;
                this.#pushedBack(epoch);
              } else if (isRangeRefusal(error) && size > 1) {
                scan.stats.refusals++;
                // Too many logs for this query is its density, not a provider limit: only its ranges narrow.
                if (isTooLarge(error)) this.#narrow(key, Math.ceil(size / 2));
                else {
                  const named = rangeLimitFromRefusal(error);
                  this.#maxRange = Math.min(this.#maxRange, named !== undefined && named < size ? Math.max(1, named) : Math.ceil(size / 2));
                }
              }
              if (!(pushback && attempt < this.#attempts) && !(isRangeRefusal(error) && size > 1)) {
                // Neither retried nor split: the scan fails. The allowance is spent here, before
                // this request's slot and leave are handed on, or the next request waiting would
                // be sent before the failure reached transfers().
                budget?.allowance.stop();
              }
              return { error, pushback };
            }
          }),
        );
      } finally {
        budget?.allowance.release(brought);
      }
      if (sent === "stopped") throw STOPPED;
      if (!sent) return this.#fetchRange(from, to, scan);
      if ("logs" in sent) return sent.logs;
      if (sent.pushback && attempt < this.#attempts) {
        await sleep(sent.pushback.retryAfterMs ?? this.#retryBaseMs * 2 ** (attempt - 1));
        continue;
      }
      if (!isRangeRefusal(sent.error) || size === 1) throw toChainError(sent.error, `reading ${scan.read.what} of blocks ${from}-${to}`);
      return this.#fetchRange(from, to, scan);
    }
  }

  /** Additive increase: one more request in flight after a limit's worth of successes. */
  #succeeded(): void {
    if (this.#limit.concurrency >= this.#maxConcurrency || ++this.#successes < this.#limit.concurrency) return;
    this.#limit.concurrency++;
    this.#successes = 0;
  }

  /** Multiplicative decrease, once per wave of failures. */
  #pushedBack(epoch: number): void {
    if (epoch !== this.#epoch) return;
    this.#epoch++;
    this.#limit.concurrency = Math.max(1, Math.floor(this.#limit.concurrency / 2));
    this.#successes = 0;
  }

  /** After a dense answer, later pieces of the same query span fewer blocks. */
  #learnDensity(key: string, blocks: number, logs: number): void {
    if (logs <= TARGET_LOGS_PER_RESPONSE) return;
    this.#narrow(key, Math.max(1, Math.floor((blocks * TARGET_LOGS_PER_RESPONSE) / logs)));
  }

  #narrow(key: string, range: number): void {
    this.#denseRange.set(key, Math.min(range, this.#denseRange.get(key) ?? range));
  }

  async #request<T>(from: number, to: number, scan: Scan<T>): Promise<{ logs: T[]; count: number }> {
    scan.stats.requests++;
    // Raw eth_getLogs through the client's transport (src/chain/client.ts: fallback over the RPC
    // URLs, timeouts, never batched), decoded here: viem's log formatting and ABI decoding of
    // every log cost more than the request. Retries are the scanner's (above), not the transport's.
    const filter = { ...scan.read.filter, fromBlock: numberToHex(from), toBlock: numberToHex(to) };
    const raw = (await this.#client.request({ method: "eth_getLogs", params: [filter as never] }, { retryCount: 0 })) as RawLog[];
    if (!Array.isArray(raw)) throw new HttpRequestError({ body: filter, details: "the answer held no list of logs", url: "" });
    return { logs: scan.read.decode(raw), count: raw.length };
  }
}

/** One decoded ERC-20 transfer. */
export interface TransferLog {
  token: Address;
  blockNumber: number;
  logIndex: number;
  txHash: Hash;
  from: Address;
  to: Address;
  value: bigint;
}

/** A log as eth_getLogs returns it (hex quantities), or as viem formats it (a receipt's logs). */
export interface RawLog {
  address: Address;
  blockNumber: Hex | bigint;
  logIndex: Hex | number;
  transactionHash: Hash;
  topics: Hex[];
  data: Hex;
  removed?: boolean;
}

/** Checksummed addresses by their 40 hex digits: the same counterparties recur, and checksumming costs a keccak. */
const checksummed = new LRUCache<string, Address>({ max: 100_000 });

function addressOf(hex40: string): Address {
  let address = checksummed.get(hex40);
  if (address === undefined) {
    address = getAddress(`0x${hex40}`);
    checksummed.set(hex40, address);
  }
  return address;
}

/**
 * The transfers among `logs`: exactly three topics and a 32-byte amount, as ERC-20's Transfer
 * has (ERC-721's indexed token id makes four); removed logs dropped.
 */
export function transfersOf(logs: readonly RawLog[], token: Address | undefined): TransferLog[] {
  const out: TransferLog[] = [];
  for (const log of logs) {
    if (log.topics.length !== 3 || log.data.length !== 66 || log.removed) continue;
    out.push({
      token: token ?? addressOf(log.address.slice(2)),
      blockNumber: Number(log.blockNumber),
      logIndex: Number(log.logIndex),
      txHash: log.transactionHash,
      from: addressOf((log.topics[1] as Hex).slice(26)),
      to: addressOf((log.topics[2] as Hex).slice(26)),
      value: BigInt(log.data),
    });
  }
  return out;
}

/** What one scan reads: its filter, the key its learned range and cache go by (the filter's JSON), and how an answer is read. */
interface LogRead<T> {
  key: string;
  filter: { address?: Address | Address[]; topics: readonly (Hex | readonly Hex[] | null)[] };
  /** What is read, as a failure names it. */
  what: string;
  decode(raw: RawLog[]): T[];
}

/** One call of `transfers` or `logs`: its statistics, its own cap on requests in flight, what it reads. */
interface Scan<T> {
  stats: ScanStats;
  limit: LimitFunction;
  read: LogRead<T>;
  /** What the scan may spend, the window whose transfers it counts, and the block of a decoded log to count them by. */
  budget: { allowance: ScanAllowance; from: number; to: number; blockOf: (log: T) => number } | undefined;
}
