/**
 * In-flight claims: one request per payment authorisation at a time, so one payment runs
 * its function once and is settled once, however many copies arrive together. A claim is a
 * short lease its request renews while it runs; the lease of a request whose instance died
 * runs out within `leaseSeconds`, and any instance may then take the payment over.
 */
import { nowPlus } from "../store/dialect.ts";
import type { Queryable } from "../store/store.ts";

/** Where claims are held: in memory (one process) or in the store (instances sharing PostgreSQL). */
export interface InFlightRegistry {
  /** Claim `key` for `holder` for `leaseSeconds`; false when a live lease of another holder has it. */
  claim(key: string, holder: string): Promise<boolean>;
  /** Extend `holder`'s lease of `key`. */
  renew(key: string, holder: string): Promise<void>;
  /** Release `holder`'s lease of `key`. */
  release(key: string, holder: string): Promise<void>;
  readonly leaseSeconds: number;
  /** True when leases live in the store's `inflight` table, so a ledger statement can take or free them too. */
  readonly shared: boolean;
}

/** An in-process registry: a dead process takes its claims with it. */
export function memoryInFlightRegistry(leaseSeconds = 15): InFlightRegistry {
  const held = new Map<string, string>();
  return {
    leaseSeconds,
    shared: false,
    async claim(key, holder) {
      if (held.has(key)) return false;
      held.set(key, holder);
      return true;
    },
    async renew() {},
    async release(key, holder) {
      if (held.get(key) === holder) held.delete(key);
    },
  };
}

/** A registry in the `inflight` table, shared by every instance on one database. */
export function storeInFlightRegistry(db: Queryable, leaseSeconds = 15): InFlightRegistry {
  return {
    leaseSeconds,
    shared: true,
    async claim(key, holder) {
      const rows = await db.query(
        `insert into inflight (key, instance, expires_at) values ($1, $2, ${nowPlus(db, "$3")})
         on conflict (key) do update set instance = excluded.instance, expires_at = excluded.expires_at
           where inflight.expires_at <= now()
         returning key`,
        [key, holder, leaseSeconds],
      );
      return rows.length === 1;
    },
    async renew(key, holder) {
      await db.query(`update inflight set expires_at = ${nowPlus(db, "$3")} where key = $1 and instance = $2`, [key, holder, leaseSeconds]);
    },
    async release(key, holder) {
      await db.query("delete from inflight where key = $1 and instance = $2", [key, holder]);
    },
  };
}

/** Leases a request holds; `released` is set once something (a ledger statement) freed them. */
export interface HeldLeases {
  readonly keys: string[];
  readonly holder: string;
  released: boolean;
}

/** Run `work` while holding `lease` (already claimed), renewing every third of the lease; then release what is still held. */
export async function holding<T>(
  registry: InFlightRegistry,
  lease: HeldLeases,
  work: () => Promise<T>,
  onRenewFailed: (error: unknown) => void,
): Promise<T> {
  const renew = () => {
    for (const key of lease.keys) registry.renew(key, lease.holder).catch(onRenewFailed);
  };
  const timer = setInterval(renew, (registry.leaseSeconds * 1000) / 3);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    if (!lease.released) await releaseAll(registry, lease.keys, lease.holder, onRenewFailed);
  }
}

/** Release `holder`'s leases of `keys`; a failure is reported, and the lease runs out on its own. */
export async function releaseAll(
  registry: InFlightRegistry,
  keys: string[],
  holder: string,
  onFailed: (error: unknown) => void,
): Promise<void> {
  await Promise.all(keys.map((key) => registry.release(key, holder).catch(onFailed)));
}

/** Claim every one of `keys` for `holder`, in order; false, holding none of them, when another holder has one. */
export async function claimAll(
  registry: InFlightRegistry,
  keys: string[],
  holder: string,
  onFailed: (error: unknown) => void,
): Promise<boolean> {
  for (const [i, key] of keys.entries()) {
    if (await registry.claim(key, holder)) continue;
    await releaseAll(registry, keys.slice(0, i), holder, onFailed);
    return false;
  }
  return true;
}
