/**
 * The public x402 catalogue: the entries of every configured directory merged by URL, each
 * directory's status (`ok`, `timeout`, `error: ...`), cached for a few minutes (the CDP API
 * itself caches for up to ten) so that searches do not page through the directories on
 * every call. The directory search filters it; the leaderboard crawl reads it fresh.
 */
import { LRUCache } from "lru-cache";
import type { x402Directory } from "../../spec/routes/intel.ts";
import type { RouteInput } from "../context.ts";
import type { DirectoryEntry, DirectoryName, DirectorySource } from "../upstreams/directory-entry.ts";
import { DirectoryError } from "../upstreams/directory-http.ts";
import { normaliseNetwork } from "./networks.ts";

/** One endpoint of the merged catalogue. */
export interface CatalogueEndpoint extends DirectoryEntry {
  /** The directories that list it, in configuration order. */
  sources: DirectoryName[];
}

/** Time allowed to read each directory (all its pages). */
const DIRECTORY_TIMEOUT_MS = 10_000;
/** How long a snapshot where every directory answered is reused. */
const TTL_MS = 5 * 60_000;
/** How long a snapshot with a failed directory is reused. */
const FAILED_TTL_MS = 30_000;

/** Merge the entries of several directories by URL; fields missing in one are filled from the next. */
export function mergeEntries(lists: readonly { name: DirectoryName; entries: readonly DirectoryEntry[] }[]): CatalogueEndpoint[] {
  const byUrl = new Map<string, CatalogueEndpoint>();
  for (const { name, entries } of lists) {
    for (const entry of entries) {
      const known = byUrl.get(entry.url);
      if (!known) {
        byUrl.set(entry.url, { ...entry, tags: [...entry.tags], sources: [name] });
        continue;
      }
      if (!known.sources.includes(name)) known.sources.push(name);
      known.name ??= entry.name;
      known.description ??= entry.description;
      known.network ??= entry.network;
      known.price_usd ??= entry.price_usd;
      known.pay_to ??= entry.pay_to;
      known.method ??= entry.method;
      for (const tag of entry.tags) if (!known.tags.includes(tag)) known.tags.push(tag);
    }
  }
  return [...byUrl.values()].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

/**
 * Read every directory at once (each within `timeoutMs`) and merge what answered: the endpoints
 * sorted by URL, each directory's status (`ok`, `timeout` or `error: <reason>`) and how many answered.
 */
export async function readDirectories(sources: readonly DirectorySource[], timeoutMs: number) {
  const results = await Promise.all(
    sources.map(async (source) => {
      try {
        return { name: source.name, entries: await source.list(AbortSignal.timeout(timeoutMs)), status: "ok" };
      } catch (error) {
        const status =
          error instanceof DirectoryError ? error.report : `error: ${error instanceof Error ? error.message.slice(0, 120) : "failed"}`;
        return { name: source.name, entries: [] as DirectoryEntry[], status };
      }
    }),
  );
  return {
    endpoints: mergeEntries(results),
    sources: Object.fromEntries(results.map((r) => [r.name, r.status])),
    sources_ok: results.filter((r) => r.status === "ok").length,
    fetched_at: new Date().toISOString(),
  };
}

/** The catalogue at one moment. */
export type CatalogueSnapshot = Awaited<ReturnType<typeof readDirectories>>;

/**
 * A catalogue over `sources` with a cache; concurrent reads share one fetch (lru-cache's
 * `fetch`). `read` answers from the cache unless `fresh`.
 */
export function createCatalogue(sources: readonly DirectorySource[]) {
  const cache = new LRUCache<"catalogue", CatalogueSnapshot>({
    max: 1,
    fetchMethod: async (_key, _stale, { options }) => {
      const snapshot = await readDirectories(sources, DIRECTORY_TIMEOUT_MS);
      options.ttl = snapshot.sources_ok === sources.length ? TTL_MS : FAILED_TTL_MS;
      return snapshot;
    },
  });
  return { read: async ({ fresh = false } = {}) => (await cache.fetch("catalogue", { forceRefresh: fresh })) as CatalogueSnapshot };
}

/** A cached, merged view of the directories. */
export type Catalogue = ReturnType<typeof createCatalogue>;

/** Filters of a directory search: the x402-directory body, its limit resolved. */
type CatalogueQuery = Omit<RouteInput<typeof x402Directory>, "limit"> & { limit: number };

/**
 * Search the catalogue: every word of `query` in the URL, name, description or tags (any case),
 * `network` a CAIP-2 id or v1 name (`base`); endpoints listed by more directories first, then by URL.
 */
export function searchCatalogue(snapshot: CatalogueSnapshot, q: CatalogueQuery): { matched: number; endpoints: CatalogueEndpoint[] } {
  const words = (q.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const network = q.network ? normaliseNetwork(q.network) : null;
  const matches = snapshot.endpoints.filter((e) => {
    if (network && e.network !== network) return false;
    if (q.max_price_usd !== undefined && (e.price_usd === null || e.price_usd > q.max_price_usd)) return false;
    if (words.length === 0) return true;
    const haystack = [e.url, e.name ?? "", e.description ?? "", ...e.tags].join(" ").toLowerCase();
    return words.every((w) => haystack.includes(w));
  });
  const ordered = [...matches].sort((a, b) => b.sources.length - a.sources.length || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  return { matched: matches.length, endpoints: ordered.slice(0, q.limit) };
}

/** The catalogue's endpoints grouped by origin, origins in sorted order. */
export function groupByOrigin(endpoints: readonly CatalogueEndpoint[]): Map<string, CatalogueEndpoint[]> {
  return Map.groupBy(
    [...endpoints].sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0)),
    (e) => e.origin,
  );
}

/**
 * The endpoint probed for an origin: one whose method a directory states (so the probe is
 * the call a buyer would make), listed by the most directories, then the first by URL.
 */
export function representativeEndpoint(endpoints: readonly CatalogueEndpoint[]): CatalogueEndpoint {
  const ranked = [...endpoints].sort(
    (a, b) =>
      Number(b.method !== null) - Number(a.method !== null) ||
      b.sources.length - a.sources.length ||
      (a.url < b.url ? -1 : a.url > b.url ? 1 : 0),
  );
  return ranked[0] as CatalogueEndpoint;
}
