/**
 * The service's durable state behind one interface, on one of two engines: an embedded
 * SQLite file in `data/` by default (Node's built-in `node:sqlite`, ./sqlite.ts) or a
 * PostgreSQL server when `DATABASE_URL` is set. Queries are written once in the SQL both
 * dialects share; the few that cannot be branch on `engine` where they live, through the
 * fragments of ./dialect.ts. Migrations are applied at start.
 */
import { ServiceError } from "../errors.ts";
import { migrate } from "./migrations.ts";
import { openSqlite } from "./sqlite.ts";

/** The database engine behind a store, and so the SQL dialect it speaks. */
export type StoreEngine = "sqlite" | "postgres";

/** Something SQL can be sent to: the store itself or a transaction. */
export interface Queryable {
  /** Which engine runs the statements (the dialect a query must speak). */
  readonly engine: StoreEngine;
  /** Run one statement with `$1`-style parameters and return its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * Run `fn` atomically: on a store in a new transaction, which commits when `fn` resolves and
   * rolls back when it throws; inside a transaction, as part of it. Also for the few writes that
   * PostgreSQL makes in one statement (data-modifying `with`) and SQLite in several.
   */
  atomic<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** An open store. */
export interface Store extends Queryable {
  close(): Promise<void>;
}

/** Where the store lives. A SQLite store without `file` lives in memory. */
export type StoreLocation = { kind: "postgres"; url: string } | { kind: "sqlite"; file: string | undefined };

/** 503: the database cannot be reached (start-up or a request). */
export class StoreUnavailableError extends ServiceError {
  override name = "StoreUnavailableError";
  constructor(message: string, cause?: unknown) {
    super("unavailable", message, { cause });
  }
}

async function openPostgres(url: string): Promise<Store> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on("error", () => {});
  try {
    await pool.query("select 1");
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StoreUnavailableError(`Cannot reach the database at ${redact(url)}: ${(error as Error).message}`, error);
  }
  return {
    engine: "postgres",
    async query<T>(sql: string, params: readonly unknown[] = []) {
      return (await pool.query(sql, params as unknown[])).rows as T[];
    },
    async atomic<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const inside: Queryable = {
          engine: "postgres",
          query: async <R>(sql: string, params: readonly unknown[] = []) => (await client.query(sql, params as unknown[])).rows as R[],
          atomic: (f) => f(inside),
        };
        const result = await fn(inside);
        await client.query("commit");
        return result;
      } catch (error) {
        await client.query("rollback").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** A database URL with its password hidden, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    // node-postgres also takes the password (and an SSL key's passphrase) from the query string.
    for (const name of [...parsed.searchParams.keys()]) if (/password/i.test(name)) parsed.searchParams.set(name, "***");
    return parsed.toString();
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}

/** Open the store and bring its schema up to date. */
export async function openStore(location: StoreLocation): Promise<Store> {
  const store = location.kind === "postgres" ? await openPostgres(location.url) : await openSqlite(location.file);
  try {
    await migrate(store);
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return store;
}
