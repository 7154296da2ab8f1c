/**
 * A settled per-call payment replayed by someone else (src/payments/per-call.ts): once settled,
 * the authorisation and its signature are public in the transaction's calldata, so anyone
 * watching transfers to payTo can rebuild the payment header from the chain and the public 402
 * challenge. Sent for the same request from another client address, within the retry window,
 * it must be refused and charge nothing; the paying client's own retry still gets the kept
 * answer, and a sign-in of the paying wallet from anywhere still redeems it; over MCP the client
 * is POST /mcp's. Through the real HTTP server behind a trusted loopback proxy (each client named
 * by X-Forwarded-For), the local chain, and each store engine.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentSignatureHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { decodeFunctionData, type Hex, parseAbi, serializeSignature } from "viem";
import { describe, expect, inject, it } from "vitest";
import { signInHeader } from "../scripts/buyer/sign-in.ts";
import { startService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
import { freshPostgresStore } from "./support/postgres.ts";
import {
  authorizationOf,
  chainClient,
  challengeOf,
  freshSqliteStore,
  productionConfig,
  signPayment,
  usdcBalance,
} from "./support/service.ts";

const databaseUrl = inject("databaseUrl");
const PRICE = 100_000n; // POST /api/payment-verify: 0.10 USDC
const PAYING_CLIENT = "203.0.113.50";
const STRANGER = "198.51.100.66";
const PUBLIC_URL = "https://api.example.test";

/** USDC's two EIP-3009 entry points a settlement may call (a 65-byte signature split, or whole). */
const EIP3009 = parseAbi([
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
]);

/** What a bot watching the chain builds: the header of settlement `tx`, from its calldata and the public challenge. */
async function headerFromChain(tx: Hex, url: string): Promise<string> {
  const { input } = await chainClient().getTransaction({ hash: tx });
  const { args } = decodeFunctionData({ abi: EIP3009, data: input });
  const [from, to, value, validAfter, validBefore, nonce] = args;
  const signature = args.length === 9 ? serializeSignature({ v: BigInt(args[6]), r: args[7], s: args[8] }) : args[6];
  const challenge = await challengeOf(url, { method: "POST", headers: { "X-Forwarded-For": STRANGER } });
  const payload = {
    x402Version: 2,
    resource: challenge.resource,
    accepted: challenge.accepts[0] as PaymentRequirements,
    payload: {
      authorization: { from, to, value: value.toString(), validAfter: validAfter.toString(), validBefore: validBefore.toString(), nonce },
      signature,
    },
  } as PaymentPayload;
  return encodePaymentSignatureHeader(payload);
}

async function replayChecks(store: Store) {
  const service = await startService({ config: productionConfig(), store, maintenance: false });
  try {
    const url = `${service.url}/api/payment-verify`;
    const body = JSON.stringify({ tx_hash: `0x${"e7".repeat(32)}` });
    const call = async (client: string, headers: Record<string, string>) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "X-Forwarded-For": client, ...headers },
        body,
      });
      const text = await res.text();
      return { status: res.status, text, paymentResponse: res.headers.get("payment-response") };
    };
    const buyer = await freshBuyer(1_000_000n);

    // The buyer pays, from its own address.
    const header = await signPayment(await challengeOf(url, { method: "POST", headers: { "X-Forwarded-For": PAYING_CLIENT } }), buyer);
    const paid = await call(PAYING_CLIENT, { "PAYMENT-SIGNATURE": header });
    expect(paid.status).toBe(200);
    expect(JSON.parse(paid.text)).toMatchObject({ tx_hash: `0x${"e7".repeat(32)}`, verified: false, reason: "tx_not_found" });
    expect(await usdcBalance(buyer.address)).toBe(1_000_000n - PRICE);
    const settlement = JSON.parse(Buffer.from(paid.paymentResponse as string, "base64").toString()) as { transaction: Hex };

    // A stranger rebuilds the header from the settlement on chain: the payer's own authorisation and signature.
    const replayed = await headerFromChain(settlement.transaction, url);
    expect(authorizationOf(replayed)).toEqual(authorizationOf(header));
    const stranger = await call(STRANGER, { "PAYMENT-SIGNATURE": replayed });
    expect(stranger.status).toBe(402);
    const refusal = JSON.parse(stranger.text) as { error: { code: string; details: Record<string, unknown> } };
    expect(refusal.error).toMatchObject({ code: "payment_already_used", details: { reason: "retry_window_closed" } });
    expect(refusal).not.toHaveProperty("verified");
    expect(refusal).not.toHaveProperty("tx_hash");
    expect(stranger.paymentResponse).toBeNull();

    // The paying client's bare retry still gets the kept answer, with the same PAYMENT-RESPONSE.
    const retry = await call(PAYING_CLIENT, { "PAYMENT-SIGNATURE": header });
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(paid.text);
    expect(retry.paymentResponse).toBe(paid.paymentResponse);

    // A sign-in of the paying wallet redeems it from any address, with the header or alone.
    const signIn = () => signInHeader(buyer, `${PUBLIC_URL}/api/payment-verify`);
    const provenWithHeader = await call(STRANGER, { "PAYMENT-SIGNATURE": replayed, "SIGN-IN-WITH-X": await signIn() });
    expect(provenWithHeader.status).toBe(200);
    expect(provenWithHeader.text).toBe(paid.text);
    const provenAlone = await call("198.51.100.77", { "SIGN-IN-WITH-X": await signIn() });
    expect(provenAlone.status).toBe(200);
    expect(provenAlone.text).toBe(paid.text);

    // One transfer in all; the stranger's attempt recorded, not charged.
    expect(await usdcBalance(buyer.address)).toBe(1_000_000n - PRICE);
    const { from, nonce } = authorizationOf(header);
    const rows = await store.query<{ outcome: string; reason: string | null; client_address: string | null }>(
      "select outcome, reason, client_address from ledger where payer = lower($1) and nonce = lower($2) order by id",
      [from, nonce],
    );
    expect(rows.map((r) => [r.outcome, r.reason, r.client_address])).toEqual([
      ["settled", null, PAYING_CLIENT],
      ["not_charged", "retry_window_closed", STRANGER],
      ["not_charged", "paid_retry: kept answer replayed", PAYING_CLIENT],
      ["not_charged", "paid_retry: kept answer replayed", STRANGER],
      ["not_charged", "paid_retry: kept answer replayed", "198.51.100.77"],
    ]);

    // Over MCP, the client is POST /mcp's: the stranger's tool call is refused, the paying client's answered.
    const mcpCall = async (client: string) => {
      const mcp = new Client({ name: "replay-test", version: "1.0.0" });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: { "X-Forwarded-For": client } } }),
      );
      try {
        const _meta = { "x402/payment": decodePaymentSignatureHeader(replayed) };
        return (await mcp.callTool({ name: "verifyPayment", arguments: { tx_hash: `0x${"e7".repeat(32)}` }, _meta })) as CallToolResult;
      } finally {
        await mcp.close();
      }
    };
    const mcpStranger = await mcpCall(STRANGER);
    expect(mcpStranger.isError).toBe(true);
    expect(mcpStranger.structuredContent).toMatchObject({ x402Version: 2, error: "retry_window_closed" });
    expect(mcpStranger.structuredContent).not.toHaveProperty("verified");
    expect(mcpStranger._meta?.["x402/payment-response"]).toBeUndefined();
    const mcpPayer = await mcpCall(PAYING_CLIENT);
    expect(mcpPayer.isError).toBeUndefined();
    expect(mcpPayer.structuredContent).toEqual(JSON.parse(paid.text));
    expect(mcpPayer._meta?.["x402/payment-response"]).toMatchObject({ success: true, transaction: settlement.transaction });
    expect(await usdcBalance(buyer.address)).toBe(1_000_000n - PRICE);

    // A row written before clients were recorded names none: its bare retry keeps the window alone.
    await store.query("update ledger set client_address = null where payer = lower($1) and nonce = lower($2) and outcome = 'settled'", [
      from,
      nonce,
    ]);
    const legacy = await call(STRANGER, { "PAYMENT-SIGNATURE": replayed });
    expect(legacy.status).toBe(200);
    expect(legacy.text).toBe(paid.text);
  } finally {
    await service.close();
  }
}

describe("a settled payment rebuilt from the chain by someone else", () => {
  it("is refused to another client address within the retry window, not charged; the payer's client and sign-in still redeem (SQLite)", async () => {
    const store = await freshSqliteStore();
    try {
      await replayChecks(store);
    } finally {
      await store.close();
    }
  });

  it.runIf(databaseUrl)(
    "is refused to another client address within the retry window, not charged; the payer's client and sign-in still redeem (PostgreSQL)",
    async () => {
      const store = await freshPostgresStore(databaseUrl as string);
      try {
        await replayChecks(store);
      } finally {
        await store.close();
      }
    },
  );
});
