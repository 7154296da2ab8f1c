/**
 * The time-limited cache of upstream answers, on lru-cache: concurrent misses for the same key
 * share one fetch, failures are never kept, the least recently used entry goes past `maxEntries`.
 */
import { LRUCache } from "lru-cache";

/** A cached value with the time it was fetched (answers report their data's age). */
export interface Cached<V> {
  value: V;
  fetchedAt: number;
}

/** Caches values for `ttlMs` after they were fetched; each miss runs the loader passed to `get`. */
export class TtlCache<V> {
  readonly #lru: LRUCache<string, Cached<V>, () => Promise<V>>;

  constructor(ttlMs: number, { maxEntries = 1_000, now = Date.now }: { maxEntries?: number; now?: () => number } = {}) {
    this.#lru = new LRUCache({
      max: maxEntries,
      ttl: ttlMs,
      perf: { now },
      ttlResolution: 0,
      fetchMethod: async (_key, _stale, { context }) => ({ value: await context(), fetchedAt: now() }),
    });
  }

  /** The cached value of `key` if still fresh, else the result of `load` (kept on success). */
  async get(key: string, load: () => Promise<V>): Promise<Cached<V>> {
    return (await this.#lru.fetch(key, { context: load })) as Cached<V>;
  }
}

/** `keys` deduplicated, sorted, cut into comma-joined lists of at most `size` and read all at once: each list's value, and the oldest fetch time. */
export async function readInBatches<V>(
  keys: readonly string[],
  size: number,
  read: (list: string) => Promise<Cached<V>>,
): Promise<Cached<V[]>> {
  const sorted = [...new Set(keys)].sort();
  const lists: string[] = [];
  for (let i = 0; i < sorted.length; i += size) lists.push(sorted.slice(i, i + size).join(","));
  const answers = await Promise.all(lists.map(read));
  return { value: answers.map((a) => a.value), fetchedAt: Math.min(...answers.map((a) => a.fetchedAt)) };
}
