/**
 * Prepaid chat balances (src/payments/balances.ts) on the real local chain and the real store:
 * a top-up moves exactly its amount on chain and credits it; messages spend it without a
 * transfer, never past zero, also when fifty arrive at once and on two instances sharing
 * PostgreSQL; only the balance's own wallet, signed in once with Sign-In-With-X, spends or reads
 * it; a failing message debits nothing; bought content is read again by signing in.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import type { PrivateKeyAccount } from "viem";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type SignInOverrides, signInHeader } from "../scripts/buyer/sign-in.ts";
import type { AuthorizationReader } from "../src/chain/authorization.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { settleAndKeep } from "../src/payments/kept-answers.ts";
import { reconcileLedger } from "../src/payments/upkeep.ts";
import type { RunningService } from "../src/server/service.ts";
import { finishLedgerRow, insertLedgerRow, markLedgerRowVerified } from "../src/store/ledger.ts";
import type { Store } from "../src/store/store.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { freshPostgresStore } from "./support/postgres.ts";
import { buyerAccount, devnet, payingFetch, startTestService, testConfig, testStore, usdcBalance } from "./support/service.ts";

const json = { "content-type": "application/json" };
const QUESTION = "What is WETH at?";

type Answer = Record<string, unknown> & { error?: { code: string; details?: Record<string, unknown> } };

/** A Sign-In-With-X header of `account` for `path` on `target`, as `@x402/extensions` clients make it. */
function signIn(target: RunningService, account: PrivateKeyAccount, path: string, overrides: SignInOverrides = {}): Promise<string> {
  return signInHeader(account, `${target.url}${path}`, overrides);
}

async function topUp(target: RunningService, account: PrivateKeyAccount, amount: number) {
  const res = await payingFetch(account)(`${target.url}/api/balance/topup?amount=${amount}`, { method: "POST" });
  return { res, body: (await res.json()) as Answer };
}

async function chatFrom(target: RunningService, account: PrivateKeyAccount, body: Record<string, unknown>, siwx?: string) {
  const header = siwx ?? (await signIn(target, account, "/api/chat"));
  const res = await fetch(`${target.url}/api/chat`, {
    method: "POST",
    headers: { ...json, "SIGN-IN-WITH-X": header },
    body: JSON.stringify({ user_id: account.address, ...body }),
  });
  return { res, body: (await res.json()) as Answer };
}

async function balanceOf(target: RunningService, account: PrivateKeyAccount) {
  const res = await fetch(`${target.url}/api/balance`, { headers: { "SIGN-IN-WITH-X": await signIn(target, account, "/api/balance") } });
  return { res, body: (await res.json()) as Answer };
}

const databaseUrl = inject("databaseUrl");

const engines: { name: string; enabled: boolean; open(): Promise<{ store: Store; close(): Promise<void> }> }[] = [
  { name: "SQLite", enabled: true, open: async () => ({ store: await testStore(), close: async () => {} }) },
  {
    name: "PostgreSQL",
    enabled: Boolean(databaseUrl),
    open: async () => {
      const store = await freshPostgresStore(databaseUrl as string);
      return { store, close: () => store.close() };
    },
  },
];

describe.each(engines.filter((e) => e.enabled))("a prepaid balance on $name", (engine) => {
  let service: RunningService;
  let opened: Awaited<ReturnType<(typeof engines)[number]["open"]>>;
  beforeAll(async () => {
    opened = await engine.open();
    service = await startTestService({ store: opened.store });
  });
  afterAll(async () => {
    await service.close();
    await opened.close();
  });

  it("is topped up by exactly the amount paid on chain, spent by ten messages and refused at the eleventh", async () => {
    const buyer = buyerAccount(0);
    const payTo = devnet().payTo;
    const [before, earnedBefore] = await Promise.all([usdcBalance(buyer.address), usdcBalance(payTo)]);
    const top = await topUp(service, buyer, 1);
    expect(top.res.status).toBe(200);
    expect(top.body).toEqual({ user_id: buyer.address.toLowerCase(), credited: 1, balance: 1, credits_left: 10 });
    expect(decodePaymentResponseHeader(top.res.headers.get("payment-response") as string).success).toBe(true);
    expect(await usdcBalance(buyer.address)).toBe(before - 1_000_000n);
    expect(await usdcBalance(payTo)).toBe(earnedBefore + 1_000_000n);

    const left: number[] = [];
    for (let i = 0; i < 10; i++) {
      const { res, body } = await chatFrom(service, buyer, { message: QUESTION });
      expect(res.status).toBe(200);
      expect(res.headers.get("payment-response")).toBeNull();
      expect(body).toMatchObject({ charged: true, price_per_msg: 0.1, engine: "builtin" });
      left.push(body.credits_left as number);
      expect(body.balance).toBeCloseTo((9 - i) / 10, 10);
    }
    expect(left).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    // No transfer for any message: only the top-up moved money.
    expect(await usdcBalance(buyer.address)).toBe(before - 1_000_000n);

    const eleventh = await chatFrom(service, buyer, { message: QUESTION });
    expect(eleventh.res.status).toBe(402);
    expect(eleventh.body.error).toMatchObject({ code: "insufficient_balance", details: { balance: 0, price: 0.1 } });
    // The body is the per-call challenge as well, so a client can pay this message instead.
    const challenge = decodePaymentRequiredHeader(eleventh.res.headers.get("payment-required") as string);
    expect(challenge.accepts[0]?.amount).toBe("100000");
    expect((eleventh.body as { accepts?: unknown[] }).accepts).toHaveLength(1);

    const read = await balanceOf(service, buyer);
    expect(read.res.status).toBe(200);
    expect(read.body).toMatchObject({ user_id: buyer.address.toLowerCase(), balance: 0, credits_left: 0 });
    const movements = read.body.movements as { kind: string; amount: number; route: string }[];
    expect(movements).toHaveLength(11);
    expect(movements.map((m) => m.kind)).toEqual([...Array(10).fill("debit"), "topup"]);
    expect(movements.every((m) => (m.kind === "debit" ? m.amount === 0.1 && m.route === "POST /api/chat" : m.amount === 1))).toBe(true);
  });

  it("answers fifty concurrent messages against a balance worth ten exactly ten times and debits exactly 1.00", async () => {
    const buyer = buyerAccount(1);
    expect((await topUp(service, buyer, 1)).res.status).toBe(200);
    const headers = await Promise.all(Array.from({ length: 50 }, () => signIn(service, buyer, "/api/chat")));
    const calls = await Promise.all(headers.map((h) => chatFrom(service, buyer, { message: QUESTION }, h)));
    const statuses = calls.map((c) => c.res.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(40);
    expect(calls.filter((c) => c.res.status === 402).every((c) => c.body.error?.code === "insufficient_balance")).toBe(true);
    const read = await balanceOf(service, buyer);
    expect(read.body.balance).toBe(0);
    expect((read.body.movements as { kind: string }[]).filter((m) => m.kind === "debit")).toHaveLength(10);
  });

  it("never debits a message that fails, and refuses every sign-in fault without debiting", async () => {
    const buyer = buyerAccount(2);
    const other = buyerAccount(3);
    expect((await topUp(service, buyer, 1)).res.status).toBe(200);

    const tooLong = await chatFrom(service, buyer, { message: "x".repeat(2001) });
    expect(tooLong.res.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: "invalid_request" });

    const missing = await fetch(`${service.url}/api/chat`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ user_id: buyer.address, message: QUESTION }),
    });
    // A 402 declaring the sign-in (what wrapFetchWithSIWx and agentcash act on), never a 401.
    expect(missing.status).toBe(402);
    const missingBody = (await missing.json()) as Answer & { extensions?: Record<string, { info?: unknown }> };
    expect(missingBody.error).toMatchObject({ code: "signin_required", details: { header: "SIGN-IN-WITH-X" } });
    expect(missingBody.extensions?.["sign-in-with-x"]?.info).toMatchObject({ domain: new URL(service.url).host });
    expect(decodePaymentRequiredHeader(missing.headers.get("payment-required") as string).extensions).toHaveProperty("sign-in-with-x");

    const expired = await chatFrom(
      service,
      buyer,
      { message: QUESTION },
      await signIn(service, buyer, "/api/chat", { issuedAt: new Date(Date.now() - 10 * 60_000).toISOString() }),
    );
    expect(expired.res.status).toBe(402);
    expect(expired.body.error).toMatchObject({ code: "signin_invalid" });

    const elsewhere = await chatFrom(
      service,
      buyer,
      { message: QUESTION },
      await signIn(service, buyer, "/api/chat", { domain: "evil.example", uri: "https://evil.example/api/chat" }),
    );
    expect(elsewhere.res.status).toBe(402);
    expect(elsewhere.body.error).toMatchObject({ code: "signin_invalid", details: { reason: "invalid_siwx_domain_mismatch" } });

    const once = await signIn(service, buyer, "/api/chat");
    expect((await chatFrom(service, buyer, { message: QUESTION }, once)).res.status).toBe(200);
    const replayed = await chatFrom(service, buyer, { message: QUESTION }, once);
    expect(replayed.res.status).toBe(402);
    expect(replayed.body.error).toMatchObject({ code: "signin_invalid", details: { reason: "invalid_siwx_nonce" } });

    // Another wallet's signature never spends this balance.
    const stranger = await chatFrom(service, buyer, { message: QUESTION }, await signIn(service, other, "/api/chat"));
    expect(stranger.res.status).toBe(402);
    expect(stranger.body.error).toMatchObject({ code: "signin_invalid", details: { reason: "wallet_mismatch", field: "body.user_id" } });

    const badId = await chatFrom(service, buyer, { message: QUESTION, user_id: "alice" });
    expect(badId.res.status).toBe(400);
    expect(badId.body.error).toMatchObject({ code: "invalid_request", details: { fields: [{ field: "body.user_id" }] } });

    // Of all that, one message was answered and debited.
    const read = await balanceOf(service, buyer);
    expect(read.body.balance).toBeCloseTo(0.9, 10);
    expect((read.body.movements as unknown[]).length).toBe(2);

    const unsigned = await fetch(`${service.url}/api/balance`);
    expect(unsigned.status).toBe(402);
    expect(((await unsigned.json()) as Answer).error?.code).toBe("signin_required");
  });

  it("is spent by a client built with wrapFetchWithSIWx and no code of ours: it signs in when the challenge asks", async () => {
    const buyer = buyerAccount(7);
    expect((await topUp(service, buyer, 1)).res.status).toBe(200);
    const before = await usdcBalance(buyer.address);
    const signingFetch = wrapFetchWithSIWx(fetch, buyer);
    const res = await signingFetch(`${service.url}/api/chat`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ message: QUESTION }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ charged: true, balance: 0.9, credits_left: 9 });
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("charges a message without user_id exactly 0.10 on chain, per call", async () => {
    const buyer = buyerAccount(4);
    const before = await usdcBalance(buyer.address);
    const res = await payingFetch(buyer)(`${service.url}/api/chat`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ message: QUESTION }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ balance: null, credits_left: null, charged: true, price_per_msg: 0.1 });
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
  });

  it("declares Sign-In-With-X on the chat challenge, quotes a top-up at its amount, and refuses a bad amount unpaid", async () => {
    const chat = await fetch(`${service.url}/api/chat`, { method: "POST", headers: json, body: JSON.stringify({ message: QUESTION }) });
    expect(chat.status).toBe(402);
    const header = chat.headers.get("payment-required") as string;
    expect(header.length).toBeLessThan(4096);
    const declared = decodePaymentRequiredHeader(header).extensions?.["sign-in-with-x"] as {
      info: { domain: string };
      supportedChains: unknown[];
    };
    expect(declared.info.domain).toBe(new URL(service.url).host);
    expect(declared.supportedChains).toEqual([{ chainId: base.id, type: "eip191" }]);

    const quote = await fetch(`${service.url}/api/balance/topup?amount=12.5`, { method: "POST" });
    expect(quote.status).toBe(402);
    expect(decodePaymentRequiredHeader(quote.headers.get("payment-required") as string).accepts[0]?.amount).toBe("12500000");
    const byDefault = await fetch(`${service.url}/api/balance/topup`, { method: "POST" });
    expect(decodePaymentRequiredHeader(byDefault.headers.get("payment-required") as string).accepts[0]?.amount).toBe("5000000");

    // Only decimal digits spell a number: "true" and " 2" were read as 1 and 2, and quoted.
    for (const amount of ["0.5", "101", "abc", "-3", "true", "%202", "0x2"]) {
      const bad = await fetch(`${service.url}/api/balance/topup?amount=${amount}`, { method: "POST" });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as Answer).error).toMatchObject({
        code: "invalid_request",
        details: { fields: [{ field: "query.amount" }] },
      });
    }
  });

  it("lets the wallet that bought an SOP read it again by signing in, and asks any other wallet to pay", async () => {
    const buyer = buyerAccount(5);
    const other = buyerAccount(3);
    const index = (await (await fetch(`${service.url}/api/howto`)).json()) as { sops: { slug: string }[] };
    const slug = index.sops[0]?.slug as string;
    const path = `/api/howto/${slug}`;
    const bought = await payingFetch(buyer)(`${service.url}${path}`);
    expect(bought.status).toBe(200);
    const content = await bought.text();
    const before = await usdcBalance(buyer.address);

    const challenge = await fetch(`${service.url}${path}`);
    expect(decodePaymentRequiredHeader(challenge.headers.get("payment-required") as string).extensions).toHaveProperty("sign-in-with-x");

    // POST reads the same SOP: bought by GET, read again by POST, by signing in only.
    const again = await fetch(`${service.url}${path}`, {
      method: "POST",
      headers: { ...json, "SIGN-IN-WITH-X": await signIn(service, buyer, path) },
      body: JSON.stringify({ sop: slug }),
    });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(content);
    expect(await usdcBalance(buyer.address)).toBe(before);

    const stranger = await fetch(`${service.url}${path}`, { headers: { "SIGN-IN-WITH-X": await signIn(service, other, path) } });
    expect(stranger.status).toBe(402);
    expect(((await stranger.json()) as { accepts?: unknown[] }).accepts).toHaveLength(1);
  });

  it("lets the wallet that bought an SOP from its balance read it again by signing in, debited once", async () => {
    const buyer = await freshBuyer(1_000_000n);
    expect((await topUp(service, buyer, 1)).res.status).toBe(200);
    // create-x402-endpoint is priced 0.30 in content/sops/.
    const path = "/api/howto/create-x402-endpoint";
    const bought = await fetch(`${service.url}${path}`, { headers: { "SIGN-IN-WITH-X": await signIn(service, buyer, path) } });
    expect(bought.status).toBe(200);
    expect(bought.headers.get("balance-debited")).toBe("0.3");
    expect(bought.headers.get("balance-remaining")).toBe("0.7");
    const content = await bought.text();

    // POST reads the same SOP: bought by GET from the balance, read again by POST, by signing in only.
    const again = await fetch(`${service.url}${path}`, {
      method: "POST",
      headers: { ...json, "SIGN-IN-WITH-X": await signIn(service, buyer, path) },
      body: JSON.stringify({ sop: "create-x402-endpoint" }),
    });
    expect(again.status).toBe(200);
    expect(again.headers.get("balance-debited")).toBeNull();
    // Nothing moved on chain for it, so no transfer is reported.
    expect(again.headers.get("payment-response")).toBeNull();
    expect(await again.text()).toBe(content);
    expect(await usdcBalance(buyer.address)).toBe(0n);

    const read = await balanceOf(service, buyer);
    expect(read.body.balance).toBe(0.7);
    expect(read.body.debits_by_route).toEqual([{ route: `GET ${path}`, debits: 1, amount: 0.3 }]);
    const [reread] = await opened.store.query<{ outcome: string; status: number; amount: string }>(
      "select outcome, status, cast(amount_atomic as text) as amount from ledger where payer = lower($1) and reason = 'signed_in_reread'",
      [buyer.address],
    );
    expect(reread).toEqual({ outcome: "not_charged", status: 200, amount: "300000" });
  });
});

describe("a top-up credited by the ledger", () => {
  it("credits a top-up row once when it turns settled on any path (the gate, a retry, the upkeep), and never another route's", async () => {
    const store = await testStore();
    const wallet = "0x00000000000000000000000000000000000b1a11";
    const row = (route: string, nonce: string) => ({
      requestId: `req-${nonce}`,
      route,
      payer: wallet,
      amountAtomic: "2500000",
      asset: devnet().usdc,
      network: base.id,
      nonce,
      validBefore: null,
      requestHash: "h",
      instance: "test",
      paymentId: null,
    });
    const first = await insertLedgerRow(store, row("POST /api/balance/topup", "0x01"), { outcome: "pending" });
    await settleAndKeep(store, first, 200, "0xtx1", undefined);
    await settleAndKeep(store, first, 200, "0xtx1", undefined);
    // The upkeep recording a crashed top-up from the chain.
    const second = await insertLedgerRow(store, row("POST /api/balance/topup", "0x02"), { outcome: "pending" });
    await finishLedgerRow(store, second, { outcome: "settled", status: null, reason: "reconciled_on_chain", settlementTx: "0xtx2" });
    const failed = await insertLedgerRow(store, row("POST /api/balance/topup", "0x03"), { outcome: "pending" });
    await finishLedgerRow(store, failed, { outcome: "settlement_failed", status: 402, reason: "x" });
    const other = await insertLedgerRow(store, row("POST /api/chat", "0x04"), { outcome: "pending" });
    await settleAndKeep(store, other, 200, "0xtx4", undefined);
    const [held] = await store.query<{ balance: string; topups: number }>(
      "select (select cast(balance_atomic as text) from balances where wallet = $1) as balance, (select cast(count(*) as integer) from balance_movements where wallet = $1) as topups",
      [wallet],
    );
    expect(held).toEqual({ balance: "5000000", topups: 2 });
  });
});

describe.each(engines.filter((e) => e.enabled))("one authorisation counted once on $name", (engine) => {
  const wallet = "0x00000000000000000000000000000000000b1a12";
  const TX = `0x${"b2".repeat(32)}` as const;
  let opened: Awaited<ReturnType<(typeof engines)[number]["open"]>>;
  let store: Store;
  beforeAll(async () => {
    opened = await engine.open();
    store = opened.store;
  });
  afterAll(() => opened.close());

  const topUpRow = (nonce: string, requestId: string) => ({
    requestId,
    route: "POST /api/balance/topup",
    payer: wallet,
    amountAtomic: "2000000",
    asset: devnet().usdc,
    network: base.id,
    nonce,
    validBefore: null,
    requestHash: "h",
    instance: "test",
    paymentId: null,
  });
  /** Row A of `nonce`, verified, whose settlement's outcome was not known; then the retry's row B, verified. */
  async function unknownThenRetried(nonce: string) {
    const a = await insertLedgerRow(store, topUpRow(nonce, `req-a-${nonce}`), { outcome: "pending" });
    await markLedgerRowVerified(store, a);
    await finishLedgerRow(store, a, { outcome: "settlement_unknown", status: 402, reason: "settlement_unknown" });
    const b = await insertLedgerRow(store, topUpRow(nonce, `req-b-${nonce}`), { outcome: "pending" });
    await markLedgerRowVerified(store, b);
    return { a, b };
  }
  /** The top-up credits made for rows of `nonce`: how many, and their sum (atomic). */
  const credits = async (nonce: string) =>
    (
      await store.query<{ topups: number; credited: string | null }>(
        `select cast(count(*) as integer) as topups, cast(sum(amount_atomic) as text) as credited from balance_movements
          where kind = 'topup' and ledger_id in (select id from ledger where nonce = $1)`,
        [nonce],
      )
    )[0];
  const outcomes = async (nonce: string) =>
    (await ledgerRowsOf(store, wallet, nonce)).map((r) => [r.request_id, r.outcome, r.reason, r.settlement_tx]);

  it("credits a top-up once when the upkeep finds on chain the transfer a retry's row already settled", async () => {
    const nonce = `0x${"01".repeat(32)}`;
    const { b } = await unknownThenRetried(nonce);
    // Row B settles and commits; the process dies before row A is closed.
    await settleAndKeep(store, b, 200, TX, undefined);
    // Minutes later the upkeep reads A as open and finds B's transfer (the same nonce) on chain.
    const onChain: AuthorizationReader = {
      findPayment: async () => TX,
      isUsed: async () => true,
      findUse: async () => TX,
    };
    expect(await reconcileLedger(store, onChain, devnet().payTo, createLogger("silent"), new Date(Date.now() + 4 * 60_000))).toBe(1);
    expect(await credits(nonce)).toEqual({ topups: 1, credited: "2000000" });
    expect(await outcomes(nonce)).toEqual([
      [`req-a-${nonce}`, "not_charged", "same_payment_settled_once", TX],
      [`req-b-${nonce}`, "settled", null, TX],
    ]);
  });

  it("closes the earlier open rows of the authorisation with the statement that settles the retry's row", async () => {
    const nonce = `0x${"02".repeat(32)}`;
    const { a, b } = await unknownThenRetried(nonce);
    await settleAndKeep(store, b, 200, TX, undefined, null, [a]);
    expect(await outcomes(nonce)).toEqual([
      [`req-a-${nonce}`, "not_charged", "same_payment_settled_once", null],
      [`req-b-${nonce}`, "settled", null, TX],
    ]);
    expect(await credits(nonce)).toEqual({ topups: 1, credited: "2000000" });
  });

  it("settles one of two rows of one authorisation settled at the same moment, and credits it once", async () => {
    const nonce = `0x${"03".repeat(32)}`;
    const { a, b } = await unknownThenRetried(nonce);
    const end = { outcome: "settled", status: null, reason: "reconciled_on_chain", settlementTx: TX } as const;
    await Promise.all([finishLedgerRow(store, a, end), finishLedgerRow(store, b, end)]);
    const rows = await outcomes(nonce);
    expect(rows.map(([, outcome, reason]) => [outcome, reason]).sort()).toEqual([
      ["not_charged", "same_payment_settled_once"],
      ["settled", "reconciled_on_chain"],
    ]);
    expect(await credits(nonce)).toEqual({ topups: 1, credited: "2000000" });
  });
});

describe.runIf(databaseUrl)("a prepaid balance on two instances sharing PostgreSQL", () => {
  let store: Store;
  let a: RunningService;
  let b: RunningService;
  beforeAll(async () => {
    store = await freshPostgresStore(databaseUrl as string);
    a = await startTestService({ store, config: testConfig(), instance: "instance-a" });
    b = await startTestService({ store, config: testConfig(), instance: "instance-b" });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await store.close();
  });

  it("answers fifty concurrent messages split over both against a balance worth ten exactly ten times", async () => {
    const buyer = buyerAccount(6);
    const before = await usdcBalance(buyer.address);
    expect((await topUp(a, buyer, 1)).res.status).toBe(200);
    expect(await usdcBalance(buyer.address)).toBe(before - 1_000_000n);
    const targets = Array.from({ length: 50 }, (_v, i) => (i % 2 === 0 ? a : b));
    const headers = await Promise.all(targets.map((t) => signIn(t, buyer, "/api/chat")));
    const calls = await Promise.all(targets.map((t, i) => chatFrom(t, buyer, { message: QUESTION }, headers[i])));
    expect(calls.filter((c) => c.res.status === 200)).toHaveLength(10);
    expect(calls.filter((c) => c.res.status === 402)).toHaveLength(40);
    const [row] = await store.query<{ balance: string; debits: number }>(
      "select (select balance_atomic::text from balances where wallet = lower($1)) as balance, (select count(*)::int from balance_movements where wallet = lower($1) and kind = 'debit') as debits",
      [buyer.address],
    );
    expect(row).toEqual({ balance: "0", debits: 10 });
  });
});
