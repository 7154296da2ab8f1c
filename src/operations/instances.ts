/**
 * Instance heartbeats: every running instance keeps its row in `instances` fresh, so the status
 * feed counts the instances behind a load balancer and a starting instance can tell whether
 * another live process already settles with the same key.
 *
 * Two processes settling with one key would both take the key's next nonce from the chain and
 * collide ("nonce too low", settlements hanging until their time budget). Within one process
 * viem's nonce manager is shared by every wallet of one address, so in-process instances (the
 * tests) coordinate by themselves; across processes the service refuses to start instead of
 * coordinating nonces through the store, because a nonce taken from the store and then not
 * broadcast (a crash between the two) would stall every later settlement of that key until
 * someone filled the gap, while a refusal at start costs nothing at run time and says exactly
 * what to change. A dead instance's row does not block a restart: its heartbeat stops, and a
 * starting instance waits one heartbeat to see whether it moves.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "../log.ts";
import { nowPlus } from "../store/dialect.ts";
import type { Queryable, Store } from "../store/store.ts";

/** How often an instance refreshes its heartbeat. */
export const HEARTBEAT_MS = 30_000;
/** An instance whose heartbeat is younger than this is healthy. */
export const HEALTHY_WITHIN_MS = 90_000;
/** Instances seen within this are still counted (as unhealthy once silent); older rows are forgotten. */
export const COUNTED_WITHIN_MS = 15 * 60_000;

/** This process: host, pid and a random tag (pids repeat across restarts and containers). */
export const PROCESS_ID = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;

/** What an instance says about itself. */
export interface InstanceInfo {
  id: string;
  version: string;
  /** The address that pays gas for settlements (a self-hosted facilitator's key); undefined with a remote facilitator. */
  settlementAddress: `0x${string}` | undefined;
  /** The process it runs in; default this one. */
  process?: string;
}

/** One instance as the store knows it. */
export interface InstanceRow {
  id: string;
  process: string;
  started_at: string;
  last_seen: string;
  version: string;
  settlement_address: string | null;
}

/** Start-up refused: a live instance in another process settles with the same key. */
export class SettlementKeyInUseError extends Error {
  override name = "SettlementKeyInUseError";
  readonly other: InstanceRow;
  constructor(address: string, other: InstanceRow) {
    super(
      `another live instance (${other.id}, heartbeat ${other.last_seen}) already settles payments with the key of ${address}. ` +
        "Two processes sending transactions from one key take the same nonces and their settlements collide. " +
        "Give each instance its own FACILITATOR_PRIVATE_KEY (a separate funded gas account) or use a remote facilitator (FACILITATOR_URL); " +
        "after the other instance stops, this one can start.",
    );
    this.other = other;
  }
}

const LOCK = 402102;

function rowOf(r: InstanceRow & { started_at: Date | string; last_seen: Date | string }): InstanceRow {
  return { ...r, started_at: new Date(r.started_at).toISOString(), last_seen: new Date(r.last_seen).toISOString() };
}

/** Live instances of other processes settling with `address` (a heartbeat within `withinMs`, started after `after`), newest first. */
async function otherSettlers(db: Queryable, address: string, process: string, withinMs: number, after = new Date(0).toISOString()) {
  const rows = await db.query<InstanceRow>(
    `select id, process, started_at, last_seen, version, settlement_address from instances
      where settlement_address = $1 and process <> $2 and started_at > $3 and last_seen > ${nowPlus(db, "-1.0 * $4")}
      order by started_at desc`,
    [address, process, after, withinMs / 1000],
  );
  return rows.map(rowOf);
}

/** Options of {@link registerInstance}. */
export interface RegisterOptions {
  log: Logger;
  /** The heartbeat period of the instances (how long to watch another one's heartbeat); default 30 s. */
  heartbeatMs?: number;
  /**
   * The store belongs to this process alone (an embedded database directory it has claimed): any
   * other process's heartbeat in it was left by one that died, so nothing is watched.
   */
  exclusiveStore?: boolean;
}

/**
 * Write this instance's first heartbeat. With a settlement key, refuse (SettlementKeyInUseError)
 * when another process's live instance uses the same key: one whose heartbeat is fresh and still
 * moves. A fresh row that stops moving belonged to a process that died, and is no obstacle.
 */
export async function registerInstance(store: Store, info: InstanceInfo, options: RegisterOptions): Promise<void> {
  const process = info.process ?? PROCESS_ID;
  const address = info.settlementAddress?.toLowerCase() ?? null;
  const watchMs = Math.round((options.heartbeatMs ?? HEARTBEAT_MS) * 1.5);
  const seen = new Map<string, string>();
  for (;;) {
    const blocking = await store.atomic(async (tx) => {
      // SQLite's transaction already holds the file's write lock.
      if (tx.engine !== "sqlite") await tx.query("select pg_advisory_xact_lock($1)", [LOCK]);
      if (options.exclusiveStore) await tx.query("delete from instances where process <> $1", [process]);
      else if (address) {
        const others = (await otherSettlers(tx, address, process, HEALTHY_WITHIN_MS)).filter((o) => seen.get(o.id) !== o.last_seen);
        if (others.length > 0) return others;
      }
      await tx.query(
        `insert into instances (id, process, version, settlement_address) values ($1, $2, $3, $4)
         on conflict (id) do update set process = excluded.process, last_seen = now(), version = excluded.version,
           settlement_address = excluded.settlement_address`,
        [info.id, process, info.version, address],
      );
      return [];
    });
    if (blocking.length === 0) return;
    const moved = blocking.find((o) => seen.has(o.id));
    if (moved) throw new SettlementKeyInUseError(address as string, moved);
    for (const other of blocking) seen.set(other.id, other.last_seen);
    options.log.warn("another instance with the same settlement key looks alive: watching its heartbeat before starting", {
      other: blocking.map((o) => o.id),
      wait_ms: watchMs,
    });
    await new Promise((resolve) => setTimeout(resolve, watchMs));
  }
}

/** A running heartbeat, and whether this instance may still settle with its key. */
export interface Heartbeat {
  stop(): void;
  /**
   * Whether this instance may send its next settlement: false once another live process settling
   * with the same key started after this one (it took the key over while this one looked dead).
   * When this instance's own last heartbeat is older than another could have waited before taking
   * over (a pause, SIGSTOP, a stalled event loop), the heartbeat is written and checked first.
   */
  maySettle(): Promise<boolean>;
}

/**
 * Keep this instance's heartbeat fresh every `everyMs`. With a settlement key, each heartbeat
 * also looks for a live instance of another process with the same key that started after this
 * one: a starting instance takes a key over only after watching its holder's heartbeat stand
 * still for 1.5 periods (`registerInstance`), so such an instance exists only when this one was
 * paused that long, and this one, the older, stops settling for good and says so. The newer one
 * keeps settling: it sees an older instance, which is the one that stops.
 */
export function startHeartbeat(store: Store, info: InstanceInfo, log: Logger, everyMs = HEARTBEAT_MS): Heartbeat {
  const address = info.settlementAddress?.toLowerCase() ?? null;
  const processId = info.process ?? PROCESS_ID;
  let startedAt: string | undefined;
  let lastBeat = performance.now();
  let takenBy: InstanceRow | undefined;
  let running: Promise<boolean> | undefined;

  /** Write the heartbeat and look for a newer settler of this key; false when the store could not be asked. */
  const beatOnce = async (): Promise<boolean> => {
    const began = performance.now();
    try {
      const rows = await store.query<{ started_at: Date | string }>(
        "update instances set last_seen = now() where id = $1 returning started_at",
        [info.id],
      );
      // A row removed by hand (or by the cleanup below after a long pause) is written again, with
      // its first start kept, so that it is not mistaken for the newer of two instances.
      if (rows.length === 0)
        await store.query(
          `insert into instances (id, process, version, settlement_address${startedAt ? ", started_at" : ""})
           values ($1, $2, $3, $4${startedAt ? ", $5" : ""}) on conflict (id) do update set last_seen = now()`,
          [info.id, processId, info.version, address, ...(startedAt ? [startedAt] : [])],
        );
      else startedAt ??= new Date(rows[0]?.started_at as Date | string).toISOString();
      lastBeat = began;
      await store.query(`delete from instances where last_seen < ${nowPlus(store, "-1.0 * $1")}`, [COUNTED_WITHIN_MS / 1000]);
      if (address && startedAt && !takenBy) {
        const [other] = await otherSettlers(store, address, processId, 3 * everyMs, startedAt);
        if (other) {
          takenBy = other;
          log.error("another live instance settles with this instance's key since this one was paused: this instance stops settling", {
            settlement_address: address,
            other: takenBy.id,
            other_started_at: takenBy.started_at,
            action:
              "paid calls here are refused unsettled (never charged); restart this instance with its own FACILITATOR_PRIVATE_KEY, or stop it",
          });
        }
      }
      return true;
    } catch (error) {
      log.warn("heartbeat failed; will retry", { error: error as Error });
      return false;
    }
  };
  const beat = (): Promise<boolean> => {
    running ??= beatOnce().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => void beat(), everyMs);
  timer.unref();
  // The first heartbeat at once: it learns this instance's start, which the check compares with.
  void beat();
  // Within this of the last heartbeat no other instance can have taken the key over (it watches 1.5 periods).
  const safeForMs = everyMs * 1.25;
  let ended = false;
  return {
    stop: () => {
      ended = true;
      clearInterval(timer);
    },
    async maySettle() {
      // Once stopped (the instance is closing and removes its row), no heartbeat is written again.
      if (!address || takenBy || ended) return !takenBy;
      if (performance.now() - lastBeat < safeForMs) return true;
      // Unsure (the store did not answer): this settlement waits for another chance rather than risk the key.
      return (await beat()) && !takenBy && performance.now() - lastBeat < safeForMs;
    },
  };
}

/** Remove this instance's row when it stops cleanly, so it is not counted as a silent instance. */
export async function unregisterInstance(store: Queryable, id: string): Promise<void> {
  await store.query("delete from instances where id = $1", [id]);
}

/** Instances counted by the status feed (seen in the last 15 minutes), oldest first. */
export async function countedInstances(store: Queryable): Promise<(InstanceRow & { healthy: boolean })[]> {
  const rows = await store.query<InstanceRow & { healthy: boolean }>(
    `select id, process, started_at, last_seen, version, settlement_address,
            last_seen > ${nowPlus(store, "-1.0 * $2")} as healthy
       from instances where last_seen > ${nowPlus(store, "-1.0 * $1")} order by started_at, id`,
    [COUNTED_WITHIN_MS / 1000, HEALTHY_WITHIN_MS / 1000],
  );
  // A comparison is 1/0 on SQLite.
  return rows.map((r) => ({ ...rowOf(r), healthy: Boolean(r.healthy) }));
}
