/**
 * `POST /mcp` under the protections of HTTP, and both bindings of x402's MCP transport, sent as
 * raw JSON-RPC (batches included) to the real service on the devnet:
 * - each tool call of a batch counts against the client's free budget as its HTTP request would;
 * - one payer's 12 paid calls in one batch: 8 run and settle, 4 are refused `rate_limited`
 *   (`paid_in_flight`) and their authorisations stay unused on the chain;
 * - arguments nested 10,000 levels, a `tools/call` without params and an unknown tool are
 *   JSON-RPC `-32602` with the HTTP error body as `data`, never `-32603`;
 * - a client advertising `org.x402/payment` gets `resultType: "payment_required"`, pays with
 *   `_meta["x402/payment"]` and gets `resultType: "complete"` with the settlement;
 * - a payment the facilitator refuses to settle gets the route's `PaymentRequired` with the
 *   reason in either binding, and nothing is charged.
 */
import { randomBytes } from "node:crypto";
import { decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { eip3009ABI } from "@x402/evm";
import { erc20Abi, parseEventLogs } from "viem";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { CAPABILITY, type McpAnswer, mcpRpc } from "./support/mcp.ts";
import {
  buyerAccount,
  chainClient,
  challengeOf,
  devnet,
  signPayment,
  startTestService,
  testConfig,
  usdcBalance,
} from "./support/service.ts";

const T0 = Date.parse("2026-03-02T12:00:00Z");
const PRICE = 100_000n; // verifyPayment: 0.10 USDC
type Answer = McpAnswer;

const call = (id: number, name: string, args: unknown, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

const txHash = (i: number) => `0x${i.toString(16).padStart(64, "0")}`;

function errorCodeOf(answer: Answer): unknown {
  return (answer.result?.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
}

function detailsOf(answer: Answer | undefined): unknown {
  return (answer?.result?.structuredContent as { error?: { details?: unknown } } | undefined)?.error?.details;
}

/** The JSON-RPC answer refusing call `id` with -32602: `message`, naming the field in the service's own error. */
function invalidParams(id: number, message: string, field: string, expected: string) {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: -32602,
      message: `MCP error -32602: ${message}`,
      data: {
        error: {
          code: "invalid_request",
          message,
          details: { fields: [{ field, expected }] },
          docs: "/errors#invalid_request",
        },
      },
    },
  };
}

async function authorizationUsed(header: string): Promise<boolean> {
  const { payload } = decodePaymentSignatureHeader(header) as unknown as {
    payload: { authorization: { from: `0x${string}`; nonce: `0x${string}` } };
  };
  return chainClient().readContract({
    address: base.usdc.address,
    abi: eip3009ABI,
    functionName: "authorizationState",
    args: [payload.authorization.from, payload.authorization.nonce],
  });
}

describe("POST /mcp counts each tool call as the HTTP request of its route", () => {
  let now = T0;
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService({ config: testConfig({ RATE_LIMIT_PER_MINUTE: "120" }), now: () => new Date(now) });
  });
  afterAll(() => service.close());

  it("takes one free request per tools/call of a batch: 100 calls and the POST itself use 101 of 120", async () => {
    const batch = (from: number) => Array.from({ length: 100 }, (_, i) => call(from + i, "getPricing", {}));
    const first = await mcpRpc(service.url, batch(1));
    expect(first.status).toBe(200);
    expect(first.answers.map((a) => a.result?.isError ?? false)).toEqual(Array(100).fill(false));
    // 19 tokens left; the second POST takes one, so 18 calls run and 82 are refused as HTTP would refuse them.
    const second = await mcpRpc(service.url, batch(101));
    const refused = second.answers.filter((a) => a.result?.isError === true);
    expect(second.answers.length - refused.length).toBe(18);
    expect(refused.length).toBe(82);
    expect(refused.map(errorCodeOf)).toEqual(Array(82).fill("rate_limited"));
    expect(detailsOf(refused[0])).toEqual({
      budget: "free",
      per_minute: 120,
    });
    // The same client over HTTP is out of budget too.
    expect((await fetch(`${service.url}/api/pricing`)).status).toBe(429);
    now += 60_000;
    expect((await fetch(`${service.url}/api/pricing`)).status).toBe(200);
  });
});

describe("POST /mcp: one payer's paid calls in flight", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("runs 8 of one payer's 12 paid calls in one batch and refuses 4 before their payment is looked at", async () => {
    const buyer = buyerAccount(6);
    const challenge = await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" });
    const headers = await Promise.all(Array.from({ length: 12 }, () => signPayment(challenge, buyer)));
    const batch = headers.map((h, i) =>
      call(i + 1, "verifyPayment", { tx_hash: txHash(0xe000 + i) }, { "x402/payment": decodePaymentSignatureHeader(h) }),
    );
    const { answers } = await mcpRpc(service.url, batch);
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const ran = answers.slice(0, 8);
    const refused = answers.slice(8);
    expect(ran.map((a) => a.result?.isError ?? false)).toEqual(Array(8).fill(false));
    expect(refused.map(errorCodeOf)).toEqual(Array(4).fill("rate_limited"));
    expect(detailsOf(refused[0])).toEqual({
      budget: "paid_in_flight",
      payer: buyer.address.toLowerCase(),
      in_flight: 8,
      max_in_flight: 8,
    });
    // On the chain: the 8 that ran are used, each by a transfer of the price to payTo; the 4 refused are not.
    expect(await Promise.all(headers.map(authorizationUsed))).toEqual([...Array(8).fill(true), ...Array(4).fill(false)]);
    for (const answer of ran) {
      const settlement = (answer.result?._meta as Record<string, { transaction: `0x${string}` }> | undefined)?.["x402/payment-response"];
      const receipt = await chainClient().getTransactionReceipt({ hash: settlement?.transaction as `0x${string}` });
      const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((t) => [
        t.args.from,
        t.args.to,
        t.args.value,
      ]);
      expect(transfers).toEqual([[buyer.address, devnet().payTo, PRICE]]);
    }
  });
});

/** `header` (a real signed payment) rewritten to name a fresh random payer with a fresh nonce and a signature nobody made. */
function junkPayment(header: string): { payment: unknown; from: string; nonce: string } {
  const payment = decodePaymentSignatureHeader(header) as unknown as {
    payload: { authorization: { from: string; nonce: string }; signature: string };
  };
  const from = `0x${randomBytes(20).toString("hex")}`;
  const nonce = `0x${randomBytes(32).toString("hex")}`;
  payment.payload.authorization.from = from;
  payment.payload.authorization.nonce = nonce;
  payment.payload.signature = `0x${"ab".repeat(65)}`;
  return { payment, from, nonce };
}

describe("POST /mcp: a paid call whose payment lacks its payer's signature", () => {
  let now = T0;
  let service: RunningService;
  beforeAll(async () => {
    const config = testConfig({ RATE_LIMIT_PER_MINUTE: "120" });
    service = await startTestService({
      config: { ...config, limits: { ...config.limits, challengePerMinute: 5 } },
      now: () => new Date(now),
    });
  });
  afterAll(() => service.close());

  it("counts against the challenge budget per call: of 20 junk payments in one batch 15 are refused, 5 reach the ledger", async () => {
    const buyer = buyerAccount(7);
    const challenge = await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" });
    const template = await signPayment(challenge, buyer);
    // The challenge above took a token; a minute refills the budget to its 5.
    now += 60_000;
    const junk = Array.from({ length: 20 }, () => junkPayment(template));
    const { answers } = await mcpRpc(
      service.url,
      junk.map((j, i) => call(i + 1, "verifyPayment", { tx_hash: txHash(0xf000 + i) }, { "x402/payment": j.payment })),
    );
    const codes = answers.map(errorCodeOf);
    expect(codes.slice(5)).toEqual(Array(15).fill("rate_limited"));
    // The first 5 reach the facilitator, which finds the signature is not the payer's.
    expect(answers.slice(0, 5).map((a) => (a.result?.structuredContent as { error?: unknown } | undefined)?.error)).toEqual(
      Array(5).fill("invalid_exact_evm_signature"),
    );
    expect(detailsOf(answers[5])).toEqual({ budget: "challenge", per_minute: 5 });
    const rows = await Promise.all(junk.map((j) => ledgerRowsOf(service.services.store, j.from, j.nonce)));
    expect(rows.flat().length).toBe(5);
    // The budget is spent, yet a call paid with the payer's own signature runs.
    const paid = await mcpRpc(service.url, [
      call(100, "verifyPayment", { tx_hash: txHash(0xf100) }, { "x402/payment": decodePaymentSignatureHeader(template) }),
    ]);
    expect(paid.answers.map((a) => [a.id, a.result?.isError ?? false])).toEqual([[100, false]]);
  });
});

/** `count` tools/list messages with ids from `first`. */
const toolsList = (first: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ jsonrpc: "2.0", id: first + i, method: "tools/list" }));

/** POST a batch to /mcp, answered as sent (a refusal is read from the response). */
const postBatch = (url: string, batch: unknown[]) =>
  fetch(`${url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(batch),
  });

describe("POST /mcp: the messages of a batch besides tool calls, each on a fresh free budget of 120", () => {
  let service: RunningService;
  beforeEach(async () => {
    service = await startTestService({ config: testConfig({ RATE_LIMIT_PER_MINUTE: "120" }), now: () => new Date(T0) });
  });
  afterEach(() => service.close());

  it("take a free request each: a batch of 100 tools/list leaves 20 of 120, and the next such batch is a 429", async () => {
    const url = service.url;
    const first = await mcpRpc(url, toolsList(1, 100));
    expect(first.status).toBe(200);
    expect(first.answers.length).toBe(100);
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await fetch(`${url}/api/pricing`)).status);
    expect(statuses).toEqual([...Array(20).fill(200), 429]);
    const second = await postBatch(url, toolsList(101, 100));
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { details: unknown } }).error.details).toEqual({ budget: "free", per_minute: 120 });
  });

  it("a batch the free budget no longer covers is its 429 and takes none: 100 tools/list leave 20, 30 more are refused, 19 requests still pass", async () => {
    const url = service.url;
    expect((await mcpRpc(url, toolsList(1, 100))).status).toBe(200);
    // The POST itself takes 1 of the 20 left; its 29 other messages are more than the 19 after it.
    const second = await postBatch(url, toolsList(101, 30));
    expect(second.status).toBe(429);
    // 10 more tokens at 2 a second.
    expect(second.headers.get("retry-after")).toBe("5");
    expect(((await second.json()) as { error: { code: string; details: unknown } }).error).toMatchObject({
      code: "rate_limited",
      details: { budget: "free", per_minute: 120 },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await fetch(`${url}/api/pricing`)).status);
    expect(statuses).toEqual([...Array(19).fill(200), 429]);
  });
});

describe("POST /mcp: malformed calls are -32602, as HTTP refuses them with 400", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("refuses arguments nested 10,000 levels as HTTP refuses such a body", async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    // Over HTTP, such a body with a payment is a 400, and the payment is left unused.
    const url = `${service.url}/api/payment-verify`;
    const header = await signPayment(await challengeOf(url, { method: "POST" }), buyerAccount(7));
    const http = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": header },
      body: deep,
    });
    expect(http.status).toBe(400);
    expect(await authorizationUsed(header)).toBe(false);
    expect(((await http.json()) as { error: { code: string } }).error.code).toBe("invalid_request");

    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"verifyPayment","arguments":${deep}}}`;
    const { status, answers } = await mcpRpc(service.url, body);
    expect(status).toBe(200);
    const message = "The request nests deeper than 64 levels in its arguments.";
    expect(answers).toEqual([invalidParams(7, message, "params.arguments", "a JSON object nested at most 64 levels deep")]);
  });

  it("refuses a body over 64 KiB with the same 413 as HTTP, before any call runs", async () => {
    const big = JSON.stringify(call(9, "getPricing", { pad: "x".repeat(70_000) }));
    const res = await fetch(`${service.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: big,
    });
    const http = await fetch(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect([res.status, http.status]).toEqual([413, 413]);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
  });

  it("answers arguments nested 64 levels (the limit) like any other call", async () => {
    // A body of depth 64 passes HTTP's check; the same arguments pass here and reach the route's validation.
    const args = `${'{"a":'.repeat(63)}1${"}".repeat(63)}`;
    const body = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"getPricing","arguments":{"x":${args}}}}`;
    const { answers } = await mcpRpc(service.url, body);
    expect(answers[0]?.error).toBeUndefined();
    expect(answers[0]?.result).toBeDefined();
  });

  it("answers a tools/call without params with -32602 naming the field, without a schema dump", async () => {
    const { answers } = await mcpRpc(service.url, { jsonrpc: "2.0", id: 1, method: "tools/call" });
    const message = "Invalid tools/call: params must be an object {name, arguments?, _meta?}.";
    expect(answers).toEqual([invalidParams(1, message, "params", "an object {name, arguments?, _meta?}")]);
  });

  it("answers a too-deep request batched with only notifications with its -32602, not the notifications' empty 202", async () => {
    const deep = `${'{"a":'.repeat(100)}1${"}".repeat(100)}`;
    const body = `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"verifyPayment","arguments":${deep}}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`;
    const { status, answers } = await mcpRpc(service.url, body);
    expect(status).toBe(200);
    const message = "The request nests deeper than 64 levels in its arguments.";
    expect(answers).toEqual([invalidParams(1, message, "params.arguments", "a JSON object nested at most 64 levels deep")]);
  });

  it("refuses a string payment or sign-in in _meta that cannot be an HTTP header with -32602 naming the field, charging nothing", async () => {
    const buyer = buyerAccount(7);
    const before = await usdcBalance(buyer.address);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const expected = "printable ASCII (it is sent as an HTTP header)";
    const refusal = (id: number, field: string) => invalidParams(id, `Invalid tools/call: ${field} must be ${expected}.`, field, expected);
    const { status, answers } = await mcpRpc(service.url, [
      call(1, "verifyPayment", { tx_hash: txHash(1) }, { "x402/payment": `${header}\nX-Injected: 1` }),
      call(2, "verifyPayment", { tx_hash: txHash(2) }, { "x402/payment": `${header}\u0100` }),
      call(3, "getBalance", {}, { "sign-in-with-x": "ey\nJ" }),
      call(4, "getBalance", {}, { "sign-in-with-x": "caf\u00e9 \u2603" }),
    ]);
    expect(status).toBe(200);
    expect(answers).toEqual([
      refusal(1, 'params._meta["x402/payment"]'),
      refusal(2, 'params._meta["x402/payment"]'),
      refusal(3, 'params._meta["sign-in-with-x"]'),
      refusal(4, 'params._meta["sign-in-with-x"]'),
    ]);
    expect(await authorizationUsed(header)).toBe(false);
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("answers arguments that are not an object, and an unknown tool, with -32602", async () => {
    const { answers } = await mcpRpc(service.url, [call(1, "getPricing", [1, 2]), call(2, "noSuchTool", {})]);
    expect(answers.map((a) => a.error?.code)).toEqual([-32602, -32602]);
    expect(answers[0]?.error?.message).toBe("MCP error -32602: Invalid tools/call: params.arguments must be a JSON object.");
    expect(answers[1]?.error?.message).toBe("MCP error -32602: Unknown tool noSuchTool; tools/list names them all.");
  });
});

describe("POST /mcp: the org.x402/payment extension binding", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("is advertised by server/discover and in initialize's capabilities", async () => {
    const { answers } = await mcpRpc(service.url, { jsonrpc: "2.0", id: 1, method: "server/discover", params: {} });
    expect(answers[0]?.result).toMatchObject({ resultType: "complete", capabilities: { extensions: { "org.x402/payment": {} } } });
    const init = await mcpRpc(service.url, {
      jsonrpc: "2.0",
      id: 2,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    expect(init.answers[0]?.result?.capabilities).toMatchObject({ tools: {}, extensions: { "org.x402/payment": {} } });
  });

  it("answers an unpaid call with resultType payment_required, then settles the payment with resultType complete", async () => {
    const buyer = buyerAccount(7);
    const args = { tx_hash: txHash(0xe100) };
    const url = `${service.url}/api/payment-verify`;
    const challenge = await challengeOf(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args),
    });
    const unpaid = await mcpRpc(service.url, call(1, "verifyPayment", args, CAPABILITY));
    // The same challenge but for its sign-in declaration's nonce and time, fresh in every challenge.
    const fresh = { nonce: expect.any(String), issuedAt: expect.any(String) };
    const siwx = challenge.extensions?.["sign-in-with-x"] as { info: Record<string, unknown> } | undefined;
    const expected = siwx
      ? { ...challenge, extensions: { ...challenge.extensions, "sign-in-with-x": { ...siwx, info: { ...siwx.info, ...fresh } } } }
      : challenge;
    expect(unpaid.answers[0]?.result).toEqual({ resultType: "payment_required", paymentRequired: expected });

    const required = unpaid.answers[0]?.result?.paymentRequired as PaymentRequired;
    const header = await signPayment(required, buyer);
    const payment = decodePaymentSignatureHeader(header);
    const paid = await mcpRpc(service.url, call(2, "verifyPayment", args, { ...CAPABILITY, "x402/payment": payment }));
    const result = paid.answers[0]?.result as Record<string, unknown>;
    expect(result.resultType).toBe("complete");
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ tx_hash: args.tx_hash, verified: false, reason: "tx_not_found" });
    expect(result._meta).toEqual({
      "x402/payment-response": expect.objectContaining({ success: true, network: base.id, payer: buyer.address }),
    });
    expect(await authorizationUsed(header)).toBe(true);

    // Without the capability, the same unpaid call is the tool-result binding, as before.
    const plain = await mcpRpc(service.url, call(3, "verifyPayment", args));
    const plainResult = plain.answers[0]?.result as { content: { text: string }[] };
    expect(plainResult).toEqual({ isError: true, structuredContent: expected, content: [{ type: "text", text: expect.any(String) }] });
    expect(JSON.parse(plainResult.content[0]?.text as string)).toEqual(expected);
  });
});

describe("POST /mcp: a payment the facilitator refuses to settle", () => {
  let service: RunningService;
  beforeAll(async () => {
    // A facilitator that verifies on the devnet but refuses every settlement before broadcasting,
    // as a remote facilitator does when the payer's USDC is gone by the time it settles.
    const d = devnet();
    const { createSelfFacilitator } = await import("../src/payments/facilitator.ts");
    const { rpcTransport } = await import("../src/chain/client.ts");
    const real = createSelfFacilitator(d.facilitator.privateKey, base.chainAt([d.rpcUrl]), rpcTransport([d.rpcUrl]), base.id);
    const settle = async () =>
      ({ success: false, errorReason: "insufficient_funds", errorMessage: "", transaction: "", network: base.id }) as const;
    service = await startTestService({
      facilitator: { verify: (p, r) => real.verify(p, r), getSupported: () => real.getSupported(), settle },
    });
  });
  afterAll(() => service.close());

  it("answers the route's PaymentRequired with the reason in both bindings, charging nothing", async () => {
    const buyer = buyerAccount(6);
    const before = await usdcBalance(buyer.address);
    const args = { tx_hash: txHash(0xe200) };
    const challenge = await challengeOf(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args),
    });
    const siwx = challenge.extensions?.["sign-in-with-x"] as { info: Record<string, unknown> };
    const fresh = { nonce: expect.any(String), issuedAt: expect.any(String) };
    const expected = {
      ...challenge,
      error: "insufficient_funds",
      extensions: { ...challenge.extensions, "sign-in-with-x": { ...siwx, info: { ...siwx.info, ...fresh } } },
    };
    const receipt = { success: false, errorReason: "insufficient_funds", transaction: "", network: base.id };
    const message =
      "The payment could not be settled, so the answer was withheld and you were not charged. Sign a fresh authorisation and retry.";

    const header = await signPayment(challenge, buyer);
    const plain = await mcpRpc(service.url, call(1, "verifyPayment", args, { "x402/payment": decodePaymentSignatureHeader(header) }));
    const result = plain.answers[0]?.result as { content: { text: string }[] };
    expect(result).toEqual({
      isError: true,
      structuredContent: expected,
      content: [
        { type: "text", text: expect.any(String) },
        { type: "text", text: message },
      ],
      _meta: { "x402/payment-response": receipt },
    });
    expect(JSON.parse(result.content[0]?.text as string)).toEqual(expected);

    const second = await signPayment(challenge, buyer);
    const extension = await mcpRpc(
      service.url,
      call(2, "verifyPayment", args, { ...CAPABILITY, "x402/payment": decodePaymentSignatureHeader(second) }),
    );
    expect(extension.answers[0]?.result).toEqual({
      resultType: "payment_required",
      paymentRequired: expected,
      _meta: { "x402/payment-response": receipt },
    });

    expect(await authorizationUsed(header)).toBe(false);
    expect(await authorizationUsed(second)).toBe(false);
    expect(await usdcBalance(buyer.address)).toBe(before);
  });
});
