import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSolanaDevnet } from "../src/local/solana/devnet.ts";
import type { RunningService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { testStore } from "./support/service.ts";
import { paymentHeaderFor, postJson, startSolanaSite, usdcOn } from "./support/solana.ts";

const PRICE = 100_000n;
let chain: LocalSolanaDevnet;
let service: RunningService;
let store: Store;
const landed: string[] = [];

beforeAll(async () => {
  store = await testStore();
  ({ chain, service } = await startSolanaSite({
    store,
    // Settles for real, then loses the answer.
    settle: async (real, payload, requirements) => {
      const settled = await real.settle(payload, requirements);
      if (settled.success) landed.push(settled.transaction);
      return { success: false, errorReason: "unexpected_settle_error", transaction: "", network: requirements.network };
    },
  }));
});
afterAll(async () => {
  await service?.close();
  await chain?.stop();
});

const usdcOf = (owner: string) => usdcOn(chain.rpcUrl, owner);

describe("a Solana settlement whose answer was lost", () => {
  it("is answered 200 with the transfer found on chain, charged exactly once, and a retry moves nothing", async () => {
    const url = `${service.solanaUrl}/v1/dinalibrium`;
    const call = (headers: Record<string, string> = {}) => postJson(url, { token: "SOL" }, headers);
    const buyer = chain.scenario.buyers[2] as LocalSolanaDevnet["scenario"]["buyers"][number];
    const header = await paymentHeaderFor(chain, 2, url, { token: "SOL" });
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
