/**
 * A Solana payer is a base58 address, where case is part of the address: the ledger and the kept
 * answers record it exactly as the chain names it (EVM addresses, whose case is only a checksum,
 * are recorded in lower case), and a paid retry still finds its kept answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSolanaDevnet } from "../src/local/solana/devnet.ts";
import type { RunningService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { testStore } from "./support/service.ts";
import { paymentHeaderFor, postJson, startSolanaSite, usdcOn } from "./support/solana.ts";

let chain: LocalSolanaDevnet;
let service: RunningService;
let store: Store;

beforeAll(async () => {
  store = await testStore();
  ({ chain, service } = await startSolanaSite({ store }));
});
afterAll(async () => {
  await service?.close();
  await chain?.stop();
});

describe("a Solana payer in the ledger", () => {
  it("is recorded as the chain names it, case included, and its paid retry gets the kept answer", async () => {
    const buyer = chain.scenario.buyers[0] as LocalSolanaDevnet["scenario"]["buyers"][number];
    expect(buyer.address).not.toBe(buyer.address.toLowerCase());
    const url = `${service.solanaUrl}/v1/dinalibrium`;
    const call = (headers: Record<string, string> = {}) => postJson(url, { token: "SOL" }, headers);
    const header = await paymentHeaderFor(chain, 0, url, { token: "SOL" });
    const paid = await call({ "payment-signature": header });
    expect(paid.status).toBe(200);
    const answer = await paid.text();

    expect(await store.query("select payer, outcome from ledger where network = $1 order by id", [chain.scenario.network])).toEqual([
      { payer: buyer.address, outcome: "settled" },
    ]);
    expect(await store.query("select payer from paid_answers")).toEqual([{ payer: buyer.address }]);

    const afterFirst = await usdcOn(chain.rpcUrl, buyer.address);
    const retry = await call({ "payment-signature": header });
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(answer);
    expect(await usdcOn(chain.rpcUrl, buyer.address)).toBe(afterFirst);
    expect(await store.query("select payer, outcome, reason from ledger where network = $1 order by id", [chain.scenario.network])).toEqual(
      [
        { payer: buyer.address, outcome: "settled", reason: null },
        { payer: buyer.address, outcome: "not_charged", reason: "paid_retry: kept answer replayed" },
      ],
    );
  });
});
