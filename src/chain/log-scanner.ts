/**
 * ERC-20 `Transfer` logs over a block window, read the way public RPC providers allow:
 * `eth_getLogs` in chunks of 2,000 blocks aligned to multiples of 2,000, a bounded number of
 * chunks in flight, a chunk halved (or cut to the limit the provider names) when the
 * provider refuses its range, and chunks at or below the finalized block cached, since
 * their logs can no longer change.
 */
import {
  type Address,
  getAddress,
  type Hash,
  type Hex,
  HttpRequestError,
  numberToHex,
  type PublicClient,
  parseAbiItem,
  toEventSelector,
} from "viem";
import { readChain, toChainError } from "./rpc-error.ts";

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

/** What to scan: one token, an inclusive block window, optionally only transfers from and/or to an address. */
export interface TransferQuery {
  token: Address;
  fromBlock: number;
  toBlock: number;
  from?: Address;
  to?: Address;
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
}

/** Options of a {@link TransferScanner}. */
export interface ScannerOptions {
  /** Blocks per `eth_getLogs` request; 2,000 is what mainnet.base.org accepts. */
  chunkSize?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** Logs kept in the finalized-range cache before the oldest chunks are dropped. */
  cacheMaxLogs?: number;
  /** When the node cannot name its finalized block: treat blocks this far below the head as final. */
  fallbackFinalityDepth?: number;
}

/** Per-scan overrides (the benchmark compares concurrency 1 with the default). */
export interface ScanOptions {
  concurrency?: number;
  /** Read and fill the finalized-range cache (default true). */
  useCache?: boolean;
}

/** The ERC-20 Transfer event (ERC-721's has an indexed third topic and does not decode as this). */
export const TRANSFER_EVENT = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

/** topic0 of the Transfer event. */
export const TRANSFER_TOPIC = toEventSelector(TRANSFER_EVENT);

/** A log as eth_getLogs returns it (hex quantities). */
interface RawLog {
  blockNumber: Hex;
  logIndex: Hex;
  transactionHash: Hash;
  topics: Hex[];
  data: Hex;
  removed?: boolean;
}

/** The default chunk: mainnet.base.org's documented range limit. */
export const DEFAULT_CHUNK_SIZE = 2_000;
/** Default requests in flight: enough to hide latency without tripping public rate limits. */
export const DEFAULT_SCAN_CONCURRENCY = 4;

// Providers word range refusals differently and give no stable code (-32602, -32005, -32600 and
// -32000 are all seen), so text is the only signal there is: these are the wordings of Base's
// public RPC, Alchemy, Infura, QuickNode, dRPC, 1RPC, Ankr and geth-style nodes.
const RANGE_REFUSAL =
  /block range|range (is )?too (large|wide|big)|too many blocks|max(imum)? (block )?range|range limit|exceeds? (the )?(max(imum)?|limit)|more than \d[\d,]* (results|logs)|query returned more than|response size|limited to (a )?\d|range should work|query timeout exceeded|too many (results|logs)|ranges? (over|above|greater than) \d/i;

/** True when a failed `eth_getLogs` is the provider refusing the size of the range (not a real failure). */
export function isRangeRefusal(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof HttpRequestError && e.status === 429) return false; // a rate limit, whatever the text says
    const details = (e as { details?: unknown }).details;
    if (RANGE_REFUSAL.test(e.message) || (typeof details === "string" && RANGE_REFUSAL.test(details))) return true;
  }
  return false;
}

/**
 * The largest range a refusal allows, when its text says: Alchemy and Infura suggest a
 * `[0x.., 0x..]` range; others name a number of blocks ("max block range of 500",
 * "up to a 2K block range", "limited to a 10,000 range").
 */
export function rangeLimitFromRefusal(error: unknown): number | undefined {
  const texts: string[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    texts.push(e.message);
    const details = (e as { details?: unknown }).details;
    if (typeof details === "string") texts.push(details);
  }
  const text = texts.join("\n");
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

/** Run `tasks` with at most `limit` in flight; results in task order. */
export async function runPool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await (tasks[index] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  return results;
}

/** Reads Transfer logs for the analytics; one instance per RPC, shared by all requests. */
export class TransferScanner {
  readonly chunkSize: number;
  readonly #client: PublicClient;
  readonly #concurrency: number;
  readonly #cacheMaxLogs: number;
  readonly #fallbackFinalityDepth: number;
  readonly #cache = new Map<string, TransferLog[]>();
  #cachedLogs = 0;
  /** Learned from refusals: the largest range this provider accepts. */
  #maxRange: number;
  /** Checksummed addresses by topic: the same counterparties recur, and checksumming costs a keccak. */
  readonly #addresses = new Map<Hex, Address>();

  constructor(client: PublicClient, options: ScannerOptions = {}) {
    this.#client = client;
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    this.#concurrency = options.concurrency ?? DEFAULT_SCAN_CONCURRENCY;
    this.#cacheMaxLogs = options.cacheMaxLogs ?? 200_000;
    this.#fallbackFinalityDepth = options.fallbackFinalityDepth ?? 900;
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
    return { latest: head, finalized: Math.min(finalized ?? head - this.#fallbackFinalityDepth, head) };
  }

  /**
   * Every Transfer of `query.token` in `[fromBlock, toBlock]` (optionally from/to one address),
   * ordered by block and log index. `finalized` is the highest block whose chunk may be cached.
   */
  async transfers(query: TransferQuery, finalized: number, options: ScanOptions = {}): Promise<{ logs: TransferLog[]; stats: ScanStats }> {
    const stats: ScanStats = { chunks: 0, cachedChunks: 0, requests: 0, refusals: 0, maxRange: this.#maxRange };
    if (query.toBlock < query.fromBlock) return { logs: [], stats };
    const useCache = options.useCache ?? true;
    const size = this.chunkSize;
    const tasks: (() => Promise<TransferLog[]>)[] = [];
    for (let start = Math.floor(query.fromBlock / size) * size; start <= query.toBlock; start += size) {
      const end = start + size - 1;
      stats.chunks++;
      const from = Math.max(start, query.fromBlock);
      const to = Math.min(end, query.toBlock);
      if (useCache && end <= finalized) {
        // A final chunk is fetched whole so later windows that overlap it differently reuse it.
        const key = this.#cacheKey(query, start, end);
        const hit = this.#cache.get(key);
        if (hit) {
          stats.cachedChunks++;
          this.#cache.delete(key);
          this.#cache.set(key, hit); // most recently used last
          tasks.push(async () => hit.filter((l) => l.blockNumber >= from && l.blockNumber <= to));
          continue;
        }
        tasks.push(async () => {
          const logs = await this.#fetchRange(query, start, end, stats);
          this.#remember(key, logs);
          return logs.filter((l) => l.blockNumber >= from && l.blockNumber <= to);
        });
      } else {
        tasks.push(() => this.#fetchRange(query, from, to, stats));
      }
    }
    const parts = await runPool(tasks, options.concurrency ?? this.#concurrency);
    stats.maxRange = this.#maxRange;
    return { logs: parts.flat(), stats };
  }

  #checksum(topic: Hex): Address {
    let address = this.#addresses.get(topic);
    if (!address) {
      address = getAddress(`0x${topic.slice(26)}`);
      if (this.#addresses.size > 100_000) this.#addresses.clear();
      this.#addresses.set(topic, address);
    }
    return address;
  }

  #cacheKey(query: TransferQuery, start: number, end: number): string {
    return `${query.token.toLowerCase()}:${query.from?.toLowerCase() ?? "*"}:${query.to?.toLowerCase() ?? "*"}:${start}-${end}`;
  }

  #remember(key: string, logs: TransferLog[]): void {
    if (logs.length > this.#cacheMaxLogs) return;
    this.#cache.set(key, logs);
    this.#cachedLogs += logs.length;
    for (const [oldKey, oldLogs] of this.#cache) {
      if (this.#cachedLogs <= this.#cacheMaxLogs) break;
      this.#cache.delete(oldKey);
      this.#cachedLogs -= oldLogs.length;
    }
  }

  // One range, split into pieces no larger than the provider is known to accept; a refused piece
  // is split again (to the limit the refusal names, else in halves) until single blocks.
  async #fetchRange(query: TransferQuery, from: number, to: number, stats: ScanStats): Promise<TransferLog[]> {
    const out: TransferLog[] = [];
    let start = from;
    while (start <= to) {
      const end = Math.min(to, start + this.#maxRange - 1);
      out.push(...(await this.#fetchPiece(query, start, end, stats)));
      start = end + 1;
    }
    return out;
  }

  async #fetchPiece(query: TransferQuery, from: number, to: number, stats: ScanStats): Promise<TransferLog[]> {
    stats.requests++;
    try {
      // Raw eth_getLogs and a hand decoder: a 2,000-block USDC chunk can hold tens of thousands of
      // logs, and viem's generic log formatting and ABI decoding cost more than the request itself.
      const pad = (address: Address) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}` as Hex;
      const logs = (await this.#client.request({
        method: "eth_getLogs",
        params: [
          {
            address: query.token,
            topics: [TRANSFER_TOPIC, query.from ? pad(query.from) : null, query.to ? pad(query.to) : null],
            fromBlock: numberToHex(from),
            toBlock: numberToHex(to),
          },
        ],
      })) as RawLog[];
      const token = getAddress(query.token);
      const out: TransferLog[] = [];
      for (const log of logs) {
        // ERC-20 Transfer: exactly three topics and a 32-byte amount (ERC-721's indexed token id makes four).
        if (log.topics.length !== 3 || log.data.length !== 66 || log.removed) continue;
        out.push({
          token,
          blockNumber: Number(log.blockNumber),
          logIndex: Number(log.logIndex),
          txHash: log.transactionHash,
          from: this.#checksum(log.topics[1] as Hex),
          to: this.#checksum(log.topics[2] as Hex),
          value: BigInt(log.data),
        });
      }
      return out;
    } catch (error) {
      const size = to - from + 1;
      if (!isRangeRefusal(error) || size === 1) throw toChainError(error, `reading Transfer logs of blocks ${from}-${to}`);
      stats.refusals++;
      const named = rangeLimitFromRefusal(error);
      const next = named !== undefined && named < size ? Math.max(1, named) : Math.ceil(size / 2);
      this.#maxRange = Math.min(this.#maxRange, next);
      return this.#fetchRange(query, from, to, stats);
    }
  }
}
