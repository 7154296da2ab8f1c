/**
 * The store itself: migrations on both engines, clear refusals for an unreachable database
 * and for a schema newer than the build, amounts kept to the last digit, SQLite transactions
 * that nothing from outside lands in (and two processes sharing one file), and two service
 * instances on one PostgreSQL acting as one (one function run and one settlement for a
 * payment hammered through both).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ledgerReport } from "../scripts/ledger-report.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { balanceOf, debitBalance } from "../src/store/balances.ts";
import { claimEmbedded, embeddedOwner, releaseEmbedded } from "../src/store/configured.ts";
import { insertLedgerRow, type LedgerPayment } from "../src/store/ledger.ts";
import { MIGRATIONS, type Migration, migrate, SCHEMA_VERSION, SQLITE_MIGRATIONS } from "../src/store/migrations.ts";
import { openStore, type Store, StoreUnavailableError } from "../src/store/store.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { freshDatabase, freshPostgresStore } from "./support/postgres.ts";
import {
  buyerAccount,
  capturingLogger,
  chainClient,
  challengeOf,
  devnet,
  freshSqliteStore,
  signPayment,
  startTestService,
  usdcBalance,
} from "./support/service.ts";

const databaseUrl = inject("databaseUrl");

async function migrationChecks(store: Store, migrations: readonly Migration[]) {
  expect(await store.query("select version, name from schema_migrations order by version")).toEqual(
    migrations.map((m) => ({ version: m.version, name: m.name })),
  );
  expect(await migrate(store)).toEqual([]);
  await store.query("insert into schema_migrations (version, name) values ($1, 'from the future')", [SCHEMA_VERSION + 1]);
  await expect(migrate(store)).rejects.toThrow(
    `The database is on schema version ${SCHEMA_VERSION + 1}, newer than this build knows (${SCHEMA_VERSION}); run a build at least as new as the one that migrated it.`,
  );
}

describe("migrations", () => {
  it("apply once on SQLite, up to the same version as PostgreSQL, and refuse a newer schema", async () => {
    const store = await freshSqliteStore();
    try {
      expect(Math.max(...SQLITE_MIGRATIONS.map((m) => m.version))).toBe(SCHEMA_VERSION);
      await migrationChecks(store, SQLITE_MIGRATIONS);
    } finally {
      await store.close();
    }
  });

  it.runIf(databaseUrl)("apply once on PostgreSQL and refuse a newer schema", async () => {
    const store = await freshPostgresStore(databaseUrl as string);
    try {
      await migrationChecks(store, MIGRATIONS);
    } finally {
      await store.close();
    }
  });
});

/**
 * A database where an earlier build settled one payment on two rows: the migration that makes a
 * payment's settled row unique keeps the first and ends the later one not charged, then refuses
 * another.
 */
async function settledOnceChecks(store: Store) {
  await store.query("drop index ledger_settled_once");
  const twice = `0x${"c1".repeat(32)}`;
  const once = `0x${"c2".repeat(32)}`;
  const settled = { outcome: "settled", status: 200, settlementTx: "0xt1" } as const;
  await insertLedgerRow(store, payment(twice, "POST /api/balance/topup", 1_000_000n), settled);
  await insertLedgerRow(store, { ...payment(twice, "POST /api/balance/topup", 1_000_000n), requestId: "req-again" }, settled);
  await insertLedgerRow(store, payment(once, "POST /api/exact", 10_000n), settled);
  // Back to the schema before 10 (and the later migrations, which run again after it).
  await store.query("alter table ledger drop column client_address");
  await store.query("delete from schema_migrations where version >= 10");
  expect(await migrate(store)).toEqual([10, 11]);
  const payer = payment("", "", 0n).payer;
  expect((await ledgerRowsOf(store, payer, twice)).map((r) => [r.request_id, r.outcome, r.reason])).toEqual([
    [`req-${twice}`, "settled", null],
    ["req-again", "not_charged", "same_payment_settled_once"],
  ]);
  expect((await ledgerRowsOf(store, payer, once)).map((r) => r.outcome)).toEqual(["settled"]);
  await expect(
    insertLedgerRow(store, { ...payment(twice, "POST /api/balance/topup", 1_000_000n), requestId: "req-third" }, settled),
  ).rejects.toThrow(/unique|ledger_settled_once/i);
}

describe("one settled row per payment", () => {
  it("is made so on SQLite, the later duplicates an earlier build left ending not charged", async () => {
    const store = await freshSqliteStore();
    try {
      await settledOnceChecks(store);
    } finally {
      await store.close();
    }
  });

  it.runIf(databaseUrl)("is made so on PostgreSQL, the later duplicates an earlier build left ending not charged", async () => {
    const store = await freshPostgresStore(databaseUrl as string);
    try {
      await settledOnceChecks(store);
    } finally {
      await store.close();
    }
  });
});

/** 2^53 + 1: the first integer a JavaScript number cannot hold, so any trip through a double shows. */
const PAST_DOUBLE = 2n ** 53n + 1n;
/** The largest amount a 64-bit integer holds (9.2 trillion USDC), SQLite's ceiling. */
const INT64_MAX = 2n ** 63n - 1n;

const payment = (nonce: string, route: string, amount: bigint): LedgerPayment => ({
  requestId: `req-${nonce}`,
  route,
  payer: "0x00000000000000000000000000000000000000a1",
  amountAtomic: amount.toString(),
  asset: base.usdc.address.toLowerCase(),
  network: base.id,
  nonce,
  validBefore: 1_900_000_000,
  requestHash: "h",
  instance: "test",
  paymentId: null,
});

/** Amounts written and read back (rows, sums, a balance credited by a top-up and debited) to the last digit. */
async function amountChecks(store: Store) {
  for (const [nonce, amount] of [
    ["0x01", 1n],
    ["0x02", PAST_DOUBLE],
    ["0x03", INT64_MAX],
  ] as const) {
    await insertLedgerRow(store, payment(nonce, "POST /api/exact", amount), { outcome: "not_charged", status: 500 });
    expect((await ledgerRowsOf(store, payment(nonce, "", 0n).payer, nonce)).map((r) => r.amount_atomic)).toEqual([amount.toString()]);
  }
  // Three settled calls of 2^53 + 1: their sum is exact only in integers.
  for (const nonce of ["0x11", "0x12", "0x13"])
    await insertLedgerRow(store, payment(nonce, "POST /api/sum", PAST_DOUBLE), { outcome: "settled", status: 200, settlementTx: "0xt" });
  expect((await ledgerReport(store, 1)).byRoute).toEqual([
    { route: "POST /api/sum", calls: 3, earned_atomic: (3n * PAST_DOUBLE).toString() },
  ]);
  // A settled top-up credits its payer (the ledger's trigger), a debit takes exactly what it says.
  const topup = payment("0x21", "POST /api/balance/topup", PAST_DOUBLE);
  await insertLedgerRow(store, topup, { outcome: "settled", status: 200, settlementTx: "0xt" });
  expect(await balanceOf(store, topup.payer)).toBe(PAST_DOUBLE);
  expect(await debitBalance(store, topup.payer, 2n, "POST /api/chat", "req-debit")).toBe(PAST_DOUBLE - 2n);
  expect(await debitBalance(store, topup.payer, PAST_DOUBLE, "POST /api/chat", "req-too-much")).toBeNull();
  expect(await balanceOf(store, topup.payer)).toBe(PAST_DOUBLE - 2n);
}

describe("amounts", () => {
  it("round-trip exactly on SQLite up to 2^63 - 1, and a larger one is refused rather than rounded", async () => {
    const store = await freshSqliteStore();
    try {
      await amountChecks(store);
      await expect(
        insertLedgerRow(store, payment("0x31", "POST /api/huge", INT64_MAX + 1n), { outcome: "not_charged", status: 500 }),
      ).rejects.toThrow("CHECK constraint failed");
      expect(await ledgerRowsOf(store, payment("0x31", "", 0n).payer, "0x31")).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it.runIf(databaseUrl)("round-trip exactly on PostgreSQL, 2^200 too", async () => {
    const store = await freshPostgresStore(databaseUrl as string);
    try {
      await amountChecks(store);
      await insertLedgerRow(store, payment("0x31", "POST /api/huge", 2n ** 200n), { outcome: "not_charged", status: 500 });
      expect((await ledgerRowsOf(store, payment("0x31", "", 0n).payer, "0x31")).map((r) => r.amount_atomic)).toEqual([
        (2n ** 200n).toString(),
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("SQLite transactions", () => {
  let store: Store;
  beforeAll(async () => {
    store = await freshSqliteStore();
  });
  afterAll(() => store.close());
  const keys = async () => (await store.query<{ key: string }>("select key from inflight order by key")).map((r) => r.key);

  it("let no statement from outside land inside an open transaction, which then rolls back alone", async () => {
    await store.query("delete from inflight");
    let inside!: () => void;
    const begun = new Promise<void>((resolve) => {
      inside = resolve;
    });
    const transaction = store.atomic(async (tx) => {
      await tx.query("insert into inflight (key, instance, expires_at) values ('in-1', 'tx', now())");
      inside();
      // The transaction spans a wait, as one awaiting the chain would.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await tx.query("insert into inflight (key, instance, expires_at) values ('in-2', 'tx', now())");
      throw new Error("roll back");
    });
    await begun;
    // Sent while the transaction is open, on the same single connection.
    const outside = store.query("insert into inflight (key, instance, expires_at) values ('out', 'other', now()) returning key");
    const seen = store.query<{ key: string }>("select key from inflight order by key");
    await expect(transaction).rejects.toThrow("roll back");
    expect(await outside).toEqual([{ key: "out" }]);
    // The read waited for the rollback: it never saw the transaction's uncommitted rows.
    expect((await seen).map((r) => r.key)).toEqual(["out"]);
    expect(await keys()).toEqual(["out"]);
  });

  it("run concurrent transactions one after the other, each whole", async () => {
    await store.query("delete from inflight");
    const order: string[] = [];
    await Promise.all(
      ["a", "b", "c"].map((name) =>
        store.atomic(async (tx) => {
          order.push(`${name} begins`);
          await tx.query("insert into inflight (key, instance, expires_at) values ($1, 'tx', now())", [`${name}-1`]);
          await new Promise((resolve) => setTimeout(resolve, 10));
          await tx.query("insert into inflight (key, instance, expires_at) values ($1, 'tx', now())", [`${name}-2`]);
          order.push(`${name} ends`);
        }),
      ),
    );
    expect(order).toEqual(["a begins", "a ends", "b begins", "b ends", "c begins", "c ends"]);
    expect(await keys()).toEqual(["a-1", "a-2", "b-1", "b-2", "c-1", "c-2"]);
  });

  it("share one file between two processes writing at once, without losing a row or damaging the file", async () => {
    const [{ file }] = (await store.query<{ file: string }>("select file from pragma_database_list where name = 'main'")) as [
      { file: string },
    ];
    await store.query("delete from inflight");
    const writer = (who: string) => `
      const { openStore } = await import(${JSON.stringify(path.resolve("src/store/store.ts"))});
      const store = await openStore({ kind: "sqlite", file: ${JSON.stringify(file)} });
      for (let i = 0; i < 200; i++)
        await store.atomic(async (tx) => {
          const [{ n }] = await tx.query("select count(*) as n from inflight where instance = $1", [${JSON.stringify(who)}]);
          await tx.query("insert into inflight (key, instance, expires_at) values ($1, $2, now())", [${JSON.stringify(who)} + "-" + n, ${JSON.stringify(who)}]);
        });
      await store.close();`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", writer("child")], { stdio: ["ignore", "inherit", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    for (let i = 0; i < 200; i++)
      await store.atomic(async (tx) => {
        const [row] = await tx.query<{ n: number }>("select count(*) as n from inflight where instance = 'parent'");
        await tx.query("insert into inflight (key, instance, expires_at) values ($1, 'parent', now())", [`parent-${row?.n}`]);
      });
    expect([await exited, stderr]).toEqual([0, ""]);
    expect(await store.query("select instance, count(*) as n from inflight group by instance order by instance")).toEqual([
      { instance: "child", n: 200 },
      { instance: "parent", n: 200 },
    ]);
    expect(await store.query("pragma integrity_check")).toEqual([{ integrity_check: "ok" }]);
  }, 60_000);
});

describe("the embedded database file", () => {
  it("is served by one service process: a second is refused while the first lives, and a dead one's claim is taken over", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "x402-test-claim-"));
    const file = path.join(dir, "store.sqlite");
    try {
      // A live process that is not this one: the test runner's parent.
      writeFileSync(`${file}.owner`, String(process.ppid));
      expect(embeddedOwner(file)).toBe(process.ppid);
      expect(() => claimEmbedded(file)).toThrow(
        `The embedded database ${file} is served by process ${process.ppid}; stop it first, or set DATABASE_URL to share a PostgreSQL server between instances.`,
      );
      // A process that has exited.
      const dead = spawnSync(process.execPath, ["-e", "0"]).pid as number;
      writeFileSync(`${file}.owner`, String(dead));
      expect(embeddedOwner(file)).toBeUndefined();
      claimEmbedded(file);
      expect(readFileSync(`${file}.owner`, "utf8")).toBe(String(process.pid));
      releaseEmbedded(file);
      expect(embeddedOwner(file)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

it("an unreachable PostgreSQL is a clear error that hides the password", async () => {
  const error = await openStore({ kind: "postgres", url: "postgres://app:s3cret@127.0.0.1:1/ledger" }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StoreUnavailableError);
  expect((error as Error).message).toMatch(/^Cannot reach the database at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/ledger: /);
  expect((error as Error).message).not.toContain("s3cret");
  // node-postgres reads `password` (and `sslpassword`) from the query string as well.
  const inQuery = await openStore({
    kind: "postgres",
    url: "postgres://app@127.0.0.1:1/ledger?password=s3cret&sslpassword=k3y&sslmode=disable",
  }).catch((e: unknown) => e);
  expect((inQuery as Error).message).toMatch(
    /^Cannot reach the database at postgres:\/\/app@127\.0\.0\.1:1\/ledger\?password=\*\*\*&sslpassword=\*\*\*&sslmode=disable: /,
  );
});

describe.runIf(databaseUrl)("two instances on one PostgreSQL", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  const stores: Store[] = [];
  const services: RunningService[] = [];
  const logs = [capturingLogger("debug"), capturingLogger("debug")];
  beforeAll(async () => {
    db = await freshDatabase(databaseUrl as string);
    for (const [i, log] of logs.entries()) {
      const store = await openStore({ kind: "postgres", url: db.url });
      stores.push(store);
      services.push(await startTestService({ store, log, instance: `test-instance-${i}` }));
    }
  });
  afterAll(async () => {
    for (const s of services) await s.close();
    for (const s of stores) await s.close();
    await db.drop();
  });

  it("run the function once and settle once for one payment sent to both at once", async () => {
    const buyer = buyerAccount(5);
    const before = await usdcBalance(buyer.address);
    const txs = await chainClient().getTransactionCount({ address: devnet().facilitator.address });
    const header = await signPayment(await challengeOf(`${services[0]?.url}/api/payment-verify`, { method: "POST" }), buyer);
    const body = JSON.stringify({ tx_hash: `0x${"71".repeat(32)}` });
    const call = (s: RunningService) =>
      fetch(`${s.url}/api/payment-verify`, {
        method: "POST",
        headers: { "content-type": "application/json", "X-Payment": header },
        body,
      }).then(async (res) => ({
        status: res.status,
        text: await res.text(),
        receipt: res.headers.get("payment-response"),
      }));
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => call(services[i % 2] as RunningService)));
    const ok = results.filter((r) => r.status === 200);
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
    expect(new Set(ok.map((r) => r.receipt)).size).toBe(1);

    // Afterwards either instance answers a retry from the kept answer.
    const late = [await call(services[0] as RunningService), await call(services[1] as RunningService)];
    expect(late.map((r) => [r.status, r.text, r.receipt])).toEqual([
      [200, ok[0]?.text, ok[0]?.receipt],
      [200, ok[0]?.text, ok[0]?.receipt],
    ]);

    const runs = logs.flatMap((l) => l.lines).filter((l) => l.msg === "function answered");
    expect(runs).toHaveLength(1);
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
    expect(await chainClient().getTransactionCount({ address: devnet().facilitator.address })).toBe(txs + 1);
  });
});
