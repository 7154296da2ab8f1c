/**
 * The payment ledger: one row per request that carried a payment, with what it was for,
 * who paid how much, and how it ended (`settled`, `not_charged` with the reason and status,
 * `settlement_failed`, `settlement_unknown`). Rows are written when the payment is verified
 * (`pending`), so a crash between verify and settle never loses one.
 */
import { inArray, jsonObject, nowPlus, storedAddressSql } from "./dialect.ts";
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
  /** The buyer's `payment-identifier` id, when it sent one. */
  paymentId: string | null;
  /**
   * The address of the client that presented it, as its rate limits key it (src/limits/client-key.ts);
   * null or absent when unknown. A bare retry of a settled payment is answered only to the same one.
   */
  client?: string | null;
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
export const COLUMNS = `cast(id as integer) as id, request_id, route, payer, cast(amount_atomic as text) as amount_atomic, nonce, cast(valid_before as text) as valid_before,
  request_hash, outcome, status, reason, settlement_tx, created_at, finished_at, verified_at`;

export function toRow(row: Omit<LedgerRow, "valid_before"> & { valid_before: string | null }): LedgerRow {
  const validBefore = row.valid_before === null ? null : Number(row.valid_before);
  return { ...row, valid_before: validBefore !== null && Number.isSafeInteger(validBefore) ? validBefore : null };
}

/** The payment columns of a row, in the order of `paymentParams` ($1-$12). */
const PAYMENT_COLUMNS =
  "request_id, route, payer, amount_atomic, asset, network, nonce, valid_before, request_hash, instance, payment_id, client_address";

/** `payment` as the parameters $1-$12 of a statement that writes PAYMENT_COLUMNS. */
function paymentParams(payment: LedgerPayment): unknown[] {
  return [
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
    payment.paymentId,
    payment.client ?? null,
  ];
}

/** Insert a row; returns its id. */
export async function insertLedgerRow(
  db: Queryable,
  payment: LedgerPayment,
  end: { outcome: LedgerOutcome; status?: number; reason?: string; settlementTx?: string },
): Promise<number> {
  const [row] = await db.query<{ id: number }>(
    `insert into ledger (${PAYMENT_COLUMNS}, outcome, status, reason, settlement_tx, finished_at)
     values ($1, $2, ${storedAddressSql("$3")}, $4, ${storedAddressSql("$5")}, $6, lower($7), $8, $9, $10, $11, $12, $13, $14, $15, $16, case when $13 = 'pending' then null else now() end)
     returning cast(id as integer) as id`,
    [...paymentParams(payment), end.outcome, end.status ?? null, end.reason ?? null, end.settlementTx ?? null],
  );
  return (row as { id: number }).id;
}

/** Whether the ledger knows a settled or open row of the payment $3/$7 (payer, nonce) or of its payment-identifier id $11. */
const KNOWN_ATTEMPT = `select exists (select 1 from ledger where payer = ${storedAddressSql("$3")} and nonce = lower($7) and outcome in ('settled', 'pending', 'settlement_unknown'))
  or (cast($11 as text) is not null and exists (select 1 from ledger where payment_id = $11 and outcome in ('settled', 'pending', 'settlement_unknown'))) as k`;

/** Leases to take in the same statement (an in-flight registry shared through the store, src/payments/inflight.ts). */
export interface LeaseClaim {
  keys: string[];
  holder: string;
  leaseSeconds: number;
}

/**
 * The first attempt of an authorisation nobody has presented before, in one round trip: when
 * the ledger knows no settled or open row of this payer and nonce (nor of its payment-identifier
 * id), take `claim`'s leases and, holding all of them, insert the pending row. `known` means
 * nothing was written or claimed (the caller takes the careful path); `claimed` lists the keys
 * taken, which the caller releases when the row was not written.
 */
export async function openFreshAttempt(
  db: Queryable,
  payment: LedgerPayment,
  claim: LeaseClaim | null,
): Promise<{ known: boolean; rowId: number | null; claimed: string[] }> {
  if (db.engine === "sqlite") return openFreshAttemptInSteps(db, payment, claim);
  const params = paymentParams(payment);
  // INSERT ... SELECT does not infer parameter types from the columns: each is cast.
  const values = `select $1::text, $2::text, ${storedAddressSql("$3")}, $4::numeric, ${storedAddressSql("$5")}, $6::text, lower($7::text), $8::bigint, $9::text, $10::text, $11::text, $12::text, 'pending'`;
  let sql: string;
  if (claim) {
    params.push(claim.holder, claim.leaseSeconds, claim.keys);
    sql = `with known as (${KNOWN_ATTEMPT}),
      claim as (
        insert into inflight (key, instance, expires_at)
        select key, $13, now() + make_interval(secs => $14) from unnest($15::text[]) as key where not (select k from known)
        on conflict (key) do update set instance = excluded.instance, expires_at = excluded.expires_at where inflight.expires_at <= now()
        returning key),
      opened as (
        insert into ledger (${PAYMENT_COLUMNS}, outcome) ${values}
        where not (select k from known) and (select count(*) from claim) = cardinality($15::text[])
        returning id::int as id)
      select (select k from known) as known, (select id from opened) as id, coalesce((select array_agg(key) from claim), '{}') as claimed`;
  } else {
    sql = `with known as (${KNOWN_ATTEMPT}),
      opened as (insert into ledger (${PAYMENT_COLUMNS}, outcome) ${values} where not (select k from known) returning id::int as id)
      select (select k from known) as known, (select id from opened) as id`;
  }
  const [row] = await db.query<{ known: boolean; id: number | null; claimed?: string[] }>(sql, params);
  if (!row) throw new Error("openFreshAttempt returned no row");
  return { known: row.known, rowId: row.id, claimed: row.claimed ?? [] };
}

/**
 * `openFreshAttempt` on SQLite, which has no data-modifying `with`: the same steps as
 * statements of one transaction (one writer at a time, so nothing lands between them).
 */
async function openFreshAttemptInSteps(
  db: Queryable,
  payment: LedgerPayment,
  claim: LeaseClaim | null,
): Promise<{ known: boolean; rowId: number | null; claimed: string[] }> {
  const params = paymentParams(payment);
  return db.atomic(async (tx) => {
    // SQLite refuses a parameter its statement does not name: KNOWN_ATTEMPT names up to $11.
    const [known] = await tx.query<{ k: number }>(KNOWN_ATTEMPT, params.slice(0, 11));
    if (known?.k) return { known: true, rowId: null, claimed: [] };
    const claimed: string[] = [];
    for (const key of claim?.keys ?? []) {
      const rows = await tx.query(
        `insert into inflight (key, instance, expires_at) values ($1, $2, ${nowPlus(tx, "$3")})
         on conflict (key) do update set instance = excluded.instance, expires_at = excluded.expires_at where inflight.expires_at <= now()
         returning key`,
        [key, claim?.holder, claim?.leaseSeconds],
      );
      if (rows.length === 1) claimed.push(key);
    }
    if (claimed.length < (claim?.keys.length ?? 0)) return { known: false, rowId: null, claimed };
    const [row] = await tx.query<{ id: number }>(
      `insert into ledger (${PAYMENT_COLUMNS}, outcome) values ($1, $2, ${storedAddressSql("$3")}, $4, ${storedAddressSql("$5")}, $6, lower($7), $8, $9, $10, $11, $12, 'pending') returning id`,
      params,
    );
    return { known: false, rowId: row?.id ?? null, claimed };
  });
}

/** Why a row of a payment settled on another row is not counted. */
const SETTLED_ONCE = "same_payment_settled_once";

/**
 * Whether another row of the updated row's payment (payer, nonce) is settled. One authorisation
 * moves money once, so a second row of it turning settled would count (and credit, for a top-up)
 * the same payment twice: it ends `not_charged` instead. On PostgreSQL two such statements at
 * the same moment may both see none; the unique index `ledger_settled_once` refuses the second.
 */
const SETTLED_ELSEWHERE = `exists (select 1 from ledger s where s.payer = ledger.payer and s.nonce = ledger.nonce and s.outcome = 'settled' and s.id <> ledger.id)`;

/**
 * Settle row $1 with status $2 and transaction $3, whatever it said before (a confirmed
 * settlement is the truth, e.g. a row closed while its settlement was in flight), unless its
 * payment is settled on another row.
 */
export const SETTLE_ROW = `update ledger set outcome = case when ${SETTLED_ELSEWHERE} then 'not_charged' else 'settled' end, status = $2,
  reason = case when ${SETTLED_ELSEWHERE} then '${SETTLED_ONCE}' end, settlement_tx = $3, finished_at = now() where id = $1`;

/** Close the open rows whose ids are in the array parameter `param`: their payment is settled on another row. */
export const supersedeRows = (db: Queryable, param: string) =>
  `update ledger set outcome = 'not_charged', reason = '${SETTLED_ONCE}', finished_at = now()
    where ${inArray(db, "id", param, "bigint")} and outcome in ('pending', 'settlement_unknown')`;

/** Whether `error` is PostgreSQL refusing a second settled row of one payment (`ledger_settled_once`). */
export function settledTwice(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string } | null;
  return e?.code === "23505" && e.constraint === "ledger_settled_once";
}

/**
 * Record how an open (pending or settlement_unknown) row ended (a null status keeps the row's);
 * a final outcome is never overwritten, and a payment settled on another row is not settled again.
 */
export async function finishLedgerRow(
  db: Queryable,
  id: number,
  end: { outcome: Exclude<LedgerOutcome, "pending">; status: number | null; reason?: string; settlementTx?: string },
): Promise<void> {
  const elsewhere = `$2 = 'settled' and ${SETTLED_ELSEWHERE}`;
  try {
    await db.query(
      `update ledger set outcome = case when ${elsewhere} then 'not_charged' else $2 end, status = coalesce($3, status),
         reason = case when ${elsewhere} then '${SETTLED_ONCE}' else $4 end, settlement_tx = coalesce($5, settlement_tx), finished_at = now()
        where id = $1 and outcome in ('pending', 'settlement_unknown')`,
      [id, end.outcome, end.status, end.reason ?? null, end.settlementTx ?? null],
    );
  } catch (error) {
    // Another row of the payment was settled by a statement running at the same moment: that one counts.
    if (end.outcome !== "settled" || !settledTwice(error)) throw error;
    await finishLedgerRow(db, id, { ...end, outcome: "not_charged", reason: SETTLED_ONCE });
  }
}

/** Mark a row's payment as verified by the facilitator (only verified rows can later count as paid). */
export async function markLedgerRowVerified(db: Queryable, id: number): Promise<void> {
  await db.query("update ledger set verified_at = now() where id = $1 and verified_at is null", [id]);
}

/** Rows whose outcome is still open: pending (verified, never finished) or settlement_unknown. */
export async function openLedgerRows(db: Queryable): Promise<(LedgerRow & { network: string })[]> {
  const rows = await db.query<Parameters<typeof toRow>[0] & { network: string }>(
    `select ${COLUMNS}, network from ledger where outcome in ('pending', 'settlement_unknown') order by id`,
  );
  return rows.map((row) => ({ ...toRow(row), network: row.network }));
}

/** A row of one authorisation, as the payment gate needs it (src/payments/gate.ts). */
export interface AttemptRow {
  id: number;
  payer: string;
  nonce: string;
  route: string;
  request_hash: string;
  payment_id: string | null;
  outcome: LedgerOutcome;
  verified: boolean;
  amount_atomic: string;
  settlement_tx: string | null;
  created_at: string;
  valid_before: string | null;
  /** The client that presented it (null: unknown, or a row written before clients were recorded). */
  client_address: string | null;
}

/** A ledger row as the JSON object of an `AttemptRow` (`verified` is 1/0 on SQLite: read it as truthy). */
const attempt = (
  db: Queryable,
) => `${jsonObject(db)}('id', id, 'payer', payer, 'nonce', nonce, 'route', route, 'request_hash', request_hash,
  'payment_id', payment_id, 'outcome', outcome, 'verified', verified_at is not null, 'amount_atomic', cast(amount_atomic as text),
  'settlement_tx', settlement_tx, 'created_at', created_at, 'valid_before', cast(valid_before as text), 'client_address', client_address)`;

/** The `AttemptRow`s of the rows a `from ... where` selects, as a JSON array in id order (empty when none). */
const attempts = (db: Queryable) =>
  db.engine === "sqlite" ? `json_group_array(${attempt(db)} order by id)` : `coalesce(json_agg(${attempt(db)} order by id), '[]'::json)`;

const parseJson = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value);

/** An `AttemptRow` read from its JSON (null when absent); SQLite's JSON has 1/0 for `verified`. */
const attemptOf = (value: unknown): AttemptRow | null => {
  const row = parseJson(value) as AttemptRow | null;
  return row && { ...row, verified: Boolean(row.verified) };
};
const attemptsOfJson = (value: unknown): AttemptRow[] =>
  ((parseJson(value) as AttemptRow[] | null) ?? []).map((r) => attemptOf(r) as AttemptRow);

/**
 * What the ledger knows of one authorisation (one round trip): its settled row, its rows still
 * open, and the settled row that carried `paymentId` (maybe another authorisation of the payer).
 */
export async function attemptsOf(
  db: Queryable,
  payer: string,
  nonce: string,
  paymentId: string | null,
): Promise<{ settled: AttemptRow | undefined; open: AttemptRow[]; byId: AttemptRow | undefined; byIdOpen: AttemptRow[] }> {
  const [row] = await db.query<{ settled: unknown; open: unknown; by_id: unknown; by_id_open: unknown }>(
    `select
       (select ${attempt(db)} from ledger where payer = ${storedAddressSql("$1")} and nonce = lower($2) and outcome = 'settled' order by id limit 1) as settled,
       (select ${attempts(db)} from ledger
         where payer = ${storedAddressSql("$1")} and nonce = lower($2) and outcome in ('pending', 'settlement_unknown')) as open,
       (select ${attempt(db)} from ledger where cast($3 as text) is not null and payment_id = $3 and outcome = 'settled' order by id limit 1) as by_id,
       (select ${attempts(db)} from ledger where cast($3 as text) is not null and payment_id = $3
         and payer = ${storedAddressSql("$1")} and nonce <> lower($2) and outcome in ('pending', 'settlement_unknown')) as by_id_open`,
    [payer, nonce, paymentId],
  );
  return {
    settled: attemptOf(row?.settled) ?? undefined,
    open: attemptsOfJson(row?.open),
    byId: attemptOf(row?.by_id) ?? undefined,
    byIdOpen: attemptsOfJson(row?.by_id_open),
  };
}

/**
 * The payer's latest settled payment within `hours` of either the same request (`requestHash`:
 * Sign-In-With-X redemption) or any of `routes` (re-reading bought content by signing in).
 */
export async function lastSettledFor(
  db: Queryable,
  payer: string,
  of: { requestHash: string } | { routes: readonly string[] },
  hours: number,
): Promise<AttemptRow | undefined> {
  const [filter, value] = "requestHash" in of ? ["request_hash = $2", of.requestHash] : [inArray(db, "route", "$2", "text"), of.routes];
  const [row] = await db.query<{ a: unknown }>(
    `select ${attempt(db)} as a from ledger where payer = ${storedAddressSql("$1")} and ${filter} and outcome = 'settled'
       and created_at > ${nowPlus(db, "-3600.0 * $3")} order by id desc limit 1`,
    [payer, value, hours],
  );
  return row ? (attemptOf(row.a) ?? undefined) : undefined;
}

/*
 * Our own purchases: what the trust runs spent buying from sellers to verify them. Kept in
 * their own table, apart from the income above: a purchase is money going out of the
 * operator's buyer wallet, never a payment received.
 */

/** One purchase to record (see src/intel/purchase.ts). */
export interface OurPurchase {
  origin: string;
  endpoint: string;
  method: string;
  payer: string;
  pay_to: string | null;
  network: string;
  asset: string;
  /** The price quoted (atomic USDC). */
  price_atomic: string;
  /** Signed by the buyer's client, reserved from the budget (atomic). */
  signed_atomic: string;
  /** Authorizations the client signed. */
  signed: number;
  /** Of those, used on chain. */
  settlements: number;
  /** The buyer's USDC balance before minus after (atomic), as read on chain. */
  charged_atomic: string;
  outcome: string;
  /** HTTP status of the paid call; null when none came. */
  status: number | null;
  content_type: string | null;
  body_bytes: number;
  /** The settlement transaction of the first used authorization, when found. */
  settlement_tx: string | null;
  detail: string;
  at: Date;
}

/** A recorded purchase as read back. */
export interface OurPurchaseRow extends Omit<OurPurchase, "at"> {
  id: number;
  run_id: number | null;
  created_at: string;
}

export const PURCHASE_COLUMNS = `cast(id as integer) as id, cast(run_id as integer) as run_id, origin, endpoint, method, payer, pay_to, network, asset,
  cast(price_atomic as text) as price_atomic, cast(signed_atomic as text) as signed_atomic, signed, settlements,
  cast(charged_atomic as text) as charged_atomic, outcome, status, content_type, body_bytes, settlement_tx, detail, created_at`;

export function toPurchaseRow(row: Omit<OurPurchaseRow, "created_at"> & { created_at: unknown }): OurPurchaseRow {
  const at = row.created_at instanceof Date ? row.created_at : new Date(String(row.created_at));
  return { ...row, run_id: row.run_id === null ? null : Number(row.run_id), created_at: at.toISOString() };
}

/** Record one of our purchases; returns its id. */
export async function recordPurchase(db: Queryable, runId: number | null, p: OurPurchase): Promise<number> {
  const [row] = await db.query<{ id: number }>(
    `insert into our_purchases (run_id, origin, endpoint, method, payer, pay_to, network, asset, price_atomic, signed_atomic, signed,
       settlements, charged_atomic, outcome, status, content_type, body_bytes, settlement_tx, detail, created_at)
     values ($1, $2, $3, $4, ${storedAddressSql("$5")}, ${storedAddressSql("$6")}, $7, ${storedAddressSql("$8")}, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
     returning cast(id as integer) as id`,
    [
      runId,
      p.origin,
      p.endpoint,
      p.method,
      p.payer,
      p.pay_to,
      p.network,
      p.asset,
      p.price_atomic,
      p.signed_atomic,
      p.signed,
      p.settlements,
      p.charged_atomic,
      p.outcome,
      p.status,
      p.content_type,
      p.body_bytes,
      p.settlement_tx,
      p.detail,
      p.at.toISOString(),
    ],
  );
  return (row as { id: number }).id;
}

/** The latest purchase of each of `origins` (any run), by origin. */
export async function lastPurchases(db: Queryable, origins: readonly string[]): Promise<Map<string, OurPurchaseRow>> {
  if (origins.length === 0) return new Map();
  const rows = await db.query<Parameters<typeof toPurchaseRow>[0]>(
    `select ${PURCHASE_COLUMNS} from our_purchases p
      where ${inArray(db, "p.origin", "$1", "text")}
        and p.id = (select max(q.id) from our_purchases q where q.origin = p.origin)`,
    [origins],
  );
  return new Map(rows.map((r) => [r.origin, toPurchaseRow(r)]));
}

/** The latest purchase of each origin bought from, most recent first, at most `limit` origins. */
export async function recentPurchasesByOrigin(db: Queryable, limit: number): Promise<OurPurchaseRow[]> {
  const rows = await db.query<Parameters<typeof toPurchaseRow>[0]>(
    `select ${PURCHASE_COLUMNS} from our_purchases p
      where p.id = (select max(q.id) from our_purchases q where q.origin = p.origin)
      order by p.id desc limit $1`,
    [limit],
  );
  return rows.map(toPurchaseRow);
}
