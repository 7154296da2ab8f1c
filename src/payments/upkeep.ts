/**
 * Periodic upkeep of the ledger: record from the chain how rows left open by a crash or a
 * settlement timeout ended (EVM: the authorisation's state and its transfer; Solana: the
 * payment's transaction, found by its scheme), and forget kept answers past the redemption
 * window. A row it records as settled keeps its payer's right to the answer: the gate redeems
 * settled rows (src/payments/gate.ts). A scheduled job: one instance runs it each minute
 * (src/operations/jobs.ts).
 */
import type { AuthorizationReader } from "../chain/authorization.ts";
import type { Logger } from "../log.ts";
import type { JobDefinition } from "../operations/jobs.ts";
import { type AttemptRow, finishLedgerRow, openLedgerRows } from "../store/ledger.ts";
import type { Queryable, Store } from "../store/store.ts";
import { purgeExpired } from "./kept-answers.ts";
import type { PaymentScheme } from "./scheme.ts";

/** Rows younger than this may still be in flight somewhere and are left alone. */
const SETTLE_GRACE_MS = 3 * 60_000;

/** An open ledger row, as resolving its authorisation needs it; `valid_before` in Unix seconds, null when unreadable (then it bounds nothing). */
type OpenAttempt = Pick<AttemptRow, "id" | "payer" | "nonce" | "amount_atomic" | "verified"> & { valid_before: number | null };

/**
 * How an open payment ended on chain, recorded on its open rows (the same reading and rule for
 * the gate's retries and the minute upkeep). A family whose scheme finds the payment's
 * transaction itself (`lookup`; Solana: no authorisation state on chain) looks from the row's
 * opening on; past the time its transaction could land, it never will. EIP-3009: paid to
 * `payTo`, settled; used elsewhere, not charged; unused, a row whose authorisation expired ends
 * and a live one stays open, since its settlement may still land (only one transfer can ever use
 * the nonce). Unverified rows paid nothing. Settled: the first verified row is settled, once; the
 * others are superseded.
 */
export async function resolvePayment(
  store: Queryable,
  reader: { authorizations: AuthorizationReader; lookup: PaymentScheme["settlementOf"] },
  payTo: string,
  rows: readonly (OpenAttempt & { created_at: Date | string })[],
  now = new Date(),
): Promise<{ tx: string | null; stillOpen: boolean; finished: number }> {
  const { authorizations, lookup } = reader;
  let finished = 0;
  const finish = async (id: number, end: Parameters<typeof finishLedgerRow>[2]) => {
    await finishLedgerRow(store, id, end);
    finished++;
  };
  for (const row of rows.filter((r) => !r.verified))
    await finish(row.id, { outcome: "not_charged", status: null, reason: "never_verified" });
  const [first, ...rest] = rows.filter((r) => r.verified);
  if (!first) return { tx: null, stillOpen: false, finished };
  /** The transaction that settled the payment, or none, with why each open row ends now (null: it stays open). */
  const fateOf = async (): Promise<{ tx: string } | { tx: null; endOf: (row: OpenAttempt) => string | null }> => {
    if (lookup) {
      const found = await lookup({ nonce: first.nonce, openedAt: new Date(first.created_at) }, now);
      if (found.tx !== null) return { tx: found.tx };
      const reason = found.final ? "interrupted_before_settlement" : null;
      return { tx: null, endOf: () => reason };
    }
    const tx = await authorizations.findPayment(first.payer, first.nonce, payTo, BigInt(first.amount_atomic), 10_000);
    if (tx) return { tx };
    const used = await authorizations.isUsed(first.payer, first.nonce);
    const expired = (row: OpenAttempt) => row.valid_before !== null && row.valid_before * 1000 < now.getTime();
    return { tx: null, endOf: (row) => (used ? "authorization_used_elsewhere" : expired(row) ? "interrupted_before_settlement" : null) };
  };
  const fate = await fateOf();
  if (fate.tx !== null) {
    await finish(first.id, { outcome: "settled", status: null, reason: "reconciled_on_chain", settlementTx: fate.tx });
    for (const row of rest) await finish(row.id, { outcome: "not_charged", status: null, reason: "same_payment_settled_once" });
    return { tx: fate.tx, stillOpen: false, finished };
  }
  let stillOpen = false;
  for (const row of [first, ...rest]) {
    const reason = fate.endOf(row);
    if (reason) await finish(row.id, { outcome: "not_charged", status: null, reason });
    else stillOpen = true;
  }
  return { tx: null, stillOpen, finished };
}

/**
 * Resolve open rows that no request can still be working on; returns how many were resolved.
 * Rows of a network one of `schemes` looks up itself go to it; the EIP-3009 reader reads the
 * EVM rows.
 */
export async function reconcileLedger(
  store: Store,
  authorizations: AuthorizationReader,
  payTo: string,
  log: Logger,
  now = new Date(),
  schemes: readonly PaymentScheme[] = [],
): Promise<number> {
  const byAuthorization = new Map<string, { network: string; rows: (OpenAttempt & { created_at: Date })[] }>();
  for (const row of await openLedgerRows(store)) {
    if (now.getTime() - new Date(row.created_at).getTime() < SETTLE_GRACE_MS) continue;
    const key = `${row.network}:${row.payer}:${row.nonce}`;
    const group = byAuthorization.get(key) ?? { network: row.network, rows: [] };
    group.rows.push({ ...row, verified: row.verified_at !== null });
    byAuthorization.set(key, group);
  }
  let resolved = 0;
  for (const { network, rows } of byAuthorization.values()) {
    const lookup = schemes.find((s) => s.network === network)?.settlementOf;
    if (lookup || network.startsWith("eip155:"))
      resolved += (await resolvePayment(store, { authorizations, lookup }, payTo, rows, now)).finished;
  }
  if (resolved > 0) log.info("ledger: resolved open rows from the chain", { resolved });
  return resolved;
}

/** The ledger upkeep as a scheduled job (src/operations/jobs.ts): one instance at a time, every minute by default. */
export function ledgerUpkeepJob(
  store: Store,
  authorizations: AuthorizationReader,
  payTo: string,
  log: Logger,
  intervalMs = 60_000,
  schemes: readonly PaymentScheme[] = [],
): JobDefinition {
  return {
    name: "ledger_upkeep",
    intervalMs,
    async run() {
      const resolved = await reconcileLedger(store, authorizations, payTo, log, new Date(), schemes);
      await purgeExpired(store);
      return `${resolved} open row(s) resolved from the chain`;
    },
  };
}
