/**
 * Every way of paying through the one gate, with clients no one in the project wrote: a balance
 * pays any paid route of both Base sites for the wallet that signs in (`wrapFetchWithSIWx`, with
 * the contract's `user_id` too, and the balance read); the input is checked before a 402; a
 * top-up's body is nothing or `{}`; a client gone before settlement is not charged and its retry
 * pays. Each check reads the chain (USDC balances, `authorizationState`) or the store's balance.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { eip3009ABI } from "@x402/evm";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInHeader } from "../scripts/buyer/sign-in.ts";
import { startUpstreamStubs, type UpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import type { RunningService } from "../src/server/service.ts";
import { balanceOf } from "../src/store/balances.ts";
import type { Store } from "../src/store/store.ts";
import {
  authorizationOf,
  buyerAccount,
  chainClient,
  challengeOf,
  devnet,
  payingFetch,
  signPayment,
  startTestService,
  testConfig,
  testStore,
  usdcBalance,
} from "./support/service.ts";

const json = { "content-type": "application/json" };
type Answer = Record<string, unknown> & { error?: { code: string; details?: Record<string, unknown> } };

const used = (from: `0x${string}`, nonce: `0x${string}`) =>
  chainClient().readContract({ address: devnet().usdc, abi: eip3009ABI, functionName: "authorizationState", args: [from, nonce] });
const nonceOf = (header: string) => authorizationOf(header).nonce;

describe("one balance for the whole catalogue, spent by wrapFetchWithSIWx", () => {
  let service: RunningService;
  let store: Store;
  const buyer = buyerAccount(5);
  const signingFetch = wrapFetchWithSIWx(fetch, buyer);
  beforeAll(async () => {
    store = await testStore();
    service = await startTestService({ store });
    const top = await payingFetch(buyer)(`${service.url}/api/balance/topup?amount=1`, { method: "POST" });
    expect(top.status).toBe(200);
  });
  afterAll(() => service.close());

  it("pays POST /api/chat with the contract's user_id: a 402 declaring the sign-in, then the signed retry, debited 0.10", async () => {
    const [held, usdc] = [await balanceOf(store, buyer.address), await usdcBalance(buyer.address)];
    const res = await signingFetch(`${service.url}/api/chat`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ message: "What is WETH at?", user_id: buyer.address }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Answer;
    expect(body).toMatchObject({ charged: true, price_per_msg: 0.1 });
    expect(body.balance).toBeCloseTo(Number(held - 100_000n) / 1e6, 10);
    expect(await balanceOf(store, buyer.address)).toBe(held - 100_000n);
    expect(await usdcBalance(buyer.address)).toBe(usdc);
  });

  it("pays a data route on the primary site and on the secondary site, each at its own price, and says so", async () => {
    const [held, usdc] = [await balanceOf(store, buyer.address), await usdcBalance(buyer.address)];
    const primary = await signingFetch(`${service.url}/api/wallet-profile`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ address: devnet().payTo }),
    });
    expect(primary.status).toBe(200);
    expect(primary.headers.get("balance-debited")).toBe("0.1");
    expect(primary.headers.get("payment-response")).toBeNull();
    expect(await balanceOf(store, buyer.address)).toBe(held - 100_000n);
    expect(primary.headers.get("balance-remaining")).toBe(String(Number(held - 100_000n) / 1e6));

    const secondary = await signingFetch(`${service.secondaryUrl}/v1/wallet-profile`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ address: devnet().payTo }),
    });
    expect(secondary.status).toBe(200);
    expect(((await secondary.json()) as { address: string }).address.toLowerCase()).toBe(devnet().payTo.toLowerCase());
    expect(await balanceOf(store, buyer.address)).toBe(held - 200_000n);
    // No transfer for either: only the top-up moved USDC.
    expect(await usdcBalance(buyer.address)).toBe(usdc);
  });

  it("reads the balance with wrapFetchWithSIWx: a 402 declaring the sign-in, then the balance with its debits per route", async () => {
    const first = await fetch(`${service.url}/api/balance`);
    expect(first.status).toBe(402);
    expect(decodePaymentRequiredHeader(first.headers.get("payment-required") as string).extensions).toHaveProperty("sign-in-with-x");
    const res = await signingFetch(`${service.url}/api/balance`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { balance: number; debits_by_route: { route: string; debits: number; amount: number }[] };
    expect(body.balance).toBe(Number(await balanceOf(store, buyer.address)) / 1e6);
    expect(body.debits_by_route).toEqual(
      expect.arrayContaining([
        { route: "POST /api/chat", debits: 1, amount: 0.1 },
        { route: "POST /api/wallet-profile", debits: 1, amount: 0.1 },
        { route: "POST /v1/wallet-profile", debits: 1, amount: 0.1 },
      ]),
    );
  });

  it("pays an MCP tool call from the balance when _meta carries the sign-in, at the route's price", async () => {
    const [held, usdc] = [await balanceOf(store, buyer.address), await usdcBalance(buyer.address)];
    const client = new Client({ name: "balance-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`)));
    try {
      const signIn = await signInHeader(buyer, `${service.url}/api/defi-sentiment`);
      const result = (await client.callTool({
        name: "defiSentiment",
        arguments: { asset: "ETH" },
        _meta: { "sign-in-with-x": signIn },
      })) as { isError?: boolean; structuredContent?: { asset?: string } };
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent?.asset).toBe("ETH");
    } finally {
      await client.close();
    }
    expect(await balanceOf(store, buyer.address)).toBe(held - 100_000n);
    expect(await usdcBalance(buyer.address)).toBe(usdc);
  });

  it("stays per call for a wallet with no balance: wrapFetchWithSIWx gets the challenge back, nothing debited or moved", async () => {
    const stranger = buyerAccount(4);
    const usdc = await usdcBalance(stranger.address);
    const res = await wrapFetchWithSIWx(fetch, stranger)(`${service.url}/api/wallet-profile`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ address: devnet().payTo }),
    });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { accepts: unknown[] }).accepts).toHaveLength(1);
    expect(await usdcBalance(stranger.address)).toBe(usdc);
  });
});

describe("checked before charged", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService({ store: await testStore() });
  });
  afterAll(() => service.close());

  const post = (path: string, body: string | undefined, headers: Record<string, string> = json) =>
    fetch(`${service.url}${path}`, { method: "POST", headers, ...(body === undefined ? {} : { body }) });

  it("answers a present, failing body or query with a 400 naming the field before any 402; no body and {} get the 402", async () => {
    const bad = await post("/api/wallet-profile", JSON.stringify({ address: "0x1234" }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Answer).error).toMatchObject({
      code: "invalid_request",
      details: { fields: [{ field: "body.address" }] },
    });
    const notJson = await post("/api/wallet-profile", "address=0x1234");
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as Answer).error?.details).toMatchObject({ fields: [{ field: "body" }] });
    const unknownField = await post("/api/chat", JSON.stringify({ message: "hi", colour: "red" }));
    expect(unknownField.status).toBe(400);
    for (const probe of [undefined, "{}", " { } "]) expect((await post("/api/wallet-profile", probe)).status).toBe(402);
    const badQuery = await fetch(`${service.url}/api/howto/${await firstSop(service)}?sop=another`);
    expect(badQuery.status).toBe(400);
    expect((await fetch(`${service.url}/api/howto/no-such-sop`)).status).toBe(404);
  });

  it("takes a top-up's body only when it is nothing or {}: anything else is a 400 even with a valid payment, which stays unused", async () => {
    const buyer = buyerAccount(2);
    const url = `${service.url}/api/balance/topup?amount=1`;
    const challenge = await challengeOf(url, { method: "POST" });
    const bodies: [string, Record<string, string>][] = [
      ["{not json", json],
      ['{"amount": 50}', json],
      [`${"[".repeat(5000)}${"]".repeat(5000)}`, json],
      ["amount=1", { "content-type": "application/x-www-form-urlencoded" }],
      [Buffer.from("\ufeff{}", "utf16le").toString("latin1"), json],
    ];
    const before = await usdcBalance(buyer.address);
    for (const [body, headers] of bodies) {
      expect((await post("/api/balance/topup?amount=1", body, headers)).status).toBe(400);
      const payment = await signPayment(challenge, buyer);
      const paid = await post("/api/balance/topup?amount=1", body, { ...headers, "PAYMENT-SIGNATURE": payment });
      expect(paid.status).toBe(400);
      expect(await used(buyer.address, nonceOf(payment))).toBe(false);
    }
    expect(await usdcBalance(buyer.address)).toBe(before);
    for (const probe of [undefined, "{}"]) expect((await post("/api/balance/topup?amount=1", probe)).status).toBe(402);
  });
});

async function firstSop(service: RunningService): Promise<string> {
  const index = (await (await fetch(`${service.url}/api/howto`)).json()) as { sops: { slug: string }[] };
  return index.sops[0]?.slug as string;
}

describe("a client gone before settlement", () => {
  let service: RunningService;
  let stubs: UpstreamStubs;
  beforeAll(async () => {
    stubs = await startUpstreamStubs({ slowMs: 1_500 });
    const { dexscreener, defillama, defillamaCoins, hyperliquid } = stubs.urls;
    service = await startTestService({
      store: await testStore(),
      config: testConfig({
        DEXSCREENER_URL: dexscreener,
        DEFILLAMA_URL: defillama,
        DEFILLAMA_COINS_URL: defillamaCoins,
        HYPERLIQUID_URL: hyperliquid,
      }),
    });
  });
  afterAll(async () => {
    await service.close();
    await stubs.close();
  });

  it("is not charged: the authorisation stays unused on chain, and a retry with it pays once and gets the answer", async () => {
    const buyer = buyerAccount(1);
    const url = `${service.url}/api/chat`;
    const body = JSON.stringify({ message: "What is WETH at?" });
    const payment = await signPayment(await challengeOf(url, { method: "POST", headers: json, body }), buyer);
    const [before, earnedBefore] = [await usdcBalance(buyer.address), await usdcBalance(devnet().payTo)];
    stubs.setFault("dexscreener", "slow");
    const gone = new AbortController();
    const leaving = fetch(url, { method: "POST", headers: { ...json, "PAYMENT-SIGNATURE": payment }, body, signal: gone.signal });
    await new Promise((resolve) => setTimeout(resolve, 400));
    gone.abort();
    await expect(leaving).rejects.toThrow();
    // The function finishes after the client left; settlement is not attempted.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await used(buyer.address, nonceOf(payment))).toBe(false);
    expect(await usdcBalance(buyer.address)).toBe(before);

    stubs.setFault("dexscreener", null);
    const retry = await fetch(url, { method: "POST", headers: { ...json, "PAYMENT-SIGNATURE": payment }, body });
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as { reply: string }).reply).toContain("WETH");
    expect(await used(buyer.address, nonceOf(payment))).toBe(true);
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
    expect(await usdcBalance(devnet().payTo)).toBe(earnedBefore + 100_000n);
  });
});
