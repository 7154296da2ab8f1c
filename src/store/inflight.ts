/**
 * The in-flight guard's registry in the store, so several instances on one PostgreSQL
 * never run the same payment's function twice. A claim expires, so a crashed instance
 * cannot hold a payment forever.
 */
import type { InFlightRegistry } from "../server/middleware/in-flight-guard.ts";
import type { Queryable } from "./store.ts";

/** A registry whose claims live in the `inflight` table for at most `ttlSeconds`. */
// A claim is released when its request's work is over; the expiry only covers a crashed instance,
// so it is well above the longest request (timeouts plus settlement).
export function storeInFlightRegistry(db: Queryable, instance: string, ttlSeconds = 900): InFlightRegistry {
  return {
    async claim(key) {
      const rows = await db.query(
        `insert into inflight (key, instance, expires_at) values ($1, $2, now() + make_interval(secs => $3))
         on conflict (key) do update set instance = excluded.instance, expires_at = excluded.expires_at
           where inflight.expires_at <= now()
         returning key`,
        [key, instance, ttlSeconds],
      );
      return rows.length === 1;
    },
    async release(key) {
      await db.query("delete from inflight where key = $1 and instance = $2", [key, instance]);
    },
  };
}
