/**
 * The SQL fragments that PostgreSQL and SQLite spell differently, for the queries that need
 * them. Everything else is written once: `cast(x as integer)` rather than `x::int`, `now()`
 * (a function of the SQLite connection too, src/store/sqlite.ts), `least`/`greatest`, upserts.
 */
import type { Queryable } from "./store.ts";

/** The time `seconds` (an SQL expression, may be negative) from now, e.g. a lease's end. */
export function nowPlus(db: Queryable, seconds: string): string {
  return db.engine === "sqlite" ? `now_plus(${seconds})` : `(now() + make_interval(secs => ${seconds}))`;
}

/** A JSON object of alternating key/value expressions. */
export function jsonObject(db: Queryable): "json_object" | "json_build_object" {
  return db.engine === "sqlite" ? "json_object" : "json_build_object";
}

/**
 * `column` is one of the elements of `param`, a parameter bound to an array
 * (`element` is PostgreSQL's element type: `text`, `bigint`).
 */
export function inArray(db: Queryable, column: string, param: string, element: "text" | "bigint"): string {
  return db.engine === "sqlite" ? `${column} in (select value from json_each(${param}))` : `${column} = any(${param}::${element}[])`;
}

/**
 * An address as the store keeps it: an EVM one (0x hex, whose letter case is only a checksum) in
 * lower case, any other (a base58 Solana key, whose case is part of it) as it is.
 */
export function storedAddress(address: string): string {
  return address.startsWith("0x") ? address.toLowerCase() : address;
}

/** `storedAddress` of the parameter `param`, in SQL (the same on both dialects). */
export function storedAddressSql(param: string): string {
  const text = `cast(${param} as text)`;
  return `(case when substr(${text}, 1, 2) = '0x' then lower(${text}) else ${text} end)`;
}
