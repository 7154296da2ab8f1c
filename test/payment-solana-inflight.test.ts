import { x402HTTPClient } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSolanaDevnet } from "../src/local/solana/devnet.ts";
import type { RunningService } from "../src/server/service.ts";
import { svmClient } from "../src/solana/x402.ts";
import { mcpRpc } from "./support/mcp.ts";
import { startSolanaSite, usdcOn } from "./support/solana.ts";

const PRICE = 100_000n; // /v1/wallet-profile: 0.10 USDC
let chain: LocalSolanaDevnet;
let service: RunningService;
let site: string;

beforeAll(async () => {
  ({ chain, service, site } = await startSolanaSite());
});
afterAll(async () => {
  await service?.close();
  await chain?.stop();
});

const usdcOf = (owner: string) => usdcOn(chain.rpcUrl, owner);

type Result = { isError?: boolean; structuredContent?: { error?: { code?: string; details?: unknown } } };

describe("one Solana payer's paid calls in flight", () => {
  it("over MCP: 8 of 12 paid calls in one batch run and settle, 4 are refused paid_in_flight, and exactly 8 prices move", async () => {
    const buyer = chain.scenario.buyers[0] as LocalSolanaDevnet["scenario"]["buyers"][number];
    const body = { address: chain.scenario.wallet.address };
    const unpaid = await fetch(`${site}/v1/wallet-profile`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(unpaid.status).toBe(402);
    const challenge = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
    const client = new x402HTTPClient(svmClient(buyer.signer, chain.rpcUrl, chain.scenario.network));
    // Twelve payments of the same payer, each its own transaction.
    const payments = [];
    for (let i = 0; i < 12; i++) payments.push(await client.createPaymentPayload(challenge));
    expect(new Set(payments.map((p) => (p.payload as { transaction: string }).transaction)).size).toBe(12);

    const before = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer.address) };
    const batch = payments.map((payment, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "solanaWalletProfile", arguments: body, _meta: { "x402/payment": payment } },
    }));
    const { status, answers } = await mcpRpc<Result>(site, batch);
    expect(status).toBe(200);
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(answers.slice(0, 8).map((a) => a.result?.isError ?? false)).toEqual(Array(8).fill(false));
    const refused = answers.slice(8).map((a) => a.result?.structuredContent?.error);
    expect(refused.map((e) => e?.code)).toEqual(Array(4).fill("rate_limited"));
    // The payer named is the Solana payer, its base58 address as given (case is part of it), with its 8 calls in flight.
    expect(refused[0]?.details).toEqual({
      budget: "paid_in_flight",
      payer: buyer.address,
      in_flight: 8,
      max_in_flight: 8,
    });
    // On the chain: exactly the 8 calls that ran were settled.
    expect((await usdcOf(chain.scenario.payTo)) - before.payTo).toBe(8n * PRICE);
    expect(before.buyer - (await usdcOf(buyer.address))).toBe(8n * PRICE);
  });
});
