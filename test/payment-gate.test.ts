/**
 * The payment gate (src/payments/gate.ts) against the real local chain: paid retries that
 * only the payer can use (after a crash, a stalled settlement and the ledger upkeep; forged
 * headers; the payment-identifier id and Sign-In-With-X after the retry window), precise
 * refusals of malformed payloads before any facilitator call, and a chain outage that is a
 * 503 within the time budget, never a signature error.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { http } from "viem";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { signInHeader as signIn } from "../scripts/buyer/sign-in.ts";
import { authorizationReader } from "../src/chain/authorization.ts";
import { rpcTransport } from "../src/chain/client.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { createSelfFacilitator } from "../src/payments/facilitator.ts";
import { reconcileLedger } from "../src/payments/upkeep.ts";
import type { RunningService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
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
  testConfig,
  testStore,
  usdcBalance,
} from "./support/service.ts";
import { type Stub, startStub } from "./support/stub-server.ts";

const json = { "content-type": "application/json" };
const PRICE = 100_000n; // payment-verify: 0.10 USDC

/** The devnet's facilitator, counting its calls; `settle` can be replaced. */
function countingFacilitator(settle?: FacilitatorClient["settle"]) {
  const d = devnet();
  const real = createSelfFacilitator(d.facilitator.privateKey, base.chainAt([d.rpcUrl]), rpcTransport([d.rpcUrl]), base.id);
  const calls = { verify: 0, settle: 0 };
  const facilitator: FacilitatorClient = {
    verify: (p, r) => {
      calls.verify++;
      return real.verify(p, r);
    },
    settle: (p, r) => {
      calls.settle++;
      return settle ? settle(p, r) : real.settle(p, r);
    },
    getSupported: () => real.getSupported(),
  };
  return { facilitator, calls, real };
}

async function pay(target: RunningService, header: string | undefined, body: unknown, extra: Record<string, string> = {}) {
  const res = await fetch(`${target.url}/api/payment-verify`, {
    method: "POST",
    headers: { ...json, ...(header ? { "PAYMENT-SIGNATURE": header } : {}), ...extra },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { res, text, body: JSON.parse(text) as Record<string, unknown> & { error?: { code: string; details?: Record<string, unknown> } } };
}

/** What a stranger can build from the chain: the same payer and nonce, a signature that is not the payer's, no id. */
function forged(header: string): string {
  const payload = JSON.parse(Buffer.from(header, "base64").toString()) as { payload: { signature: string }; extensions?: unknown };
  payload.payload.signature = `0x${"11".repeat(65)}`;
  delete payload.extensions;
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}

/** A payment payload as JSON, loosely typed so tests can spoil any field. */
// biome-ignore lint/suspicious/noExplicitAny: tests reach into arbitrary fields to break them
type Payload = any;

/** A header whose decoded JSON was changed by `spoil`. */
function spoiled(header: string, spoil: (payload: Payload) => void): string {
  const payload = JSON.parse(Buffer.from(header, "base64").toString()) as Payload;
  spoil(payload);
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}

function signInHeader(target: RunningService, buyerIndex: number): Promise<string> {
  return signIn(buyerAccount(buyerIndex), `${target.url}/api/payment-verify`);
}

const paymentId = (id: string) => ({ "payment-identifier": { info: { required: false, id } } });

describe("a payment settled on chain whose answer was lost", () => {
  let landed: (tx: string) => void = () => {};
  let stalled: RunningService;
  let service: RunningService;

  beforeAll(async () => {
    // The settlement lands on chain, then the service never hears back: as if it died right there.
    const { real } = countingFacilitator();
    const dying: FacilitatorClient = {
      verify: (p, r) => real.verify(p, r),
      getSupported: () => real.getSupported(),
      settle: async (p, r) => {
        const result = await real.settle(p, r);
        landed(result.transaction);
        return new Promise(() => {});
      },
    };
    stalled = await startTestService({ facilitator: dying, config: testConfig({ PAYMENT_TIMEOUT_MS: "60000" }) });
    service = await startTestService();
  });
  afterAll(async () => {
    await stalled.close();
    await service.close();
  });

  it("is answered to the payer after the upkeep recorded it, never to a forged header, and charged once", async () => {
    const buyer = buyerAccount(0);
    const body = { tx_hash: `0x${"a1".repeat(32)}` };
    const before = await usdcBalance(buyer.address);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer, {
      extensions: paymentId("pay_lost_answer_0001"),
    });
    const tx = new Promise<string>((resolve) => {
      landed = resolve;
    });
    void pay(stalled, header, body).catch(() => {});
    const settledTx = await tx;
    expect(await usdcBalance(buyer.address)).toBe(before - PRICE);

    // The upkeep, minutes later, records the row from the chain.
    const store = await testStore();
    const d = devnet();
    const reader = authorizationReader(chainClient(), d.usdc);
    await reconcileLedger(store, reader, d.payTo, createLogger("silent"), new Date(Date.now() + 4 * 60_000));
    const { from, nonce } = authorizationOf(header);
    expect((await ledgerRowsOf(store, from, nonce)).map((r) => [r.outcome, r.reason, r.settlement_tx])).toEqual([
      ["settled", "reconciled_on_chain", settledTx],
    ]);

    // A stranger names the payer and nonce (public on chain) without the payer's signature.
    const forgery = await pay(service, forged(header), body);
    expect(forgery.res.status).toBe(402);
    expect(forgery.body.error).toMatchObject({ code: "invalid_payload", details: { field: "payload.signature" } });
    // Nothing of the answer: its fields are not in the refusal.
    expect(forgery.body).not.toHaveProperty("verified");
    expect(forgery.body).not.toHaveProperty("tx_hash");

    // The payer's own retry: the function runs again, with the first settlement, no second transfer.
    const retry = await pay(service, header, body);
    expect(retry.res.status).toBe(200);
    expect(retry.body).toMatchObject({ tx_hash: body.tx_hash, verified: false, reason: "tx_not_found" });
    expect(decodePaymentResponseHeader(retry.res.headers.get("payment-response") as string)).toMatchObject({
      success: true,
      transaction: settledTx,
    });
    const again = await pay(service, header, body);
    expect(again.text).toBe(retry.text);
    expect(await usdcBalance(buyer.address)).toBe(before - PRICE);

    // After the retry window (300 s): the header alone is refused, the id or a sign-in redeems it.
    await store.query("update ledger set created_at = $3 where payer = lower($1) and nonce = lower($2)", [
      from,
      nonce,
      new Date(Date.now() - 10 * 60_000),
    ]);
    // The same signed authorisation without its id: anyone could have copied it from the chain.
    const late = await pay(
      service,
      spoiled(header, (p) => delete p.extensions),
      body,
    );
    expect(late.res.status).toBe(402);
    expect(late.body.error).toMatchObject({ code: "payment_already_used", details: { reason: "retry_window_closed" } });

    const byId = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer, {
      extensions: paymentId("pay_lost_answer_0001"),
    });
    const redeemed = await pay(service, byId, body);
    expect(redeemed.res.status).toBe(200);
    expect(redeemed.text).toBe(retry.text);

    const signedIn = await pay(service, undefined, body, { "SIGN-IN-WITH-X": await signInHeader(service, 0) });
    expect(signedIn.res.status).toBe(200);
    expect(signedIn.text).toBe(retry.text);
    const otherWallet = await pay(service, undefined, body, { "SIGN-IN-WITH-X": await signInHeader(service, 1) });
    expect(otherWallet.res.status).toBe(402);
    expect(otherWallet.body.accepts).toBeDefined();

    // One transfer in all: the first one.
    expect(await usdcBalance(buyer.address)).toBe(before - PRICE);
    // The authorisation that carried the id to redeem it was never settled.
    const redeemAuth = authorizationOf(byId);
    const used = await authorizationReader(chainClient(), d.usdc).isUsed(redeemAuth.from, redeemAuth.nonce);
    expect(used).toBe(false);
  });
});

describe("a settlement that stalled", () => {
  it("holds the answer: the payer's retry gets it once the chain shows the transfer, a forged header never does", async () => {
    const { real } = countingFacilitator();
    let settles = 0;
    const stalling: FacilitatorClient = {
      verify: (p, r) => real.verify(p, r),
      getSupported: () => real.getSupported(),
      // The transfer lands only after the gate stopped waiting (1.5 s): the outcome is unknown then.
      settle: async (p, r) => {
        settles++;
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        await real.settle(p, r);
        return new Promise(() => {});
      },
    };
    const target = await startTestService({ facilitator: stalling, config: testConfig({ PAYMENT_TIMEOUT_MS: "1500" }) });
    try {
      const buyer = buyerAccount(1);
      const before = await usdcBalance(buyer.address);
      const header = await signPayment(await challengeOf(`${target.url}/api/payment-verify`, { method: "POST" }), buyer);
      const body = { tx_hash: `0x${"a2".repeat(32)}` };
      const first = await pay(target, header, body);
      expect(first.res.status).toBe(402);
      expect(first.body.error?.code).toBe("settlement_unknown");

      expect(await usdcBalance(buyer.address)).toBe(before);
      await new Promise((resolve) => setTimeout(resolve, 2_000)); // now it has landed
      expect(await usdcBalance(buyer.address)).toBe(before - PRICE);

      const forgery = await pay(target, forged(header), body);
      expect(forgery.res.status).toBe(402);
      expect(forgery.body.error?.code).toBe("invalid_payload");

      const retry = await pay(target, header, body);
      expect(retry.res.status).toBe(200);
      expect(retry.body).toMatchObject({ tx_hash: body.tx_hash, reason: "tx_not_found" });
      expect(settles).toBe(1);
      expect(await usdcBalance(buyer.address)).toBe(before - PRICE);
    } finally {
      await target.close();
    }
  });
});

describe("an authorisation whose settlement is not known yet", () => {
  it("is refused with 409 payment_in_progress for another request, not settled for it", async () => {
    // The transfer is never sent: the authorisation stays unused and valid, the outcome open.
    const { facilitator, calls } = countingFacilitator(() => new Promise(() => {}));
    const target = await startTestService({ facilitator, config: testConfig({ PAYMENT_TIMEOUT_MS: "1500" }) });
    try {
      const buyer = await freshBuyer(1_000_000n);
      const header = await signPayment(await challengeOf(`${target.url}/api/payment-verify`, { method: "POST" }), buyer);
      const first = await pay(target, header, { tx_hash: `0x${"a5".repeat(32)}` });
      expect(first.res.status).toBe(402);
      expect(first.body.error?.code).toBe("settlement_unknown");

      const other = await pay(target, header, { tx_hash: `0x${"a6".repeat(32)}` });
      expect(other.res.status).toBe(409);
      expect(other.body.error?.code).toBe("payment_in_progress");
      // Only the first request was settled (the second's verification, made while its row was looked up, is dropped).
      expect(calls.settle).toBe(1);
      const { from, nonce } = authorizationOf(header);
      expect((await ledgerRowsOf(await testStore(), from, nonce)).map((r) => [r.outcome, r.status, r.reason])).toEqual([
        ["settlement_unknown", 402, "settlement_unknown"],
        ["not_charged", 409, "payment_in_progress"],
      ]);
      expect(await usdcBalance(buyer.address)).toBe(1_000_000n);
    } finally {
      await target.close();
    }
  });
});

describe("the payment-identifier extension", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("is declared on every challenge", async () => {
    const challenge = await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" });
    expect(challenge.extensions?.["payment-identifier"]).toMatchObject({ info: { required: false } });
  });

  it("the same id and request get the kept answer without a second charge; the same id with another request is a 409", async () => {
    const buyer = buyerAccount(2);
    const before = await usdcBalance(buyer.address);
    const sign = async () =>
      signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer, {
        extensions: paymentId("pay_idempotent_request_42"),
      });
    const body = { tx_hash: `0x${"a3".repeat(32)}` };
    const first = await pay(service, await sign(), body);
    expect(first.res.status).toBe(200);
    const again = await pay(service, await sign(), body); // a new authorisation, the same id
    expect(again.res.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.res.headers.get("payment-response")).toBe(first.res.headers.get("payment-response"));
    const other = await pay(service, await sign(), { tx_hash: `0x${"a4".repeat(32)}` });
    expect(other.res.status).toBe(409);
    expect(other.body.error?.code).toBe("payment_id_conflict");
    expect(await usdcBalance(buyer.address)).toBe(before - PRICE);
  });
});

describe("malformed payment payloads", () => {
  let service: RunningService;
  let calls: { verify: number; settle: number };
  beforeAll(async () => {
    const counting = countingFacilitator();
    calls = counting.calls;
    service = await startTestService({ facilitator: counting.facilitator });
  });
  afterAll(() => service.close());

  const cases: [string, (p: Payload) => void, string][] = [
    ["a value of abc", (p) => (p.payload.authorization.value = "abc"), "payload.authorization.value"],
    ["a value of 1.5", (p) => (p.payload.authorization.value = "1.5"), "payload.authorization.value"],
    ["a non-numeric validBefore", (p) => (p.payload.authorization.validBefore = "soon"), "payload.authorization.validBefore"],
    ["no authorization", (p) => delete p.payload.authorization, "payload.authorization"],
    ["x402Version 1", (p) => (p.x402Version = 1), "x402Version"],
    ["a short nonce", (p) => (p.payload.authorization.nonce = "0x1234"), "payload.authorization.nonce"],
    ["no accepted", (p) => delete p.accepted, "accepted"],
  ];
  it.each(cases)("%s is a 402 invalid_payload naming the field, without a facilitator call", async (_name, spoil, field) => {
    const buyer = buyerAccount(3);
    const before = await usdcBalance(buyer.address);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const verifies = calls.verify;
    const res = await pay(service, spoiled(header, spoil), { tx_hash: `0x${"a5".repeat(32)}` });
    expect(res.res.status).toBe(402);
    expect(res.body.error).toMatchObject({ code: "invalid_payload", details: { field }, docs: "/errors#invalid_payload" });
    expect(decodePaymentRequiredHeader(res.res.headers.get("payment-required") as string).error).toBe("invalid_payload");
    expect(calls.verify).toBe(verifies);
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("a header that is not base64 JSON is a 402 invalid_payload naming the header", async () => {
    const res = await pay(service, "%%%not-base64%%%", { tx_hash: `0x${"a5".repeat(32)}` });
    expect(res.res.status).toBe(402);
    expect(res.body.error).toMatchObject({ code: "invalid_payload", details: { field: "header" } });
  });
});

describe("a chain outage", () => {
  let stall: Stub;
  let service: RunningService;
  beforeAll(async () => {
    stall = await startStub(() => {}); // accepts every RPC call and never answers
    const d = devnet();
    const transport = http(stall.url, { retryCount: 0, timeout: 60_000 });
    const stalled = createSelfFacilitator(d.facilitator.privateKey, base.chainAt([stall.url]), transport, base.id);
    const { real } = countingFacilitator();
    service = await startTestService({
      config: testConfig({ PAYMENT_TIMEOUT_MS: "1500" }),
      facilitator: {
        verify: (p, r) => stalled.verify(p, r),
        settle: (p, r) => stalled.settle(p, r),
        getSupported: () => real.getSupported(),
      },
      readTransport: transport,
    });
  });
  afterAll(async () => {
    await service.close();
    await stall.close();
  });

  it("refuses a valid payment with 503 payment_unavailable within the budget, never a signature error, not charged", async () => {
    const buyer = buyerAccount(4);
    const before = await usdcBalance(buyer.address);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const started = Date.now();
    const res = await pay(service, header, { tx_hash: `0x${"a6".repeat(32)}` });
    const elapsed = Date.now() - started;
    expect(res.res.status).toBe(503);
    expect(res.body.error?.code).toBe("payment_unavailable");
    expect(res.res.headers.get("retry-after")).toBe("5");
    expect(res.text).not.toContain("signature");
    expect(elapsed).toBeLessThan(10_000);
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("health answers degraded within about a second", async () => {
    const started = Date.now();
    const res = await fetch(`${service.url}/api/health`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("degraded");
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

const databaseUrl = inject("databaseUrl");
// Only with a PostgreSQL server (TEST_DATABASE_URL; .ci/run starts a throwaway one); reported as skipped otherwise.
describe.runIf(databaseUrl)("two instances on one PostgreSQL", () => {
  let store: Store;
  let a: RunningService;
  let b: RunningService;
  beforeAll(async () => {
    store = await freshPostgresStore(databaseUrl as string);
    const config = testConfig({ PAYMENT_LEASE_SECONDS: "2" });
    a = await startTestService({ store, config, instance: "instance-a" });
    b = await startTestService({ store, config, instance: "instance-b" });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await store.close();
  });

  it("share the in-flight claim: one payment sent to both runs once", async () => {
    const buyer = buyerAccount(6);
    const before = await usdcBalance(buyer.address);
    const header = await signPayment(await challengeOf(`${a.url}/api/payment-verify`, { method: "POST" }), buyer);
    const body = { tx_hash: `0x${"b1".repeat(32)}` };
    const [one, two] = await Promise.all([pay(a, header, body), pay(b, header, body)]);
    expect([one.res.status, two.res.status].sort()).toEqual([200, 409]);
    expect(await usdcBalance(buyer.address)).toBe(before - PRICE);
  });

  it("leave no lease behind once a payment is answered, with or without a payment-identifier id", async () => {
    const buyer = buyerAccount(5);
    const before = await usdcBalance(buyer.address);
    const live = () => store.query<{ key: string }>("select key from inflight where expires_at > now() order by key");
    const plain = await signPayment(await challengeOf(`${a.url}/api/payment-verify`, { method: "POST" }), buyer);
    const withId = await signPayment(await challengeOf(`${a.url}/api/payment-verify`, { method: "POST" }), buyer, {
      extensions: paymentId("pay_lease_release_check_5"),
    });
    const first = await pay(a, plain, { tx_hash: `0x${"b3".repeat(32)}` });
    expect(first.res.status).toBe(200);
    expect(await live()).toEqual([]);
    const second = await pay(b, withId, { tx_hash: `0x${"b4".repeat(32)}` });
    expect(second.res.status).toBe(200);
    expect(await live()).toEqual([]);
    // The other instance takes the retry at once: nothing holds the payment any more.
    const retry = await pay(b, plain, { tx_hash: `0x${"b3".repeat(32)}` });
    expect(retry.res.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(await usdcBalance(buyer.address)).toBe(before - 2n * PRICE);
  });

  it("take over the claim of an instance that died within its lease, and answer the payer", async () => {
    const buyer = buyerAccount(7);
    const before = await usdcBalance(buyer.address);
    const header = await signPayment(await challengeOf(`${b.url}/api/payment-verify`, { method: "POST" }), buyer);
    const { from, nonce } = authorizationOf(header);
    // What an instance killed mid-request leaves: a live lease that nobody renews any more.
    await store.query("insert into inflight (key, instance, expires_at) values ($1, 'dead-instance:req-1', now() + interval '2 seconds')", [
      `${from.toLowerCase()}:${nonce.toLowerCase()}`,
    ]);
    const body = { tx_hash: `0x${"b2".repeat(32)}` };
    const blocked = await pay(b, header, body);
    expect(blocked.res.status).toBe(409);
    expect(blocked.res.headers.get("retry-after")).toBe("1");
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const retry = await pay(b, header, body);
    expect(retry.res.status).toBe(200);
    expect(await usdcBalance(buyer.address)).toBe(before - PRICE);
  });
});
