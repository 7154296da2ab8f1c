/**
 * A small time-limited cache for upstream answers: concurrent misses for the same key share
 * one request, failures are never cached, and the oldest entries go first past `maxEntries`.
 */

/** A cached value with the time it was fetched (answers report their data's age). */
export interface Cached<V> {
  value: V;
  fetchedAt: number;
}

/** Caches values for `ttlMs` after they were fetched. */
export class TtlCache<V> {
  readonly #entries = new Map<string, Cached<V>>();
  readonly #inFlight = new Map<string, Promise<Cached<V>>>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(ttlMs: number, { maxEntries = 1_000, now = Date.now }: { maxEntries?: number; now?: () => number } = {}) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  /** The cached value of `key` if still fresh, else the result of `load` (cached on success). */
  async get(key: string, load: () => Promise<V>): Promise<Cached<V>> {
    const hit = this.#entries.get(key);
    if (hit && this.#now() - hit.fetchedAt < this.#ttlMs) return hit;
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    const loading = load().then(
      (value) => {
        this.#inFlight.delete(key);
        const entry = { value, fetchedAt: this.#now() };
        this.#entries.delete(key);
        this.#entries.set(key, entry);
        while (this.#entries.size > this.#maxEntries) {
          const oldest = this.#entries.keys().next().value as string;
          this.#entries.delete(oldest);
        }
        return entry;
      },
      (error: unknown) => {
        this.#inFlight.delete(key);
        throw error;
      },
    );
    this.#inFlight.set(key, loading);
    return loading;
  }
}
