/**
 * The store itself: migrations on both engines, clear refusals for an unreachable database
 * and for a schema newer than the build, and two service instances on one PostgreSQL acting
 * as one (one function run and one settlement for a payment hammered through both).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunningService } from "../src/server/service.ts";
import { MIGRATIONS, migrate, SCHEMA_VERSION } from "../src/store/migrations.ts";
import { openStore, type Store, StoreUnavailableError } from "../src/store/store.ts";
import { freshDatabase } from "./support/postgres.ts";
import {
  buyerAccount,
  capturingLogger,
  chainClient,
  challengeOf,
  devnet,
  signPayment,
  startTestService,
  usdcBalance,
} from "./support/service.ts";

const databaseUrl = inject("databaseUrl");

async function migrationChecks(store: Store) {
  expect(await store.query("select version, name from schema_migrations order by version")).toEqual(
    MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
  );
  expect(await migrate(store)).toEqual([]);
  await store.query("insert into schema_migrations (version, name) values ($1, 'from the future')", [SCHEMA_VERSION + 1]);
  await expect(migrate(store)).rejects.toThrow(
    `The database is on schema version ${SCHEMA_VERSION + 1}, newer than this build knows (${SCHEMA_VERSION}); run a build at least as new as the one that migrated it.`,
  );
}

describe("migrations", () => {
  it("apply once on PGlite and refuse a newer schema", async () => {
    const store = await openStore({ kind: "pglite", dir: undefined, snapshot: inject("pgliteSnapshot") });
    try {
      await migrationChecks(store);
    } finally {
      await store.close();
    }
  });

  it.runIf(databaseUrl)("apply once on PostgreSQL and refuse a newer schema", async () => {
    const db = await freshDatabase(databaseUrl as string);
    const store = await openStore({ kind: "postgres", url: db.url });
    try {
      await migrationChecks(store);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});

it("an unreachable PostgreSQL is a clear error that hides the password", async () => {
  const error = await openStore({ kind: "postgres", url: "postgres://app:s3cret@127.0.0.1:1/ledger" }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StoreUnavailableError);
  expect((error as Error).message).toMatch(/^Cannot reach the database at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/ledger: /);
  expect((error as Error).message).not.toContain("s3cret");
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
