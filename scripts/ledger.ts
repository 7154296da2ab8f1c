/**
 * `npm run ledger [days]`: earnings by route and by day, and the calls that were not
 * charged or whose settlement failed, from the payment ledger (default: the last 30 days).
 * Reads the configured store: PostgreSQL with DATABASE_URL, else the embedded database in
 * DATA_DIR (readable while the service runs).
 */
import { formatUnits } from "viem";
import { ConfigError, loadConfig } from "../src/config.ts";
import { nowPlus } from "../src/store/dialect.ts";
import type { Queryable } from "../src/store/store.ts";
import { ledgerReport, purchasesReport } from "./ledger-report.ts";
import { openStoreForTool, storeDescription } from "./store-tool.ts";

const usdc = (atomic: string) => formatUnits(BigInt(atomic), 6);

/** Totals for `npm run ledger`: credited and spent in the last `days`, and what all balances hold now. */
async function balanceReport(db: Queryable, days = 30) {
  const since = nowPlus(db, "-86400.0 * $1");
  const [totals] = await db.query<{
    credited: string;
    debited: string;
    topups: number;
    debits: number;
    outstanding: string;
    wallets: number;
  }>(
    `select
       cast(coalesce((select sum(amount_atomic) from balance_movements where kind = 'topup' and at > ${since}), 0) as text) as credited,
       cast(coalesce((select sum(amount_atomic) from balance_movements where kind = 'debit' and at > ${since}), 0) as text) as debited,
       cast((select count(*) from balance_movements where kind = 'topup' and at > ${since}) as integer) as topups,
       cast((select count(*) from balance_movements where kind = 'debit' and at > ${since}) as integer) as debits,
       cast(coalesce((select sum(balance_atomic) from balances), 0) as text) as outstanding,
       cast((select count(*) from balances where balance_atomic > 0) as integer) as wallets`,
    [days],
  );
  return totals as NonNullable<typeof totals>;
}

async function main(): Promise<void> {
  const days = Number(process.argv[2] ?? 30);
  if (!Number.isInteger(days) || days <= 0) throw new Error(`days must be a positive integer, got "${process.argv[2]}"`);
  const config = loadConfig();
  const store = await openStoreForTool(config);
  try {
    const report = await ledgerReport(store, days);
    const where = storeDescription(config);
    console.log(`Payment ledger, last ${days} day(s), from ${where}\n`);
    const total = report.byRoute.reduce((sum, r) => sum + BigInt(r.earned_atomic), 0n);
    console.log(`Earned: ${usdc(total.toString())} USDC in ${report.byRoute.reduce((n, r) => n + r.calls, 0)} settled call(s)\n`);
    console.log("By route");
    console.table(report.byRoute.map((r) => ({ route: r.route, calls: r.calls, usdc: usdc(r.earned_atomic) })));
    console.log("By day (UTC)");
    console.table(report.byDay.map((r) => ({ day: r.day, calls: r.calls, usdc: usdc(r.earned_atomic) })));
    console.log("Not charged and failed");
    console.table(report.failures.map((f) => ({ outcome: f.outcome, status: f.status, reason: f.reason, count: f.count })));
    const balances = await balanceReport(store, days);
    console.log("Prepaid balances (chat)");
    console.table([
      { movement: "top-ups credited", count: balances.topups, usdc: usdc(balances.credited) },
      { movement: "messages debited", count: balances.debits, usdc: usdc(balances.debited) },
      { movement: `held now by ${balances.wallets} wallet(s)`, count: null, usdc: usdc(balances.outstanding) },
    ]);
    // Money out, apart from the income above: what the trust runs spent verifying sellers by purchase.
    const spent = await purchasesReport(store, days);
    console.log(
      `Our own purchases (trust runs verifying sellers): ${usdc(spent.charged_atomic)} USDC spent in ${spent.purchases} purchase(s)`,
    );
    console.table(spent.byOutcome.map((o) => ({ outcome: o.outcome, purchases: o.purchases, usdc: usdc(o.charged_atomic) })));
  } finally {
    await store.close();
  }
}

main().catch((error) => {
  console.error(`ledger: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
