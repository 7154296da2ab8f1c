/**
 * A real buyer (@x402/fetch) pays for a call: the answer comes with a PAYMENT-RESPONSE whose
 * transaction is a real EIP-3009 settlement on the devnet, moving exactly the price.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { erc20Abi, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import {
  buyerAccount,
  chainClient,
  challengeOf,
  devnet,
  payingFetch,
  signPayment,
  startTestService,
  usdcBalance,
} from "./support/service.ts";

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

const json = { "content-type": "application/json" };
const unknownTx = `0x${"11".repeat(32)}`;

describe("a paid call through @x402/fetch", () => {
  it("answers 200, settles exactly 0.10 USDC on chain and reports the settlement", async () => {
    const buyer = buyerAccount(0);
    const payTo = devnet().payTo;
    const [buyerBefore, payToBefore] = [await usdcBalance(buyer.address), await usdcBalance(payTo)];

    const res = await payingFetch(buyer)(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ tx_hash: unknownTx }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      tx_hash: unknownTx,
      verified: false,
      reason: "tx_not_found",
      detail: "No transaction with this hash is known to the chain node.",
      from: null,
      to: null,
      amount_usdc: null,
      confirmations: 0,
      transfer: null,
    });

    const settlement = decodePaymentResponseHeader(res.headers.get("payment-response") as string);
    expect(settlement).toMatchObject({ success: true, network: base.id, payer: buyer.address });
    const receipt = await chainClient().getTransactionReceipt({ hash: settlement.transaction as `0x${string}` });
    expect(receipt.status).toBe("success");
    expect(receipt.to?.toLowerCase()).toBe(devnet().usdc.toLowerCase());
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs });
    expect(transfers.map((t) => [t.args.from, t.args.to, t.args.value])).toEqual([[buyer.address, payTo, 100_000n]]);

    expect(await usdcBalance(buyer.address)).toBe(buyerBefore - 100_000n);
    expect(await usdcBalance(payTo)).toBe(payToBefore + 100_000n);
    expect(res.headers.get("server-timing")).toMatch(/^verify;dur=[\d.]+, fn;dur=[\d.]+, settle;dur=[\d.]+$/);
    expect(res.headers.get("cache-control")).toContain("private");
  });

  it("verifies its own previous settlement transaction", async () => {
    const buyer = buyerAccount(0);
    const pay = payingFetch(buyer);
    const first = await pay(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ tx_hash: unknownTx }),
    });
    const { transaction } = decodePaymentResponseHeader(first.headers.get("payment-response") as string);
    const receipt = await chainClient().getTransactionReceipt({ hash: transaction as `0x${string}` });
    const latestBefore = await chainClient().getBlockNumber({ cacheTime: 0 });

    const res = await pay(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ tx_hash: transaction, from: buyer.address, min_amount: 0.1 }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      tx_hash: transaction,
      verified: true,
      reason: "verified",
      from: buyer.address,
      to: devnet().payTo,
      amount_usdc: "0.1",
      transfer: { from: buyer.address, to: devnet().payTo, value_atomic: 100000, block: Number(receipt.blockNumber) },
    });
    // Counted when the answer was made, before this call's own settlement was mined.
    expect(body.confirmations).toBe(Number(latestBefore - receipt.blockNumber + 1n));
  });
});

describe("the payment in X-Payment", () => {
  it.each(["X-Payment", "x-payment", "X-PAYMENT"])("is accepted as %s and settled once", async (headerName) => {
    const buyer = buyerAccount(1);
    const before = await usdcBalance(buyer.address);
    const challenge = await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" });
    const res = await fetch(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { ...json, [headerName]: await signPayment(challenge, buyer) },
      body: JSON.stringify({ tx_hash: unknownTx }),
    });
    expect(res.status).toBe(200);
    const settlement = decodePaymentResponseHeader(res.headers.get("payment-response") as string);
    expect(settlement.success).toBe(true);
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
  });

  it("refuses two different payments in PAYMENT-SIGNATURE and X-Payment", async () => {
    const buyer = buyerAccount(1);
    const challenge = await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" });
    const before = await usdcBalance(buyer.address);
    const res = await fetch(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { ...json, "X-Payment": await signPayment(challenge, buyer), "PAYMENT-SIGNATURE": await signPayment(challenge, buyer) },
      body: JSON.stringify({ tx_hash: unknownTx }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    expect(await usdcBalance(buyer.address)).toBe(before);
  });
});
