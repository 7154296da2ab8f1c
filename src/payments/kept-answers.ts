/**
 * Paid answers kept for the payer: the answer of a settled payment (and the answer held while
 * a settlement's outcome is unknown), stored under the payment's authorisation (payer, nonce)
 * with the request it answered. Only the gate writes them, only for its own settlement, so
 * nothing a third party sends can overwrite one; they are kept for the redemption window
 * (`config.payments.redeemHours`), after which the upkeep forgets them.
 */
import { inArray, nowPlus, storedAddressSql } from "../store/dialect.ts";
import { SETTLE_ROW, settledTwice, supersedeRows } from "../store/ledger.ts";
import type { Queryable } from "../store/store.ts";

/** Largest answer kept for paid retries; a larger one is run again on a retry instead. */
export const MAX_KEPT_ANSWER_BYTES = 1024 * 1024;

/** Response headers kept with an answer (a held answer has no `PAYMENT-RESPONSE`: it is rebuilt from the ledger). */
export const KEPT_HEADERS = ["content-type", "cache-control", "payment-response"] as const;

/** A kept answer. */
export interface KeptAnswer {
  payer: string;
  nonce: string;
  requestHash: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  expiresAt: Date;
}

const INSERT = `insert into paid_answers (payer, nonce, request_hash, status, headers, body, settlement_tx, expires_at)`;
/** An answer replacing the one kept for the same authorisation. */
const REPLACE = `update set request_hash = excluded.request_hash, status = excluded.status, headers = excluded.headers,
       body = excluded.body, settlement_tx = excluded.settlement_tx, expires_at = excluded.expires_at`;

/**
 * Keep `answer`. `replace`: the caller settled (or may have settled) this very authorisation
 * for this request, so its answer replaces any earlier held one; otherwise an existing answer wins.
 */
export async function keepAnswer(db: Queryable, answer: KeptAnswer, replace: boolean, settlementTx = ""): Promise<void> {
  await db.query(
    // A held or re-run answer: its transaction is the ledger's (settleAndKeep stores it with a settled one).
    `${INSERT} values (${storedAddressSql("$1")}, lower($2), $3, $4, $5, $6, $8, $7)
     on conflict (payer, nonce) do ${replace ? REPLACE : "nothing"}`,
    [
      answer.payer,
      answer.nonce,
      answer.requestHash,
      answer.status,
      JSON.stringify(answer.headers),
      answer.body,
      answer.expiresAt.toISOString(),
      settlementTx,
    ],
  );
}

/** The kept answer of an authorisation, if it is still kept. */
export async function keptAnswerOf(
  db: Queryable,
  payer: string,
  nonce: string,
): Promise<Pick<KeptAnswer, "requestHash" | "status" | "headers" | "body"> | undefined> {
  const [row] = await db.query<{ request_hash: string; status: number; headers: unknown; body: string }>(
    `select request_hash, status, headers, body from paid_answers where payer = ${storedAddressSql("$1")} and nonce = lower($2) and expires_at > now()`,
    [payer, nonce],
  );
  if (!row) return undefined;
  const headers = (typeof row.headers === "string" ? JSON.parse(row.headers) : row.headers) as Record<string, string>;
  return { requestHash: row.request_hash, status: row.status, headers, body: row.body };
}

/**
 * Finish a ledger row as settled, close the earlier open rows of the same payment (`superseded`:
 * it is counted once, on this row), keep its answer and release the request's in-flight leases
 * (when they live in the store), in one statement on PostgreSQL (one round trip), in one transaction on SQLite (one commit).
 * This is the hot path of every paid call.
 */
export async function settleAndKeep(
  db: Queryable,
  rowId: number,
  status: number,
  settlementTx: string,
  answer: KeptAnswer | undefined,
  release: { keys: string[]; holder: string } | null = null,
  superseded: readonly number[] = [],
): Promise<void> {
  if (db.engine === "sqlite") {
    // No data-modifying `with` in SQLite: the same steps in one transaction.
    await db.atomic(async (tx) => {
      await tx.query(SETTLE_ROW, [rowId, status, settlementTx]);
      if (superseded.length > 0) await tx.query(supersedeRows(tx, "$1"), [superseded]);
      if (release)
        await tx.query(`delete from inflight where ${inArray(tx, "key", "$1", "text")} and instance = $2`, [release.keys, release.holder]);
      if (answer) await keepAnswer(tx, { ...answer, status }, true, settlementTx);
    });
    return;
  }
  const params: unknown[] = [rowId, status, settlementTx];
  const steps = [`finished as (${SETTLE_ROW} returning id)`];
  if (release) {
    params.push(release.keys, release.holder);
    steps.push("released as (delete from inflight where key = any($4::text[]) and instance = $5 returning key)");
  }
  if (superseded.length > 0) {
    params.push(superseded);
    steps.push(`superseded as (${supersedeRows(db, `$${params.length}`)} returning id)`);
  }
  let sql = `with ${steps.join(", ")} select 1`;
  if (answer) {
    const at = params.length;
    params.push(
      answer.payer,
      answer.nonce,
      answer.requestHash,
      JSON.stringify(answer.headers),
      answer.body,
      answer.expiresAt.toISOString(),
    );
    const p = (i: number) => `$${at + i}`;
    sql = `with ${steps.join(", ")}
     ${INSERT} values (${storedAddressSql(p(1))}, lower(${p(2)}), ${p(3)}, $2, ${p(4)}, ${p(5)}, $3, ${p(6)})
     on conflict (payer, nonce) do ${REPLACE}`;
  }
  try {
    await db.query(sql, params);
  } catch (error) {
    // Another row of this payment turned settled while this statement ran (the upkeep recording an
    // earlier attempt from this very transfer): the unique index refused the whole statement.
    // Run again, it sees that row, ends this one `same_payment_settled_once`, and still keeps
    // the answer and frees the leases; left undone, a repeat would not get this answer back.
    // This needs `db` to run each statement on its own (the pool): inside a transaction PostgreSQL
    // refuses every statement after an error, so the second run would fail too.
    if (!settledTwice(error)) throw error;
    await db.query(sql, params);
  }
}

/** Forget kept answers, Sign-In-With-X nonces and in-flight leases past their time; returns how many answers went. */
export async function purgeExpired(db: Queryable): Promise<number> {
  await db.query("delete from siwx_nonces where expires_at <= now()");
  await db.query(`delete from inflight where expires_at <= ${nowPlus(db, "-3600")}`);
  const gone = await db.query("delete from paid_answers where expires_at <= now() returning 1 as gone");
  return gone.length;
}

/** Use a Sign-In-With-X nonce once: false when it was used before. */
export async function useSiwxNonce(db: Queryable, nonce: string, expiresAt: Date): Promise<boolean> {
  const rows = await db.query(
    "insert into siwx_nonces (nonce, expires_at) values ($1, $2) on conflict (nonce) do nothing returning nonce",
    [nonce, expiresAt.toISOString()],
  );
  return rows.length === 1;
}
