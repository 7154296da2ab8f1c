/**
 * The payment ledger: one row per request that carried a payment, with what it was for,
 * who paid how much, and how it ended (`settled`, `not_charged` with the reason and status,
 * `settlement_failed`, `settlement_unknown`). Rows are written when the payment is verified
 * (`pending`), so a crash between verify and settle never loses one.
 */
import type { KeptAnswer } from "./paid-answers.ts";
import type { Queryable } from "./store.ts";

/** How a paid request ended. */
export type LedgerOutcome = "pending" | "settled" | "not_charged" | "settlement_failed" | "settlement_unknown";

/** The payment fields of a ledger row. */
export interface LedgerPayment {
  requestId: string;
  route: string;
  payer: string;
  amountAtomic: string;
  asset: string;
  network: string;
  nonce: string;
  validBefore: number | null;
  requestHash: string;
  instance: string;
}

/** A ledger row as read back. */
export interface LedgerRow {
  id: number;
  request_id: string;
  route: string;
  payer: string;
  amount_atomic: string;
  nonce: string;
  valid_before: number | null;
  request_hash: string;
  outcome: LedgerOutcome;
  status: number | null;
  reason: string | null;
  settlement_tx: string | null;
  created_at: Date;
  finished_at: Date | null;
  /** When the facilitator verified the payment; null while (or if never) verified. */
  verified_at: Date | null;
}

// valid_before is buyer-chosen and may exceed a 32-bit integer: read as text, converted below.
const COLUMNS = `id::int as id, request_id, route, payer, amount_atomic::text as amount_atomic, nonce, valid_before::text as valid_before,
  request_hash, outcome, status, reason, settlement_tx, created_at, finished_at, verified_at`;

function toRow(row: Omit<LedgerRow, "valid_before"> & { valid_before: string | null }): LedgerRow {
  const validBefore = row.valid_before === null ? null : Number(row.valid_before);
  return { ...row, valid_before: validBefore !== null && Number.isSafeInteger(validBefore) ? validBefore : null };
}

/** Insert a row; returns its id. */
export async function insertLedgerRow(
  db: Queryable,
  payment: LedgerPayment,
  end: { outcome: LedgerOutcome; status?: number; reason?: string; settlementTx?: string },
): Promise<number> {
  const [row] = await db.query<{ id: number }>(
    `insert into ledger (request_id, route, payer, amount_atomic, asset, network, nonce, valid_before, request_hash, instance, outcome, status, reason, settlement_tx, finished_at)
     values ($1, $2, lower($3), $4, lower($5), $6, lower($7), $8, $9, $10, $11, $12, $13, $14, case when $11 = 'pending' then null else now() end)
     returning id::int as id`,
    [
      payment.requestId,
      payment.route,
      payment.payer,
      payment.amountAtomic,
      payment.asset,
      payment.network,
      payment.nonce,
      payment.validBefore,
      payment.requestHash,
      payment.instance,
      end.outcome,
      end.status ?? null,
      end.reason ?? null,
      end.settlementTx ?? null,
    ],
  );
  return (row as { id: number }).id;
}

/** Record how an open (pending or settlement_unknown) row ended; a final outcome is never overwritten. */
export async function finishLedgerRow(
  db: Queryable,
  id: number,
  end: { outcome: Exclude<LedgerOutcome, "pending">; status: number | null; reason?: string; settlementTx?: string },
): Promise<void> {
  await db.query(
    `update ledger set outcome = $2, status = $3, reason = $4, settlement_tx = coalesce($5, settlement_tx), finished_at = now()
      where id = $1 and outcome in ('pending', 'settlement_unknown')`,
    [id, end.outcome, end.status, end.reason ?? null, end.settlementTx ?? null],
  );
}

/** Mark a row's payment as verified by the facilitator (only verified rows can later count as paid). */
export async function markLedgerRowVerified(db: Queryable, id: number): Promise<void> {
  await db.query("update ledger set verified_at = now() where id = $1 and verified_at is null", [id]);
}

/** The rows of one authorisation, oldest first. */
export async function ledgerRowsOf(db: Queryable, payer: string, nonce: string): Promise<LedgerRow[]> {
  const rows = await db.query<Parameters<typeof toRow>[0]>(
    `select ${COLUMNS} from ledger where payer = lower($1) and nonce = lower($2) order by id`,
    [payer, nonce],
  );
  return rows.map(toRow);
}

/** Rows whose outcome is still open: pending (verified, never finished) or settlement_unknown. */
export async function openLedgerRows(db: Queryable): Promise<LedgerRow[]> {
  const rows = await db.query<Parameters<typeof toRow>[0]>(
    `select ${COLUMNS} from ledger where outcome in ('pending', 'settlement_unknown') order by id`,
  );
  return rows.map(toRow);
}

/** Earnings and failures, for `npm run ledger`. */
export async function ledgerReport(db: Queryable, days = 30) {
  const byRoute = await db.query<{ route: string; calls: number; earned_atomic: string }>(
    `select route, count(*)::int as calls, coalesce(sum(amount_atomic), 0)::text as earned_atomic
       from ledger where outcome = 'settled' and created_at > now() - make_interval(days => $1) group by route order by sum(amount_atomic) desc, route`,
    [days],
  );
  const byDay = await db.query<{ day: string; calls: number; earned_atomic: string }>(
    `select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, count(*)::int as calls, coalesce(sum(amount_atomic), 0)::text as earned_atomic
       from ledger where outcome = 'settled' and created_at > now() - make_interval(days => $1) group by 1 order by 1`,
    [days],
  );
  const failures = await db.query<{ outcome: string; reason: string | null; status: number | null; count: number }>(
    `select outcome, reason, status, count(*)::int as count from ledger
      where outcome <> 'settled' and created_at > now() - make_interval(days => $1) group by outcome, reason, status order by count(*) desc, outcome`,
    [days],
  );
  return { byRoute, byDay, failures };
}

/** An earlier attempt with the same payment and request whose outcome is still open. */
export interface OpenAttempt {
  id: number;
  amount_atomic: string;
  status: number | null;
  verified_at: string | null;
}

/** What the store knows of a payment for one request: its kept answer and its open attempts (one round trip). */
export async function paymentState(
  db: Queryable,
  payer: string,
  nonce: string,
  requestHash: string,
): Promise<{ kept: Omit<KeptAnswer, "payer" | "nonce" | "expiresAt"> | undefined; open: OpenAttempt[] }> {
  const [row] = await db.query<{ kept: unknown; open: unknown }>(
    `select
       (select json_build_object('requestHash', request_hash, 'paymentHash', payment_hash, 'status', status, 'headers', headers,
                                 'body', body, 'settlementTx', settlement_tx)
          from paid_answers where payer = lower($1) and nonce = lower($2) and expires_at > now()) as kept,
       (select coalesce(json_agg(json_build_object('id', id, 'amount_atomic', amount_atomic::text, 'status', status, 'verified_at', verified_at) order by id), '[]'::json)
          from ledger where payer = lower($1) and nonce = lower($2) and request_hash = $3 and outcome in ('pending', 'settlement_unknown')) as open`,
    [payer, nonce, requestHash],
  );
  const parse = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value);
  const kept = parse(row?.kept) as Omit<KeptAnswer, "payer" | "nonce" | "expiresAt"> | null;
  return { kept: kept ?? undefined, open: (parse(row?.open) as OpenAttempt[] | null) ?? [] };
}
