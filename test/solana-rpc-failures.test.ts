/**
 * When the facilitator's Solana RPC fails, the payer is told what is known, never "not charged"
 * for a transfer that may land. The site's facilitator reads the chain through a proxy whose
 * failures each test chooses; its reads and the settlement lookup read the chain directly.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type LocalSolanaDevnet, startLocalSolana } from "../src/local/solana/devnet.ts";
import type { RunningService } from "../src/server/service.ts";
import { localKey } from "../src/solana/keys.ts";
import { createSvmFacilitator } from "../src/solana/x402.ts";
import type { Store } from "../src/store/store.ts";
import { startTestService, testConfig, testStore } from "./support/service.ts";
import { paymentHeaderFor, postJson, usdcOn } from "./support/solana.ts";
import { forwardRpc, type Stub, startStub } from "./support/stub-server.ts";

const PRICE = 100_000n;
const BODY = { token: "SOL" };

/** What the proxy does to the facilitator's requests. */
const proxy: {
  /** simulateTransaction answered 503, as a provider over its rate limit does. */
  simulateDown?: boolean;
  /** simulateTransaction answered with this JSON-RPC error code (-32005: the provider's node is unhealthy). */
  simulateJsonRpcError?: number;
  /** sendTransaction: held until released, or answered 502 and forwarded `forwardAfterMs` later. */
  send?: { hold: Promise<void> } | { badGatewayThenForwardAfterMs: number };
} = {};

let chain: LocalSolanaDevnet;
let rpcProxy: Stub;
let service: RunningService;
let store: Store;
let url: string;

beforeAll(async () => {
  chain = await startLocalSolana({});
  rpcProxy = await startStub(async (_req, res, body) => {
    const { method, id } = body as { method: string; id: unknown };
    if (method === "simulateTransaction" && proxy.simulateDown) {
      res.writeHead(503, { "content-type": "text/plain" }).end("over capacity");
      return;
    }
    if (method === "simulateTransaction" && proxy.simulateJsonRpcError !== undefined) {
      const error = { code: proxy.simulateJsonRpcError, message: "Node is unhealthy" };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, error }));
      return;
    }
    const send = method === "sendTransaction" ? proxy.send : undefined;
    if (send && "badGatewayThenForwardAfterMs" in send) {
      res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
      setTimeout(() => void forwardRpc(chain.rpcUrl, body), send.badGatewayThenForwardAfterMs);
      return;
    }
    if (send) await send.hold;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(await forwardRpc(chain.rpcUrl, body)));
  });
  const s = chain.scenario;
  store = await testStore();
  service = await startTestService({
    config: testConfig({ PAYMENT_TIMEOUT_MS: "1000" }),
    store,
    solana: { rpcUrl: chain.rpcUrl, network: s.network, usdcMint: s.usdcMint, payTo: s.payTo, feePayer: s.feePayer.signer },
    solanaFacilitator: createSvmFacilitator(s.feePayer.signer, rpcProxy.url, s.network),
  });
  url = `${service.solanaUrl}/v1/dinalibrium`;
});
afterAll(async () => {
  await service?.close();
  await rpcProxy?.close();
  await chain?.stop();
});
beforeEach(() => {
  proxy.simulateDown = undefined;
  proxy.simulateJsonRpcError = undefined;
  proxy.send = undefined;
});

const usdcOf = (owner: string) => usdcOn(chain.rpcUrl, owner);
const buyerAddress = (i: number) => (chain.scenario.buyers[i] as LocalSolanaDevnet["scenario"]["buyers"][number]).address;

/** Wait until `read` gives `want` (at most 5 s). */
async function until<T>(read: () => Promise<T>, want: T): Promise<void> {
  for (let i = 0; i < 100 && (await read()) !== want; i++) await new Promise((r) => setTimeout(r, 50));
}

/** The ledger rows of one payment, oldest first. */
const rowsOf = (payer: string) =>
  store.query<{ outcome: string; status: number | null; reason: string | null }>(
    "select outcome, status, reason from ledger where payer = $1 order by id",
    [payer],
  );

describe("the facilitator's Solana RPC failing", () => {
  it("a simulation the RPC cannot run is a 503 payment_unavailable, not a refused payment; nothing moves", async () => {
    const header = await paymentHeaderFor(chain, 0, url, BODY);
    const before = await usdcOf(buyerAddress(0));
    proxy.simulateDown = true;
    const res = await postJson(url, BODY, { "payment-signature": header });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).not.toBeNull();
    expect((await res.json()).error.code).toBe("payment_unavailable");
    expect(await usdcOf(buyerAddress(0))).toBe(before);
    expect(await rowsOf(buyerAddress(0))).toEqual([{ outcome: "not_charged", status: 503, reason: "payment_unavailable" }]);

    // The same payment, once the RPC is back, pays.
    proxy.simulateDown = false;
    expect((await postJson(url, BODY, { "payment-signature": header })).status).toBe(200);
    expect(before - (await usdcOf(buyerAddress(0)))).toBe(PRICE);
  });

  it("a simulation answered with the provider's own JSON-RPC error (-32005, node unhealthy) is a 503 payment_unavailable; nothing moves", async () => {
    // Buyer 0 again (the scenario has three buyers, each test's own): a new payment (the client's memo nonce), and a row of its own.
    const header = await paymentHeaderFor(chain, 0, url, BODY);
    const before = await usdcOf(buyerAddress(0));
    const rowsBefore = await rowsOf(buyerAddress(0));
    proxy.simulateJsonRpcError = -32005;
    const res = await postJson(url, BODY, { "payment-signature": header });
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe("payment_unavailable");
    expect(await usdcOf(buyerAddress(0))).toBe(before);
    expect(await rowsOf(buyerAddress(0))).toEqual([...rowsBefore, { outcome: "not_charged", status: 503, reason: "payment_unavailable" }]);
  });

  it("a simulation the RPC runs and fails (a payer without USDC) is still refused with 402", async () => {
    const nobody = await localKey("rpc-failures-no-usdc");
    const { x402HTTPClient } = await import("@x402/core/client");
    const { decodePaymentRequiredHeader, encodePaymentSignatureHeader } = await import("@x402/core/http");
    const { svmClient } = await import("../src/solana/x402.ts");
    const challenge = decodePaymentRequiredHeader((await postJson(url, BODY)).headers.get("payment-required") as string);
    const payload = await new x402HTTPClient(svmClient(nobody.signer, chain.rpcUrl, chain.scenario.network)).createPaymentPayload(
      challenge,
    );
    const res = await postJson(url, BODY, { "payment-signature": encodePaymentSignatureHeader(payload) });
    expect(res.status).toBe(402);
    expect((await res.json()).error.code).toBe("payment_required");
  });

  it("a send answered 502 that the provider still forwarded is confirmed on chain: answered 200, charged once", async () => {
    const header = await paymentHeaderFor(chain, 1, url, BODY);
    const before = { buyer: await usdcOf(buyerAddress(1)), payTo: await usdcOf(chain.scenario.payTo) };
    proxy.send = { badGatewayThenForwardAfterMs: 200 };
    const res = await postJson(url, BODY, { "payment-signature": header });
    expect(res.status).toBe(200);
    const receipt = decodePaymentResponseHeader(res.headers.get("payment-response") as string);
    expect(receipt.success).toBe(true);
    expect(before.buyer - (await usdcOf(buyerAddress(1)))).toBe(PRICE);
    expect((await usdcOf(chain.scenario.payTo)) - before.payTo).toBe(PRICE);
    const rows = await store.query<{ outcome: string; settlement_tx: string }>(
      "select outcome, settlement_tx from ledger where payer = $1 order by id",
      [buyerAddress(1)],
    );
    expect(rows).toEqual([{ outcome: "settled", settlement_tx: receipt.transaction }]);
  });

  it("a retry while the first send is still under way is told 'unknown', never 'not charged'; once it lands, the retry is answered, charged once", async () => {
    const header = await paymentHeaderFor(chain, 2, url, BODY);
    const payer = buyerAddress(2);
    const before = await usdcOf(payer);
    let release = () => {};
    proxy.send = { hold: new Promise<void>((resolve) => (release = resolve)) };

    const first = await postJson(url, BODY, { "payment-signature": header });
    expect(first.status).toBe(402);
    expect(decodePaymentResponseHeader(first.headers.get("payment-response") as string).errorReason).toBe("settlement_unknown");

    // The facilitator is still sending the first: the retry's settlement is the same transaction.
    const retry = await postJson(url, BODY, { "payment-signature": header });
    expect(retry.status).toBe(402);
    expect(decodePaymentResponseHeader(retry.headers.get("payment-response") as string).errorReason).toBe("settlement_unknown");
    expect(await usdcOf(payer)).toBe(before);

    release();
    await until(() => usdcOf(payer), before - PRICE);
    const later = await postJson(url, BODY, { "payment-signature": header });
    expect(later.status).toBe(200);
    expect(decodePaymentResponseHeader(later.headers.get("payment-response") as string).success).toBe(true);
    expect(before - (await usdcOf(payer))).toBe(PRICE);
    expect((await rowsOf(payer)).filter((r) => r.outcome === "settlement_failed")).toEqual([]);
  });
});
