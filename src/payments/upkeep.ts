/**
 * Periodic upkeep of the ledger: record from the chain how rows left open by a crash or a
 * settlement timeout ended, and forget kept answers past the redemption window. A row it
 * records as settled keeps its payer's right to the answer: the gate redeems settled rows
 * (src/payments/gate.ts). Runs at start and then every minute; several instances may run it together.
 */
import type { AuthorizationReader } from "../chain/authorization.ts";
import type { Logger } from "../log.ts";
import { finishLedgerRow, openLedgerRows } from "../store/ledger.ts";
import type { Store } from "../store/store.ts";
import { purgeExpired } from "./kept-answers.ts";

/** Rows younger than this may still be in flight somewhere and are left alone. */
const SETTLE_GRACE_MS = 3 * 60_000;

/** Resolve open rows that no request can still be working on; returns how many were resolved. */
export async function reconcileLedger(
  store: Store,
  authorizations: AuthorizationReader,
  payTo: string,
  log: Logger,
  now = new Date(),
): Promise<number> {
  let resolved = 0;
  for (const row of await openLedgerRows(store)) {
    if (now.getTime() - new Date(row.created_at).getTime() < SETTLE_GRACE_MS) continue;
    if (row.verified_at === null) {
      // Never verified: the header was refused or the request died first; it paid nothing.
      await finishLedgerRow(store, row.id, { outcome: "not_charged", status: row.status, reason: "never_verified" });
      resolved++;
      continue;
    }
    const tx = await authorizations.findPayment(row.payer, row.nonce, payTo, BigInt(row.amount_atomic), 10_000);
    if (tx) {
      await finishLedgerRow(store, row.id, { outcome: "settled", status: row.status, reason: "reconciled_on_chain", settlementTx: tx });
      resolved++;
    } else if (await authorizations.isUsed(row.payer, row.nonce)) {
      // Used, but not to pay us: cancelled or spent elsewhere.
      await finishLedgerRow(store, row.id, { outcome: "not_charged", status: row.status, reason: "authorization_used_elsewhere" });
      resolved++;
    } else if (row.valid_before !== null && row.valid_before * 1000 < now.getTime()) {
      // Expired and unused: it can never be settled now.
      await finishLedgerRow(store, row.id, { outcome: "not_charged", status: row.status, reason: "interrupted_before_settlement" });
      resolved++;
    }
  }
  if (resolved > 0) log.info("ledger: resolved open rows from the chain", { resolved });
  return resolved;
}

/** Start the upkeep loop; returns a function that stops it. */
export function startLedgerMaintenance(
  store: Store,
  authorizations: AuthorizationReader,
  payTo: string,
  log: Logger,
  everyMs = 60_000,
): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      await reconcileLedger(store, authorizations, payTo, log);
      await purgeExpired(store);
    } catch (error) {
      log.warn("ledger upkeep failed; will retry", { error: error as Error });
    } finally {
      running = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
