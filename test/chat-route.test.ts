/**
 * `POST /api/chat` over HTTP with real x402 payments on the local chain: a message the
 * assistant cannot answer is a 400 that says what it can answer, and the payment sent with it
 * is never settled (the payer's and the seller's USDC unchanged, the authorization unused on
 * the USDC contract); a message it answers is settled for exactly 0.10 USDC. Paid from a prepaid
 * balance, the same message debits nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInHeader } from "../scripts/buyer/sign-in.ts";
import { CAPABILITIES } from "../src/chat/builtin.ts";
import type { RunningService } from "../src/server/service.ts";
import {
  authorizationOf,
  buyerAccount,
  chainClient,
  challengeOf,
  devnet,
  payingFetch,
  signPayment,
  startTestService,
  usdcBalance,
} from "./support/service.ts";

const PRICE = 100_000n; // 0.10 USDC in atomic units
const eip3009Abi = [
  {
    type: "function",
    name: "authorizationState",
    stateMutability: "view",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
    ],
    outputs: [{ type: "bool" }],
  },
] as const;

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

/** Pay for one chat message with buyer `index`: the answer, the authorization's nonce and the USDC that moved. */
async function paidChat(message: string, index: number) {
  const buyer = buyerAccount(index);
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message }) };
  const challenge = await challengeOf(`${service.url}/api/chat`, init);
  expect(challenge.accepts[0]?.amount).toBe(String(PRICE));
  const header = await signPayment(challenge, buyer);
  const { nonce } = authorizationOf(header);
  const before = await Promise.all([usdcBalance(buyer.address), usdcBalance(devnet().payTo)]);
  const res = await fetch(`${service.url}/api/chat`, { ...init, headers: { ...init.headers, "payment-signature": header } });
  const body = (await res.json()) as Record<string, unknown>;
  const after = await Promise.all([usdcBalance(buyer.address), usdcBalance(devnet().payTo)]);
  const used = await chainClient().readContract({
    address: devnet().usdc,
    abi: eip3009Abi,
    functionName: "authorizationState",
    args: [buyer.address, nonce],
  });
  return {
    res,
    body,
    paid: (before[0] as bigint) - (after[0] as bigint),
    received: (after[1] as bigint) - (before[1] as bigint),
    used,
  };
}

describe("POST /api/chat on the local chain", () => {
  it.each([
    ["tell me a joke", "I can't answer that: it is not about prices, funding, gas, TVL, the watched markets or the knowledge base."],
    ["aave", "I can't answer that"],
    ["what's the TVL of zzqprotocol", "I found no DefiLlama protocol in that message"],
  ])("answers %j it cannot answer with a 400 and never settles the payment", async (message, said) => {
    const { res, body, paid, received, used } = await paidChat(message, 6);
    expect(res.status).toBe(400);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(body).toMatchObject({
      error: {
        code: "invalid_request",
        details: { fields: [{ field: "body.message", expected: `a question the assistant can answer. ${CAPABILITIES}` }] },
      },
    });
    const text = (body.error as { message: string }).message;
    expect(text.startsWith(said)).toBe(true);
    expect(text).toContain("This message was not charged.");
    expect(text.endsWith(CAPABILITIES)).toBe(true);
    expect(paid).toBe(0n);
    expect(received).toBe(0n);
    expect(used).toBe(false);
  });

  // A blank message passed the schema: the buyer got a 402, signed a payment, and only then a 400.
  it.each(["   ", "\n\t "])("refuses the blank message %j with a 400 naming body.message before any 402", async (message) => {
    const res = await fetch(`${service.url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("payment-required")).toBeNull();
    expect(await res.json()).toMatchObject({
      error: {
        code: "invalid_request",
        details: { fields: [{ field: "body.message", expected: "the question, 1 to 2,000 characters, not blank", received: message }] },
      },
    });
  });

  it('answers "aave tvl" with Aave\'s TVL from DefiLlama and settles exactly 0.10 USDC', async () => {
    const { res, body, paid, received, used } = await paidChat("aave tvl", 6);
    expect(res.status).toBe(200);
    expect(res.headers.get("payment-response")).not.toBeNull();
    expect(body.reply).toBe(
      "Aave's TVL on DefiLlama is $27,710,000,000 (all its versions: aave-v2 and aave-v3), -0.87% over 24 h. Not financial advice.",
    );
    expect(body.charged).toBe(true);
    expect(paid).toBe(PRICE);
    expect(received).toBe(PRICE);
    expect(used).toBe(true);
  });

  it("debits nothing from a prepaid balance for a message it cannot answer, and 0.10 for one it answers", async () => {
    const buyer = buyerAccount(7);
    const top = await payingFetch(buyer)(`${service.url}/api/balance/topup?amount=1`, { method: "POST" });
    expect(top.status).toBe(200);
    const balance = async () => {
      const res = await fetch(`${service.url}/api/balance`, {
        headers: { "SIGN-IN-WITH-X": await signInHeader(buyer, `${service.url}/api/balance`) },
      });
      return ((await res.json()) as { balance: number }).balance;
    };
    const chat = async (message: string) => {
      const res = await fetch(`${service.url}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json", "SIGN-IN-WITH-X": await signInHeader(buyer, `${service.url}/api/chat`) },
        body: JSON.stringify({ user_id: buyer.address, message }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const before = await balance();
    const refused = await chat("tell me a joke");
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: "invalid_request" } });
    expect(await balance()).toBe(before);
    const answered = await chat("aave tvl");
    expect(answered.status).toBe(200);
    expect(answered.body.balance).toBeCloseTo(before - 0.1, 9);
    expect(await balance()).toBeCloseTo(before - 0.1, 9);
  });
});
