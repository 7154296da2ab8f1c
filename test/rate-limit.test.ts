/**
 * Rate limits (src/server/middleware/rate-limit.ts) through the real service: the 121st free
 * request in a minute is a 429 `rate_limited` with Retry-After, the budget refills with the
 * (injected) clock, a forged X-Forwarded-For buys nothing, the 402 challenge of a paid route is
 * not counted against the free budget, one payer's 9th paid call in flight is refused before its
 * payment is looked at (never charged), and two instances on one PostgreSQL share a budget.
 */
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import type { FacilitatorClient } from "@x402/core/server";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { routes } from "../spec/routes.ts";
import { rpcTransport } from "../src/chain/client.ts";
import type { Config } from "../src/config.ts";
import { clientKey, isLoopback } from "../src/limits/client-key.ts";
import { memoryBuckets, storeBuckets, type TokenBuckets } from "../src/limits/token-buckets.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { createSelfFacilitator } from "../src/payments/facilitator.ts";
import { decodePayment } from "../src/payments/payload.ts";
import { rateLimiter } from "../src/server/middleware/rate-limit.ts";
import { type RunningService, startService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { freshPostgresStore } from "./support/postgres.ts";
import {
  buyerAccount,
  challengeOf,
  devnet,
  productionConfig,
  signPayment,
  startTestService,
  testConfig,
  testStore,
  usdcBalance,
} from "./support/service.ts";

const T0 = Date.parse("2026-03-02T12:00:00Z");

/** A clock the test moves by hand. */
function manualClock(start = T0) {
  let now = start;
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
}

/** 6 a minute, one token every 10 s: a count is taken at once, or refused whole and none taken. */
async function countChecks(buckets: TokenBuckets) {
  expect(await buckets.take("d", T0, 4)).toEqual({ allowed: true, retryAfterSeconds: 0 });
  // 2 left: 3 are refused and none taken; the third comes in 10 s.
  expect(await buckets.take("d", T0, 3)).toEqual({ allowed: false, retryAfterSeconds: 10 });
  expect(await buckets.take("d", T0, 2)).toEqual({ allowed: true, retryAfterSeconds: 0 });
  expect(await buckets.take("d", T0)).toEqual({ allowed: false, retryAfterSeconds: 10 });
  // A fresh bucket holds 6: 7 at once are refused (no wait would let them pass; the shortest is
  // said), and 6 are taken.
  expect(await buckets.take("e", T0, 7)).toEqual({ allowed: false, retryAfterSeconds: 1 });
  expect(await buckets.take("e", T0, 6)).toEqual({ allowed: true, retryAfterSeconds: 0 });
  expect((await buckets.take("e", T0)).allowed).toBe(false);
}

async function free(url: string, path = "/api/health", headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { headers });
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    requestId: res.headers.get("x-request-id"),
    body: await res.text(),
  };
}

describe("token buckets", () => {
  it("hold a minute's worth, refill per millisecond and say when the next token comes", async () => {
    const buckets = memoryBuckets(120);
    for (let i = 0; i < 120; i++) expect((await buckets.take("a", T0)).allowed).toBe(true);
    expect(await buckets.take("a", T0)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(await buckets.take("b", T0)).toEqual({ allowed: true, retryAfterSeconds: 0 });
    // 2 tokens a second: after 1.5 s three more requests pass, the fourth waits.
    expect((await buckets.take("a", T0 + 1_500)).allowed).toBe(true);
    expect((await buckets.take("a", T0 + 1_500)).allowed).toBe(true);
    expect((await buckets.take("a", T0 + 1_500)).allowed).toBe(true);
    expect((await buckets.take("a", T0 + 1_500)).allowed).toBe(false);
    const slow = memoryBuckets(6); // one token every 10 s
    for (let i = 0; i < 6; i++) await slow.take("c", T0);
    expect(await slow.take("c", T0 + 2_500)).toEqual({ allowed: false, retryAfterSeconds: 8 });
  });

  it("in the store give the same answers, and never refill when a clock goes backwards", async () => {
    const store = await testStore();
    const buckets = storeBuckets(store, 6, "unit");
    for (let i = 0; i < 6; i++) expect((await buckets.take("c", T0)).allowed).toBe(true);
    expect(await buckets.take("c", T0 + 2_500)).toEqual({ allowed: false, retryAfterSeconds: 8 });
    expect(await buckets.take("c", T0 - 60_000)).toEqual({ allowed: false, retryAfterSeconds: 8 });
    expect((await buckets.take("c", T0 + 10_000)).allowed).toBe(true);
    expect((await buckets.take("c", T0 + 10_000)).allowed).toBe(false);
  });

  it("take a count of tokens at once, and refuse it whole when fewer remain, in memory and in the store", async () => {
    const store = await testStore();
    // 6 a minute: one token every 10 s.
    for (const buckets of [memoryBuckets(6), storeBuckets(store, 6, "count")]) await countChecks(buckets);
  });

  it("key IPv6 clients by their /64 and IPv4-mapped addresses as IPv4", () => {
    expect(clientKey("2001:db8:aa:bb:1:2:3:4")).toBe("2001:db8:aa:bb::/64");
    expect(clientKey("2001:db8:aa:bb::9")).toBe("2001:db8:aa:bb::/64");
    expect(clientKey("2001:0db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(clientKey("198.51.100.4")).toBe("198.51.100.4");
    expect([isLoopback("127.0.0.1"), isLoopback("::ffff:127.0.0.9"), isLoopback("::1"), isLoopback("10.0.0.1")]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});

describe("the free budget of one instance", () => {
  const clock = manualClock();
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService({ config: testConfig({ RATE_LIMIT_PER_MINUTE: "120" }), now: clock.now });
  });
  afterAll(() => service.close());

  it("answers 120 free requests in a minute and refuses the 121st with 429 rate_limited and Retry-After", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) statuses.push((await free(service.url, i % 2 === 0 ? "/api/health" : "/api/kb")).status);
    expect(statuses).toEqual(Array(120).fill(200));
    // /api/kb is answered from memory, before the Express chain: its refusal carries a request id all the same.
    const refused = await free(service.url, "/api/kb", { "X-Request-Id": "client-7" });
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe("1");
    expect(refused.requestId).toBe("client-7");
    expect(JSON.parse(refused.body)).toEqual({
      error: {
        code: "rate_limited",
        message: "Too many free requests from your address: 120 a minute. Retry after 1 s; paid calls are not limited.",
        details: { budget: "free", per_minute: 120 },
        docs: "/errors#rate_limited",
      },
    });
    // Pages count as free requests; static files and the metrics do not.
    expect((await free(service.url, "/errors")).status).toBe(429);
    expect((await free(service.url, "/favicon.svg")).status).toBe(200);
    expect((await free(service.url, "/metrics")).status).toBe(200);
    // A forwarded address from an untrusted peer is not believed: no fresh budget.
    expect((await free(service.url, "/api/kb", { "X-Forwarded-For": "203.0.113.9" })).status).toBe(429);
    // The challenge of a paid route has its own, far larger budget.
    const challenge = await fetch(`${service.url}/api/payment-verify`, { method: "POST" });
    expect(challenge.status).toBe(402);
    expect(challenge.headers.get("payment-required")).toBeTruthy();
  });

  it("refills with the clock: 30 s later 60 more pass and the 61st is refused", async () => {
    clock.advance(30_000);
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await free(service.url)).status);
    expect(statuses).toEqual([...Array(60).fill(200), 429]);
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toContain('rate_limit_refusals_total{budget="free"} 4');
  });
});

describe("behind a proxy (production mode)", () => {
  const clock = manualClock();
  let service: RunningService;
  beforeAll(async () => {
    const config = productionConfig({ RATE_LIMIT_PER_MINUTE: "3" });
    service = await startService({ config, store: await testStore(), maintenance: false, now: clock.now });
  });
  afterAll(() => service.close());

  it("counts each client by the address the trusted proxy forwards", async () => {
    const from = (address: string) => free(service.url, "/api/kb", { "X-Forwarded-For": address }).then((r) => r.status);
    expect([await from("203.0.113.1"), await from("203.0.113.1"), await from("203.0.113.1"), await from("203.0.113.1")]).toEqual([
      200, 200, 200, 429,
    ]);
    expect(await from("203.0.113.2")).toBe(200);
    // One IPv6 host's /64 is one client.
    expect([await from("2001:db8::1"), await from("2001:db8::2"), await from("2001:db8::3"), await from("2001:db8::4")]).toEqual([
      200, 200, 200, 429,
    ]);
    const refused = await free(service.url, "/api/kb", { "X-Forwarded-For": "203.0.113.1" });
    expect(refused.retryAfter).toBe("20");
  });
});

describe("paid calls in flight", () => {
  const d = () => devnet();
  let release: () => void = () => {};
  let held = 0;
  let service: RunningService;
  beforeAll(async () => {
    const real = createSelfFacilitator(d().facilitator.privateKey, base.chainAt([d().rpcUrl]), rpcTransport([d().rpcUrl]), base.id);
    const gateOpen = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Verification waits until the test opens the gate, so calls stay in flight as long as it wants.
    const holding: FacilitatorClient = {
      verify: async (p, r) => {
        held++;
        await gateOpen;
        return real.verify(p, r);
      },
      settle: (p, r) => real.settle(p, r),
      getSupported: () => real.getSupported(),
    };
    service = await startTestService({ facilitator: holding, config: testConfig({ RATE_LIMIT_PER_MINUTE: "120" }) });
  });
  afterAll(() => service.close());

  it("are at most 8 per payer: the 9th is a 429 refused before its payment is looked at, never charged", async () => {
    const buyer = buyerAccount(3);
    const other = buyerAccount(4);
    const before = await usdcBalance(buyer.address);
    const url = `${service.url}/api/payment-verify`;
    const challenge = await challengeOf(url, { method: "POST" });
    const headers = await Promise.all(Array.from({ length: 9 }, () => signPayment(challenge, buyer)));
    const call = (header: string, i: number) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": header },
        body: JSON.stringify({ tx_hash: `0x${(0xc0 + i).toString(16).repeat(32)}` }),
      });
    const eight = headers.slice(0, 8).map((h, i) => call(h, i));
    while (held < 8) await new Promise((resolve) => setTimeout(resolve, 20));

    const ninth = await call(headers[8] as string, 8);
    expect(ninth.status).toBe(429);
    expect(ninth.headers.get("retry-after")).toBe("1");
    const body = (await ninth.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error.code).toBe("rate_limited");
    expect(body.error.details).toEqual({
      budget: "paid_in_flight",
      payer: buyer.address.toLowerCase(),
      in_flight: 8,
      max_in_flight: 8,
    });
    // Another payer is not held up by this one.
    const otherHeader = await signPayment(challenge, other);
    const otherCall = call(otherHeader, 9);
    while (held < 9) await new Promise((resolve) => setTimeout(resolve, 20));

    release();
    const answers = await Promise.all([...eight, otherCall]);
    expect(answers.map((r) => r.status)).toEqual(Array(9).fill(200));
    expect(await usdcBalance(buyer.address)).toBe(before - 8n * 100_000n);
    // The refused payment never reached the ledger, and once the others answered it pays normally.
    const nonce = (JSON.parse(Buffer.from(headers[8] as string, "base64").toString()) as { payload: { authorization: { nonce: string } } })
      .payload.authorization.nonce;
    expect(await ledgerRowsOf(service.services.store, buyer.address, nonce)).toEqual([]);
    expect((await call(headers[8] as string, 8)).status).toBe(200);
    expect(await usdcBalance(buyer.address)).toBe(before - 9n * 100_000n);
  });
});

/** A production service behind a (loopback) proxy that forwards each client's address, on the devnet. */
async function productionService(limits: Partial<Config["limits"]> = {}): Promise<RunningService> {
  const config = productionConfig({ RATE_LIMIT_PER_MINUTE: "120" });
  return startService({ config: { ...config, limits: { ...config.limits, ...limits } }, store: await testStore(), maintenance: false });
}

/** `header` (a real signed payment) rewritten to name `from` with a fresh nonce and a signature nobody made. */
function junkPayment(header: string, from: string): { header: string; nonce: string } {
  const payment = JSON.parse(Buffer.from(header, "base64").toString()) as {
    payload: { authorization: { from: string; nonce: string }; signature: string };
  };
  const nonce = `0x${randomBytes(32).toString("hex")}`;
  payment.payload.authorization.from = from;
  payment.payload.authorization.nonce = nonce;
  payment.payload.signature = `0x${"ab".repeat(65)}`;
  return { header: Buffer.from(JSON.stringify(payment)).toString("base64"), nonce };
}

const randomAddress = () => `0x${randomBytes(20).toString("hex")}`;

describe("a payer's calls in flight, against a stranger naming the payer", () => {
  let service: RunningService;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    service = await productionService();
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await service.close();
  });

  /**
   * 8 connections from the client at `forwardedFor`, each with the headers of a paid call naming
   * `payer` (a junk signature) and a declared body that never comes.
   */
  async function stallPaidBodies(template: string, payer: `0x${string}`, forwardedFor: string): Promise<void> {
    const { hostname, port } = new URL(service.url);
    for (let i = 0; i < 8; i++) {
      const socket = connect(Number(port), hostname);
      sockets.push(socket);
      socket.on("error", () => {});
      socket.write(
        `POST /api/payment-verify HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-Forwarded-For: ${forwardedFor}\r\n` +
          `Content-Type: application/json\r\nContent-Length: 60000\r\nPAYMENT-SIGNATURE: ${junkPayment(template, payer).header}\r\n\r\n`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }

  it("are per payer and client address: 8 of the payer's calls from client A hold A's places, not client B's", async () => {
    const buyer = buyerAccount(3);
    const url = `${service.url}/api/payment-verify`;
    const payment = await signPayment(await challengeOf(url, { method: "POST", headers: { "X-Forwarded-For": "203.0.113.2" } }), buyer);
    const route = routes.find((r) => r.operationId === "verifyPayment");
    if (!route) throw new Error("no verifyPayment route");
    // Only the in-flight places: no free or challenge budget to take from.
    const limiter = rateLimiter({
      free: null,
      challenge: null,
      paidInFlightPerPayer: 8,
      decode: decodePayment,
      signedByPayer: async () => true,
      log: createLogger("silent"),
    });
    const fromA = { route, address: "203.0.113.1", payment };
    const admitted = await Promise.all(Array.from({ length: 8 }, () => limiter.admit(fromA)));
    expect(admitted.map((a) => "done" in a)).toEqual(Array(8).fill(true));
    const ninth = await limiter.admit(fromA);
    if (!("refused" in ninth)) throw new Error("the 9th call of the payer from A was admitted");
    expect(ninth.refused.status).toBe(429);
    const body = (await ninth.refused.json()) as { error: { details: unknown } };
    expect(body.error.details).toEqual({ budget: "paid_in_flight", payer: buyer.address.toLowerCase(), in_flight: 8, max_in_flight: 8 });
    // The same payer from client B: A's calls hold none of B's places.
    expect("done" in (await limiter.admit({ route, address: "203.0.113.2", payment }))).toBe(true);
  });

  it("are not held by 8 requests from the payer's own client address that never send their body: a place is taken once the body is in", async () => {
    const buyer = buyerAccount(4);
    const url = `${service.url}/api/payment-verify`;
    const challenge = await challengeOf(url, { method: "POST", headers: { "X-Forwarded-For": "203.0.113.3" } });
    const template = await signPayment(challenge, buyer);
    // The stalled calls share the real payer's key (client address and payer): only taking the
    // place after the body keeps them from holding all 8.
    await stallPaidBodies(template, buyer.address, "203.0.113.3");
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": template, "X-Forwarded-For": "203.0.113.3" },
      body: JSON.stringify({ tx_hash: `0x${"c8".repeat(32)}` }),
    });
    expect(res.status).toBe(200);
  });
});

describe("payment headers without the payer's signature", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await productionService({ challengePerMinute: 5 });
  });
  afterAll(() => service.close());

  it("count against the challenge budget: 20 junk payments of fresh payers, the 6th is a 429, 5 reach the ledger; signed payments still pass", async () => {
    const url = `${service.url}/api/payment-verify`;
    const buyer = buyerAccount(5);
    const challenge = await challengeOf(url, { method: "POST", headers: { "X-Forwarded-For": "203.0.113.9" } });
    const template = await signPayment(challenge, buyer);
    const post = (header: string, client: string, i: number) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": header, "X-Forwarded-For": client },
        body: JSON.stringify({ tx_hash: `0x${(0xd0 + i).toString(16).repeat(32)}` }),
      });
    const junk = Array.from({ length: 20 }, () => {
      const from = randomAddress();
      return { from, ...junkPayment(template, from) };
    });
    const statuses: number[] = [];
    for (const [i, j] of junk.entries()) statuses.push((await post(j.header, "203.0.113.1", i)).status);
    expect(statuses).toEqual([...Array(5).fill(402), ...Array(15).fill(429)]);
    const rows = await Promise.all(junk.map((j) => ledgerRowsOf(service.services.store, j.from, j.nonce)));
    expect(rows.flat().length).toBe(5);
    // Client A's challenge budget is spent, yet a payment signed by its payer is answered, from A and from B.
    expect((await post(template, "203.0.113.1", 30)).status).toBe(200);
    expect((await post(await signPayment(challenge, buyer), "203.0.113.2", 31)).status).toBe(200);
  });
});

const databaseUrl = inject("databaseUrl");
describe.runIf(databaseUrl)("two instances on one PostgreSQL", () => {
  const clock = manualClock();
  let store: Store;
  let a: RunningService;
  let b: RunningService;
  beforeAll(async () => {
    store = await freshPostgresStore(databaseUrl as string);
    const config = testConfig({ RATE_LIMIT_PER_MINUTE: "120" });
    a = await startTestService({ store, config, instance: "instance-a", now: clock.now });
    b = await startTestService({ store, config, instance: "instance-b", now: clock.now });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await store.close();
  });

  it("share one budget per client: 60 on each, then the 121st is refused by either", async () => {
    const statuses = await Promise.all(Array.from({ length: 120 }, (_v, i) => free(i % 2 === 0 ? a.url : b.url).then((r) => r.status)));
    expect(statuses).toEqual(Array(120).fill(200));
    const [onA, onB] = [await free(a.url), await free(b.url)];
    expect([onA.status, onA.retryAfter, onB.status, onB.retryAfter]).toEqual([429, "1", 429, "1"]);
    const [row] = await store.query<{ key: string; tokens: number }>("select key, tokens from rate_buckets");
    expect(row?.key).toBe("free:127.0.0.1");
    clock.advance(1_000);
    expect((await free(b.url)).status).toBe(200);
    expect((await free(a.url)).status).toBe(200);
    expect((await free(a.url)).status).toBe(429);
  });

  it("take a count of tokens at once in one upsert, and refuse it whole when fewer remain", async () => {
    await countChecks(storeBuckets(store, 6, "count"));
  });
});
