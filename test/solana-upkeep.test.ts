/**
 * A Solana payment left open by a crash, resolved by the ledger upkeep from the real local chain
 * (litesvm over its JSON-RPC): the state a crash leaves is made with the gate's own ledger
 * statements (a pending row, verified) and the real facilitator (a settlement that landed, or
 * none). The upkeep finds the payment's transaction among payTo's USDC account's transactions by
 * its message hash: landed, the row ends settled with that transaction; never sent and past its
 * blockhash's window, not charged; within the window, left open. Solana rows never reach the
 * EIP-3009 reader.
 */
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthorizationReader } from "../src/chain/authorization.ts";
import { type LocalSolanaDevnet, startLocalSolana } from "../src/local/solana/devnet.ts";
import { createLogger } from "../src/log.ts";
import { isProblem } from "../src/payments/payload.ts";
import type { PaymentScheme } from "../src/payments/scheme.ts";
import { reconcileLedger } from "../src/payments/upkeep.ts";
import { createSvmFacilitator, svmClient, svmScheme } from "../src/solana/x402.ts";
import { insertLedgerRow, markLedgerRowVerified } from "../src/store/ledger.ts";
import type { Store } from "../src/store/store.ts";
import { freshSqliteStore } from "./support/service.ts";
import { usdcOn } from "./support/solana.ts";

const PRICE = 100_000n;
let chain: LocalSolanaDevnet;
let store: Store;
let scheme: PaymentScheme;
let requirements: PaymentRequirements;

/** The EIP-3009 reader must never be asked about a Solana payment (its payer is no EVM address). */
const evmReader: AuthorizationReader = {
  isUsed: () => Promise.reject(new Error("the EVM reader was asked about a Solana payment")),
  findUse: () => Promise.reject(new Error("the EVM reader was asked about a Solana payment")),
  findPayment: () => Promise.reject(new Error("the EVM reader was asked about a Solana payment")),
};

beforeAll(async () => {
  chain = await startLocalSolana({});
  store = await freshSqliteStore();
  const s = chain.scenario;
  scheme = svmScheme(s.network, s.usdcMint, { rpcUrl: chain.rpcUrl, payTo: s.payTo });
  requirements = {
    scheme: "exact",
    network: s.network as `${string}:${string}`,
    asset: s.usdcMint,
    amount: PRICE.toString(),
    payTo: s.payTo,
    maxTimeoutSeconds: 60,
    extra: { feePayer: s.feePayer.address },
  };
});
afterAll(async () => {
  await store?.close();
  await chain?.stop();
});

const usdcOf = (owner: string) => usdcOn(chain.rpcUrl, owner);

/** A payment by buyer `i`, signed with the stock SVM client scheme, and the pending, verified row the gate opens for it. */
async function openPayment(i: number): Promise<{ payload: PaymentPayload; rowId: number }> {
  const buyer = chain.scenario.buyers[i] as LocalSolanaDevnet["scenario"]["buyers"][number];
  const payload = await svmClient(buyer.signer, chain.rpcUrl, chain.scenario.network).createPaymentPayload({
    x402Version: 2,
    resource: { url: "http://127.0.0.1/v1/dinalibrium", description: "", mimeType: "application/json" },
    accepts: [requirements],
  });
  const decoded = scheme.decode(encodePaymentSignatureHeader(payload));
  if (isProblem(decoded)) throw new Error(`the payment did not decode: ${decoded.field}`);
  const rowId = await insertLedgerRow(
    store,
    {
      requestId: `crash-${i}`,
      route: "POST /v1/dinalibrium",
      payer: decoded.authorization.from,
      amountAtomic: PRICE.toString(),
      asset: scheme.asset,
      network: scheme.network,
      nonce: decoded.authorization.nonce,
      validBefore: null,
      requestHash: "h",
      instance: "crashed",
      paymentId: null,
    },
    { outcome: "pending" },
  );
  await markLedgerRowVerified(store, rowId);
  return { payload, rowId };
}

const rowOf = async (id: number) =>
  (
    await store.query<{ outcome: string; reason: string | null; settlement_tx: string | null }>(
      "select outcome, reason, settlement_tx from ledger where id = $1",
      [id],
    )
  )[0];
const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);
const log = createLogger("silent");

describe("a Solana payment left open by a crash", () => {
  it("settled on chain before the crash: the upkeep records the row settled with the payment's transaction, charged once", async () => {
    const payTo = chain.scenario.payTo;
    const before = await usdcOf(payTo);
    const { payload, rowId } = await openPayment(0);
    // The settlement lands; the process dies before the ledger write.
    const settled = await createSvmFacilitator(chain.scenario.feePayer.signer, chain.rpcUrl, chain.scenario.network).settle(
      payload,
      requirements,
    );
    expect(settled.success).toBe(true);
    expect((await usdcOf(payTo)) - before).toBe(PRICE);
    expect(await rowOf(rowId)).toMatchObject({ outcome: "pending" });

    // Young rows are left alone; past the grace, the chain decides.
    expect(await reconcileLedger(store, evmReader, "0x0", log, new Date(), [scheme])).toBe(0);
    expect(await reconcileLedger(store, evmReader, "0x0", log, later(4), [scheme])).toBe(1);
    expect(await rowOf(rowId)).toEqual({ outcome: "settled", reason: "reconciled_on_chain", settlement_tx: settled.transaction });
    expect((await usdcOf(payTo)) - before).toBe(PRICE);
  });

  it("never sent: open while its blockhash may still land it, then not charged; nothing moved", async () => {
    const payTo = chain.scenario.payTo;
    const before = await usdcOf(payTo);
    const { rowId } = await openPayment(1);
    const [row] = await store.query<{ nonce: string }>("select nonce from ledger where id = $1", [rowId]);
    const openedAt = new Date();
    expect(await scheme.settlementOf?.({ nonce: row?.nonce as string, openedAt }, new Date(openedAt.getTime() + 10_000))).toEqual({
      tx: null,
      final: false,
    });
    expect(await reconcileLedger(store, evmReader, "0x0", log, later(4), [scheme])).toBe(1);
    expect(await rowOf(rowId)).toEqual({ outcome: "not_charged", reason: "interrupted_before_settlement", settlement_tx: null });
    expect(await usdcOf(payTo)).toBe(before);
  });
});
