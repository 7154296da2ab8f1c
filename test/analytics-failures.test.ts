/**
 * When the chain node or a market API fails, a paid analytics call answers with the right
 * status and is not charged: RPC down (503), RPC refusing large ranges (still the exact
 * answer), a node answering the wrong shape (502), a slow upstream (504), malformed, empty,
 * oversized or reshaped JSON (502), a reset connection and rate limiting (503, the latter with
 * Retry-After); then healthy again; and a failing DexScreener falls back to DefiLlama prices.
 */
import { http } from "viem";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { rpcTransport } from "../src/chain/client.ts";
import { type StubFault, type StubUpstream, startUpstreamStubs, type UpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { startRpcProxy } from "./support/rpc-proxy.ts";
import { paidPost, wallet } from "./support/scenario.ts";
import {
  authorizationOf,
  buyerAccount,
  chainClient,
  challengeOf,
  devnet,
  signPayment,
  startTestService,
  testConfig,
  usdcBalance,
} from "./support/service.ts";
import { startStub } from "./support/stub-server.ts";

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

let normal: RunningService | undefined;
afterAll(() => normal?.close());

/** A service whose market APIs are a fresh stub server with `faults`, and upstream calls limited to 300 ms. */
async function serviceWithFaults(
  faults: Partial<Record<StubUpstream, StubFault>>,
): Promise<{ service: RunningService; stubs: UpstreamStubs }> {
  const stubs = await startUpstreamStubs({ faults, slowMs: 5_000 });
  started.push(stubs);
  const service = await startTestService({
    config: testConfig({
      DEXSCREENER_URL: stubs.urls.dexscreener,
      DEFILLAMA_URL: stubs.urls.defillama,
      DEFILLAMA_COINS_URL: stubs.urls.defillamaCoins,
      HYPERLIQUID_URL: stubs.urls.hyperliquid,
      UPSTREAM_TIMEOUT_MS: "300",
    }),
  });
  started.push(service);
  return { service, stubs };
}

describe("the chain node", () => {
  it("down: wallet-profile and whale-watch answer 503 and charge nothing", async () => {
    const rpc = await startRpcProxy(devnet().rpcUrl, { down: true });
    started.push(rpc);
    const service = await startTestService({ readTransport: http(rpc.url, { retryCount: 0 }) });
    started.push(service);
    for (const [path, body] of [
      ["/api/wallet-profile", { address: wallet("whale-1").address }],
      ["/api/whale-watch", {}],
    ] as const) {
      const answer = await paidPost(service, path, body, 7);
      expect(answer.status, path).toBe(503);
      expect(answer.body).toMatchObject({ error: { code: "unavailable", details: { upstream: "rpc" } } });
      expect(answer.spent).toBe(0n);
      expect(answer.headers.get("payment-response")).toBeNull();
    }
  });

  it("refusing ranges over 100 blocks: whale-watch still gives the exact answer, and is charged", async () => {
    const rpc = await startRpcProxy(devnet().rpcUrl, { maxLogRange: 100 });
    started.push(rpc);
    const picky = await startTestService({ readTransport: http(rpc.url, { retryCount: 0 }) });
    started.push(picky);
    normal ??= await startTestService();
    const reference = await paidPost(normal, "/api/whale-watch", { blocks: 43200, min_usd: 50000 }, 6);
    const answer = await paidPost(picky, "/api/whale-watch", { blocks: 43200, min_usd: 50000 }, 7);
    expect(answer.status).toBe(200);
    expect(answer.spent).toBe(100_000n);
    expect(answer.body.largest).toEqual(reference.body.largest);
    expect(answer.body.events_found).toBe(reference.body.events_found);
    expect(rpc.getLogs.some((r) => r.refused)).toBe(true);
    expect(rpc.getLogs.filter((r) => !r.refused).every((r) => r.to - r.from + 1 <= 100)).toBe(true);
  });
});

describe("the chain node answering JSON-RPC of the wrong shape", () => {
  it("a quantity that is not hex ('0xzz'): token-check and gas-tracker answer 502 naming the rpc, not 500, and charge nothing", async () => {
    // Answers every request with the id it was asked and a result no quantity decodes from.
    const rpc = await startStub((_req, res, body) => {
      const answer = (r: { id: number }) => ({ jsonrpc: "2.0", id: r.id, result: "0xzz" });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body as { id: number })));
    });
    started.push(rpc);
    const service = await startTestService({ readTransport: http(rpc.url, { retryCount: 0 }) });
    started.push(service);
    const buyer = buyerAccount(7);
    for (const [path, body, what] of [
      ["/api/token-check", { token: base.usdc.address }, "reading the latest block number"],
      ["/api/gas-tracker", {}, "reading the fee history"],
    ] as const) {
      const before = await usdcBalance(buyer.address);
      const header = await signPayment(await challengeOf(`${service.url}${path}`, { method: "POST" }), buyer);
      const res = await fetch(`${service.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": header },
        body: JSON.stringify(body),
      });
      expect(res.status, path).toBe(502);
      expect(await res.json()).toEqual({
        error: {
          code: "upstream_error",
          message: `The chain node answered in an unexpected shape while ${what}.`,
          details: { upstream: "rpc" },
          docs: "/errors#upstream_error",
        },
      });
      expect(res.headers.get("payment-response")).toBeNull();
      expect(await usdcBalance(buyer.address)).toBe(before);
      const rows = await ledgerRowsOf(service.services.store, buyer.address, authorizationOf(header).nonce);
      expect(rows.map((r) => [r.route, r.outcome, r.status])).toEqual([[`POST ${path}`, "not_charged", 502]]);
    }
  });
});

describe("the chain node stalling mid-answer", () => {
  it("headers sent, then no body: token-check answers 504 within the time limit, not charged", async () => {
    const rpc = await startStub((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"jsonrpc":"2.0",');
    });
    started.push(rpc);
    const service = await startTestService({ readTransport: rpcTransport([rpc.url], { timeoutMs: 500, retryCount: 0 }) });
    started.push(service);
    const began = Date.now();
    const answer = await paidPost(service, "/api/token-check", { token: base.usdc.address }, 7);
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({
      error: {
        code: "upstream_timeout",
        message: "The chain node did not answer in time while reading the latest block number; retry shortly.",
        details: { upstream: "rpc" },
      },
    });
    expect(answer.spent).toBe(0n);
    expect(answer.headers.get("payment-response")).toBeNull();
    expect(Date.now() - began).toBeLessThan(3_000);
  }, 15_000);
});

describe("the scan budget", () => {
  /** A service reading 50-block chunks through a proxy that counts them, whose answers may read `budget` of the chain. */
  async function budgeted(budget: { maxLogs: number; maxMs: number }, latencyMs = 0) {
    const rpc = await startRpcProxy(devnet().rpcUrl, { latencyMs });
    started.push(rpc);
    const config = testConfig();
    const service = await startTestService({
      config,
      readTransport: http(rpc.url, { retryCount: 0 }),
      analytics: { mode: "local", upstreams: config.upstreams, scanner: { chunkSize: 50 }, entityBudget: budget },
    });
    started.push(service);
    return { rpc, service };
  }

  for (const [what, budget, latencyMs] of [
    ["five transfers", { maxLogs: 5, maxMs: 60_000 }, 0],
    ["one millisecond", { maxLogs: 1_000_000, maxMs: 1 }, 20],
  ] as const) {
    it(`whale-watch over 43,200 blocks past a budget of ${what}: 504, not charged, and the scan stopped early`, async () => {
      const { rpc, service } = await budgeted(budget, latencyMs);
      const answer = await paidPost(service, "/api/whale-watch", { blocks: 43200 }, 7);
      expect(answer.status).toBe(504);
      expect(answer.body).toMatchObject({
        error: {
          code: "upstream_timeout",
          message: expect.stringContaining("ask for fewer blocks"),
          details: { upstream: "rpc", budget: { max_logs: budget.maxLogs, max_ms: budget.maxMs } },
        },
      });
      expect(answer.spent).toBe(0n);
      expect(answer.headers.get("payment-response")).toBeNull();
      // The window is the whole chain, over ten chunks of 50 blocks: the budget stopped the scan before it asked for them all.
      const chunks = Math.floor(Number(await chainClient().getBlockNumber()) / 50) + 1;
      expect(chunks).toBeGreaterThan(10);
      expect(rpc.getLogs.length).toBeLessThan(chunks);
    });
  }
});

describe("the chain node refusing every range", () => {
  it("even one block: whale-watch gives up with an upstream error and charges nothing", async () => {
    const rpc = await startRpcProxy(devnet().rpcUrl, { maxLogRange: 0 });
    started.push(rpc);
    const service = await startTestService({ readTransport: http(rpc.url, { retryCount: 0 }) });
    started.push(service);
    const answer = await paidPost(service, "/api/whale-watch", { blocks: 100 }, 7);
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ error: { code: "upstream_error", details: { upstream: "rpc" } } });
    expect(answer.spent).toBe(0n);
    expect(answer.headers.get("payment-response")).toBeNull();
  });
});

describe("market APIs", () => {
  it("slow (DexScreener and DefiLlama both past the time limit): gas-tracker answers 504, not charged", async () => {
    const { service } = await serviceWithFaults({ dexscreener: "slow", "defillama-coins": "slow" });
    const started = Date.now();
    const answer = await paidPost(service, "/api/gas-tracker", {}, 7);
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({ error: { code: "upstream_timeout", details: { upstream: "dexscreener" } } });
    expect(answer.spent).toBe(0n);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it("slow Hyperliquid: defi-sentiment answers 504, not charged", async () => {
    const { service } = await serviceWithFaults({ hyperliquid: "slow" });
    const answer = await paidPost(service, "/api/defi-sentiment", { asset: "ETH" }, 7);
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({ error: { code: "upstream_timeout", details: { upstream: "hyperliquid" } } });
    expect(answer.spent).toBe(0n);
  });

  it("malformed JSON: defi-sentiment (Hyperliquid) and whale-watch (both price sources) answer 502, not charged", async () => {
    const { service } = await serviceWithFaults({ hyperliquid: "malformed", dexscreener: "malformed", "defillama-coins": "malformed" });
    const sentiment = await paidPost(service, "/api/defi-sentiment", { asset: "BTC" }, 7);
    expect(sentiment.status).toBe(502);
    expect(sentiment.body).toMatchObject({
      error: { code: "upstream_error", message: "hyperliquid answered with malformed JSON.", details: { upstream: "hyperliquid" } },
    });
    expect(sentiment.spent).toBe(0n);
    const whales = await paidPost(service, "/api/whale-watch", {}, 7);
    expect(whales.status).toBe(502);
    expect(whales.body).toMatchObject({ error: { code: "upstream_error", details: { upstream: "dexscreener" } } });
    expect(whales.spent).toBe(0n);
  });

  it("JSON of the wrong shape: DefiLlama protocols answer 502 for defi-sentiment, not charged", async () => {
    const { service } = await serviceWithFaults({ defillama: "wrong_shape" });
    const answer = await paidPost(service, "/api/defi-sentiment", { protocol: "aave-v3" }, 7);
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({
      error: { code: "upstream_error", message: "defillama answered in an unexpected shape.", details: { upstream: "defillama" } },
    });
    expect(answer.spent).toBe(0n);
  });

  it("rate limited: 503 with the upstream's Retry-After, not charged", async () => {
    const { service } = await serviceWithFaults({ hyperliquid: "rate_limited" });
    const answer = await paidPost(service, "/api/defi-sentiment", {}, 7);
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("7");
    expect(answer.body).toMatchObject({ error: { code: "unavailable", details: { upstream: "hyperliquid" } } });
    expect(answer.spent).toBe(0n);
  });

  it("an empty 200, a 64 MiB body, a reset connection: defi-sentiment answers 502/502/503 naming hyperliquid, not charged; then 200 again", async () => {
    const { service, stubs } = await serviceWithFaults({});
    for (const [fault, status, code, message] of [
      ["empty", 502, "upstream_error", "hyperliquid answered with malformed JSON."],
      ["huge", 502, "upstream_error", "hyperliquid answered in an unexpected shape."],
      ["reset", 503, "unavailable", "hyperliquid is unreachable; retry shortly."],
    ] as const) {
      stubs.setFault("hyperliquid", fault);
      const answer = await paidPost(service, "/api/defi-sentiment", { asset: "ETH" }, 7);
      expect([fault, answer.status]).toEqual([fault, status]);
      expect(answer.body).toEqual({ error: { code, message, details: { upstream: "hyperliquid" }, docs: `/errors#${code}` } });
      expect(answer.spent).toBe(0n);
      expect(answer.headers.get("payment-response")).toBeNull();
    }
    stubs.setFault("hyperliquid", null);
    const healthy = await paidPost(service, "/api/defi-sentiment", { asset: "ETH" }, 7);
    expect(healthy.status).toBe(200);
    expect(healthy.spent).toBe(100_000n);
  });

  it("DexScreener failing: prices come from DefiLlama coins, and the answer says so", async () => {
    const { service, stubs } = await serviceWithFaults({ dexscreener: "error" });
    const whales = await paidPost(service, "/api/whale-watch", { min_usd: 1_000_000 }, 7);
    expect(whales.status).toBe(200);
    expect(whales.spent).toBe(100_000n);
    expect(whales.body).toMatchObject({ price_usd: "0.9999", price_source: "defillama" });
    // Valued at DefiLlama's 0.9999, to the cent: 1,000,000 USDC would be 999,900 USD, under the line.
    expect((whales.body.largest as { amount: string; amount_usd: number }[]).map((w) => [w.amount, w.amount_usd])).toEqual([
      ["5000000", 4999500],
      ["3000000", 2999700],
      ["2000000", 1999800],
      ["1560000", 1559844],
      ["1500000", 1499850],
      ["1200000", 1199880],
    ]);
    const markets = await fetch(`${service.url}/api/markets`);
    const body = (await markets.json()) as {
      pairs: { symbol: string; price_usd: string; change_24h_pct: number; source: string; pair: string | null }[];
    };
    expect(body.pairs.map((p) => [p.symbol, p.price_usd, p.change_24h_pct, p.source, p.pair])).toEqual([
      ["WETH", "3119.87", 1.79, "defillama", null],
      ["cbBTC", "97240.5", 0.81, "defillama", null],
      ["cbETH", "3404.2", 1.7, "defillama", null],
      ["AERO", "0.7209", 3.9, "defillama", null],
      ["USDC", "0.9999", -0.01, "defillama", null],
    ]);
    expect(stubs.requests.filter((r) => r.upstream === "dexscreener").length).toBeGreaterThanOrEqual(2);
  });
});
