/**
 * The payment ledger and paid retries, on the embedded SQLite database and, when a server is
 * available (TEST_DATABASE_URL; `.ci/run` starts one), on PostgreSQL: exact rows for each way
 * a paid call ends, kept answers for retries, and settlements whose outcome was unknown.
 */

import { createHash } from "node:crypto";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ledgerReport } from "../scripts/ledger-report.ts";
import { rpcTransport } from "../src/chain/client.ts";
import { base } from "../src/networks/base.ts";
import { createSelfFacilitator } from "../src/payments/facilitator.ts";
import type { RunningService } from "../src/server/service.ts";
import { insertLedgerRow, type LedgerRow, markLedgerRowVerified } from "../src/store/ledger.ts";
import type { Store } from "../src/store/store.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { freshPostgresStore } from "./support/postgres.ts";
import {
  authorizationOf,
  buyerAccount,
  chainClient,
  challengeOf,
  devnet,
  signPayment,
  startTestService,
  testStore,
  usdcBalance,
} from "./support/service.ts";
import { forwardRpc, type Stub, startStub } from "./support/stub-server.ts";

const json = { "content-type": "application/json" };
const unknownTx = `0x${"61".repeat(32)}`;

interface Engine {
  name: string;
  open(): Promise<{ store: Store; close(): Promise<void> }>;
}
const sqlite: Engine = { name: "SQLite", open: async () => ({ store: await testStore(), close: async () => {} }) };
const databaseUrl = inject("databaseUrl");
const postgres: Engine = {
  name: "PostgreSQL",
  open: async () => {
    const store = await freshPostgresStore(databaseUrl as string);
    return { store, close: () => store.close() };
  },
};

function claim(header: string): { payer: string; nonce: string } {
  const auth = authorizationOf(header);
  return { payer: auth.from, nonce: auth.nonce };
}

/** The fields of a row that a test can know exactly. */
function shape(row: LedgerRow) {
  return {
    request_id: row.request_id,
    route: row.route,
    payer: row.payer,
    amount_atomic: row.amount_atomic,
    outcome: row.outcome,
    status: row.status,
    reason: row.reason,
    settlement_tx: row.settlement_tx,
  };
}

describe("ledger on SQLite", () => ledgerTests(sqlite));
// Only with a PostgreSQL server (TEST_DATABASE_URL; .ci/run starts a throwaway one); reported as skipped otherwise.
describe.runIf(databaseUrl)("ledger on PostgreSQL", () => ledgerTests(postgres));

/** The ledger tests, on the store `engine` opens. */
function ledgerTests(engine: Engine): void {
  let store: Store;
  let closeStore: () => Promise<void>;
  let service: RunningService;
  let broken: RunningService;
  let stub: Stub;

  beforeAll(async () => {
    ({ store, close: closeStore } = await engine.open());
    service = await startTestService({ store });
    // Receipts of `unknownTx` fail upstream (502); other receipts lose their logs, which makes
    // the function itself throw (500).
    stub = await startStub(async (_req, res, body) => {
      const calls = (Array.isArray(body) ? body : [body]) as { id: number; method: string; params?: unknown[] }[];
      const answers = await Promise.all(
        calls.map(async (call) => {
          if (call.method === "eth_getTransactionReceipt" && call.params?.[0] === unknownTx) {
            return { jsonrpc: "2.0", id: call.id, error: { code: -32000, message: "header not found" } };
          }
          const answer = (await forwardRpc(devnet().rpcUrl, call)) as { result?: Record<string, unknown> };
          if (call.method === "eth_getTransactionReceipt" && answer.result) answer.result = { ...answer.result, logs: null };
          return answer;
        }),
      );
      res.writeHead(200, json).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
    broken = await startTestService({ store, readTransport: http(stub.url, { retryCount: 0 }) });
  });
  afterAll(async () => {
    await service.close();
    await broken.close();
    await stub.close();
    await closeStore();
  });

  async function pay(target: RunningService, header: string, body: unknown) {
    const res = await fetch(`${target.url}/api/payment-verify`, {
      method: "POST",
      headers: { ...json, "X-Payment": header },
      body: JSON.stringify(body),
    });
    return { res, text: await res.text(), requestId: res.headers.get("x-request-id") as string };
  }

  async function header(buyerIndex: number, spoil: Parameters<typeof signPayment>[2] = {}) {
    return signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyerAccount(buyerIndex), spoil);
  }

  /** Rows are finished just after the response is written; wait for that. */
  async function rowsOf(h: string, count: number): Promise<LedgerRow[]> {
    const { payer, nonce } = claim(h);
    for (let i = 0; i < 50; i++) {
      const rows = await ledgerRowsOf(store, payer, nonce);
      if (rows.length >= count && rows.every((r) => r.outcome !== "pending")) return rows;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return ledgerRowsOf(store, payer, nonce);
  }

  it("records a settled call with its settlement transaction", async () => {
    const h = await header(0);
    const call = await pay(service, h, { tx_hash: unknownTx });
    expect(call.res.status).toBe(200);
    const tx = decodePaymentResponseHeader(call.res.headers.get("payment-response") as string).transaction;
    expect((await rowsOf(h, 1)).map(shape)).toEqual([
      {
        request_id: call.requestId,
        route: "POST /api/payment-verify",
        payer: buyerAccount(0).address.toLowerCase(),
        amount_atomic: "100000",
        outcome: "settled",
        status: 200,
        reason: null,
        settlement_tx: tx,
      },
    ]);
  });

  it("records each never-charged failure with its status and reason", async () => {
    const existingTx = (await chainClient().getBlock({ blockTag: "latest" })).transactions[0] as string;
    const cases = [
      { h: await header(1), target: service, body: { tx_hash: "0x12" }, status: 400, reason: "invalid_request" },
      { h: await header(1), target: broken, body: { tx_hash: unknownTx }, status: 502, reason: "upstream_error" },
      { h: await header(1), target: broken, body: { tx_hash: existingTx }, status: 500, reason: "internal_error" },
      {
        h: await header(1, { validBefore: BigInt(Math.floor(Date.now() / 1000) - 60) }),
        target: service,
        body: { tx_hash: unknownTx },
        status: 402,
        reason: "invalid_exact_evm_payload_authorization_valid_before",
      },
    ];
    const before = await usdcBalance(buyerAccount(1).address);
    for (const c of cases) {
      const call = await pay(c.target, c.h, c.body);
      expect(call.res.status).toBe(c.status);
      expect((await rowsOf(c.h, 1)).map(shape)).toEqual([
        {
          request_id: call.requestId,
          route: "POST /api/payment-verify",
          payer: buyerAccount(1).address.toLowerCase(),
          amount_atomic: "100000",
          outcome: "not_charged",
          status: c.status,
          reason: c.reason,
          settlement_tx: null,
        },
      ]);
    }
    expect(await usdcBalance(buyerAccount(1).address)).toBe(before);
  });

  it("answers a paid retry with the kept answer, records it as a duplicate, and never transfers twice", async () => {
    const buyer = buyerAccount(2);
    const h = await header(2);
    const before = await usdcBalance(buyer.address);
    const txsBefore = await chainClient().getTransactionCount({ address: devnet().facilitator.address });
    const first = await pay(service, h, { tx_hash: unknownTx });
    expect(first.res.status).toBe(200);
    // The buyer lost the answer and sends the very same request again.
    const retry = await pay(service, h, { tx_hash: unknownTx });
    expect(retry.res.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(retry.res.headers.get("payment-response")).toBe(first.res.headers.get("payment-response"));
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
    expect(await chainClient().getTransactionCount({ address: devnet().facilitator.address })).toBe(txsBefore + 1);

    const tx = decodePaymentResponseHeader(first.res.headers.get("payment-response") as string).transaction;
    const rows = (await rowsOf(h, 2)).map(shape);
    expect(rows.map((r) => [r.request_id, r.outcome, r.status, r.reason, r.settlement_tx])).toEqual([
      [first.requestId, "settled", 200, null, tx],
      [retry.requestId, "not_charged", 200, "paid_retry: kept answer replayed", tx],
    ]);
  });

  it("records concurrent duplicates as 409 payment_in_progress", async () => {
    // The settlement waits until both duplicates are answered: a duplicate that arrived after the
    // first call had finished would be its kept answer (a 200), which a loaded machine made happen.
    const d = devnet();
    const real = createSelfFacilitator(d.facilitator.privateKey, base.chainAt([d.rpcUrl]), rpcTransport([d.rpcUrl]), base.id);
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const gated: FacilitatorClient = {
      verify: (p, r) => real.verify(p, r),
      getSupported: () => real.getSupported(),
      settle: async (p, r) => {
        await released;
        return real.settle(p, r);
      },
    };
    const held = await startTestService({ store, facilitator: gated });
    const h = await header(3);
    const statuses: number[] = [];
    let calls: Awaited<ReturnType<typeof pay>>[];
    try {
      const pending = [1, 2, 3].map(async () => {
        const call = await pay(held, h, { tx_hash: unknownTx });
        statuses.push(call.res.status);
        return call;
      });
      while (statuses.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      release();
      calls = await Promise.all(pending);
    } finally {
      release();
      await held.close();
    }
    expect(statuses).toEqual([409, 409, 200]);
    expect(calls.map((c) => c.res.status).sort()).toEqual([200, 409, 409]);
    const rows = (await rowsOf(h, 3)).map((r) => [r.outcome, r.status, r.reason]);
    expect(rows.sort()).toEqual([
      ["not_charged", 409, "payment_in_progress"],
      ["not_charged", 409, "payment_in_progress"],
      ["settled", 200, null],
    ]);
  });

  it("resolves a settlement whose outcome was unknown from the chain, and answers the retry without a second transfer", async () => {
    const d = devnet();
    const real = createSelfFacilitator(d.facilitator.privateKey, base.chainAt([d.rpcUrl]), rpcTransport([d.rpcUrl]), base.id);
    let settlements = 0;
    const timingOut: FacilitatorClient = {
      verify: (p, r) => real.verify(p, r),
      getSupported: () => real.getSupported(),
      settle: async (p, r) => {
        const result = await real.settle(p, r);
        settlements++;
        if (settlements === 1) throw new Error(`Timed out waiting for the facilitator (the transfer ${result.transaction} did land)`);
        return result;
      },
    };
    const flaky = await startTestService({ store, facilitator: timingOut });
    try {
      const buyer = buyerAccount(4);
      const before = await usdcBalance(buyer.address);
      const h = await header(4);
      const first = await pay(flaky, h, { tx_hash: unknownTx });
      // The facilitator lost track of its own transfer; the chain shows it paid us, so the answer goes out.
      expect(first.res.status).toBe(200);
      const settlement = decodePaymentResponseHeader(first.res.headers.get("payment-response") as string);
      expect(settlement.success).toBe(true);
      const receipt = await chainClient().getTransactionReceipt({ hash: settlement.transaction as `0x${string}` });
      expect(receipt.status).toBe("success");
      expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);

      const retry = await pay(flaky, h, { tx_hash: unknownTx });
      expect(retry.res.status).toBe(200);
      expect(retry.text).toBe(first.text);
      expect(settlements).toBe(1);
      expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
      expect((await rowsOf(h, 2)).map((r) => [r.outcome, r.status, r.reason, r.settlement_tx])).toEqual([
        ["settled", 200, null, settlement.transaction],
        ["not_charged", 200, "paid_retry: kept answer replayed", settlement.transaction],
      ]);
    } finally {
      await flaky.close();
    }
  });

  /** A header with the same payer and nonce as `h` but another (invalid) signature. */
  function forged(h: string): string {
    const payload = JSON.parse(Buffer.from(h, "base64").toString()) as { payload: { signature: string } };
    payload.payload.signature = `0x${"11".repeat(65)}`;
    return Buffer.from(JSON.stringify(payload)).toString("base64");
  }
  const hashOf = (body: unknown) => createHash("sha256").update("POST /api/payment-verify\n").update(JSON.stringify(body)).digest("hex");

  it("never replays a kept answer to a header that only shares the payer and nonce", async () => {
    const h = await header(0);
    const first = await pay(service, h, { tx_hash: unknownTx });
    expect(first.res.status).toBe(200);
    const forgery = await pay(service, forged(h), { tx_hash: unknownTx });
    expect(forgery.res.status).toBe(402);
    expect(forgery.text).not.toBe(first.text);
  });

  it("never counts an unverified earlier attempt as paid, even when the nonce was used on chain", async () => {
    const h = await header(0);
    const body = { tx_hash: `0x${"62".repeat(32)}` };
    expect((await pay(service, h, { tx_hash: unknownTx })).res.status).toBe(200); // the nonce is now used on chain
    const { payer, nonce } = claim(h);
    // What a forged request that disconnected during verify leaves behind: a pending, unverified row.
    const id = await insertLedgerRow(
      store,
      {
        requestId: "forged",
        route: "POST /api/payment-verify",
        payer,
        amountAtomic: "100000",
        asset: devnet().usdc,
        network: base.id,
        nonce,
        validBefore: null,
        requestHash: hashOf(body),
        instance: "x",
        paymentId: null,
      },
      { outcome: "pending" },
    );
    const attempt = await pay(service, forged(h), body);
    expect(attempt.res.status).toBe(402);
    expect(JSON.parse(attempt.text).error.code).toBe("invalid_payload");
    expect(JSON.parse(attempt.text).error.details.field).toBe("payload.signature");
    expect((await ledgerRowsOf(store, payer, nonce)).find((r) => r.id === id)?.outcome).toBe("pending");
    // The genuine header for that request: the nonce paid for another request, so it is refused.
    const genuine = await pay(service, h, body);
    expect(genuine.res.status).toBe(402);
    expect(JSON.parse(genuine.text).error.code).toBe("payment_already_used");
  });

  it("never counts a verified earlier attempt as paid when its nonce paid someone else", async () => {
    const buyer = buyerAccount(3);
    const h = await header(3);
    const { payer, nonce } = claim(h);
    // The buyer spends the same nonce on a transfer to somebody else, directly on chain.
    const other = buyerAccount(4).address;
    const elsewhere = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer, {
      nonce: nonce as `0x${string}`,
      to: other,
    });
    const auth = (
      JSON.parse(Buffer.from(elsewhere, "base64").toString()) as {
        payload: { authorization: Record<string, string>; signature: `0x${string}` };
      }
    ).payload;
    const d = devnet();
    const wallet = createWalletClient({
      account: privateKeyToAccount(d.facilitator.privateKey),
      chain: base.chainAt([d.rpcUrl]),
      transport: http(d.rpcUrl),
    });
    const tx = await wallet.writeContract({
      address: d.usdc,
      abi: [
        {
          type: "function",
          name: "transferWithAuthorization",
          stateMutability: "nonpayable",
          inputs: [
            { type: "address" },
            { type: "address" },
            { type: "uint256" },
            { type: "uint256" },
            { type: "uint256" },
            { type: "bytes32" },
            { type: "bytes" },
          ],
          outputs: [],
        },
      ] as const,
      functionName: "transferWithAuthorization",
      args: [
        payer as `0x${string}`,
        other,
        BigInt(auth.authorization.value as string),
        BigInt(auth.authorization.validAfter as string),
        BigInt(auth.authorization.validBefore as string),
        nonce as `0x${string}`,
        auth.signature,
      ],
    });
    await chainClient().waitForTransactionReceipt({ hash: tx });
    const body = { tx_hash: `0x${"63".repeat(32)}` };
    const id = await insertLedgerRow(
      store,
      {
        requestId: "earlier",
        route: "POST /api/payment-verify",
        payer,
        amountAtomic: "100000",
        asset: d.usdc,
        network: base.id,
        nonce,
        validBefore: null,
        requestHash: hashOf(body),
        instance: "x",
        paymentId: null,
      },
      { outcome: "pending" },
    );
    await markLedgerRowVerified(store, id);
    const retry = await pay(service, h, body);
    expect(retry.res.status).toBe(402);
    expect(JSON.parse(retry.text).error.code).toBe("payment_already_used");
    expect(JSON.parse(retry.text).error.details.reason).toBe("invalid_exact_evm_nonce_already_used");
    expect((await ledgerRowsOf(store, payer, nonce)).find((r) => r.id === id)?.reason).toBe("authorization_used_elsewhere");
  });

  it("keeps working with a buyer-chosen validBefore far in the future, and keeps the answer for the redemption window", async () => {
    const h = await header(0, { validBefore: 2n ** 45n });
    const call = await pay(service, h, { tx_hash: unknownTx });
    expect(call.res.status).toBe(200);
    const { payer, nonce } = claim(h);
    const rows = await rowsOf(h, 1);
    expect(rows.map((r) => [r.outcome, r.valid_before])).toEqual([["settled", 2 ** 45]]);
    const [kept] = (
      await store.query<{ expires_at: Date }>("select expires_at from paid_answers where payer = lower($1) and nonce = lower($2)", [
        payer,
        nonce,
      ])
    ).map((r) => ({ seconds: Math.trunc((r.expires_at.getTime() - Date.now()) / 1000) }));
    // Kept 24 hours from settlement, whatever validBefore the buyer chose.
    expect(kept?.seconds).toBeLessThanOrEqual(24 * 3600);
    expect(kept?.seconds).toBeGreaterThan(24 * 3600 - 60);
    expect((await pay(service, h, { tx_hash: unknownTx })).res.status).toBe(200);
  });

  it("reports earnings by route and day and the failures, without payer addresses", async () => {
    const report = await ledgerReport(store, 30);
    const verify = report.byRoute.find((r) => r.route === "POST /api/payment-verify");
    expect(verify?.calls).toBeGreaterThanOrEqual(4);
    expect(BigInt(verify?.earned_atomic ?? "0")).toBe(BigInt(verify?.calls ?? 0) * 100_000n);
    expect(report.byDay.at(-1)?.day).toBe(new Date().toISOString().slice(0, 10));
    expect(report.failures.some((f) => f.reason === "payment_in_progress" && f.status === 409)).toBe(true);
    expect(JSON.stringify(report)).not.toMatch(/0x[0-9a-f]{40}/i);
  });
}
