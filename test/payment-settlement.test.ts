/**
 * The in-process facilitator's settlement path on real local chains: nonces managed per chain
 * (a facilitator on a second chain with the same chain id after the first one settled),
 * concurrent settlements from one key landing with consecutive nonces, receipts read at the
 * chain's pace, and a lost transaction reported as a stuck nonce instead of waited on, with
 * its nonce reused by the next settlement; a payment verified moments before settled through the
 * library with one broadcast, and refused without a broadcast when its authorisation was used meanwhile.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { eip3009ABI } from "@x402/evm";
import { createPublicClient, erc20Abi, type Hash, http, type PublicClient, parseTransaction } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcTransport } from "../src/chain/client.ts";
import { type Devnet, startDevnet } from "../src/local/devnet/devnet.ts";
import { base } from "../src/networks/base.ts";
import { createSelfFacilitator, GuardedFacilitator, SETTLEMENT_UNKNOWN } from "../src/payments/facilitator.ts";
import { LOCAL_TIMING, type SenderTiming } from "../src/payments/settlement-sender.ts";
import { capturingLogger, devnet, signPayment } from "./support/service.ts";
import { type Stub, startStub } from "./support/stub-server.ts";

const AMOUNT = 10_000n; // 0.01 USDC

function requirementsOn(payTo: `0x${string}`): PaymentRequirements {
  return {
    scheme: "exact",
    network: base.id,
    amount: AMOUNT.toString(),
    asset: base.usdc.address,
    payTo,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2" },
  };
}

/** A payment of 0.01 USDC from `buyerKey` to `payTo`, as a buyer's client signs it. */
async function payment(
  buyerKey: `0x${string}`,
  payTo: `0x${string}`,
): Promise<{ payload: PaymentPayload; requirements: PaymentRequirements }> {
  const requirements = requirementsOn(payTo);
  const challenge: PaymentRequired = {
    x402Version: 2,
    resource: { url: "http://127.0.0.1/api/test", description: "test", mimeType: "application/json" },
    accepts: [requirements],
  };
  const header = await signPayment(challenge, privateKeyToAccount(buyerKey));
  return { payload: decodePaymentSignatureHeader(header), requirements };
}

function clientOf(rpcUrl: string): PublicClient {
  return createPublicClient({ chain: base.chainAt([rpcUrl]), transport: http(rpcUrl) }) as PublicClient;
}

async function usdcOf(client: PublicClient, address: `0x${string}`): Promise<bigint> {
  return client.readContract({ address: base.usdc.address, abi: erc20Abi, functionName: "balanceOf", args: [address] });
}

async function nonceOf(client: PublicClient, hash: string): Promise<number> {
  return (await client.getTransaction({ hash: hash as Hash })).nonce;
}

function facilitatorOn(rpcUrl: string, key: `0x${string}`, timing: Partial<SenderTiming> = LOCAL_TIMING, log = capturingLogger()) {
  const self = createSelfFacilitator(key, base.chainAt([rpcUrl]), rpcTransport([rpcUrl]), base.id, { timing, log });
  return { self, guarded: new GuardedFacilitator(self, log, 10_000), log };
}

let own: Devnet;
let ownDir: string;
beforeAll(async () => {
  ownDir = mkdtempSync(path.join(tmpdir(), "x402-settlement-"));
  own = await startDevnet({ dataDir: ownDir, port: 0, persist: false });
});
afterAll(async () => {
  await own?.stop();
  rmSync(ownDir, { recursive: true, force: true });
});

describe("nonces per chain", () => {
  it("a facilitator on a second chain with the same id, after settlements on the first, settles with that chain's nonce", async () => {
    // The shared devnet's gas key has sent far more transactions than the fresh chain's.
    const shared = devnet();
    const first = facilitatorOn(shared.rpcUrl, shared.facilitator.privateKey);
    for (const buyer of shared.buyers.slice(0, 2)) {
      const { payload, requirements } = await payment(buyer.privateKey, shared.payTo);
      expect(await first.guarded.settle(payload, requirements)).toMatchObject({ success: true });
    }
    const second = facilitatorOn(own.rpcUrl, own.facilitator.privateKey);
    const chain = clientOf(own.rpcUrl);
    const buyer = own.buyers[0] as { address: `0x${string}`; privateKey: `0x${string}` };
    const expectedNonce = await chain.getTransactionCount({ address: own.facilitator.address, blockTag: "pending" });
    expect(expectedNonce).toBeLessThan(await clientOf(shared.rpcUrl).getTransactionCount({ address: shared.facilitator.address }));
    const before = await usdcOf(chain, buyer.address);
    const { payload, requirements } = await payment(buyer.privateKey, own.payTo);
    const result = await second.guarded.settle(payload, requirements);
    expect(result).toMatchObject({ success: true, network: base.id });
    expect(await nonceOf(chain, result.transaction)).toBe(expectedNonce);
    expect(await usdcOf(chain, buyer.address)).toBe(before - AMOUNT);
  });
});

describe("concurrent settlements from one key", () => {
  it("all land, with consecutive nonces and no gap", async () => {
    const chain = clientOf(own.rpcUrl);
    const { guarded, self } = facilitatorOn(own.rpcUrl, own.facilitator.privateKey);
    const start = await chain.getTransactionCount({ address: own.facilitator.address, blockTag: "pending" });
    const payments = await Promise.all(own.buyers.map((b) => payment(b.privateKey, own.payTo)));
    const before = await Promise.all(own.buyers.map((b) => usdcOf(chain, b.address)));
    const results = await Promise.all(payments.map(({ payload, requirements }) => guarded.settle(payload, requirements)));
    for (const r of results) expect(r).toMatchObject({ success: true });
    const nonces = await Promise.all(results.map((r) => nonceOf(chain, r.transaction)));
    expect([...nonces].sort((a, b) => a - b)).toEqual(own.buyers.map((_, i) => start + i));
    expect(await chain.getTransactionCount({ address: own.facilitator.address })).toBe(start + own.buyers.length);
    const after = await Promise.all(own.buyers.map((b) => usdcOf(chain, b.address)));
    expect(after).toEqual(before.map((v) => v - AMOUNT));
    expect(self.sender.inFlight).toBe(0);
  });

  it("picks a receipt up at the chain's polling interval, not a second later", async () => {
    const chain = clientOf(own.rpcUrl);
    const { guarded } = facilitatorOn(own.rpcUrl, own.facilitator.privateKey, { ...LOCAL_TIMING, pollIntervalMs: 20 });
    const buyer = own.buyers[1] as { privateKey: `0x${string}` };
    const { payload, requirements } = await payment(buyer.privateKey, own.payTo);
    const rpc = (method: string, params: unknown[] = []) =>
      fetch(own.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
    await rpc("evm_setAutomine", [false]);
    let minedAt = 0;
    try {
      const settled = guarded.settle(payload, requirements);
      // Mine once the transfer is in the node's pool: the receipt exists from that moment on.
      const deadline = Date.now() + 5_000;
      while (Number(((await (await rpc("txpool_status")).json()) as { result: { pending: string } }).result.pending) === 0) {
        if (Date.now() > deadline) throw new Error("the settlement never reached the pool");
        await new Promise((r) => setTimeout(r, 10));
      }
      await new Promise((r) => setTimeout(r, 150));
      await rpc("evm_mine");
      minedAt = performance.now();
      const result = await settled;
      const pickedUpMs = performance.now() - minedAt;
      expect(result).toMatchObject({ success: true });
      expect(await chain.getTransactionReceipt({ hash: result.transaction as Hash })).toMatchObject({ status: "success" });
      // viem's default for Base polls every second; 20 ms polls see it within a few intervals.
      expect(pickedUpMs).toBeLessThan(400);
    } finally {
      await rpc("evm_setAutomine", [true]);
      await rpc("evm_mine"); // anything left in the pool lands before the next test
    }
  });
});

describe("a stuck nonce", () => {
  let proxy: Stub;
  let swallow = true;
  beforeAll(async () => {
    // A node that acknowledges the first broadcast and loses it, forwarding everything else.
    proxy = await startStub(async (_req, res, body) => {
      const calls = (Array.isArray(body) ? body : [body]) as { id: number; method: string; params: unknown[] }[];
      const answers = await Promise.all(
        calls.map(async (call) => {
          if (call.method === "eth_sendRawTransaction" && swallow) {
            swallow = false;
            const { keccak256 } = await import("viem");
            return { jsonrpc: "2.0", id: call.id, result: keccak256(call.params[0] as `0x${string}`) };
          }
          const r = await fetch(own.rpcUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(call),
          });
          return r.json();
        }),
      );
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
  });
  afterAll(async () => {
    await proxy.close();
  });

  it("is reported and ends the settlement as unknown long before the deadline; the next settlement reuses the nonce", async () => {
    const chain = clientOf(own.rpcUrl);
    const { guarded, log } = facilitatorOn(proxy.url, own.facilitator.privateKey, {
      pollIntervalMs: 20,
      stuckAfterMs: 500,
      receiptTimeoutMs: 9_000,
    });
    const buyer = own.buyers[2] as { address: `0x${string}`; privateKey: `0x${string}` };
    const nonce = await chain.getTransactionCount({ address: own.facilitator.address, blockTag: "pending" });
    const before = await usdcOf(chain, buyer.address);
    const lost = await payment(buyer.privateKey, own.payTo);
    const started = performance.now();
    const result = await guarded.settle(lost.payload, lost.requirements);
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({ success: false, errorReason: SETTLEMENT_UNKNOWN });
    expect(elapsed).toBeLessThan(5_000);
    const report = log.lines.find((l) => l.msg === "settlement nonce stuck");
    expect(report).toMatchObject({ level: "error", code: "nonce_stuck", nonce, chain_nonce: nonce, known_to_node: false });
    expect(await usdcOf(chain, buyer.address)).toBe(before);

    const next = await payment(buyer.privateKey, own.payTo);
    const landed = await guarded.settle(next.payload, next.requirements);
    expect(landed).toMatchObject({ success: true });
    expect(await nonceOf(chain, landed.transaction)).toBe(nonce);
    expect(await usdcOf(chain, buyer.address)).toBe(before - AMOUNT);
  });
});

describe("a broadcast the node refuses", () => {
  it("leaves no gap: its nonce is filled with an empty transfer and the settlement behind it lands", async () => {
    const chain = clientOf(own.rpcUrl);
    const facilitatorAddress = own.facilitator.address;
    const refused = await chain.getTransactionCount({ address: facilitatorAddress, blockTag: "pending" });
    let refusedOnce = false;
    // A node that refuses the transaction at `refused` once, after the next one has reached it.
    const proxy = await startStub(async (_req, res, body) => {
      const calls = (Array.isArray(body) ? body : [body]) as { id: number; method: string; params: unknown[] }[];
      const answers = await Promise.all(
        calls.map(async (call) => {
          if (call.method === "eth_sendRawTransaction" && !refusedOnce) {
            const tx = parseTransaction(call.params[0] as `0x${string}`);
            if (tx.nonce === refused && tx.to?.toLowerCase() === base.usdc.address.toLowerCase()) {
              refusedOnce = true;
              await new Promise((r) => setTimeout(r, 300));
              return { jsonrpc: "2.0", id: call.id, error: { code: -32000, message: "insufficient funds for gas * price + value" } };
            }
          }
          const r = await fetch(own.rpcUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(call),
          });
          return r.json();
        }),
      );
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
    try {
      const { guarded } = facilitatorOn(proxy.url, own.facilitator.privateKey);
      const [first, second] = own.buyers.slice(3, 5) as { address: `0x${string}`; privateKey: `0x${string}` }[];
      const before = await Promise.all([usdcOf(chain, first!.address), usdcOf(chain, second!.address)]);
      const a = await payment(first!.privateKey, own.payTo);
      const b = await payment(second!.privateKey, own.payTo);
      const settledA = guarded.settle(a.payload, a.requirements);
      await new Promise((r) => setTimeout(r, 100)); // the refused one takes the lower nonce
      const [resultA, resultB] = await Promise.all([settledA, guarded.settle(b.payload, b.requirements)]);
      expect(resultA).toMatchObject({ success: false, transaction: "" });
      expect(resultA.errorReason).not.toBe(SETTLEMENT_UNKNOWN);
      expect(resultB).toMatchObject({ success: true });
      expect(await nonceOf(chain, resultB.transaction)).toBe(refused + 1);
      // The refused nonce holds an empty transfer to the gas key itself.
      const block = await chain.getBlock({ blockTag: "latest", includeTransactions: true });
      const blocks = await Promise.all(
        Array.from({ length: 3 }, (_, i) => chain.getBlock({ blockNumber: block.number - BigInt(i), includeTransactions: true })),
      );
      const filler = blocks
        .flatMap((x) => x.transactions)
        .find((t) => t.from.toLowerCase() === facilitatorAddress.toLowerCase() && t.nonce === refused);
      expect(filler).toMatchObject({ to: facilitatorAddress.toLowerCase(), value: 0n, input: "0x" });
      expect(await chain.getTransactionCount({ address: facilitatorAddress })).toBe(refused + 2);
      expect(await Promise.all([usdcOf(chain, first!.address), usdcOf(chain, second!.address)])).toEqual([
        before[0],
        (before[1] as bigint) - AMOUNT,
      ]);
    } finally {
      await proxy.close();
    }
  });
});

describe("settling a payment verified moments before", () => {
  /** A node that forwards everything and records each JSON-RPC call with its parameters. */
  async function recordingNode(): Promise<{ url: string; calls: { method: string; params: unknown[] }[]; close(): Promise<void> }> {
    const calls: { method: string; params: unknown[] }[] = [];
    const stub = await startStub(async (_req, res, body) => {
      const batch = (Array.isArray(body) ? body : [body]) as { id: number; method: string; params: unknown[] }[];
      for (const call of batch) calls.push({ method: call.method, params: call.params ?? [] });
      const answer = await fetch(own.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      res.writeHead(200, { "content-type": "application/json" }).end(await answer.text());
    });
    return { url: stub.url, calls, close: stub.close };
  }
  const authorizationUsed = (chain: PublicClient, from: `0x${string}`, nonce: `0x${string}`) =>
    chain.readContract({ address: base.usdc.address, abi: eip3009ABI, functionName: "authorizationState", args: [from, nonce] });

  it("reads the payer's code once per verification, the library's own before the transfer included: one broadcast, the buyer charged once", async () => {
    const chain = clientOf(own.rpcUrl);
    const node = await recordingNode();
    try {
      const { guarded } = facilitatorOn(node.url, own.facilitator.privateKey);
      const buyer = own.buyers[3] as { address: `0x${string}`; privateKey: `0x${string}` };
      const { payload, requirements } = await payment(buyer.privateKey, own.payTo);
      const nonce = (payload.payload as { authorization: { nonce: `0x${string}` } }).authorization.nonce;
      const before = await Promise.all([usdcOf(chain, buyer.address), usdcOf(chain, own.payTo)]);
      expect(await guarded.verify(payload, requirements)).toMatchObject({ isValid: true, payer: buyer.address });
      const result = await guarded.settle(payload, requirements);
      expect(result).toMatchObject({ success: true, payer: buyer.address, network: base.id });
      expect(await chain.getTransactionReceipt({ hash: result.transaction as Hash })).toMatchObject({ status: "success" });
      expect(await Promise.all([usdcOf(chain, buyer.address), usdcOf(chain, own.payTo)])).toEqual([
        (before[0] as bigint) - AMOUNT,
        (before[1] as bigint) + AMOUNT,
      ]);
      expect(await authorizationUsed(chain, buyer.address, nonce)).toBe(true);
      // The library reads the payer's code twice per verification; each verification asks the chain once.
      const payerCode = node.calls.filter(
        (c) => c.method === "eth_getCode" && (c.params[0] as string).toLowerCase() === buyer.address.toLowerCase(),
      );
      expect(payerCode).toHaveLength(2);
      expect(node.calls.filter((c) => c.method === "eth_sendRawTransaction")).toHaveLength(1);
    } finally {
      await node.close();
    }
  });

  it("refuses, without broadcasting, a verified authorisation that was used on chain before its settlement", async () => {
    const chain = clientOf(own.rpcUrl);
    const node = await recordingNode();
    try {
      const { guarded } = facilitatorOn(node.url, own.facilitator.privateKey);
      const buyer = own.buyers[4] as { address: `0x${string}`; privateKey: `0x${string}` };
      const { payload, requirements } = await payment(buyer.privateKey, own.payTo);
      const before = await usdcOf(chain, buyer.address);
      expect(await guarded.verify(payload, requirements)).toMatchObject({ isValid: true });
      // Someone else submits the same signed authorisation first (it is public once broadcast).
      const other = facilitatorOn(own.rpcUrl, own.facilitator.privateKey);
      expect(await other.guarded.settle(payload, requirements)).toMatchObject({ success: true });
      const result = await guarded.settle(payload, requirements);
      expect(result).toMatchObject({ success: false, errorReason: "invalid_exact_evm_nonce_already_used", transaction: "" });
      expect(node.calls.filter((c) => c.method === "eth_sendRawTransaction")).toHaveLength(0);
      expect(await usdcOf(chain, buyer.address)).toBe(before - AMOUNT);
    } finally {
      await node.close();
    }
  });
});
