/**
 * The Transfer log scanner against the seeded devnet, directly and through an RPC proxy that
 * refuses large ranges the way public providers do: every transfer of the ground truth comes
 * back in chain order, however the provider slices the window, and final chunks are cached.
 */
import { HttpRequestError, type PublicClient, RpcRequestError } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { isRangeRefusal, rangeLimitFromRefusal, type ScannerOptions, TransferScanner } from "../src/chain/log-scanner.ts";
import { ScanBudget } from "../src/entity-intel/scan.ts";
import { UpstreamError } from "../src/errors.ts";
import { base } from "../src/networks/base.ts";
import { type RpcProxy, startRpcProxy } from "./support/rpc-proxy.ts";
import { scenario, truthLogs, wallet } from "./support/scenario.ts";
import { devnet } from "./support/service.ts";

const USDC = base.usdc.address;
const WETH = "0x4200000000000000000000000000000000000006";

function clientOf(url: string): PublicClient {
  return createChainClient(base.chainAt([url]), rpcTransport([url], { retryCount: 0, timeoutMs: 5_000 }));
}

const proxies: RpcProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});
async function proxy(options: Parameters<typeof startRpcProxy>[1]): Promise<RpcProxy> {
  const p = await startRpcProxy(devnet().rpcUrl, options);
  proxies.push(p);
  return p;
}

describe("eth_getLogs through the client's transport", () => {
  const scannerOf = (url: string, options: ScannerOptions = {}) => new TransferScanner(clientOf(url), options);

  describe("reading the window", () => {
    it("returns every USDC and WETH transfer of the scenario in chain order, across aligned chunks", async () => {
      const s = scenario();
      const scanner = scannerOf(devnet().rpcUrl, { chunkSize: 50, concurrency: 4 });
      const { finalized } = await scanner.head();
      const usdc = await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock }, finalized);
      expect(usdc.logs).toEqual(truthLogs("USDC"));
      expect(usdc.stats).toMatchObject({ chunks: Math.floor(s.endBlock / 50) - Math.floor(s.startBlock / 50) + 1, refusals: 0 });
      const weth = await scanner.transfers({ token: WETH, fromBlock: s.startBlock, toBlock: s.endBlock }, finalized);
      expect(weth.logs).toEqual(truthLogs("WETH"));
    });

    it("filters by sender and by recipient in the request (indexed topics)", async () => {
      const s = scenario();
      const exchange = wallet("exchange-a").address;
      const scanner = scannerOf(devnet().rpcUrl, { chunkSize: 100 });
      const sent = await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock, from: exchange }, 0);
      const received = await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock, to: exchange }, 0);
      expect(sent.logs).toEqual(truthLogs("USDC", (t) => t.from === exchange));
      expect(received.logs).toEqual(truthLogs("USDC", (t) => t.to === exchange));
      expect(sent.logs.length).toBeGreaterThan(2);
    });

    it("gives the same answer one request at a time as with several in flight", async () => {
      const s = scenario();
      const scanner = scannerOf(devnet().rpcUrl, { chunkSize: 25 });
      const window = { token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock } as const;
      const one = await scanner.transfers(window, 0, { concurrency: 1 });
      const many = await scanner.transfers(window, 0, { concurrency: 8 });
      expect(one.logs).toEqual(truthLogs("USDC"));
      expect(many.logs).toEqual(one.logs);
      expect(one.stats.requests).toBe(many.stats.requests);
    });
  });

  describe("requests in flight", () => {
    /** A chunk size that cuts the scenario's window into about `n` chunks. */
    const chunkSizeFor = (n: number) => Math.ceil((scenario().endBlock - scenario().startBlock + 1) / n);

    it("sends each chunk as an HTTP request of its own, eight at a time, small calls still batched", async () => {
      const s = scenario();
      const rpc = await proxy({ latencyMs: 40 });
      const scanner = scannerOf(rpc.url, { chunkSize: chunkSizeFor(12) });
      const [{ finalized }, { logs, stats }] = await Promise.all([
        scanner.head(),
        scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock }, 0),
      ]);
      expect(finalized).toBeGreaterThan(0);
      expect(logs).toEqual(truthLogs("USDC"));
      const logRequests = rpc.http.filter((r) => r.methods.includes("eth_getLogs"));
      // One eth_getLogs per HTTP request, one request per chunk.
      expect(logRequests.map((r) => r.methods)).toEqual(Array.from({ length: stats.chunks }, () => ["eth_getLogs"]));
      expect(stats).toMatchObject({ requests: stats.chunks, throttled: 0 });
      // Eight at first; a run of eight successes lets one more in.
      expect(stats.concurrency).toBe(9);
      expect(stats.chunks).toBeGreaterThan(8);
      // Held 40 ms each, the first eight are all in flight together, not a ninth.
      expect(Math.max(...logRequests.map((r) => r.logsInFlight))).toBe(8);
      // The head's two reads went out together as one JSON-RPC batch.
      expect(rpc.http.filter((r) => !r.methods.includes("eth_getLogs")).map((r) => [...r.methods].sort())).toContainEqual([
        "eth_blockNumber",
        "eth_getBlockByNumber",
      ]);
    });

    it("backs off when the provider rate-limits: fewer in flight, waits as told, every log still read", async () => {
      const s = scenario();
      const rpc = await proxy({ latencyMs: 20, rateLimitGetLogs: 3, retryAfter: "1" });
      const scanner = scannerOf(rpc.url, { chunkSize: chunkSizeFor(12), retryBaseMs: 10 });
      const started = performance.now();
      const { logs, stats } = await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock }, 0);
      expect(logs).toEqual(truthLogs("USDC"));
      expect(stats.throttled).toBe(3);
      expect(rpc.http.filter((r) => r.status === 429)).toHaveLength(3);
      // The 429s named a one-second pause, which the retries kept.
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_000);
      // Halved once for that wave of 429s (to 4), then regained one at a time: one more after
      // four successes, another after five, which this few requests cannot take back to 8.
      expect(stats.concurrency).toBeGreaterThanOrEqual(4);
      expect(stats.concurrency).toBeLessThan(8);
      // Requests sent after the first wave of eight never found more than six in flight.
      const later = rpc.http.slice(8).filter((r) => r.methods.includes("eth_getLogs"));
      expect(later.length).toBeGreaterThan(0);
      expect(Math.max(...later.map((r) => r.logsInFlight))).toBeLessThanOrEqual(6);
    });

    it("fails with a 503 when the provider keeps rate-limiting", async () => {
      const s = scenario();
      const rpc = await proxy({ rateLimitGetLogs: 1_000 });
      const scanner = scannerOf(rpc.url, { chunkSize: 2_000, retryBaseMs: 5, attempts: 3 });
      const error = await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.startBlock }, 0).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "unavailable", status: 503, upstream: "rpc" });
      expect(rpc.http.filter((r) => r.status === 429)).toHaveLength(3);
    });

    it("never reads an answer over 4 MiB: a wide range answered that large is split", async () => {
      const s = scenario();
      const rpc = await proxy({ oversizeAbove: 20 });
      const scanner = scannerOf(rpc.url, { chunkSize: 50 });
      const { logs, stats } = await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock }, 0);
      expect(logs).toEqual(truthLogs("USDC"));
      expect(stats.refusals).toBeGreaterThan(0);
      // Too many logs is this query's density, not the provider's range limit.
      expect(stats.maxRange).toBe(50);
      expect(rpc.getLogs.filter((r) => r.to - r.from + 1 > 20)).toHaveLength(stats.refusals);
    });
  });

  describe("a provider that refuses large ranges", () => {
    it("halves a refused range until the provider takes it, then keeps to that size", async () => {
      const s = scenario();
      const rpc = await proxy({ maxLogRange: 20 });
      const scanner = scannerOf(rpc.url, { chunkSize: 50, concurrency: 1 });
      const { logs, stats } = await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock }, 0);
      expect(logs).toEqual(truthLogs("USDC"));
      // The first chunk (from the scenario's start to the next multiple of 50) is refused and halved
      // until it fits; from then on no request is larger than the size that was accepted.
      const expected: [number, boolean][] = [];
      let size = 50 - (s.startBlock % 50);
      while (size > 20) {
        expected.push([size, true]);
        size = Math.ceil(size / 2);
      }
      expected.push([size, false]);
      // Other chunks' requests may come in between: follow the pieces starting at the first block.
      const first = rpc.getLogs.filter((r) => r.from === s.startBlock);
      expect(first.slice(0, expected.length).map((r) => [r.to - r.from + 1, r.refused])).toEqual(expected);
      expect(stats.maxRange).toBe(size);
      expect(rpc.getLogs.filter((r) => !r.refused).every((r) => r.to - r.from + 1 <= 20)).toBe(true);
      expect(rpc.getLogs.filter((r) => r.refused).length).toBe(stats.refusals);
      expect(stats.refusals).toBe(expected.length - 1);
    });

    it("goes straight to the limit a refusal names", async () => {
      const s = scenario();
      const rpc = await proxy({ maxLogRange: 30, refusalMessage: (n) => `query exceeds max block range of ${n}` });
      const scanner = scannerOf(rpc.url, { chunkSize: 200, concurrency: 1 });
      const { logs, stats } = await scanner.transfers({ token: WETH, fromBlock: s.startBlock, toBlock: s.endBlock }, 0);
      expect(logs).toEqual(truthLogs("WETH"));
      expect(stats).toMatchObject({ refusals: 1, maxRange: 30 });
      expect(rpc.getLogs.filter((r) => !r.refused).every((r) => r.to - r.from + 1 <= 30)).toBe(true);
    });

    it("reads a window of single blocks when that is all the provider allows", async () => {
      const s = scenario();
      const rpc = await proxy({
        maxLogRange: 1,
        refusalMessage: () => "Log response size exceeded. You can make eth_getLogs requests with up to a 1 block range.",
      });
      const scanner = scannerOf(rpc.url, { chunkSize: 2_000 });
      const from = s.endBlock - 40;
      const { logs, stats } = await scanner.transfers({ token: USDC, fromBlock: from, toBlock: s.endBlock }, 0);
      expect(logs).toEqual(truthLogs("USDC").filter((l) => l.blockNumber >= from));
      expect(stats.maxRange).toBe(1);
    });
  });

  describe("keeping only some transfers", () => {
    it("keeps what keep accepts, in chain order, and tells its allowance every transfer read, from the node and from the cache alike", async () => {
      const s = scenario();
      const rpc = await proxy({});
      const scanner = scannerOf(rpc.url, { chunkSize: 50 });
      // Chunks at or below the finalized block: the first kept scan fills the cache with whole chunks.
      const { finalized } = await scanner.head();
      const toBlock = Math.min(s.endBlock, Math.floor((finalized + 1) / 50) * 50 - 1);
      const window = { token: USDC, fromBlock: s.startBlock + 3, toBlock } as const;
      // At least 100,000 USDC: the scenario's whale-sized transfers.
      const keep = (log: { value: bigint }) => log.value >= 100_000_000_000n;
      const wantAll = truthLogs("USDC").filter((l) => l.blockNumber >= window.fromBlock && l.blockNumber <= toBlock);
      const wantLarge = wantAll.filter(keep);
      expect(wantLarge.length).toBeGreaterThan(5);
      expect(wantLarge.length).toBeLessThan(wantAll.length);
      // An allowance that never runs out: it only counts the transfers of the window each scan read.
      const counting = () => new ScanBudget({ maxLogs: Number.MAX_SAFE_INTEGER, maxMs: Number.MAX_SAFE_INTEGER });
      for (const pass of ["from the node", "from the cache"]) {
        const allowance = counting();
        const kept = await scanner.transfers(window, finalized, { keep, allowance });
        expect(kept.logs, pass).toEqual(wantLarge);
        expect(allowance.logsRead, pass).toBe(wantAll.length);
        expect(kept.coveredFrom, pass).toBe(window.fromBlock);
      }
      const requests = rpc.getLogs.length;
      // The cache held whole chunks: the unfiltered scan is answered from it, every transfer there.
      const allAllowance = counting();
      const all = await scanner.transfers(window, finalized, { allowance: allAllowance });
      expect(rpc.getLogs.length).toBe(requests);
      expect(all.logs).toEqual(wantAll);
      expect(allAllowance.logsRead).toBe(wantAll.length);
      // Chunks above the finalized block (never cached) are kept from as they arrive too.
      const freshAllowance = counting();
      const fresh = await scanner.transfers(window, 0, { keep, allowance: freshAllowance });
      expect(fresh.logs).toEqual(wantLarge);
      expect(freshAllowance.logsRead).toBe(wantAll.length);
    });
  });

  describe("caching", () => {
    it("reads final chunks once: a second scan of the same window sends no eth_getLogs", async () => {
      const s = scenario();
      const rpc = await proxy({});
      const scanner = scannerOf(rpc.url, { chunkSize: 50 });
      const { finalized } = await scanner.head();
      const toBlock = Math.floor((finalized + 1) / 50) * 50 - 1; // the last chunk end at or below the finalized block
      const first = await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock }, finalized);
      const requests = rpc.getLogs.length;
      const second = await scanner.transfers({ token: USDC, fromBlock: s.startBlock + 7, toBlock }, finalized);
      expect(rpc.getLogs.length).toBe(requests);
      expect(second.stats.cachedChunks).toBe(second.stats.chunks);
      expect(second.logs).toEqual(first.logs.filter((l) => l.blockNumber >= s.startBlock + 7));
      // Other test files' payments may follow the scenario: compare the scenario's blocks.
      expect(first.logs.filter((l) => l.blockNumber <= s.endBlock)).toEqual(truthLogs("USDC").filter((l) => l.blockNumber <= toBlock));
    });

    it("never caches chunks above the finalized block", async () => {
      const s = scenario();
      const rpc = await proxy({});
      const scanner = scannerOf(rpc.url, { chunkSize: 50 });
      await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock }, s.startBlock - 1);
      const requests = rpc.getLogs.length;
      await scanner.transfers({ token: USDC, fromBlock: s.startBlock, toBlock: s.endBlock }, s.startBlock - 1);
      expect(rpc.getLogs.length).toBe(2 * requests);
    });
  });

  describe("failures", () => {
    it("turns an unreachable node into a 503 upstream error", async () => {
      const rpc = await proxy({ down: true });
      const scanner = scannerOf(rpc.url);
      const error = await scanner.transfers({ token: USDC, fromBlock: 0, toBlock: 10 }, 0).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ code: "unavailable", status: 503, upstream: "rpc" });
    });
  });
});

describe("refusals", () => {
  it("recognises providers' range refusals and the limits they name, and nothing else", () => {
    const rpcError = (message: string) => new RpcRequestError({ body: {}, url: "http://rpc", error: { code: -32000, message } });
    const alchemy =
      "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x1e8480, 0x1e8c4f]";
    expect(rangeLimitFromRefusal(rpcError(alchemy))).toBe(2_000);
    expect(rangeLimitFromRefusal(rpcError("query returned more than 10000 results. Try with this block range [0x10, 0x1F]."))).toBe(16);
    expect(rangeLimitFromRefusal(rpcError("eth_getLogs is limited to a 10,000 range"))).toBe(10_000);
    expect(rangeLimitFromRefusal(rpcError("exceed maximum block range: 50"))).toBe(50);
    expect(rangeLimitFromRefusal(rpcError("up to a 2K block range"))).toBe(2_000);
    expect(rangeLimitFromRefusal(rpcError("block range too large"))).toBeUndefined();
    for (const text of [
      alchemy,
      "block range too large",
      "ranges over 1000 blocks are not supported",
      "query timeout exceeded",
      "eth_getLogs is limited to a 10,000 range",
    ]) {
      expect(isRangeRefusal(rpcError(text)), text).toBe(true);
    }
    expect(isRangeRefusal(rpcError("header not found"))).toBe(false);
    expect(isRangeRefusal(rpcError("execution reverted"))).toBe(false);
    expect(isRangeRefusal(new HttpRequestError({ url: "http://rpc", status: 429, details: "exceeds the limit of requests" }))).toBe(false);
  });
});
