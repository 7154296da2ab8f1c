/**
 * The trace when money reaches an address a second time: by another path, earlier than the
 * first (out), or back at the start of a transaction trace (A -> B -> A). Fresh wallets send a
 * few USDC transfers of their own at the chain's head, so the shared scenario's ground truth is
 * untouched; each call names exactly those blocks with `to_block`.
 */
import {
  type Address,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  type Hash,
  http,
  parseAbi,
  parseUnits,
} from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { paidPost } from "./support/scenario.ts";
import { chainClient, devnet, startTestService } from "./support/service.ts";

// Anvil's well-known account 0: the local USDC's minter.
const minter = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const mintAbi = parseAbi(["function mint(address to, uint256 amount)"]);

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

function fresh(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

/** Send one transaction and wait for its block (the devnet mines one block per transaction). */
async function sent(account: PrivateKeyAccount, to: Address, data: `0x${string}`): Promise<{ hash: Hash; block: number }> {
  const d = devnet();
  const wallet = createWalletClient({ account, chain: base.chainAt([d.rpcUrl]), transport: http(d.rpcUrl) });
  const hash = await wallet.sendTransaction({ to, data, gas: 100_000n });
  const receipt = await chainClient().waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe("success");
  return { hash, block: Number(receipt.blockNumber) };
}
const usdc = (amount: string) => parseUnits(amount, 6);
const mint = (to: Address, amount: string) =>
  sent(minter, devnet().usdc, encodeFunctionData({ abi: mintAbi, functionName: "mint", args: [to, usdc(amount)] }));
const pay = (from: PrivateKeyAccount, to: PrivateKeyAccount, amount: string) =>
  sent(from, devnet().usdc, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to.address, usdc(amount)] }));

async function funded(...accounts: PrivateKeyAccount[]) {
  const d = devnet();
  const test = createTestClient({ mode: "anvil", chain: base.chainAt([d.rpcUrl]), transport: http(d.rpcUrl) });
  for (const a of accounts) await test.setBalance({ address: a.address, value: 10n ** 18n });
}

type Who = { address: Address };
const edge = (from: Who, to: Who, amount: string, tx: { hash: Hash; block: number }) => ({
  from: from.address,
  to: to.address,
  amount,
  tx_hash: tx.hash,
  block: tx.block,
});
const node = (who: Who, hop: number, terminal: string | null) => ({ address: who.address, hop, terminal });

describe("trace: money that reaches an address again", () => {
  it("follows an address again from an earlier arrival by another path (out)", async () => {
    const [a, b, c, d] = [fresh(), fresh(), fresh(), fresh()] as [
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
    ];
    await funded(a, b, c);
    const first = await mint(a.address, "300");
    const aToC = await pay(a, c, "200");
    const cToB = await pay(c, b, "200");
    const bToD = await pay(b, d, "200");
    const aToB = await pay(a, b, "100");
    // B is first reached by A's later transfer (aToB); C's transfer reached it earlier, and what B
    // sent on after that (bToD) is the money's path A -> C -> B -> D.
    const { status, body } = await paidPost(service, "/api/entity-intel/trace", {
      from: a.address.toLowerCase(),
      min_usd: 50,
      max_hops: 4,
      to_block: aToB.block,
      blocks: aToB.block - first.block + 1,
    });
    expect(status).toBe(200);
    const hops = (body.hops as { hop: number; edges: Record<string, unknown>[] }[]).map((h) => ({
      hop: h.hop,
      edges: h.edges.map((e) => ({ from: e.from, to: e.to, amount: e.amount, tx_hash: e.tx_hash, block: e.block })),
    }));
    expect(hops).toEqual([
      { hop: 1, edges: [edge(a, c, "200", aToC), edge(a, b, "100", aToB)] },
      { hop: 2, edges: [edge(c, b, "200", cToB)] },
      { hop: 3, edges: [edge(b, d, "200", bToD)] },
      // D is expanded at hop 4 and sends nothing on.
      { hop: 4, edges: [] },
    ]);
    expect((body.nodes as Record<string, unknown>[]).map((n) => ({ address: n.address, hop: n.hop, terminal: n.terminal }))).toEqual([
      node(a, 0, null),
      node(c, 1, null),
      node(b, 1, null),
      node(d, 3, "no_further_transfers"),
    ]);
    expect(body.truncated).toBe(false);
  });

  it("follows the start of a transaction trace when the money comes back to it (A -> B -> A -> C)", async () => {
    const [a, b, c] = [fresh(), fresh(), fresh()] as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
    await funded(a, b);
    const first = await mint(a.address, "500");
    const aToB = await pay(a, b, "400");
    const bToA = await pay(b, a, "400");
    const aToC = await pay(a, c, "450");
    const { status, body } = await paidPost(service, "/api/entity-intel/trace", {
      from: aToB.hash,
      min_usd: 50,
      max_hops: 4,
      to_block: aToC.block,
      blocks: aToC.block - first.block + 1,
    });
    expect(status).toBe(200);
    const hops = (body.hops as { hop: number; edges: Record<string, unknown>[] }[]).map((h) => ({
      hop: h.hop,
      edges: h.edges.map((e) => ({ from: e.from, to: e.to, amount: e.amount, tx_hash: e.tx_hash, block: e.block })),
    }));
    expect(hops).toEqual([
      { hop: 1, edges: [edge(a, b, "400", aToB)] },
      { hop: 2, edges: [edge(b, a, "400", bToA)] },
      { hop: 3, edges: [edge(a, c, "450", aToC)] },
      { hop: 4, edges: [] },
    ]);
    expect((body.nodes as Record<string, unknown>[]).map((n) => ({ address: n.address, hop: n.hop, terminal: n.terminal }))).toEqual([
      node(a, 0, null),
      node(b, 1, null),
      node(c, 3, "no_further_transfers"),
    ]);
  });
  it("follows an address again from a later departure by another path (in)", async () => {
    const [x, p, q, r] = [fresh(), fresh(), fresh(), fresh()] as [
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
    ];
    await funded(p, q, r);
    const first = await mint(r.address, "300");
    const mintP = await mint(p.address, "100");
    const pToX = await pay(p, x, "100");
    const rToP = await pay(r, p, "200");
    const pToQ = await pay(p, q, "200");
    const qToX = await pay(q, x, "200");
    // P is first met sending to X early (pToX); its later departure to Q (the money of qToX) came
    // from R, which arrived after pToX and so was not read when P was first expanded.
    const { status, body } = await paidPost(service, "/api/entity-intel/trace", {
      from: x.address,
      direction: "in",
      min_usd: 50,
      max_hops: 4,
      to_block: qToX.block,
      blocks: qToX.block - first.block + 1,
    });
    expect(status).toBe(200);
    const zero: Who = { address: "0x0000000000000000000000000000000000000000" };
    const hops = (body.hops as { hop: number; edges: Record<string, unknown>[] }[]).map((h) => ({
      hop: h.hop,
      edges: h.edges.map((e) => ({ from: e.from, to: e.to, amount: e.amount, tx_hash: e.tx_hash, block: e.block })),
    }));
    expect(hops).toEqual([
      { hop: 1, edges: [edge(p, x, "100", pToX), edge(q, x, "200", qToX)] },
      { hop: 2, edges: [edge(zero, p, "100", mintP), edge(p, q, "200", pToQ)] },
      { hop: 3, edges: [edge(r, p, "200", rToP)] },
      { hop: 4, edges: [edge(zero, r, "300", first)] },
    ]);
    expect((body.nodes as Record<string, unknown>[]).map((n) => ({ address: n.address, hop: n.hop, terminal: n.terminal }))).toEqual([
      node(x, 0, null),
      node(p, 1, null),
      node(q, 1, null),
      node(zero, 2, "no_further_transfers"),
      node(r, 3, null),
    ]);
  });
});
