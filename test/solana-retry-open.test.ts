/**
 * A Solana payment whose settlement answer was lost long ago (the row left open, its transfer
 * on chain): a retry finds its transaction from the row's own opening, as the upkeep does, and
 * records it settled once, instead of looking only at the last few minutes and answering "in
 * progress" until the upkeep ran.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSolanaDevnet } from "../src/local/solana/devnet.ts";
import type { RunningService } from "../src/server/service.ts";
import { createSvmFacilitator } from "../src/solana/x402.ts";
import type { Store } from "../src/store/store.ts";
import { testStore } from "./support/service.ts";
import { paymentHeaderFor, postJson, startSolanaSite, usdcOn } from "./support/solana.ts";

const TEN_MINUTES_S = 600;
let chain: LocalSolanaDevnet;
let service: RunningService;
let store: Store;
/** What the facilitator was asked to settle, and lost before sending. */
const held: Parameters<ReturnType<typeof createSvmFacilitator>["settle"]>[] = [];

beforeAll(async () => {
  store = await testStore();
  ({ chain, service } = await startSolanaSite({
    store,
    // The connection drops before the answer: whether the payment was sent is unknown.
    settle: async (_real, payload, requirements) => {
      held.push([payload, requirements]);
      throw new Error("connection reset before the answer");
    },
  }));
});
afterAll(async () => {
  await service?.close();
  await chain?.stop();
});

describe("a Solana payment left open ten minutes ago", () => {
  it("is found on chain from the row's opening when the buyer retries: settled once, and the retry moves nothing", async () => {
    const network = chain.scenario.network;
    const buyer = chain.scenario.buyers[1] as LocalSolanaDevnet["scenario"]["buyers"][number];
    const url = `${service.solanaUrl}/v1/dinalibrium`;
    const call = (headers: Record<string, string> = {}) => postJson(url, { token: "SOL" }, headers);
    const header = await paymentHeaderFor(chain, 1, url, { token: "SOL" });

    const lost = await call({ "payment-signature": header });
    expect(lost.status).toBe(402);
    expect(((await lost.json()) as { error: { code: string } }).error.code).toBe("settlement_unknown");
    expect(await store.query("select outcome from ledger where network = $1", [network])).toEqual([{ outcome: "settlement_unknown" }]);

    // It had been sent after all (the facilitator's own send, landing just after), and ten minutes pass:
    // the row and its transfer are that old (the chain's record and the ledger's clock).
    const [payment, requirements] = held[0] as (typeof held)[number];
    const landed = await createSvmFacilitator(chain.scenario.feePayer.signer, chain.rpcUrl, network).settle(payment, requirements);
    expect(landed.success).toBe(true);
    const record = chain.chain.status(landed.transaction);
    if (!record) throw new Error("the settlement is not on the local chain");
    record.blockTime -= TEN_MINUTES_S;
    await store.query("update ledger set created_at = $1 where network = $2", [new Date(Date.now() - TEN_MINUTES_S * 1000), network]);
    const before = await usdcOn(chain.rpcUrl, buyer.address);

    const retry = await call({ "payment-signature": header });
    // Settled long ago, past the challenge's retry window: refused as used, with how to redeem it; never "in progress".
    expect(retry.status).toBe(402);
    expect(((await retry.json()) as { error: { code: string; details: { reason: string } } }).error).toMatchObject({
      code: "payment_already_used",
      details: { reason: "retry_window_closed" },
    });
    expect(await store.query("select outcome, reason, settlement_tx from ledger where network = $1 order by id", [network])).toEqual([
      { outcome: "settled", reason: "reconciled_on_chain", settlement_tx: landed.transaction },
      { outcome: "not_charged", reason: "retry_window_closed", settlement_tx: null },
    ]);
    expect(await usdcOn(chain.rpcUrl, buyer.address)).toBe(before);
  });
});
