/**
 * A Solana settlement whose answer is lost (a remote facilitator that broadcast the transfer, then
 * timed out or failed before answering): the transfer is on chain, so the payer is charged, and
 * must get the answer, never "not charged". The gate finds the payment's transaction among
 * payTo's USDC account's transactions (Solana keeps no authorisation state to read), answers with
 * it, and records the call once; a retry with the same payment gets the kept answer, moving nothing.
 */
import type { Address } from "@solana/kit";
import { createSolanaRpc } from "@solana/kit";
import { x402HTTPClient } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSolanaDevnet, startLocalSolana } from "../src/local/solana/devnet.ts";
import { ataOf, USDC_MINT } from "../src/local/solana/scenario.ts";
import type { RunningService } from "../src/server/service.ts";
import { createSvmFacilitator, svmClient } from "../src/solana/x402.ts";
import type { Store } from "../src/store/store.ts";
import { startTestService, testStore } from "./support/service.ts";

const PRICE = 100_000n;
let chain: LocalSolanaDevnet;
let service: RunningService;
let store: Store;
const landed: string[] = [];

beforeAll(async () => {
  chain = await startLocalSolana({});
  const s = chain.scenario;
  const real = createSvmFacilitator(s.feePayer.signer, chain.rpcUrl, s.network);
  // Settles for real, then loses the answer.
  const losing: FacilitatorClient = {
    verify: (payload, requirements) => real.verify(payload, requirements),
    settle: async (payload, requirements) => {
      const settled = await real.settle(payload, requirements);
      if (settled.success) landed.push(settled.transaction);
      return { success: false, errorReason: "unexpected_settle_error", transaction: "", network: requirements.network };
    },
    getSupported: () => real.getSupported(),
  };
  store = await testStore();
  service = await startTestService({
    store,
    solana: { rpcUrl: chain.rpcUrl, network: s.network, usdcMint: s.usdcMint, payTo: s.payTo, feePayer: s.feePayer.signer },
    solanaFacilitator: losing,
  });
});
afterAll(async () => {
  await service?.close();
  await chain?.stop();
});

const usdcOf = async (owner: string) =>
  BigInt(
    (
      await createSolanaRpc(chain.rpcUrl)
        .getTokenAccountBalance(await ataOf(owner as Address, USDC_MINT))
        .send()
    ).value.amount,
  );

describe("a Solana settlement whose answer was lost", () => {
  it("is answered 200 with the transfer found on chain, charged exactly once, and a retry moves nothing", async () => {
    const url = `${service.solanaUrl}/v1/dinalibrium`;
    const call = (headers: Record<string, string> = {}) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ token: "SOL" }) });
    const buyer = chain.scenario.buyers[2] as LocalSolanaDevnet["scenario"]["buyers"][number];
    const challenge = decodePaymentRequiredHeader((await call()).headers.get("payment-required") as string);
    const payload = await new x402HTTPClient(svmClient(buyer.signer, chain.rpcUrl, chain.scenario.network)).createPaymentPayload(challenge);
    const header = encodePaymentSignatureHeader(payload);
    const before = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer.address) };

    const paid = await call({ "payment-signature": header });
    expect(paid.status).toBe(200);
    expect(landed).toHaveLength(1);
    expect(decodePaymentResponseHeader(paid.headers.get("payment-response") as string)).toMatchObject({
      success: true,
      transaction: landed[0],
      network: chain.scenario.network,
    });
    expect((await paid.json()).network).toBe(chain.scenario.network);
    expect((await usdcOf(chain.scenario.payTo)) - before.payTo).toBe(PRICE);
    expect(before.buyer - (await usdcOf(buyer.address))).toBe(PRICE);
    const rows = await store.query<{ outcome: string; settlement_tx: string | null }>(
      "select outcome, settlement_tx from ledger where route = $1 and outcome = 'settled'",
      ["POST /v1/dinalibrium"],
    );
    expect(rows).toEqual([{ outcome: "settled", settlement_tx: landed[0] }]);

    const again = await call({ "payment-signature": header });
    expect(again.status).toBe(200);
    expect(landed).toHaveLength(1);
    expect((await usdcOf(chain.scenario.payTo)) - before.payTo).toBe(PRICE);
  });
});
