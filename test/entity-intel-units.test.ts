/**
 * The parts of the entity routes below HTTP: the budgeted newest-first read (its time budget
 * with a clock that jumps, against the real devnet), topic OR-lists split at 50 addresses and
 * read through the real scanner, exact USD sums over several tokens, the label file's venues
 * and flags, and a venue's users counted from far more transfers than the devnet holds.
 */
import { type Address, getAddress, type Hash } from "viem";
import { describe, expect, it } from "vitest";
import { LabelBook, parseLabelsFile } from "../src/analytics/labels.ts";
import { parseDecimal } from "../src/analytics/usd-value.ts";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { TARGET_LOGS_PER_RESPONSE, type TransferLog, TransferScanner } from "../src/chain/log-scanner.ts";
import { UsdSum } from "../src/entity-intel/entities.ts";
import { MAX_TOPIC_ADDRESSES, ScanBudget, scanBudgeted, splitQuery } from "../src/entity-intel/scan.ts";
import { venueUsersOf } from "../src/entity-intel/venue-users.ts";
import { base } from "../src/networks/base.ts";
import { startRpcProxy } from "./support/rpc-proxy.ts";
import { scenario } from "./support/scenario.ts";
import { devnet } from "./support/service.ts";

const USDC = base.usdc.address as Address;
const scannerOf = (chunkSize: number) =>
  new TransferScanner(createChainClient(base.chainAt([devnet().rpcUrl]), rpcTransport([devnet().rpcUrl], { retryCount: 0 })), {
    chunkSize,
  });

describe("the budgeted read", () => {
  it("stops at the request the time budget runs out on, not at the end of a group of chunks, and says from which block it covered", async () => {
    const e = scenario().entities;
    const rpc = await startRpcProxy(devnet().rpcUrl);
    try {
      // The clock moves ten seconds with every eth_getLogs the node is asked: two requests fit in 15 s, a third does not.
      const budget = new ScanBudget({ maxLogs: 1_000_000, maxMs: 15_000 }, () => rpc.getLogs.length * 10_000);
      const x = e.venues.find((v) => v.id === "seeded-exchange-x")?.addresses as Address[];
      const window = { fromBlock: e.window.fromBlock, toBlock: e.window.toBlock, finalized: 0 };
      // One request at a time, newest chunk first: the two newest chunks of 50 blocks are read.
      const scanner = new TransferScanner(createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 })), {
        chunkSize: 50,
        concurrency: 1,
      });
      const result = await scanBudgeted(scanner, [{ token: USDC, to: x }], window, budget);
      const covered = Math.floor(e.window.toBlock / 50) * 50 - 50;
      expect(covered).toBeGreaterThan(e.window.fromBlock);
      expect(rpc.getLogs.map((r) => [r.from, r.to])).toEqual([
        [covered + 50, e.window.toBlock],
        [covered, covered + 49],
      ]);
      expect(result.truncated).toBe(true);
      expect(result.coveredFrom).toBe(covered);
      const want = e.transfers.filter((t) => t.token === USDC && x.includes(t.to) && t.block >= covered);
      expect(want.length).toBeGreaterThan(0);
      expect(result.logs.map((l) => [l.blockNumber, l.logIndex, l.from, l.to, l.value])).toEqual(
        want.map((t) => [t.block, t.logIndex, t.from, t.to, BigInt(t.value)]),
      );
      expect(budget.logsRead).toBe(want.length);
    } finally {
      await rpc.close();
    }
  });

  it("sends the newest chunk of every query before an older chunk of any, even when the budget lets every request go", async () => {
    const e = scenario().entities;
    const rpc = await startRpcProxy(devnet().rpcUrl);
    try {
      const x = e.venues.find((v) => v.id === "seeded-exchange-x")?.addresses as Address[];
      const window = { fromBlock: e.window.fromBlock, toBlock: e.window.toBlock, finalized: 0 };
      const scanner = new TransferScanner(createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 })), {
        chunkSize: 50,
        concurrency: 1,
      });
      const queries = [
        { token: USDC, from: x },
        { token: USDC, to: x },
      ];
      await scanBudgeted(scanner, queries, window, new ScanBudget({ maxLogs: 1_000_000, maxMs: 60_000 }));
      // The aligned chunks of 50 blocks, newest first, each asked by both queries before the next older one.
      const chunks: [number, number][] = [];
      for (let end = window.toBlock; end >= window.fromBlock; ) {
        const start = Math.max(window.fromBlock, Math.floor(end / 50) * 50);
        chunks.push([start, end]);
        end = start - 1;
      }
      expect(chunks.length).toBeGreaterThan(1);
      expect(rpc.getLogs.map((r) => [r.from, r.to])).toEqual(chunks.flatMap((c) => [c, c]));
    } finally {
      await rpc.close();
    }
  });

  it("reads the whole window when the budget allows, a log matched by two queries once", async () => {
    const e = scenario().entities;
    const x = e.venues.find((v) => v.id === "seeded-exchange-x")?.addresses as Address[];
    const budget = new ScanBudget({ maxLogs: 1_000_000, maxMs: 60_000 });
    const window = { fromBlock: e.window.fromBlock, toBlock: e.window.toBlock, finalized: 0 };
    const result = await scanBudgeted(
      scannerOf(50),
      [
        { token: USDC, from: x },
        { token: USDC, to: x },
      ],
      window,
      budget,
    );
    const want = e.transfers.filter((t) => t.token === USDC && (x.includes(t.from) || x.includes(t.to)));
    expect(result).toMatchObject({ truncated: false, coveredFrom: e.window.fromBlock });
    expect(result.logs.map((l) => [l.blockNumber, l.logIndex])).toEqual(want.map((t) => [t.block, t.logIndex]));
    // The sweep from hot wallet 1 to hot wallet 2 matches both queries: read twice, kept once.
    const sweeps = want.filter((t) => x.includes(t.from) && x.includes(t.to)).length;
    expect(sweeps).toBe(1);
    expect(budget.logsRead).toBe(want.length + sweeps);
  });

  it("splits a topic list longer than 50 addresses into several queries, every token when none is named", async () => {
    const e = scenario().entities;
    const users = Object.entries(e.addresses)
      .filter(([name]) => name.startsWith("user-"))
      .map(([, a]) => a);
    const padded = [...users, ...Array.from({ length: 80 }, (_, i) => getAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`))];
    expect(splitQuery({ from: padded }).map((q) => (q.from as Address[]).length)).toEqual([
      MAX_TOPIC_ADDRESSES,
      MAX_TOPIC_ADDRESSES,
      padded.length - 100,
    ]);
    const window = { fromBlock: e.window.fromBlock, toBlock: e.window.toBlock, finalized: 0 };
    const result = await scanBudgeted(scannerOf(2_000), [{ from: padded }], window, new ScanBudget({ maxLogs: 1_000_000, maxMs: 60_000 }));
    const want = e.transfers.filter((t) => users.includes(t.from));
    expect(result.logs.map((l) => [l.token, l.blockNumber, l.logIndex])).toEqual(want.map((t) => [t.token, t.block, t.logIndex]));
    expect(new Set(result.logs.map((l) => l.token)).size).toBe(2); // USDC and WETH deposits
  });
});

describe("the scan budget's queue", () => {
  // maxLogs of one request's expected size: with one in flight, a second would pass the limit, so one at a time.
  const oneAtATime = () => new ScanBudget({ maxLogs: TARGET_LOGS_PER_RESPONSE, maxMs: 60_000 });

  it("lets a retry or a half of a refused range at a newer block go before an older chunk that asked first", async () => {
    const budget = oneAtATime();
    const admitted: string[] = [];
    const ask = (name: string, toBlock: number) => budget.acquire(toBlock).then((go) => go && admitted.push(name));
    const first = ask("newest chunk", 3_999);
    const older = [ask("older chunk", 1_999), ask("oldest chunk", 999)];
    await first;
    // The newest chunk's request was refused: its half asks again, after the older chunks.
    void ask("half of the newest chunk", 3_999);
    budget.release(0);
    await new Promise((settled) => setTimeout(settled, 0));
    expect(admitted).toEqual(["newest chunk", "half of the newest chunk"]);
    budget.release(0);
    await older[0];
    budget.release(0);
    await older[1];
    expect(admitted).toEqual(["newest chunk", "half of the newest chunk", "older chunk", "oldest chunk"]);
  });

  it("refuses every request waiting and every later one once a read of the answer fails", async () => {
    const e = scenario().entities;
    // The provider rate-limits the first eth_getLogs, and the scanner gives up at once: the newest chunk's read fails.
    const rpc = await startRpcProxy(devnet().rpcUrl, { rateLimitGetLogs: 1 });
    try {
      const budget = oneAtATime();
      const scanner = new TransferScanner(createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 })), {
        chunkSize: 50,
        attempts: 1,
      });
      const window = { fromBlock: e.window.fromBlock, toBlock: e.window.toBlock, finalized: 0 };
      expect(Math.floor(window.toBlock / 50)).toBeGreaterThan(Math.floor(window.fromBlock / 50));
      await expect(scanBudgeted(scanner, [{ token: USDC }], window, budget)).rejects.toThrow();
      // Time for any request of the other chunks still under way to reach the proxy.
      await new Promise((settled) => setTimeout(settled, 300));
      // The older chunks waited for leave and were refused: the failed request was the only one sent.
      expect(rpc.http.filter((r) => r.methods.includes("eth_getLogs")).map((r) => r.status)).toEqual([429]);
      expect(await budget.acquire(5_000)).toBe(false);
    } finally {
      await rpc.close();
    }
  });
});

describe("a scan spending an allowance, as whale-watch's does", () => {
  for (const [what, limits] of [
    ["one request at a time", { maxLogs: TARGET_LOGS_PER_RESPONSE, maxMs: 60_000 }],
    ["every request let through at once", { maxLogs: 1_000_000, maxMs: 60_000 }],
  ] as const) {
    it(`sends no further eth_getLogs once a chunk's read fails (${what})`, async () => {
      const e = scenario().entities;
      // The provider rate-limits the first eth_getLogs, and the scanner gives up at once: the newest chunk's read fails.
      const rpc = await startRpcProxy(devnet().rpcUrl, { rateLimitGetLogs: 1 });
      try {
        const budget = new ScanBudget(limits);
        const scanner = new TransferScanner(createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 })), {
          chunkSize: 50,
          concurrency: 1,
          attempts: 1,
        });
        expect(Math.floor(e.window.toBlock / 50)).toBeGreaterThan(Math.floor(e.window.fromBlock / 50));
        await expect(
          scanner.transfers({ token: USDC, fromBlock: e.window.fromBlock, toBlock: e.window.toBlock }, 0, { allowance: budget }),
        ).rejects.toThrow();
        // Time for any request of the other chunks still under way to reach the proxy.
        await new Promise((settled) => setTimeout(settled, 300));
        expect(rpc.http.filter((r) => r.methods.includes("eth_getLogs")).map((r) => r.status)).toEqual([429]);
        expect(budget.exhausted()).toBe(true);
      } finally {
        await rpc.close();
      }
    });
  }
});

describe("a venue's users", () => {
  it("a user with 150,000 transfers (within the 250,000-log budget) gets its count, volume and first and last blocks", () => {
    const venue = getAddress(`0x${"11".repeat(20)}`);
    const busy = getAddress(`0x${"22".repeat(20)}`);
    const other = getAddress(`0x${"33".repeat(20)}`);
    const hub = getAddress(`0x${"44".repeat(20)}`);
    const log = (i: number, from: Address, to: Address, block: number, value: bigint): TransferLog => ({
      token: USDC,
      blockNumber: block,
      logIndex: i,
      txHash: `0x${i.toString(16).padStart(64, "0")}` as Hash,
      from,
      to,
      value,
    });
    // Newest first, as the budgeted read returns them: blocks 150,100 down to 101, one transfer each, 2 units.
    const logs: TransferLog[] = [];
    for (let i = 0; i < 150_000; i++) logs.push(log(i, i % 2 === 0 ? busy : venue, i % 2 === 0 ? venue : busy, 150_100 - i, 2n));
    logs.push(log(150_000, venue, other, 7, 5n));
    // Inside the venue (between its two addresses): not a user.
    logs.push(log(150_001, venue, hub, 10, 3n), log(150_002, hub, venue, 8, 1n));
    const users = venueUsersOf(logs, new Set([venue, hub]));
    expect([...users.keys()].sort()).toEqual([busy, other]);
    const u = users.get(busy);
    expect(u && { transfers: u.transfers, volume: [...u.volume], first: u.firstBlock, last: u.lastBlock }).toEqual({
      transfers: 150_000,
      volume: [[USDC, 300_000n]],
      first: 101,
      last: 150_100,
    });
    const o = users.get(other);
    expect(o && { transfers: o.transfers, volume: [...o.volume], first: o.firstBlock, last: o.lastBlock }).toEqual({
      transfers: 1,
      volume: [[USDC, 5n]],
      first: 7,
      last: 7,
    });
  });
});

describe("USD sums", () => {
  it("add amounts of tokens with different decimals and price scales exactly, rounding once", () => {
    // 0.005 USDC at 1 + 0.005 USDC at 1: two half cents are one cent, not two roundings to 0.01 each.
    const one = parseDecimal("1");
    expect(new UsdSum().add(5_000n, 6, one).add(5_000n, 6, one).usd()).toBe(0.01);
    expect(new UsdSum().add(5_000n, 6, one).usd()).toBe(0.01);
    expect(new UsdSum().add(4_999n, 6, one).usd()).toBe(0);
    // 1.5 WETH at 3120.45 + 10,000 ENTB (18 decimals) at 0.045 + 99.99 USDC at 1.0001.
    const sum = new UsdSum()
      .add(1_500_000_000_000_000_000n, 18, parseDecimal("3120.45"))
      .add(10_000n * 10n ** 18n, 18, parseDecimal("0.045"))
      .add(99_990_000n, 6, parseDecimal("1.0001"));
    // 4,680.675 + 450 + 99.999999 = 5,230.674999: 5,230.67, where rounding each term first would give 5,230.68.
    expect(sum.usd()).toBe(5230.67);
    expect(new UsdSum().add(-1_005_000n, 6, one).usd()).toBe(-1.01);
  });
});

describe("venues and flags in the label file", () => {
  it("group a venue's addresses into one cluster with its class, and flags only where the file puts them", () => {
    const { labels, flags } = parseLabelsFile({
      description: "x",
      labels: [
        {
          address: "0x0000000000000000000000000000000000000001",
          name: "X hot 1",
          category: "exchange",
          venue: "x",
          networks: ["local"],
          source: "s",
        },
        {
          address: "0x0000000000000000000000000000000000000002",
          name: "X hot 2",
          category: "exchange",
          venue: "x",
          networks: ["local"],
          source: "s",
        },
        { address: "0x0000000000000000000000000000000000000003", name: "Pool", category: "dex", networks: ["base"], source: "s" },
      ],
      flags: [{ address: "0x0000000000000000000000000000000000000004", flag: "phishing", networks: ["local"], source: "s" }],
    });
    const book = new LabelBook(labels, "local", flags);
    expect(book.venues()).toEqual([
      {
        id: "x",
        class: "cex",
        addresses: ["0x0000000000000000000000000000000000000001", "0x0000000000000000000000000000000000000002"],
        names: ["X hot 1", "X hot 2"],
      },
    ]);
    expect(book.flags("0x0000000000000000000000000000000000000004")).toEqual(["phishing"]);
    expect(book.flags("0x0000000000000000000000000000000000000001")).toEqual([]);
    expect(new LabelBook(labels, "base", flags).venues().map((v) => [v.id, v.class])).toEqual([
      ["0x0000000000000000000000000000000000000003", "dex"],
    ]);
    expect(() =>
      parseLabelsFile({
        description: "x",
        labels: [
          {
            address: "0x0000000000000000000000000000000000000005",
            name: "T",
            category: "token",
            venue: "t",
            networks: ["base"],
            source: "s",
          },
        ],
        flags: [{ address: "0x0000000000000000000000000000000000000004", flag: "rugpull", networks: ["local"], source: "s" }],
      }),
    ).toThrow(/\/flags\/0\/flag/);
    expect(() =>
      parseLabelsFile({
        description: "x",
        labels: [
          {
            address: "0x0000000000000000000000000000000000000005",
            name: "T",
            category: "token",
            venue: "t",
            networks: ["base"],
            source: "s",
          },
        ],
      }),
    ).toThrow(/\/labels\/0\/venue: only exchange, bridge, dex and mixer entries are venues/);
  });
});
