/**
 * The embedded default store: one SQLite file through Node's built-in `node:sqlite`, behind the
 * `Store` interface the PostgreSQL engines implement.
 *
 * - Statements keep their `$1` parameters (SQLite reads them as `?1`); values are bound the way
 *   PostgreSQL drivers send them (booleans as 1/0, dates as ISO-8601 text, arrays as JSON for
 *   `json_each`), and columns are read back by their declared type as PostgreSQL drivers do:
 *   `timestamptz` as a `Date`, `jsonb` parsed, `boolean` as a boolean and `numeric(78,0)`
 *   amounts as exact decimal strings (stored as 64-bit integers, read as bigints).
 * - `now()`, `now_plus(seconds)`, `least` and `greatest` are functions of this connection, so
 *   the shared SQL reads the same on both dialects (./dialect.ts). Timestamps are ISO-8601 text
 *   in UTC with milliseconds, which sorts and compares as time.
 * - `node:sqlite` is synchronous with one connection, so a transaction spanning awaits would
 *   let another request's statement land inside it: while one is open, every other statement
 *   and transaction waits for it (an async mutex), and it starts with `BEGIN IMMEDIATE` so that
 *   a second process on the same file waits (busy_timeout) instead of failing at its first write.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { LRUCache } from "lru-cache";
import type { Queryable, Store } from "./store.ts";

/** How long a statement waits for another process's write lock on the same file before failing. */
const BUSY_TIMEOUT_MS = 5_000;

/** Prepared statements kept per connection (the service sends a few dozen distinct ones). */
const STATEMENT_CACHE = 256;

/** Connection settings: WAL (readers never wait for the writer), fsync at checkpoints only. */
const PRAGMAS = [
  "journal_mode = WAL",
  `busy_timeout = ${BUSY_TIMEOUT_MS}`,
  // In WAL mode NORMAL never corrupts the file; a power cut may lose the last commits, never an ordered subset.
  "synchronous = NORMAL",
  "foreign_keys = ON",
  // The store holds thousands of small rows: 8 MiB of page cache is many times its hot set.
  "cache_size = -8192",
  "temp_store = MEMORY",
];

type Converter = (value: unknown) => unknown;

/** How a column of a declared type is read back, as a PostgreSQL driver would return it. */
function converterOf(declared: string | null): Converter | undefined {
  const type = declared?.toLowerCase() ?? "";
  if (type === "timestamptz") return (v) => (typeof v === "string" ? new Date(v) : v);
  if (type === "jsonb") return (v) => (typeof v === "string" ? JSON.parse(v) : v);
  if (type === "boolean") return (v) => (v === null || v === undefined ? v : Boolean(v));
  if (type.startsWith("numeric(78")) return (v) => (v === null || v === undefined ? v : String(v));
  return undefined;
}

/** A bigint read from a column without an exact-amount type: a number when it is one exactly. */
const numberOf = (v: unknown) => (typeof v === "bigint" && Number.isSafeInteger(Number(v)) ? Number(v) : v);

/** A parameter as SQLite binds it. */
function bindable(value: unknown): null | number | bigint | string | Uint8Array {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "string" || value instanceof Uint8Array) return value;
  return JSON.stringify(value);
}

interface Prepared {
  statement: StatementSync;
  /** Per result column, its converter (undefined: as read). */
  converters: (Converter | undefined)[];
  names: string[];
  /** The statement returns an exact amount: integers are read as bigints (then numbers where safe). */
  bigints: boolean;
}

/** Open (creating when missing) the SQLite store in `file`, or in memory without one. */
export async function openSqlite(file: string | undefined): Promise<Store> {
  // Loaded here, so that a PostgreSQL deployment never loads the module.
  const { DatabaseSync: Database } = await import("node:sqlite");
  if (file) mkdirSync(path.dirname(file), { recursive: true });
  const db: DatabaseSync = new Database(file ?? ":memory:", { timeout: BUSY_TIMEOUT_MS });
  for (const pragma of PRAGMAS) db.exec(`pragma ${pragma}`);
  db.function("now", { deterministic: false }, () => new Date().toISOString());
  db.function("now_plus", { deterministic: false }, (seconds) => new Date(Date.now() + Number(seconds) * 1000).toISOString());
  // PostgreSQL's least and greatest: nulls are ignored, null only when every argument is.
  const extreme =
    (pick: (...n: number[]) => number) =>
    (...args: unknown[]) => {
      const values = args.filter((a) => a !== null) as number[];
      return values.length === 0 ? null : pick(...values);
    };
  db.function("least", { deterministic: true, varargs: true }, extreme(Math.min));
  db.function("greatest", { deterministic: true, varargs: true }, extreme(Math.max));

  const cache = new LRUCache<string, Prepared>({ max: STATEMENT_CACHE });
  const prepare = (sql: string): Prepared => {
    const hit = cache.get(sql);
    if (hit) return hit;
    const statement = db.prepare(sql.replace(/\$(\d+)/g, "?$1"));
    const columns = statement.columns();
    const converters = columns.map((c) => converterOf(c.type));
    const bigints = columns.some((c) => c.type?.toLowerCase().startsWith("numeric(78"));
    if (bigints) statement.setReadBigInts(true);
    const prepared = { statement, converters, names: columns.map((c) => c.name), bigints };
    cache.set(sql, prepared);
    return prepared;
  };
  const run = <T>(sql: string, params: readonly unknown[]): T[] => {
    const { statement, converters, names, bigints } = prepare(sql);
    const rows = statement.all(...params.map(bindable)) as Record<string, unknown>[];
    if (!bigints && !converters.some(Boolean)) return rows as T[];
    for (const row of rows) {
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        const convert = converters[i];
        const value = row[name];
        row[name] = convert ? convert(value) : bigints ? numberOf(value) : value;
      }
    }
    return rows as T[];
  };

  // The open transaction, if any: every statement from outside it waits until it ends. Each
  // waiter re-checks after waking and claims synchronously, so two cannot both see it free.
  let open: Promise<void> | null = null;

  let closed = false;
  return {
    engine: "sqlite",
    async query<T>(sql: string, params: readonly unknown[] = []) {
      while (open) await open;
      return run<T>(sql, params);
    },
    async atomic<T>(fn: (tx: Queryable) => Promise<T>) {
      while (open) await open;
      let end = () => {};
      open = new Promise<void>((resolve) => {
        end = resolve;
      });
      let active = true;
      const inside: Queryable = {
        engine: "sqlite",
        async query<R>(sql: string, params: readonly unknown[] = []) {
          if (!active) throw new Error("a statement was sent to a transaction that has ended");
          return run<R>(sql, params);
        },
        atomic: (f) => f(inside),
      };
      try {
        db.exec("begin immediate");
        try {
          const result = await fn(inside);
          db.exec("commit");
          return result;
        } catch (error) {
          if (db.isTransaction) db.exec("rollback");
          throw error;
        }
      } finally {
        active = false;
        open = null;
        end();
      }
    },
    async close() {
      if (closed) return;
      while (open) await open;
      closed = true;
      cache.clear();
      db.close();
    },
  };
}
