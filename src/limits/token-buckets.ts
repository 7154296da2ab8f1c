/**
 * Token buckets keyed by client: each holds at most `perMinute` tokens, refills at `perMinute`
 * a minute, and a request takes one. Two homes for the buckets: this process's memory (one
 * instance, the embedded database), or the store (several instances on one PostgreSQL share
 * every client's bucket, so a client cannot multiply its budget by the number of instances).
 */
import type { Queryable } from "../store/store.ts";

/** What a bucket says about one request. */
export interface BucketVerdict {
  allowed: boolean;
  /** Whole seconds until the next token, when refused (at least 1); 0 when allowed. */
  retryAfterSeconds: number;
}

/** A set of buckets of one size. */
export interface TokenBuckets {
  readonly perMinute: number;
  /**
   * Take `count` tokens (1 when not given) from `key`'s bucket at `nowMs` (epoch milliseconds),
   * all at once or none: several requests counted together (the messages of one MCP batch) cost
   * one look at the bucket, and a refusal leaves the tokens there for smaller requests.
   */
  take(key: string, nowMs: number, count?: number): Promise<BucketVerdict>;
  /** The same without waiting, for buckets held in memory: a request need not wait a turn of the event loop. */
  takeNow?(key: string, nowMs: number, count?: number): BucketVerdict;
}

/** The verdict of every allowed request (shared, frozen). */
export const ALLOWED: BucketVerdict = Object.freeze({ allowed: true, retryAfterSeconds: 0 });

/** Idle this long, a bucket is full again and need not be kept. */
const FULL_AFTER_MS = 60_000;

/**
 * The verdict on taking `count` tokens with `tokensLeft` in the bucket. A refusal says when
 * `count` tokens will be there, or a full bucket when `count` is more than it holds.
 */
function verdict(tokensLeft: number, allowed: boolean, perMs: number, perMinute: number, count: number): BucketVerdict {
  const needed = Math.min(count, perMinute) - tokensLeft;
  return { allowed, retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(needed / perMs / 1000)) };
}

/** Buckets in this process's memory, which always answer without waiting; idle ones are dropped once a minute. */
export function memoryBuckets(perMinute: number): Required<TokenBuckets> {
  const perMs = perMinute / 60_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  let swept = 0;
  const takeNow = (key: string, nowMs: number, count = 1): BucketVerdict => {
    if (nowMs - swept > FULL_AFTER_MS) {
      for (const [k, b] of buckets) if (nowMs - b.at >= FULL_AFTER_MS) buckets.delete(k);
      swept = nowMs;
    }
    const bucket = buckets.get(key);
    const tokens = bucket ? Math.min(perMinute, bucket.tokens + Math.max(0, nowMs - bucket.at) * perMs) : perMinute;
    const allowed = tokens >= count;
    const left = allowed ? tokens - count : tokens;
    const at = Math.max(bucket?.at ?? 0, nowMs);
    if (bucket) {
      bucket.tokens = left;
      bucket.at = at;
    } else buckets.set(key, { tokens: left, at });
    return allowed ? ALLOWED : verdict(left, false, perMs, perMinute, count);
  };
  return {
    perMinute,
    takeNow,
    take: async (key, nowMs, count = 1) => takeNow(key, nowMs, count),
  };
}

/**
 * Buckets in the store's `rate_buckets` table, shared by every instance on it. Refill and take
 * are one upsert (the row lock orders concurrent requests of one client); the caller's clock
 * is used, never going backwards per bucket, so instances with slightly different clocks
 * cannot mint tokens. Idle rows are deleted at most once a minute per instance.
 */
export function storeBuckets(db: Queryable, perMinute: number, namespace = "free"): TokenBuckets {
  const perMs = perMinute / 60_000;
  let swept = 0;
  // Every SET expression reads the row as it was, so `refilled` is the same value in all three.
  // $5 is the count taken: all of it or none, in the one upsert.
  const refilled =
    "least(cast($2 as double precision), b.tokens + greatest(0, cast($3 as bigint) - b.at_ms) * cast($4 as double precision))";
  const count = "cast($5 as double precision)";
  const full = "cast($2 as double precision)";
  const sql = `insert into rate_buckets as b (key, tokens, at_ms, allowed)
    values ($1, case when ${full} >= ${count} then ${full} - ${count} else ${full} end, cast($3 as bigint), ${full} >= ${count})
    on conflict (key) do update set
      tokens = case when ${refilled} >= ${count} then ${refilled} - ${count} else ${refilled} end,
      allowed = ${refilled} >= ${count},
      at_ms = greatest(b.at_ms, cast($3 as bigint))
    returning tokens, allowed`;
  return {
    perMinute,
    async take(key, nowMs, count = 1) {
      if (nowMs - swept > FULL_AFTER_MS) {
        swept = nowMs;
        void db.query("delete from rate_buckets where at_ms < $1", [nowMs - 2 * FULL_AFTER_MS]).catch(() => {});
      }
      const [row] = await db.query<{ tokens: number; allowed: boolean }>(sql, [
        `${namespace}:${key}`,
        perMinute,
        Math.floor(nowMs),
        perMs,
        count,
      ]);
      if (!row) throw new Error("rate_buckets upsert returned no row");
      return verdict(Number(row.tokens), row.allowed, perMs, perMinute, count);
    },
  };
}
