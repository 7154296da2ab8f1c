/**
 * Benchmarks of the durable state, SQLite and PostgreSQL side by side: ledger writes per
 * second (a row opened as pending and then finished, as a paid call does), and the service's
 * own overhead on a paid call on the local chain (server total minus verify, function and
 * settle: the payment gate's ledger, lease and kept-answer work plus HTTP). PostgreSQL is
 * measured when TEST_DATABASE_URL is set (`npm run bench` runs under
 * scripts/ci/with-postgres.sh, which starts a throwaway cluster).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureBuild } from "../src/build-stamp.ts";
import { loadConfig } from "../src/config.ts";
import { startDevnet } from "../src/local/devnet/devnet.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { startService } from "../src/server/service.ts";
import { finishLedgerRow, insertLedgerRow } from "../src/store/ledger.ts";
import { openStore, type Store } from "../src/store/store.ts";
import { measurePaidCalls, paidLineSink, percentile } from "./bench-paid.ts";
import { reportTarget } from "./bench-report.ts";

const QUICK = process.env.BENCH_QUICK === "1";
const WRITES = Number(process.env.BENCH_LEDGER_WRITES ?? (QUICK ? 500 : 2000));
const PAID_CALLS = Number(process.env.BENCH_PAID_CALLS ?? (QUICK ? 20 : 60));

async function ledgerWritesPerSecond(store: Store): Promise<number> {
  const started = performance.now();
  const batch = 8;
  for (let i = 0; i < WRITES; i += batch) {
    await Promise.all(
      Array.from({ length: batch }, async (_, j) => {
        const id = await insertLedgerRow(
          store,
          {
            requestId: `bench-${i + j}`,
            route: "POST /api/payment-verify",
            payer: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
            amountAtomic: "100000",
            asset: base.usdc.address.toLowerCase(),
            network: base.id,
            nonce: `0x${(i + j).toString(16).padStart(64, "0")}`,
            validBefore: null,
            requestHash: "bench",
            instance: "bench",
            paymentId: null,
          },
          { outcome: "pending" },
        );
        await finishLedgerRow(store, id, { outcome: "settled", status: 200, settlementTx: "0xbench" });
      }),
    );
  }
  return WRITES / ((performance.now() - started) / 1000);
}

/** Run the store benchmarks and print their table. */
export async function benchStore(): Promise<void> {
  await ensureBuild();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-bench-store-"));
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const engines: { name: string; open(): Promise<Store> }[] = [
    { name: "SQLite (on disk)", open: () => openStore({ kind: "sqlite", file: path.join(dataDir, "store.sqlite") }) },
  ];
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (pgUrl) engines.push({ name: "PostgreSQL", open: () => openStore({ kind: "postgres", url: pgUrl }) });

  const results: Record<string, Record<string, number | string>> = {};
  try {
    let buyer = 0;
    const overheadOf = async (store: Store) => {
      const lines: Record<string, unknown>[] = [];
      const service = await startService({
        config: loadConfig({ PORT: "0", DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: "0" }),
        devnet,
        store,
        maintenance: false,
        log: createLogger("info", {}, paidLineSink(lines)),
      });
      try {
        const key = (devnet.buyers[buyer++ % devnet.buyers.length] as { privateKey: `0x${string}` }).privateKey;
        return (await measurePaidCalls(service.url, key, PAID_CALLS, lines)).overhead;
      } finally {
        await service.close();
      }
    };
    for (const engine of engines) {
      const store = await engine.open();
      try {
        const writes = await ledgerWritesPerSecond(store);
        const overhead = await overheadOf(store);
        const bound = engine.name === "PostgreSQL" ? 3 : 5;
        reportTarget({
          target: `a paid call's own overhead p50 < ${bound} ms (${engine.name})`,
          figure: `${percentile(overhead, 50).toFixed(2)} ms`,
          reference: `${Math.round(writes)} ledger writes/s`,
          ok: percentile(overhead, 50) < bound,
        });
        results[engine.name] = {
          "ledger writes/s (open+finish)": Math.round(writes),
          "paid-call overhead p50 (ms)": +percentile(overhead, 50).toFixed(2),
          "paid-call overhead p90 (ms)": +percentile(overhead, 90).toFixed(2),
        };
      } finally {
        await store.close();
      }
    }
    if (!pgUrl) results.PostgreSQL = { note: "not measured: run under scripts/ci/with-postgres.sh or set TEST_DATABASE_URL" };
    console.log(
      `\nDurable state: ${WRITES} ledger writes, ${PAID_CALLS} paid calls per engine (targets: overhead p50 < 3 ms on PostgreSQL, < 5 ms on SQLite)`,
    );
    console.table(results);
  } finally {
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchStore().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
