/**
 * The ledger upkeep and a retry's request path settling one payment at the same moment, on the
 * real local chain, the in-process facilitator and the real store (SQLite, and PostgreSQL when a
 * server is available). A request killed between verify and settle left a verified row open; the
 * buyer retries the same payment minutes later; while the retry's transfer has just landed, the
 * minute upkeep reads the old row, finds that transfer and records it settled. The retry's ledger
 * write and the upkeep's are in flight together: whichever loses, the payment counts once, the
 * retry's answer is kept, the leases are free, and the buyer repeating the payment gets that
 * answer back at once, uncharged.
 *
 * The race is driven by the order of events, not by timing: the upkeep starts inside the
 * facilitator's settle call (after the transfer, before the gate's ledger write). When the retry
 * loses, the upkeep records the old row in a transaction the test commits only once the gate's
 * ledger write is waiting for it (on PostgreSQL, the unique index of settled rows then refuses
 * the retry's write). When the upkeep loses, it has read the old row open and found the transfer,
 * and its chain read returns only after the gate's ledger write is done.
 */
import { createHash } from "node:crypto";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type AuthorizationReader, authorizationReader } from "../src/chain/authorization.ts";
import { rpcTransport } from "../src/chain/client.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { createSelfFacilitator } from "../src/payments/facilitator.ts";
import { reconcileLedger } from "../src/payments/upkeep.ts";
import type { RunningService } from "../src/server/service.ts";
import { insertLedgerRow, markLedgerRowVerified, SETTLE_ROW } from "../src/store/ledger.ts";
import type { Queryable, Store } from "../src/store/store.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { freshPostgresStore } from "./support/postgres.ts";
import {
  authorizationOf,
  capturingLogger,
  chainClient,
  challengeOf,
  devnet,
  freshSqliteStore,
  signPayment,
  startTestService,
  usdcBalance,
} from "./support/service.ts";

const json = { "content-type": "application/json" };

interface Engine {
  name: string;
  open(): Promise<{ store: Store; close(): Promise<void> }>;
}
const sqlite: Engine = {
  name: "SQLite",
  open: async () => {
    const store = await freshSqliteStore();
    return { store, close: () => store.close() };
  },
};
const databaseUrl = inject("databaseUrl");
const postgres: Engine = {
  name: "PostgreSQL",
  open: async () => {
    const store = await freshPostgresStore(databaseUrl as string);
    return { store, close: () => store.close() };
  },
};

describe("the upkeep and a retry settling one payment at once, on SQLite", () => raceTests(sqlite));
// Only with a PostgreSQL server (TEST_DATABASE_URL; scripts/ci/with-postgres.sh starts a throwaway one).
describe.runIf(databaseUrl)("the upkeep and a retry settling one payment at once, on PostgreSQL", () => raceTests(postgres));

/** The gate's hash of a `POST /api/payment-verify` request with `body`. */
const requestHashOf = (body: unknown) =>
  createHash("sha256").update("POST /api/payment-verify\n").update(JSON.stringify(body)).digest("hex");

/**
 * `store`, telling `onLedgerWrite` when a settled row's ledger write is sent: PostgreSQL writes
 * it as one statement holding SETTLE_ROW, SQLite as a transaction (the only one the gate opens
 * after a settlement).
 */
function watched(store: Store, onLedgerWrite: () => void): Store {
  return {
    engine: store.engine,
    query: (sql, params) => {
      if (sql.includes(SETTLE_ROW)) onLedgerWrite();
      return store.query(sql, params);
    },
    atomic: (fn) => {
      if (store.engine === "sqlite") onLedgerWrite();
      return store.atomic(fn);
    },
    close: () => store.close(),
  };
}

function raceTests(engine: Engine): void {
  let store: Store;
  let closeStore: () => Promise<void>;
  let service: RunningService;
  const log = capturingLogger("warn");
  /** A payTo of this file's own, so its balance moves only with this test's payments. */
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  /** Called by the facilitator once a settlement's transfer is on chain, before it answers the gate. */
  let afterTransfer: ((tx: string) => Promise<void>) | undefined;
  let ledgerWriteSent = () => {};

  beforeAll(async () => {
    ({ store, close: closeStore } = await engine.open());
    const d = devnet();
    const real = createSelfFacilitator(d.facilitator.privateKey, base.chainAt([d.rpcUrl]), rpcTransport([d.rpcUrl]), base.id);
    const facilitator: FacilitatorClient = {
      verify: (p, r) => real.verify(p, r),
      getSupported: () => real.getSupported(),
      settle: async (p, r) => {
        const result = await real.settle(p, r);
        if (result.success) await afterTransfer?.(result.transaction);
        return result;
      },
    };
    service = await startTestService({
      store: watched(store, () => ledgerWriteSent()),
      facilitator,
      log,
      devnet: { rpcUrl: d.rpcUrl, payTo, facilitator: d.facilitator },
    });
  });
  afterAll(async () => {
    await service.close();
    await closeStore();
  });

  async function pay(header: string, body: unknown) {
    const res = await fetch(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { ...json, "X-Payment": header },
      body: JSON.stringify(body),
    });
    return { res, text: await res.text(), requestId: res.headers.get("x-request-id") as string };
  }

  /** Until a statement of this database waits on another transaction's lock. */
  async function untilLockWait(): Promise<void> {
    for (;;) {
      const [row] = await store.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      if ((row?.n ?? 0) > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /**
   * A payment of a fresh buyer (1 USDC) whose first request was killed between verify and
   * settle (test/crash.test.ts): its row verified and pending, the authorisation unused on chain,
   * 200 s old, so the upkeep reads it. The buyer now retries it with the same header.
   */
  async function paymentLeftOpen() {
    log.lines.length = 0;
    const d = devnet();
    const buyer = await freshBuyer(1_000_000n);
    // A transaction mined long ago: the answer counts its confirmations, so an answer run again
    // after the settlement's block differs from the one kept.
    const [mined] = (await chainClient().getBlock({ blockNumber: 1n })).transactions;
    const body = { tx_hash: mined as string };
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const auth = authorizationOf(header);
    const dead = await insertLedgerRow(
      store,
      {
        requestId: "killed",
        route: "POST /api/payment-verify",
        payer: auth.from,
        amountAtomic: "100000",
        asset: d.usdc,
        network: base.id,
        nonce: auth.nonce,
        validBefore: Number(auth.validBefore),
        requestHash: requestHashOf(body),
        instance: "killed-instance",
        paymentId: null,
      },
      { outcome: "pending" },
    );
    await markLedgerRowVerified(store, dead);
    await store.query("update ledger set created_at = $2 where id = $1", [dead, new Date(Date.now() - 200_000)]);
    return { buyer, body, header, auth };
  }

  /** The minute upkeep, as its job runs it, on `db`. */
  function upkeepOn(db: Queryable, reader = authorizationReader(chainClient(), devnet().usdc)): Promise<number> {
    return reconcileLedger({ ...db, close: async () => {} }, reader, payTo, createLogger("silent"));
  }

  const row = (r: Awaited<ReturnType<typeof ledgerRowsOf>>[number]) => [r.request_id, r.outcome, r.status, r.reason, r.settlement_tx];

  /** What the buyer and the ledger must show after the race, whichever path lost it; `rows`: the ledger before the repeat. */
  async function afterTheRace(
    open: Awaited<ReturnType<typeof paymentLeftOpen>>,
    retry: Awaited<ReturnType<typeof pay>>,
    payToBefore: bigint,
    rows: (tx: string) => unknown[][],
  ) {
    const { buyer, body, header, auth } = open;
    // The buyer got the answer, with the one settlement: one transfer of 0.10 USDC.
    expect(retry.res.status).toBe(200);
    const settlement = decodePaymentResponseHeader(retry.res.headers.get("payment-response") as string);
    expect(settlement.success).toBe(true);
    const tx = settlement.transaction;
    expect(await usdcBalance(buyer.address)).toBe(900_000n);
    expect(await usdcBalance(payTo)).toBe(payToBefore + 100_000n);

    // Recorded once, with no ledger write lost.
    expect(log.lines.filter((l) => l.msg === "ledger: settled payment not recorded")).toEqual([]);
    expect((await ledgerRowsOf(store, auth.from, auth.nonce)).map(row)).toEqual(rows(tx));
    // The retry's answer is kept for the buyer, and nothing holds the payment any longer.
    const kept = await store.query<{ body: string; status: number }>(
      "select body, status from paid_answers where payer = lower($1) and nonce = lower($2)",
      [auth.from, auth.nonce],
    );
    expect(kept).toEqual([{ body: retry.text, status: 200 }]);
    if (store.engine === "postgres") expect(await store.query("select key from inflight")).toEqual([]);

    // The buyer repeats the same payment right away (well within the lease): the kept answer, byte for byte, not charged.
    const repeat = await pay(header, body);
    expect(repeat.res.status).toBe(200);
    expect(repeat.text).toBe(retry.text);
    expect(repeat.res.headers.get("payment-response")).toBe(retry.res.headers.get("payment-response"));
    expect(await usdcBalance(buyer.address)).toBe(900_000n);
    expect(await usdcBalance(payTo)).toBe(payToBefore + 100_000n);
    expect((await ledgerRowsOf(store, auth.from, auth.nonce)).map(row)).toEqual([
      ...rows(tx),
      [repeat.requestId, "not_charged", 200, "paid_retry: kept answer replayed", tx],
    ]);
  }

  it("the retry's ledger write loses: the payment counts once on the upkeep's row, the retry's answer is kept, a repeat gets it uncharged", async () => {
    const payToBefore = await usdcBalance(payTo);
    const open = await paymentLeftOpen();

    // The retry's transfer lands; before the facilitator answers the gate, the upkeep runs: it
    // finds that transfer for the old row and records it settled, in a transaction left open
    // until the gate's own ledger write (started before that commit) waits for it.
    const { promise: upkeepMayCommit, resolve: commitUpkeep } = Promise.withResolvers<void>();
    const { promise: sent, resolve: writeSent } = Promise.withResolvers<void>();
    ledgerWriteSent = writeSent;
    let upkeep: Promise<number> | undefined;
    afterTransfer = async () => {
      afterTransfer = undefined;
      const { promise: upkeepRecorded, resolve: recorded } = Promise.withResolvers<void>();
      upkeep = store.atomic(async (tx) => {
        const resolved = await upkeepOn(tx);
        recorded();
        await upkeepMayCommit;
        return resolved;
      });
      await Promise.race([upkeepRecorded, upkeep]);
    };

    let retry: Awaited<ReturnType<typeof pay>>;
    try {
      const retrying = pay(open.header, open.body);
      await sent;
      // SQLite: the write waits for the open transaction the moment it is sent (one writer at a
      // time). PostgreSQL: once it waits on the upkeep's row, its snapshot predates the commit.
      if (store.engine === "postgres") await untilLockWait();
      commitUpkeep();
      retry = await retrying;
    } finally {
      commitUpkeep();
      afterTransfer = undefined;
      ledgerWriteSent = () => {};
    }
    expect(await upkeep).toBe(1);
    await afterTheRace(open, retry, payToBefore, (tx) => [
      ["killed", "settled", null, "reconciled_on_chain", tx],
      [retry.requestId, "not_charged", 200, "same_payment_settled_once", tx],
    ]);
  });

  it("the upkeep's ledger write loses: the payment counts once on the retry's row, its answer is kept, a repeat gets it uncharged", async () => {
    const payToBefore = await usdcBalance(payTo);
    const open = await paymentLeftOpen();

    // The retry's transfer lands; before the facilitator answers the gate, the upkeep runs: it
    // reads the old row open and finds that transfer on chain, and writes only after the
    // retry's own ledger write (its row settled, the old one closed, its answer kept) is done.
    const { promise: answered, resolve: retryAnswered } = Promise.withResolvers<void>();
    let upkeep: Promise<number> | undefined;
    afterTransfer = async () => {
      afterTransfer = undefined;
      const { promise: transferFound, resolve: found } = Promise.withResolvers<void>();
      const chain = authorizationReader(chainClient(), devnet().usdc);
      const reader: AuthorizationReader = {
        ...chain,
        findPayment: async (...args) => {
          const tx = await chain.findPayment(...args);
          found();
          await answered;
          return tx;
        },
      };
      upkeep = upkeepOn(store, reader);
      await Promise.race([transferFound, upkeep]);
    };

    let retry: Awaited<ReturnType<typeof pay>>;
    try {
      retry = await pay(open.header, open.body);
    } finally {
      retryAnswered();
      afterTransfer = undefined;
    }
    expect(await upkeep).toBe(1);
    await afterTheRace(open, retry, payToBefore, (tx) => [
      ["killed", "not_charged", null, "same_payment_settled_once", null],
      [retry.requestId, "settled", 200, null, tx],
    ]);
  });
}
