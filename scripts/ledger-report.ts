/**
 * The reports of `npm run ledger` (scripts/ledger.ts): what the ledger earned, what was not
 * charged, and what our own purchases spent. Only the command reads them; the service never does.
 */
import { nowPlus } from "../src/store/dialect.ts";
import type { Queryable } from "../src/store/store.ts";

/** The UTC day (`YYYY-MM-DD`) of a timestamp column, in the dialect of `db` (only this report groups by day). */
function utcDay(db: Queryable, column: string): string {
  return db.engine === "sqlite" ? `substr(${column}, 1, 10)` : `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD')`;
}

/** Earnings and failures, for `npm run ledger`. */
export async function ledgerReport(db: Queryable, days = 30) {
  const since = nowPlus(db, "-86400.0 * $1");
  const earned = "cast(count(*) as integer) as calls, cast(coalesce(sum(amount_atomic), 0) as text) as earned_atomic";
  const byRoute = await db.query<{ route: string; calls: number; earned_atomic: string }>(
    `select route, ${earned}
       from ledger where outcome = 'settled' and created_at > ${since} group by route order by sum(amount_atomic) desc, route`,
    [days],
  );
  const byDay = await db.query<{ day: string; calls: number; earned_atomic: string }>(
    `select ${utcDay(db, "created_at")} as day, ${earned}
       from ledger where outcome = 'settled' and created_at > ${since} group by 1 order by 1`,
    [days],
  );
  const failures = await db.query<{ outcome: string; reason: string | null; status: number | null; count: number }>(
    `select outcome, reason, status, cast(count(*) as integer) as count from ledger
      where outcome <> 'settled' and created_at > ${since} group by outcome, reason, status order by count(*) desc, outcome`,
    [days],
  );
  return { byRoute, byDay, failures };
}

/** What our purchases spent: in total and over the last `days`, with counts by outcome (for `npm run ledger`). */
export async function purchasesReport(db: Queryable, days = 30) {
  const since = nowPlus(db, "-86400.0 * $1");
  const [total] = await db.query<{ purchases: number; charged_atomic: string }>(
    `select cast(count(*) as integer) as purchases, cast(coalesce(sum(charged_atomic), 0) as text) as charged_atomic
       from our_purchases where created_at > ${since}`,
    [days],
  );
  const byOutcome = await db.query<{ outcome: string; purchases: number; charged_atomic: string }>(
    `select outcome, cast(count(*) as integer) as purchases, cast(coalesce(sum(charged_atomic), 0) as text) as charged_atomic
       from our_purchases where created_at > ${since} group by outcome order by outcome`,
    [days],
  );
  return { purchases: total?.purchases ?? 0, charged_atomic: total?.charged_atomic ?? "0", byOutcome };
}
