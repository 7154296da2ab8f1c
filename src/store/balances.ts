/**
 * The prepaid balances' SQL (what they mean: src/payments/balances.ts): a wallet's balance, the
 * debit that cannot overdraw, the debit that bought a route's content (read again by signing
 * in), and a wallet's movements and debits per route (`GET /api/balance`). Credits are the
 * ledger's trigger (src/store/migrations.ts).
 */
import { inArray, nowPlus } from "./dialect.ts";
import type { AttemptRow } from "./ledger.ts";
import type { Queryable } from "./store.ts";

/** The balance of `wallet` in atomic USDC (0 when it never topped up). */
export async function balanceOf(db: Queryable, wallet: string): Promise<bigint> {
  const [row] = await db.query<{ balance: string }>(
    "select cast(balance_atomic as text) as balance from balances where wallet = lower($1)",
    [wallet],
  );
  return BigInt(row?.balance ?? "0");
}

/**
 * Take `amountAtomic` from `wallet`'s balance and record the movement, in one statement; the
 * balance left, or null (nothing taken) when it does not cover the amount.
 */
export async function debitBalance(
  db: Queryable,
  wallet: string,
  amountAtomic: bigint,
  route: string,
  requestId: string,
): Promise<bigint | null> {
  if (db.engine === "sqlite") {
    // No data-modifying `with` in SQLite: the same two writes in one transaction.
    return db.atomic(async (tx) => {
      const [spent] = await tx.query<{ balance: string }>(
        `update balances set balance_atomic = balance_atomic - cast($2 as integer), updated_at = now()
          where wallet = lower($1) and balance_atomic >= cast($2 as integer)
          returning wallet, cast(balance_atomic as text) as balance`,
        [wallet, amountAtomic],
      );
      if (!spent) return null;
      await tx.query(
        "insert into balance_movements (wallet, kind, amount_atomic, route, request_id) values (lower($1), 'debit', $2, $3, $4)",
        [wallet, amountAtomic, route, requestId],
      );
      return BigInt(spent.balance);
    });
  }
  const [row] = await db.query<{ balance: string | null }>(
    `with spent as (
       update balances set balance_atomic = balance_atomic - $2::numeric, updated_at = now()
        where wallet = lower($1) and balance_atomic >= $2::numeric
        returning wallet, balance_atomic),
     moved as (
       insert into balance_movements (wallet, kind, amount_atomic, route, request_id)
       select wallet, 'debit', $2::numeric, $3, $4 from spent returning id)
     select (select balance_atomic::text from spent) as balance, (select count(*) from moved) as moved`,
    [wallet, amountAtomic.toString(), route, requestId],
  );
  return row?.balance == null ? null : BigInt(row.balance);
}

/**
 * The latest debit of `wallet` for any of `routes` within `hours`, as the settled payment a
 * re-read redeems: paid from the balance, so with no authorisation (nonce `0x`, as a balance
 * call's payment has) and no transaction.
 */
export async function lastDebitFor(
  db: Queryable,
  wallet: string,
  routes: readonly string[],
  hours: number,
): Promise<AttemptRow | undefined> {
  const [row] = await db.query<{ id: number; wallet: string; route: string; amount: string; at: Date | string }>(
    `select cast(id as integer) as id, wallet, route, cast(amount_atomic as text) as amount, at from balance_movements
      where wallet = lower($1) and kind = 'debit' and ${inArray(db, "route", "$2", "text")} and at > ${nowPlus(db, "-3600.0 * $3")}
      order by id desc limit 1`,
    [wallet, routes, hours],
  );
  if (!row) return undefined;
  return {
    id: row.id,
    payer: row.wallet,
    nonce: "0x",
    route: row.route,
    // No request is recorded with a debit: a re-read is of the route's content, not of one request.
    request_hash: "",
    payment_id: null,
    outcome: "settled",
    verified: true,
    amount_atomic: row.amount,
    settlement_tx: null,
    created_at: new Date(row.at).toISOString(),
    valid_before: null,
    client_address: null,
  };
}

/** USD of atomic USDC (6 decimals). */
export function usdOf(atomic: bigint): number {
  return Number(atomic) / 1_000_000;
}

/** The latest credits and debits of `wallet` (amounts in USD), newest first, as `GET /api/balance` answers them. */
export async function movementsOf(db: Queryable, wallet: string, limit = 20) {
  const rows = await db.query<{ at: Date | string; kind: "topup" | "debit"; amount: string; route: string; request_id: string }>(
    `select at, kind, cast(amount_atomic as text) as amount, route, request_id from balance_movements
      where wallet = lower($1) order by id desc limit $2`,
    [wallet, limit],
  );
  return rows.map((r) => ({
    at: new Date(r.at).toISOString(),
    kind: r.kind,
    amount: usdOf(BigInt(r.amount)),
    route: r.route,
    request_id: r.request_id,
  }));
}

/** Every debit of `wallet` totalled per route, largest first. */
export async function debitsByRoute(db: Queryable, wallet: string): Promise<{ route: string; debits: number; amount: number }[]> {
  const rows = await db.query<{ route: string; debits: number; amount: string }>(
    `select route, cast(count(*) as integer) as debits, cast(sum(amount_atomic) as text) as amount from balance_movements
      where wallet = lower($1) and kind = 'debit' group by route order by sum(amount_atomic) desc, route`,
    [wallet],
  );
  return rows.map((r) => ({ route: r.route, debits: Number(r.debits), amount: usdOf(BigInt(r.amount)) }));
}
