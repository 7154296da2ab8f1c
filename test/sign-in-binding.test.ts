/**
 * Sign-ins bound to us: a Sign-In-With-X spends a balance or redeems a purchase only when it
 * names the site's configured origin (never one read from Host), a chain the route's challenge
 * declares, and the route it is used on. A sign-in that grants nothing leaves its nonce unused,
 * so agentcash's sequence (sign in first, then pay with the same sign-in beside the payment)
 * buys. Every check reads the store's balance and the chain, not only the status.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { eip3009ABI } from "@x402/evm";
import { createSIWxPayload, encodeSIWxHeader, parseSIWxHeader, verifySIWxSignature } from "@x402/extensions/sign-in-with-x";
import type { PrivateKeyAccount } from "viem";
import { baseSepolia, mainnet } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInHeader } from "../scripts/buyer/sign-in.ts";
import { ConfigError, loadConfig } from "../src/config.ts";
import { DEFAULT_NETWORK } from "../src/networks/index.ts";
import { checkSignIn } from "../src/payments/sign-in.ts";
import { type RunningService, startService } from "../src/server/service.ts";
import { balanceOf } from "../src/store/balances.ts";
import type { Store } from "../src/store/store.ts";
import {
  buyerAccount,
  chainClient,
  devnet,
  payingFetch,
  rawRequest,
  signPayment,
  startTestService,
  testStore,
  usdcBalance,
} from "./support/service.ts";

const json = { "content-type": "application/json" };
type Answer = Record<string, unknown> & { error?: { code: string; details?: Record<string, unknown> } };

const used = (from: `0x${string}`, nonce: `0x${string}`) =>
  chainClient().readContract({ address: devnet().usdc, abi: eip3009ABI, functionName: "authorizationState", args: [from, nonce] });

const nonceOf = (header: string) =>
  (JSON.parse(Buffer.from(header, "base64").toString("utf8")) as { payload: { authorization: { nonce: `0x${string}` } } }).payload
    .authorization.nonce;

/** The EIP-4361 text of `payload` with `statement` in it, as the library's formatter writes it without checking it. */
async function createSIWxMessageText(payload: Record<string, unknown>, statement: string) {
  const { SiweMessage } = await import("@signinwithethereum/siwe");
  const message = Object.assign(Object.create(SiweMessage.prototype), {
    ...payload,
    chainId: Number(String(payload.chainId).split(":")[1]),
    statement,
  }) as InstanceType<typeof SiweMessage>;
  return message.prepareMessage();
}

/** The sign-in a standard client makes from a challenge's `sign-in-with-x` declaration. */
async function signInFromChallenge(challenge: PaymentRequired, account: PrivateKeyAccount, url: string): Promise<string> {
  const declared = challenge.extensions?.["sign-in-with-x"] as {
    info: Record<string, unknown>;
    supportedChains: { chainId: string; type: "eip191" }[];
  };
  const chain = declared.supportedChains[0] as { chainId: string; type: "eip191" };
  const info = { ...declared.info, chainId: chain.chainId, type: chain.type } as Parameters<typeof createSIWxPayload>[0];
  return encodeSIWxHeader(await createSIWxPayload(info, account, url));
}

describe("sign-ins bound to the service", () => {
  let service: RunningService;
  let store: Store;
  const buyer = buyerAccount(3);
  beforeAll(async () => {
    store = await testStore();
    service = await startTestService({ store });
    const top = await payingFetch(buyer)(`${service.url}/api/balance/topup?amount=1`, { method: "POST" });
    expect(top.status).toBe(200);
  });
  afterAll(async () => {
    await service.close();
  });

  /** A balance-paid chat message with `siwx`, sent with `host` as the Host header. */
  async function chat(siwx: string, host = new URL(service.url).host) {
    const res = await rawRequest(
      service.url,
      "POST",
      "/api/chat",
      { ...json, host, "sign-in-with-x": siwx },
      JSON.stringify({ message: "What is WETH at?", user_id: buyer.address }),
    );
    return { status: res.status, body: JSON.parse(res.body) as Answer };
  }

  /** The balance held in the store and the buyer's USDC on chain, to compare before and after. */
  const holdings = async () => ({ balance: await balanceOf(store, buyer.address), usdc: await usdcBalance(buyer.address) });

  it("refuses a sign-in for the origin named by the Host header, and debits nothing", async () => {
    const before = await holdings();
    const evil = await signInHeader(buyer, "http://evil.example/api/chat");
    const { status, body } = await chat(evil, "evil.example");
    expect(status).not.toBe(200);
    expect(body.error).toMatchObject({ code: "signin_invalid", details: { reason: "invalid_siwx_domain_mismatch" } });
    expect(await holdings()).toEqual(before);
  });

  it.each([`eip155:${mainnet.id}`, `eip155:${baseSepolia.id}`])(
    "refuses a sign-in on %s (the challenge declares Base only), and debits nothing",
    async (chainId) => {
      const before = await holdings();
      const { status, body } = await chat(await signInHeader(buyer, `${service.url}/api/chat`, { chainId }));
      expect(status).not.toBe(200);
      expect(body.error).toMatchObject({ code: "signin_invalid", details: { reason: "invalid_siwx_chain_id" } });
      expect(await holdings()).toEqual(before);
    },
  );

  it("refuses a sign-in whose uri and resources name /api/balance on /api/chat, and debits nothing", async () => {
    const before = await holdings();
    const read = `${service.url}/api/balance`;
    const { status, body } = await chat(await signInHeader(buyer, read, { resources: [read] }));
    expect(status).not.toBe(200);
    expect(body.error).toMatchObject({ code: "signin_invalid", details: { reason: "invalid_siwx_resource" } });
    expect(await holdings()).toEqual(before);
  });

  it("spends the balance for a sign-in naming this origin, Base and /api/chat: exactly the price, no transfer", async () => {
    const before = await holdings();
    const { status, body } = await chat(await signInHeader(buyer, `${service.url}/api/chat`));
    expect(status).toBe(200);
    expect(body).toMatchObject({ charged: true, price_per_msg: 0.1 });
    expect(await holdings()).toEqual({ balance: before.balance - 100_000n, usdc: before.usdc });
  });
});

describe("agentcash's sequence: sign in first, then the payment with the same sign-in", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService({ store: await testStore() });
  });
  afterAll(async () => {
    await service.close();
  });

  async function sequence(account: PrivateKeyAccount, path: string, init: { method: string; body?: string }) {
    const url = `${service.url}${path}`;
    const headers = init.body ? json : {};
    const first = await fetch(url, { ...init, headers });
    expect(first.status).toBe(402);
    const challenge = decodePaymentRequiredHeader(first.headers.get("payment-required") as string);
    expect(challenge.extensions).toHaveProperty("sign-in-with-x");
    const siwx = await signInFromChallenge(challenge, account, url);
    // The sign-in alone grants nothing (nothing bought, no balance): the challenge again.
    const signedIn = await fetch(url, { ...init, headers: { ...headers, "SIGN-IN-WITH-X": siwx } });
    expect(signedIn.status).toBe(402);
    const payment = await signPayment(challenge, account);
    const before = await usdcBalance(account.address);
    const paid = await fetch(url, { ...init, headers: { ...headers, "SIGN-IN-WITH-X": siwx, "PAYMENT-SIGNATURE": payment } });
    return { paid, payment, before, price: BigInt(challenge.accepts[0]?.amount as string) };
  }

  it("buys an SOP: the payment pays, exactly once on chain, and its authorisation is used", async () => {
    const buyer = buyerAccount(6);
    const index = (await (await fetch(`${service.url}/api/howto`)).json()) as { sops: { slug: string }[] };
    const { paid, payment, before, price } = await sequence(buyer, `/api/howto/${index.sops[1]?.slug}`, { method: "GET" });
    expect(paid.status).toBe(200);
    expect(decodePaymentResponseHeader(paid.headers.get("payment-response") as string).success).toBe(true);
    expect(await usdcBalance(buyer.address)).toBe(before - price);
    expect(await used(buyer.address, nonceOf(payment))).toBe(true);
  });

  it("buys a chat message per call for a wallet with no balance", async () => {
    const buyer = buyerAccount(7);
    const body = JSON.stringify({ message: "What is WETH at?" });
    const { paid, payment, before } = await sequence(buyer, "/api/chat", { method: "POST", body });
    expect(paid.status).toBe(200);
    expect(await paid.json()).toMatchObject({ charged: true, balance: null });
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
    expect(await used(buyer.address, nonceOf(payment))).toBe(true);
  });
});

describe("the sign-in's signature", () => {
  const scope = { origin: "http://127.0.0.1:4999", chains: [DEFAULT_NETWORK.id], path: "/api/chat" };
  const url = `${scope.origin}${scope.path}`;
  /** `header` with its payload fields replaced. */
  const altered = (header: string, fields: Record<string, unknown>) =>
    encodeSIWxHeader({ ...(JSON.parse(Buffer.from(header, "base64").toString("utf8")) as object), ...fields } as never);

  it("is the named wallet's: a forged or altered one is refused", async () => {
    const [owner, other] = [buyerAccount(0), buyerAccount(1)];
    const forged = await signInHeader(other, url).then((h) => altered(h, { address: owner.address }));
    expect(await checkSignIn(forged, scope)).toMatchObject({ reason: "invalid_siwx_signature" });
    const genuine = await signInHeader(owner, url);
    expect(await checkSignIn(altered(genuine, { nonce: "0123456789abcdef0123" }), scope)).toMatchObject({
      reason: "invalid_siwx_signature",
    });
    expect(await checkSignIn(genuine, scope)).toMatchObject({ payer: owner.address.toLowerCase() });
  });

  it("is checked over the text the library signs: the same verdict as verifySIWxSignature, lowercase address included", async () => {
    const owner = buyerAccount(2);
    const payload = JSON.parse(Buffer.from(await signInHeader(owner, url), "base64").toString("utf8"));
    const lower = encodeSIWxHeader({ ...payload, address: owner.address.toLowerCase() });
    expect(await verifySIWxSignature(parseSIWxHeader(lower))).toMatchObject({ isValid: true });
    expect(await checkSignIn(lower, scope)).toMatchObject({ payer: owner.address.toLowerCase() });
    // A mixed-case address whose checksum is wrong is refused, as EIP-55 asks.
    const wrongCase = owner.address.replace(/[a-f]/, (c) => c.toUpperCase());
    expect(await checkSignIn(encodeSIWxHeader({ ...payload, address: wrongCase }), scope)).toMatchObject({
      reason: "invalid_siwx_signature",
    });
  });

  it("refuses a field holding a line break, which would let it pass for another line of the message", async () => {
    const owner = buyerAccount(2);
    const info = { domain: new URL(scope.origin).host, uri: url, version: "1", chainId: DEFAULT_NETWORK.id, type: "eip191" as const };
    const fields = { ...info, nonce: "a1b2c3d4e5f6a7b8", issuedAt: new Date().toISOString(), statement: "hi" };
    const payload = await createSIWxPayload(fields, owner, url);
    // The wallet signs the text with a broken line itself: the signature is genuine, the message is not well formed.
    const statement = "hi\nURI: https://elsewhere.example/api/chat";
    const text = (await createSIWxMessageText(payload, statement)) as string;
    const header = encodeSIWxHeader({ ...payload, statement, signature: await owner.signMessage({ message: text }) });
    expect(await checkSignIn(header, scope)).toMatchObject({ reason: "invalid_siwx_signature" });
  });
});

describe("production without PUBLIC_URL", () => {
  it("refuses to start, saying sign-ins need the public origin", async () => {
    const env = {
      RPC_URL: "https://mainnet.base.org",
      PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      FACILITATOR_PRIVATE_KEY: `0x${"ab".repeat(32)}`,
      LOG_LEVEL: "silent",
    };
    // The environment is refused at once, among its other problems (test/config.test.ts);
    // a configuration built by hand without it is refused by the service itself.
    expect(() => loadConfig(env)).toThrow(ConfigError);
    const config = { ...loadConfig({ ...env, PUBLIC_URL: "https://api.example.com" }), publicUrl: undefined };
    const started = startService({ config, store: await testStore() });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/PUBLIC_URL is required in production: sign-ins \(.*\) must name the service.s public origin/);
  });
});
