/**
 * A call that fails is never charged: for each way a paid call can fail, the buyer's and
 * the receiver's USDC balances are unchanged, the authorisation is unused on chain, and the
 * facilitator sent no transaction.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { http, type PrivateKeyAccount } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationReader } from "../src/chain/authorization.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import {
  authorizationOf,
  buyerAccount,
  chainClient,
  challengeOf,
  devnet,
  rawRequest,
  signPayment,
  startTestService,
  usdcBalance,
} from "./support/service.ts";
import { forwardRpc, type Stub, startStub } from "./support/stub-server.ts";

const json = { "content-type": "application/json" };
const unknownTx = `0x${"22".repeat(32)}`;

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

/** Balances and the facilitator's transaction count, to compare before and after. */
async function snapshot(buyer: PrivateKeyAccount) {
  const client = chainClient();
  return {
    buyer: await usdcBalance(buyer.address),
    payTo: await usdcBalance(devnet().payTo),
    facilitatorTxs: await client.getTransactionCount({ address: devnet().facilitator.address }),
  };
}

function nonceOf(header: string): `0x${string}` {
  return authorizationOf(header).nonce;
}

function authorizationUsed(buyer: PrivateKeyAccount, nonce: `0x${string}`): Promise<boolean> {
  return authorizationReader(chainClient(), devnet().usdc).isUsed(buyer.address, nonce);
}

async function paidCall(target: RunningService, header: string, body: string) {
  const res = await fetch(`${target.url}/api/payment-verify`, { method: "POST", headers: { ...json, "PAYMENT-SIGNATURE": header }, body });
  return { res, body: (await res.json()) as Record<string, unknown> & { error?: { code: string } } };
}

describe("failures of the call itself", () => {
  it("an invalid body is a 400 naming the field, and the same payment still buys the answer afterwards", async () => {
    const buyer = buyerAccount(2);
    const before = await snapshot(buyer);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);

    const bad = await paidCall(service, header, JSON.stringify({ tx_hash: "0x1234", min_amount: "ten", extra: 1 }));
    expect(bad.res.status).toBe(400);
    expect(bad.res.headers.get("payment-response")).toBeNull();
    expect(bad.body).toEqual({
      error: {
        code: "invalid_request",
        message: expect.stringContaining("body.tx_hash"),
        details: {
          fields: [
            { field: "body.extra", expected: "no such field; allowed: tx_hash, to, from, min_amount" },
            { field: "body.tx_hash", expected: "transaction hash: 0x followed by 64 hex digits", received: "0x1234" },
            {
              field: "body.min_amount",
              expected: "minimum USDC amount (decimal USDC, not atomic) (>= 0, <= 1000000000000)",
              received: "ten",
            },
          ],
        },
        docs: "/errors#invalid_request",
      },
    });
    expect(await snapshot(buyer)).toEqual(before);
    expect(await authorizationUsed(buyer, nonceOf(header))).toBe(false);

    const good = await paidCall(service, header, JSON.stringify({ tx_hash: unknownTx }));
    expect(good.res.status).toBe(200);
    expect(await usdcBalance(buyer.address)).toBe(before.buyer - 100_000n);
  });

  it("malformed JSON is a 400 and not charged", async () => {
    const buyer = buyerAccount(2);
    const before = await snapshot(buyer);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const { res, body } = await paidCall(service, header, "{not json");
    expect(res.status).toBe(400);
    expect(body.error).toEqual({
      code: "invalid_request",
      message: "The request body is not valid JSON; send a JSON object.",
      details: { fields: [{ field: "body", expected: "a JSON object" }] },
      docs: "/errors#invalid_request",
    });
    expect(await snapshot(buyer)).toEqual(before);
  });

  it("a JSON body that is not an object is a 400 saying what it is instead", async () => {
    for (const [text, received] of [
      ["null", "null"],
      ["[]", "array"],
      ['"x"', "string"],
      ["7", "number"],
    ]) {
      const res = await fetch(`${service.url}/api/payment-verify`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: text,
      });
      expect(res.status, text).toBe(400);
      expect(((await res.json()) as { error: unknown }).error, text).toEqual({
        code: "invalid_request",
        message: "The request body must be a JSON object.",
        details: { fields: [{ field: "body", expected: "a JSON object", received }] },
        docs: "/errors#invalid_request",
      });
    }
  });

  it("a body over 64 KiB on a GET is a 413 too", async () => {
    const res = await rawRequest(service.url, "GET", "/api/health", { "content-type": "application/json" }, "x".repeat(70_000));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe("payload_too_large");
  });

  it("a body over 64 KiB is a 413 and not charged", async () => {
    const buyer = buyerAccount(2);
    const before = await snapshot(buyer);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const { res, body } = await paidCall(service, header, JSON.stringify({ tx_hash: unknownTx, pad: "x".repeat(70_000) }));
    expect(res.status).toBe(413);
    expect(body.error?.code).toBe("payload_too_large");
    expect(await snapshot(buyer)).toEqual(before);
  });
});

describe("failures upstream and inside the function", () => {
  let stub: Stub;
  let mode: "down" | "rpc_error" | "bad_receipt" = "down";
  let broken: RunningService;
  beforeAll(async () => {
    stub = await startStub(async (_req, res, body) => {
      if (mode === "down") {
        res.writeHead(503).end("service unavailable");
        return;
      }
      const calls = (Array.isArray(body) ? body : [body]) as { id: number; method: string }[];
      const answers = await Promise.all(
        calls.map(async (call) => {
          if (mode === "rpc_error") return { jsonrpc: "2.0", id: call.id, error: { code: -32000, message: "header not found" } };
          const answer = (await forwardRpc(devnet().rpcUrl, call)) as { result?: Record<string, unknown> };
          // A receipt whose logs are missing makes the function itself throw (not an upstream error).
          if (call.method === "eth_getTransactionReceipt" && answer.result) answer.result = { ...answer.result, logs: null };
          return answer;
        }),
      );
      res.writeHead(200, json).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
    broken = await startTestService({ readTransport: http(stub.url, { retryCount: 0, timeout: 2_000 }) });
  });
  afterAll(async () => {
    await broken.close();
    await stub.close();
  });

  async function expectNotCharged(status: number, code: string, txHash: string) {
    const buyer = buyerAccount(3);
    const before = await snapshot(buyer);
    const header = await signPayment(await challengeOf(`${broken.url}/api/payment-verify`, { method: "POST" }), buyer);
    const { res, body } = await paidCall(broken, header, JSON.stringify({ tx_hash: txHash }));
    expect(res.status).toBe(status);
    expect(body.error?.code).toBe(code);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await snapshot(buyer)).toEqual(before);
    expect(await authorizationUsed(buyer, nonceOf(header))).toBe(false);
    return body;
  }

  it("an unreachable chain node is a 503 and not charged", async () => {
    mode = "down";
    const body = await expectNotCharged(503, "unavailable", unknownTx);
    expect(body.error).toEqual({
      code: "unavailable",
      message: "The chain node is unreachable while reading the transaction receipt; retry shortly.",
      details: { upstream: "rpc" },
      docs: "/errors#unavailable",
    });
  });

  it("a chain node answering with an error is a 502 and not charged", async () => {
    mode = "rpc_error";
    const body = await expectNotCharged(502, "upstream_error", unknownTx);
    expect(JSON.stringify(body)).not.toContain("header not found");
  });

  it("a function that throws is a 500 and not charged", async () => {
    mode = "bad_receipt";
    const existing = await chainClient().getBlock({ blockTag: "latest" });
    const body = await expectNotCharged(500, "internal_error", existing.transactions[0] as string);
    expect(body.error).toEqual({
      code: "internal_error",
      message: "The service failed while answering; you were not charged.",
      docs: "/errors#internal_error",
    });
  });
});

describe("payments that do not match the challenge", () => {
  async function expectRefused(spoil: Parameters<typeof signPayment>[2], reason: string, buyerIndex = 4) {
    const buyer = buyerAccount(buyerIndex);
    const before = await snapshot(buyer);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer, spoil);
    const { res, body } = await paidCall(service, header, JSON.stringify({ tx_hash: unknownTx }));
    expect(res.status).toBe(402);
    expect(body.x402Version).toBe(2);
    expect(body.error).toMatchObject({ code: "payment_required", details: { reason }, docs: "/errors#payment_required" });
    expect(decodePaymentRequiredHeader(res.headers.get("payment-required") as string).error).toBe(reason);
    expect(await snapshot(buyer)).toEqual(before);
    return body;
  }

  it("an expired authorisation", () =>
    expectRefused({ validBefore: BigInt(Math.floor(Date.now() / 1000) - 60) }, "invalid_exact_evm_payload_authorization_valid_before"));
  it("an authorisation not yet valid", () =>
    expectRefused({ validAfter: BigInt(Math.floor(Date.now() / 1000) + 3600) }, "invalid_exact_evm_payload_authorization_valid_after"));
  it("a wrong amount", () => expectRefused({ value: "1" }, "invalid_exact_evm_payload_authorization_value_mismatch"));
  it("a wrong payTo", () => expectRefused({ to: buyerAccount(5).address }, "invalid_exact_evm_recipient_mismatch"));
  it("a wrong network", () => expectRefused({ accepted: { network: "eip155:1" } }, "no_matching_requirements"));
  it("a signature for another chain", () => expectRefused({ chainId: 1 }, "invalid_exact_evm_signature"));

  it("a replayed authorisation is charged only the first time: the same request gets the kept answer, another request a 402", async () => {
    const buyer = buyerAccount(4);
    const before = await snapshot(buyer);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const first = await paidCall(service, header, JSON.stringify({ tx_hash: unknownTx }));
    expect(first.res.status).toBe(200);
    const receipt = first.res.headers.get("payment-response") as string;
    expect(decodePaymentResponseHeader(receipt).success).toBe(true);
    const afterFirst = await snapshot(buyer);
    expect(afterFirst.buyer).toBe(before.buyer - 100_000n);
    expect(afterFirst.facilitatorTxs).toBe(before.facilitatorTxs + 1);

    const same = await paidCall(service, header, JSON.stringify({ tx_hash: unknownTx }));
    expect(same.res.status).toBe(200);
    expect(same.body).toEqual(first.body);
    expect(same.res.headers.get("payment-response")).toBe(receipt);

    const other = await paidCall(service, header, JSON.stringify({ tx_hash: `0x${"23".repeat(32)}` }));
    expect(other.res.status).toBe(402);
    expect(other.body.error).toMatchObject({ code: "payment_already_used", details: { reason: "payment_already_used" } });
    expect(await snapshot(buyer)).toEqual(afterFirst);
  });
});

describe("settlement failures", () => {
  const leaky =
    'ContractFunctionExecutionError: The contract function "transferWithAuthorization" reverted. Request Arguments: from: 0xf39F... rpc http://10.0.0.5:8545';
  async function withFacilitator(
    settle: () =>
      | Promise<never>
      | Promise<{ success: false; errorReason: string; errorMessage: string; transaction: string; network: typeof base.id }>,
  ) {
    const d = devnet();
    const { createSelfFacilitator } = await import("../src/payments/facilitator.ts");
    const { rpcTransport } = await import("../src/chain/client.ts");
    const real = createSelfFacilitator(d.facilitator.privateKey, base.chainAt([d.rpcUrl]), rpcTransport([d.rpcUrl]), base.id);
    return startTestService({ facilitator: { verify: (p, r) => real.verify(p, r), getSupported: () => real.getSupported(), settle } });
  }

  it.each([
    [
      "refuses with raw RPC text",
      () =>
        Promise.resolve({
          success: false as const,
          errorReason: leaky,
          errorMessage: leaky,
          transaction: "",
          network: base.id,
        }),
    ],
    ["throws", () => Promise.reject(new Error(leaky))],
  ])("when the facilitator %s: 402, a stable reason, no viem text, not charged", async (_name, settle) => {
    const target = await withFacilitator(settle as never);
    try {
      const buyer = buyerAccount(5);
      const before = await snapshot(buyer);
      const header = await signPayment(await challengeOf(`${target.url}/api/payment-verify`, { method: "POST" }), buyer);
      const { res, body } = await paidCall(target, header, JSON.stringify({ tx_hash: unknownTx }));
      expect(res.status).toBe(402);
      // Free text (a refusal in raw RPC words, or a throw) may come after a broadcast: the outcome is
      // unknown, the chain shows no transfer, and the buyer is told to retry with the same payment.
      const expected = {
        code: "settlement_unknown",
        message:
          "The settlement's outcome is not known yet: the transfer may have gone through. Retry the same request with the same payment header: if it settled you get this answer without paying again; if not, it is settled then.",
        details: { reason: "settlement_unknown" },
        docs: "/errors#settlement_unknown",
      };
      expect(body.error).toEqual(expected);
      const receipt = decodePaymentResponseHeader(res.headers.get("payment-response") as string);
      expect(receipt).toMatchObject({ success: false, errorReason: expected.code });
      const everything = JSON.stringify(body) + JSON.stringify(receipt) + JSON.stringify([...res.headers]);
      expect(everything).not.toContain("Contract");
      expect(everything).not.toContain("10.0.0.5");
      expect(await snapshot(buyer)).toEqual(before);
    } finally {
      await target.close();
    }
  });

  it("when the facilitator cannot verify at all: 503 payment_unavailable in the service's error shape, not charged", async () => {
    const target = await startTestService({
      facilitator: {
        verify: () => Promise.reject(new Error(leaky)),
        settle: () => Promise.reject(new Error("unreachable")),
        getSupported: async () => ({ kinds: [{ x402Version: 2, scheme: "exact", network: base.id }], extensions: [], signers: {} }),
      },
    });
    try {
      const buyer = buyerAccount(5);
      const before = await snapshot(buyer);
      const header = await signPayment(await challengeOf(`${target.url}/api/payment-verify`, { method: "POST" }), buyer);
      const { res, body } = await paidCall(target, header, JSON.stringify({ tx_hash: unknownTx }));
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(body).toEqual({
        error: {
          code: "payment_unavailable",
          message:
            "The payment facilitator or the chain did not answer in time, so nothing was run or charged. Retry shortly with the same payment.",
          docs: "/errors#payment_unavailable",
        },
      });
      expect(JSON.stringify(body)).not.toContain("Contract");
      expect(await snapshot(buyer)).toEqual(before);
    } finally {
      await target.close();
    }
  });
});
