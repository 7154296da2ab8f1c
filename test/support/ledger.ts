/**
 * Test support: reading the ledger and our purchases back as the service wrote them, with the
 * columns and conversions of src/store/ledger.ts (the service itself never reads them this way).
 */

import { storedAddressSql } from "../../src/store/dialect.ts";
import { COLUMNS, type LedgerRow, type OurPurchaseRow, PURCHASE_COLUMNS, toPurchaseRow, toRow } from "../../src/store/ledger.ts";
import type { Queryable } from "../../src/store/store.ts";

/** The rows of one authorisation, oldest first. */
export async function ledgerRowsOf(db: Queryable, payer: string, nonce: string): Promise<LedgerRow[]> {
  const rows = await db.query<Parameters<typeof toRow>[0]>(
    `select ${COLUMNS} from ledger where payer = ${storedAddressSql("$1")} and nonce = lower($2) order by id`,
    [payer, nonce],
  );
  return rows.map(toRow);
}

/** Our purchases of one trust run, oldest first. */
export async function purchasesOfRun(db: Queryable, runId: number): Promise<OurPurchaseRow[]> {
  const rows = await db.query<Parameters<typeof toPurchaseRow>[0]>(
    `select ${PURCHASE_COLUMNS} from our_purchases where run_id = $1 order by id`,
    [runId],
  );
  return rows.map(toPurchaseRow);
}
