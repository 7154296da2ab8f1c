/**
 * A chain node failing every `eth_call` for a while (HTTP 503) while the rest of it answers:
 * the paid routes whose reads go through Multicall3 answer 503 and charge nothing instead of
 * reading the failed batch as "these contracts do not answer", and nothing read during the
 * blip is remembered: once the node is back, the same service knows USDC is a 6-decimal token
 * and the seeded pool is a DEX pool. Its own file: the token metadata is kept per process, and
 * USDC must not be known before the blip.
 */
import { type Address, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EntitiesTruth } from "../src/local/devnet/scenario-entities.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { type RpcProxy, startRpcProxy } from "./support/rpc-proxy.ts";
import { paidPost, scenario } from "./support/scenario.ts";
import { chainClient, devnet, startTestService } from "./support/service.ts";

const PRICE = 100_000n;
const USDC = base.usdc.address as Address;
const entities = (): EntitiesTruth => scenario().entities;
const window = () => ({ to_block: entities().window.toBlock, blocks: entities().window.toBlock - entities().window.fromBlock + 1 });

let rpc: RpcProxy;
let service: RunningService;
beforeAll(async () => {
  rpc = await startRpcProxy(devnet().rpcUrl);
  service = await startTestService({ readTransport: http(rpc.url, { retryCount: 0 }) });
});
afterAll(async () => {
  await service?.close();
  await rpc?.close();
});

const unavailable = { error: { code: "unavailable", details: { upstream: "rpc" } } };

describe("eth_call failing with HTTP 503, then healthy again, on one service", () => {
  it("token-check, portfolio and whale-watch answer 503 during the blip, not charged; afterwards USDC and the pool read right", async () => {
    const s = scenario();
    // Healthy first: the plain token's class is remembered, so the blip below reaches its metadata read.
    const plainBefore = await paidPost(service, "/api/token-check", { token: s.contracts.plainToken }, 7);
    expect(plainBefore.status).toBe(200);
    expect(plainBefore.body).toMatchObject({ class: "token", is_token: true, symbol: "PLAIN", decimals: 18 });

    rpc.options.failMethods = ["eth_call"];
    const failing: [string, () => Promise<Record<string, unknown>>][] = [
      // Class already known: the metadata multicall fails.
      ["/api/token-check", async () => ({ token: s.contracts.plainToken })],
      // Class not known: the classifier's probes fail.
      ["/api/token-check", async () => ({ token: USDC })],
      // Token metadata and balances in multicalls.
      ["/api/entity-intel/portfolio", async () => ({ address: entities().portfolio.address, ...window() })],
      // The pools' classes in a multicall (the window read when the call is made: each paid call mines a block).
      ["/api/whale-watch", async () => ({ token: "WETH", min_usd: 100000, blocks: await whaleBlocks() })],
    ];
    for (const [path, bodyOf] of failing) {
      const body = await bodyOf();
      const answer = await paidPost(service, path, body, 7);
      expect(answer.status, `${path} ${JSON.stringify(body)}`).toBe(503);
      expect(answer.body).toMatchObject(unavailable);
      expect(answer.spent).toBe(0n);
      expect(answer.headers.get("payment-response")).toBeNull();
    }
    expect(rpc.http.some((r) => r.status === 503 && r.methods.includes("eth_call"))).toBe(true);

    rpc.options.failMethods = [];
    const flow = await paidPost(service, "/api/entity-intel/exchange-flow", { token: "USDC", top: 1, ...window() }, 7);
    expect(flow.status).toBe(200);
    expect(flow.spent).toBe(PRICE);
    expect(flow.body).toMatchObject({ token: "USDC", token_address: USDC, symbol: "USDC", decimals: 6 });

    const usdc = await paidPost(service, "/api/token-check", { token: USDC }, 7);
    expect(usdc.status).toBe(200);
    expect(usdc.body).toMatchObject({ class: "token", is_contract: true, is_token: true, symbol: "USDC", decimals: 6 });

    // The WETH whales of the scenario (test/analytics-endpoints.test.ts), with the classes the
    // probes give: 500 WETH from an exchange into the v3 pool, 100 into the v2 pair (a blip read
    // them as plain contracts and kept that for an hour).
    const whales = await paidPost(service, "/api/whale-watch", { token: "WETH", min_usd: 100000, blocks: await whaleBlocks() }, 7);
    expect(whales.status).toBe(200);
    const rows = whales.body.largest as { amount: string; direction: string; from_class: string; to_class: string }[];
    expect(rows.map((w) => [w.amount, w.direction, w.from_class, w.to_class])).toEqual([
      ["500", "from_exchange", "wallet", "v3_pool"],
      ["150", "from_exchange", "wallet", "wallet"],
      ["100", "into_dex", "wallet", "v2_pair"],
      ["60", "to_bridge", "wallet", "wallet"],
      ["40", "to_exchange", "wallet", "wallet"],
    ]);
  });
});

/** A window from the scenario's second block to the head. */
async function whaleBlocks(): Promise<number> {
  return Number(await chainClient().getBlockNumber({ cacheTime: 0 })) - scenario().startBlock;
}
