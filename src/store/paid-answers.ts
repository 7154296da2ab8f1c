/**
 * Answers that were paid for and settled, kept for the authorisation's validity window, so
 * a buyer whose connection dropped can present the same payment again and get the same
 * answer (body and `PAYMENT-RESPONSE`) without a second settlement.
 */
import type { Queryable } from "./store.ts";

/** Largest answer kept for paid retries; larger ones are answered once only. */
export const MAX_KEPT_ANSWER_BYTES = 1024 * 1024;

/** A kept answer. */
export interface KeptAnswer {
  payer: string;
  nonce: string;
  requestHash: string;
  /** SHA-256 of the exact payment header that bought it: a replay must present the same one. */
  paymentHash: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  settlementTx: string;
  expiresAt: Date;
}

/** Keep an answer; false when it is too large to keep. */
export async function keepAnswer(db: Queryable, answer: KeptAnswer): Promise<boolean> {
  if (Buffer.byteLength(answer.body) > MAX_KEPT_ANSWER_BYTES) return false;
  await db.query(
    `insert into paid_answers (payer, nonce, request_hash, payment_hash, status, headers, body, settlement_tx, expires_at)
     values (lower($1), lower($2), $3, $9, $4, $5::jsonb, $6, $7, $8)
     on conflict (payer, nonce) do nothing`,
    [
      answer.payer,
      answer.nonce,
      answer.requestHash,
      answer.status,
      JSON.stringify(answer.headers),
      answer.body,
      answer.settlementTx,
      answer.expiresAt.toISOString(),
      answer.paymentHash,
    ],
  );
  return true;
}

/** Forget answers whose authorisation can no longer be presented; returns how many. */
export async function purgeExpiredAnswers(db: Queryable): Promise<number> {
  const rows = await db.query<{ n: number }>(
    "with gone as (delete from paid_answers where expires_at <= now() returning 1) select count(*)::int as n from gone",
  );
  return rows[0]?.n ?? 0;
}

/**
 * Finish a ledger row as settled and keep its answer, in one statement (one round trip and,
 * on PGlite, one flush): the hot path of every paid call.
 */
export async function settleAndKeep(
  db: Queryable,
  rowId: number,
  status: number,
  settlementTx: string,
  answer: KeptAnswer | undefined,
): Promise<void> {
  if (!answer) {
    await db.query(
      "update ledger set outcome = 'settled', status = $2, reason = null, settlement_tx = $3, finished_at = now() where id = $1 and outcome in ('pending', 'settlement_unknown')",
      [rowId, status, settlementTx],
    );
    return;
  }
  await db.query(
    `with finished as (
       update ledger set outcome = 'settled', status = $2, reason = null, settlement_tx = $3, finished_at = now()
        where id = $1 and outcome in ('pending', 'settlement_unknown') returning id
     )
     insert into paid_answers (payer, nonce, request_hash, payment_hash, status, headers, body, settlement_tx, expires_at)
     values (lower($4), lower($5), $6, $7, $2, $8::jsonb, $9, $3, $10)
     on conflict (payer, nonce) do nothing`,
    [
      rowId,
      status,
      settlementTx,
      answer.payer,
      answer.nonce,
      answer.requestHash,
      answer.paymentHash,
      JSON.stringify(answer.headers),
      answer.body,
      answer.expiresAt.toISOString(),
    ],
  );
}
