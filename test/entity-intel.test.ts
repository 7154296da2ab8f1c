/**
 * The entity-intelligence routes over real HTTP, each paid call through a real x402 buyer,
 * against the seeded scenario's entity chapter (src/local/devnet/scenario-entities.ts) and the
 * market-data stubs. Every call names the chapter's exact window with `to_block`, so the
 * settlements other calls mine never move the numbers; each answer equals the chapter's own
 * bookkeeping, converted to USD here with the fixture prices written out by hand.
 */
import { readFileSync } from "node:fs";
import { type Address, getAddress, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EntitiesTruth } from "../src/local/devnet/scenario-entities.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { startRpcProxy } from "./support/rpc-proxy.ts";
import { decimal, paidPost, scenario } from "./support/scenario.ts";
import { chainClient, devnet, startTestService, testConfig } from "./support/service.ts";

const PRICE = 100_000n;
const USDC = base.usdc.address as Address;
const WETH = "0x4200000000000000000000000000000000000006" as Address;

const truth = (): EntitiesTruth => scenario().entities;
const A = (name: string) => truth().addresses[name] as Address;
const window = () => ({ to_block: truth().window.toBlock, blocks: truth().window.toBlock - truth().window.fromBlock + 1 });

/** The fixture prices (fixtures/upstreams/*.json) as integer units and scale, with decimals and symbol. */
function tokenTable(): Record<Address, { symbol: string; decimals: number; price?: [bigint, number]; source?: string }> {
  const t = truth().tokens;
  return {
    [USDC]: { symbol: "USDC", decimals: 6, price: [10_001n, 4], source: "dexscreener" },
    [WETH]: { symbol: "WETH", decimals: 18, price: [312_045n, 2], source: "dexscreener" },
    [scenario().contracts.plainToken]: { symbol: "PLAIN", decimals: 18, price: [312_045n, 6], source: "dexscreener" },
    [t.ENTA.address]: { symbol: "ENTA", decimals: 18, price: [25n, 1], source: "dexscreener" },
    [t.ENTB.address]: { symbol: "ENTB", decimals: 18, price: [45n, 3], source: "defillama" },
    [t.ENTC.address]: { symbol: "ENTC", decimals: 6 },
  };
}

/** USD of amounts by token at the fixture prices, summed exactly over a common denominator and rounded half up to the cent. */
function usd(amounts: Record<string, string | bigint>): number {
  const table = tokenTable();
  const E = 60n;
  let numerator = 0n;
  for (const [token, amount] of Object.entries(amounts)) {
    const row = table[getAddress(token)];
    if (!row?.price) continue;
    const [units, scale] = row.price;
    numerator += BigInt(amount) * units * 10n ** (E - BigInt(row.decimals + scale));
  }
  const negative = numerator < 0n;
  const n = negative ? -numerator : numerator;
  const cents = (n * 200n + 10n ** E) / (2n * 10n ** E);
  return (negative ? -Number(cents) : Number(cents)) / 100;
}

/** The curated names and classes of the chapter's venues (content/labels.json, written out again). */
function venueFacts(): Record<Address, { class: string; labels: string[]; flags: string[] }> {
  const s = scenario();
  return {
    [A("cex-x-hot-1")]: { class: "cex", labels: ["Seeded Exchange X (hot wallet 1, deposits)"], flags: [] },
    [A("cex-x-hot-2")]: { class: "cex", labels: ["Seeded Exchange X (hot wallet 2, withdrawals)"], flags: [] },
    [A("bridge")]: { class: "bridge", labels: ["Seeded Bridge Z (escrow)"], flags: [] },
    [A("poolA")]: { class: "dex", labels: ["Seeded ENTA/WETH pool"], flags: [] },
    [A("poolB")]: { class: "dex", labels: ["Seeded ENTB/USDC pool"], flags: [] },
    [A("mixer")]: { class: "mixer", labels: ["Seeded Mixer"], flags: ["mixer"] },
    [A("exploiter")]: { class: "wallet", labels: [], flags: ["exploit"] },
    [A("funder")]: { class: "wallet", labels: [], flags: ["scam"] },
    [s.contracts.v2Pair]: { class: "dex", labels: ["Seeded PLAIN/WETH v2 pair"], flags: [] },
  };
}
const factsOf = (a: Address) => venueFacts()[a] ?? { class: "wallet", labels: [], flags: [] };

const byAddress = (a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase());

type Edge = EntitiesTruth["trace"]["hops"][number][number];
const edge = (e: Edge) => ({
  from: e.from,
  to: e.to,
  token: USDC,
  symbol: "USDC",
  amount: decimal(e.value, 6),
  amount_usd: usd({ [USDC]: e.value }),
  tx_hash: e.txHash,
  block: e.block,
  log_index: expect.any(Number),
});
const node = (address: Address, hop: number, terminal: string | null) => ({ address, hop, ...factsOf(address), terminal });
const reached = (counts: Record<string, number>) => ({
  cex: 0,
  bridge: 0,
  dex: 0,
  no_further_transfers: 0,
  tokens_not_priced: 0,
  fan_out_limit: 0,
  budget: 0,
  max_hops: 0,
  ...counts,
});

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

describe("the free index and page", () => {
  it("serves exactly the index document: routes, price, configured labels, methodology, what is not checked", async () => {
    const res = await fetch(`${service.url}/api/entity-intel`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(doc).sort()).toEqual(
      [
        "provider",
        "not_nansen",
        "source_thread",
        "price_usdc_per_call",
        "endpoints",
        "labels_configured",
        "methodology",
        "not_checked",
      ].sort(),
    );
    expect(doc.price_usdc_per_call).toBe(0.1);
    expect((doc.endpoints as { route: string; price_usd: number }[]).map((e) => [e.route, e.price_usd])).toEqual(
      ["use-cases", "exchange-flow", "portfolio", "counterparties", "trace", "venue-users"].map((r) => [`/api/entity-intel/${r}`, 0.1]),
    );
    const file = JSON.parse(readFileSync("content/labels.json", "utf8")) as { labels: { address: string; networks: string[] }[] };
    const local = [...new Set(file.labels.filter((l) => l.networks.includes("local")).map((l) => getAddress(l.address)))];
    expect(doc.labels_configured).toEqual(local);
    const m = doc.methodology as Record<string, string>;
    expect(Object.keys(m).sort()).toEqual(["chain", "classes", "labels", "prices", "transfers"]);
    expect(m.chain).toContain(base.id);
    expect(m.transfers).toContain("chunks of 2000 blocks");
    expect(m.prices).toContain("deepest Base pair");
    expect(m.classes).toMatch(/getReserves\(\) and token0\(\).*slot0\(\) and token0\(\).*exactInputSingle.*factory\(\).*decimals\(\)/);
    expect(m.labels).toContain("only when an address is in the curated label file");
    expect(doc.not_checked).toEqual([
      "off-chain identity or company ownership of any address",
      "centralized-exchange internal books (transfers inside an exchange never reach the chain)",
      "other chains than Base",
      "sanctions compliance: this is not a screening product",
    ]);
    expect(doc.not_nansen).toMatch(/Not Nansen/);
  });

  it("renders the index and every use case on /entity-intel", async () => {
    const res = await fetch(`${service.url}/entity-intel`);
    expect(res.status).toBe(200);
    const html = (await res.text()).replaceAll("&#39;", "'");
    for (const route of ["use-cases", "exchange-flow", "portfolio", "counterparties", "trace", "venue-users"]) {
      expect(html).toContain(`/api/entity-intel/${route}`);
    }
    for (const title of [
      "Exchange treasury watch",
      "Token team watching for dumps",
      "Incident response after an exploit",
      "DEX venue growth",
      "VIP outreach",
      "Airdrop-farm detection",
      "Whale following",
      "Due diligence on a counterparty",
      "Bridge flow monitor",
    ]) {
      expect(html).toContain(title);
    }
    expect(html).toContain(A("cex-x-hot-1"));
    expect(html).toContain("sanctions compliance");
  });

  it("quotes 100000 atomic USDC in the challenge of each paid route", async () => {
    for (const route of ["use-cases", "exchange-flow", "portfolio", "counterparties", "trace", "venue-users"]) {
      const res = await fetch(`${service.url}/api/entity-intel/${route}`, { method: "POST", body: "{}" });
      expect(res.status, route).toBe(402);
      const body = (await res.json()) as { accepts: { amount: string; network: string }[] };
      expect(
        body.accepts.map((a) => [a.amount, a.network]),
        route,
      ).toEqual([["100000", base.id]]);
    }
  });
});

describe("use-cases", () => {
  it("answers a token team's role and task with the dump-watch plan, steps in order with valid bodies", async () => {
    const { status, body, spent } = await paidPost(service, "/api/entity-intel/use-cases", {
      role: "token team",
      task: "warn me when large holders send our token to exchanges",
    });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    expect(body.query).toEqual({ role: "token team", task: "warn me when large holders send our token to exchanges" });
    expect(body.matched).toEqual({ id: "token-team-dump-watch", title: "Token team watching for dumps" });
    const plan = body.plan as { step: number; route: string; example_body: Record<string, unknown> }[];
    expect(plan.map((s) => [s.step, s.route])).toEqual([
      [1, "/api/entity-intel/exchange-flow"],
      [2, "/api/entity-intel/portfolio"],
      [3, "/api/entity-intel/trace"],
      [4, "/api/entity-intel/counterparties"],
    ]);
    expect(plan[0]?.example_body).toEqual({ token: USDC, blocks: 43200, top: 25 });
    expect((body.alternatives as unknown[]).length).toBeLessThanOrEqual(3);
  });

  it("matches an incident responder to the exploit plan, which starts with a trace", async () => {
    const { body } = await paidPost(service, "/api/entity-intel/use-cases", { task: "we were hacked, where did the stolen funds go" }, 7);
    expect(body.matched).toEqual({ id: "exploit-incident-response", title: "Incident response after an exploit" });
    expect((body.plan as { route: string }[])[0]?.route).toBe("/api/entity-intel/trace");
  });

  it("answers 404 with the use cases for a query nothing matches, and 400 without role or task; neither is charged", async () => {
    const none = await paidPost(service, "/api/entity-intel/use-cases", { task: "zzqx wqqz" }, 7);
    expect(none.status).toBe(404);
    expect(none.spent).toBe(0n);
    expect((none.body as { error: { details: { use_cases: unknown[] } } }).error.details.use_cases).toHaveLength(9);
    const empty = await paidPost(service, "/api/entity-intel/use-cases", {}, 7);
    expect(empty.status).toBe(400);
    expect(empty.spent).toBe(0n);
  });
});

describe("exchange-flow", () => {
  it("splits the window's USDC flows by venue class exactly as the chapter's bookkeeping, with the top counterparties", async () => {
    const t = truth();
    const { status, body, spent } = await paidPost(service, "/api/entity-intel/exchange-flow", { token: "USDC", top: 10, ...window() });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    const flows = Object.fromEntries(
      Object.entries(t.exchangeFlow.byClass).map(([cls, r]) => [
        cls,
        {
          inflow: decimal(r.inflow, 6),
          outflow: decimal(r.outflow, 6),
          net:
            (BigInt(r.inflow) - BigInt(r.outflow) < 0n ? "-" : "") +
            decimal((BigInt(r.inflow) - BigInt(r.outflow)).toString().replace("-", ""), 6),
          inflow_usd: usd({ [USDC]: r.inflow }),
          outflow_usd: usd({ [USDC]: r.outflow }),
          net_usd: usd({ [USDC]: BigInt(r.inflow) - BigInt(r.outflow) }),
          transfers: r.transfers,
        },
      ]),
    );
    expect(Object.keys(flows).sort()).toEqual(["bridge", "cex", "dex", "mixer"]);
    expect(body).toMatchObject({
      token: "USDC",
      token_address: USDC,
      symbol: "USDC",
      decimals: 6,
      price_usd: "1.0001",
      price_source: "dexscreener",
      from_block: t.window.fromBlock,
      to_block: t.window.toBlock,
      truncated: false,
      covered_from_block: t.window.fromBlock,
      by_class: flows,
    });
    expect(body.top_counterparties).toEqual(
      t.exchangeFlow.counterparties.slice(0, 10).map((c) => ({
        address: c.address,
        ...factsOf(c.address),
        inflow_usd: usd({ [USDC]: c.inflow }),
        outflow_usd: usd({ [USDC]: c.outflow }),
        inflow: decimal(c.inflow, 6),
        outflow: decimal(c.outflow, 6),
      })),
    );
    // The sweeps inside exchange X's and Y's clusters are not flows.
    expect((body.by_class as Record<string, { transfers: number }>).cex?.transfers).toBe(t.exchangeFlow.byClass.cex?.transfers);
  });
});

describe("portfolio", () => {
  it("lists the holder's six tokens and ETH at the window's last block, priced, with the unpriced one apart", async () => {
    const t = truth();
    const table = tokenTable();
    const p = t.portfolio;
    const { status, body, spent } = await paidPost(service, "/api/entity-intel/portfolio", {
      address: p.address.toLowerCase(),
      ...window(),
    });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    const rows = [
      {
        token: "ETH",
        symbol: "ETH",
        decimals: 18,
        balance: decimal(p.ethWei, 18),
        price_usd: "3120.45",
        value_usd: usd({ [WETH]: p.ethWei }),
        price_source: "dexscreener",
      },
      ...Object.entries(p.balances).map(([token, balance]) => {
        const row = table[token as Address];
        if (!row) throw new Error(`no fixture row for ${token}`);
        const priced = row.price !== undefined;
        return {
          token,
          symbol: row.symbol,
          decimals: row.decimals,
          balance: decimal(balance, row.decimals),
          price_usd: priced ? decimal((row.price as [bigint, number])[0], (row.price as [bigint, number])[1]) : null,
          value_usd: priced ? usd({ [token]: balance }) : null,
          price_source: row.source ?? null,
        };
      }),
    ].sort((a, b) => (b.value_usd ?? -1) - (a.value_usd ?? -1));
    expect(rows).toHaveLength(7);
    expect(body).toEqual({
      address: p.address,
      class: "wallet",
      labels: [],
      flags: [],
      block_number: t.window.toBlock,
      holdings: rows,
      total_value_usd: usd({ ...p.balances, [WETH]: BigInt(p.ethWei) + BigInt(p.balances[WETH] ?? "0") }),
      unpriced: [{ token: t.tokens.ENTC.address, symbol: "ENTC", balance: "1000", reason: "no_price" }],
      activity: {
        window_blocks: window().blocks,
        transfers_in: p.activity.transfersIn,
        transfers_out: p.activity.transfersOut,
        tokens_touched: p.activity.tokensTouched,
        first_seen_block: p.activity.firstSeenBlock,
        last_seen_block: p.activity.lastSeenBlock,
      },
      from_block: t.window.fromBlock,
      to_block: t.window.toBlock,
      truncated: false,
      covered_from_block: t.window.fromBlock,
      budget: { logs_read: p.activity.transfersIn + p.activity.transfersOut, ms: expect.any(Number), max_logs: 250000, max_ms: 20000 },
      methodology: expect.objectContaining({ summary: expect.any(String) }),
      not_checked: expect.arrayContaining(["sanctions compliance: this is not a screening product"]),
    });
    // Five tokens with a price besides ETH: USDC, WETH, PLAIN, ENTA (DexScreener) and ENTB (DefiLlama only).
    expect((body.holdings as { price_source: string | null }[]).filter((h) => h.price_source !== null)).toHaveLength(6);
  });
});

describe("counterparties", () => {
  it("lists everyone the holder dealt with: class, curated names and flags, first and last seen, volumes each way", async () => {
    const t = truth();
    const { status, body, spent } = await paidPost(service, "/api/entity-intel/counterparties", {
      address: A("holder"),
      limit: 100,
      ...window(),
    });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    const blocks = [...new Set(t.counterparties.rows.flatMap((r) => [r.firstBlock, r.lastBlock]))];
    const times = new Map(
      await Promise.all(
        blocks.map(async (b) => {
          const block = await chainClient().getBlock({ blockNumber: BigInt(b) });
          return [b, new Date(Number(block.timestamp) * 1000).toISOString()] as const;
        }),
      ),
    );
    const expected = t.counterparties.rows
      .map((r) => ({
        address: r.address,
        ...factsOf(r.address),
        first_seen: { block: r.firstBlock, timestamp: times.get(r.firstBlock) },
        last_seen: { block: r.lastBlock, timestamp: times.get(r.lastBlock) },
        transfers_in: r.transfersIn,
        transfers_out: r.transfersOut,
        volume_in_usd: usd(r.volumeIn),
        volume_out_usd: usd(r.volumeOut),
      }))
      .sort((a, b) => b.volume_in_usd + b.volume_out_usd - (a.volume_in_usd + a.volume_out_usd) || byAddress(a.address, b.address));
    expect(body).toMatchObject({
      address: A("holder"),
      class: "wallet",
      token: null,
      total_counterparties: 9,
      counterparties: expected,
      unpriced_tokens: [t.tokens.ENTC.address],
      tokens_not_looked_up: [],
      truncated: false,
    });
    const mixer = (body.counterparties as { address: string; flags: string[]; class: string }[]).find((c) => c.address === A("mixer"));
    expect(mixer).toMatchObject({ class: "mixer", flags: ["mixer"] });
  });

  it("narrows to one token and to the first rows with limit", async () => {
    const t = truth();
    const { body } = await paidPost(
      service,
      "/api/entity-intel/counterparties",
      { address: A("holder"), token: "USDC", limit: 2, ...window() },
      7,
    );
    const usdcRows = t.counterparties.rows.filter((r) => r.volumeIn[USDC] !== undefined || r.volumeOut[USDC] !== undefined);
    expect(body.token).toBe(USDC);
    expect(body.total_counterparties).toBe(usdcRows.length);
    expect((body.counterparties as { address: string }[]).map((c) => c.address)).toEqual([A("cex-x-hot-2"), A("poolB")]);
  });
});

describe("trace", () => {
  it("follows the exploiter's money four hops to the exchange deposit and the bridge, leaving the dust out", async () => {
    const t = truth().trace;
    const { status, body, spent } = await paidPost(service, "/api/entity-intel/trace", { from: t.origin, max_hops: 4, ...window() });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    expect(body).toMatchObject({
      origin: t.origin,
      origin_kind: "address",
      direction: "out",
      token: null,
      min_usd: 1000,
      max_hops: 4,
      hops: t.hops.map((edges, i) => ({ hop: i + 1, edges: edges.map(edge) })),
      nodes: [
        node(A("exploiter"), 0, null),
        node(A("hop-1"), 1, null),
        node(A("hop-2"), 2, null),
        node(A("hop-3a"), 3, null),
        node(A("hop-3b"), 3, null),
        node(A("sink"), 3, "no_further_transfers"),
        node(A("cex-x-hot-1"), 4, "cex"),
        node(A("bridge"), 4, "bridge"),
      ],
      reached: reached({ cex: 1, bridge: 1, no_further_transfers: 1 }),
      truncated: false,
      tokens_not_looked_up: [],
    });
    for (const [address, kind] of Object.entries(t.terminals)) {
      expect((body.nodes as { address: string; terminal: string }[]).find((n) => n.address === address)?.terminal).toBe(kind);
    }
    expect(JSON.stringify(body.hops)).not.toContain(t.dust.to);
  });

  it("stops at max_hops 3 by default, and starts from the first hop's transaction just the same", async () => {
    const t = truth().trace;
    const three = await paidPost(service, "/api/entity-intel/trace", { from: t.origin, token: "USDC", ...window() }, 7);
    expect(three.body).toMatchObject({
      max_hops: 3,
      token: USDC,
      hops: t.hops.slice(0, 3).map((edges, i) => ({ hop: i + 1, edges: edges.map(edge) })),
      reached: reached({ max_hops: 3 }),
    });
    const fromTx = await paidPost(service, "/api/entity-intel/trace", { from: t.firstTx, max_hops: 4, ...window() }, 7);
    expect(fromTx.status).toBe(200);
    expect(fromTx.body).toMatchObject({
      origin: t.firstTx,
      origin_kind: "transaction",
      hops: t.hops.map((edges, i) => ({ hop: i + 1, edges: edges.map(edge) })),
      reached: reached({ cex: 1, bridge: 1, no_further_transfers: 1 }),
    });
  });

  it("traces backwards from a laundering wallet to where its money came from", async () => {
    const t = truth().trace;
    const { body } = await paidPost(
      service,
      "/api/entity-intel/trace",
      { from: A("hop-3a"), direction: "in", max_hops: 2, ...window() },
      7,
    );
    expect(body).toMatchObject({
      direction: "in",
      hops: [
        { hop: 1, edges: [edge(t.hops[2]?.[0] as Edge)] },
        { hop: 2, edges: [edge(t.hops[1]?.[0] as Edge)] },
      ],
      nodes: [node(A("hop-3a"), 0, null), node(A("hop-2"), 1, null), node(A("hop-1"), 2, "max_hops")],
    });
  });
});

describe("venue-users", () => {
  it("describes exchange X's users: segments, VIP candidates, users gone quiet and the flagged funder's three users", async () => {
    const t = truth();
    const v = t.venueUsers;
    const { status, body, spent } = await paidPost(service, "/api/entity-intel/venue-users", { venue: "seeded-exchange-x", ...window() });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    const users = v.users.map((u) => ({ ...u, usd: usd(u.volume) })).sort((a, b) => b.usd - a.usd || byAddress(a.address, b.address));
    expect(users.length).toBeGreaterThanOrEqual(30);
    const segment = (name: string, min: number, max: number | null) => {
      const inside = users.filter((u) => u.usd >= min && (max === null || u.usd < max));
      const sum: Record<string, bigint> = {};
      for (const u of inside) for (const [token, amount] of Object.entries(u.volume)) sum[token] = (sum[token] ?? 0n) + BigInt(amount);
      return { name, min_usd: min, max_usd: max, users: inside.length, volume_usd: usd(sum) };
    };
    const quiet = new Set(v.quiet);
    expect(body).toMatchObject({
      venue: {
        id: "seeded-exchange-x",
        address: A("cex-x-hot-1"),
        addresses: [A("cex-x-hot-1"), A("cex-x-hot-2")],
        class: "cex",
        labels: ["Seeded Exchange X (hot wallet 1, deposits)", "Seeded Exchange X (hot wallet 2, withdrawals)"],
      },
      token: null,
      users_total: users.length,
      segments: [
        segment("retail", 0, 1000),
        segment("active", 1000, 10000),
        segment("high_value", 10000, 100000),
        segment("whale", 100000, null),
      ],
      vip_candidates: users
        .filter((u) => u.usd >= 10000)
        .slice(0, 10)
        .map((u) => ({ address: u.address, volume_usd: u.usd, transfers: u.transfers })),
      gone_quiet: users
        .filter((u) => quiet.has(u.address))
        .map((u) => ({ address: u.address, last_seen_block: u.lastBlock, volume_usd_before: u.usd })),
      flagged_funders: v.flaggedFunders.map((f) => ({ ...f, flags: ["scam"] })),
      flagged_funders_scan: { truncated: false, covered_from_block: t.window.fromBlock },
      tokens_not_looked_up: [],
      unpriced_tokens: [],
      truncated: false,
    });
    expect(v.flaggedFunders).toHaveLength(3);
    expect((body.segments as { users: number }[]).map((s) => s.users)).toEqual([10, 10, 11, 3]);
    expect(body.gone_quiet).toHaveLength(v.quiet.length);
  });

  it("takes one address as the venue, without its cluster", async () => {
    const { body } = await paidPost(service, "/api/entity-intel/venue-users", { venue: A("cex-x-hot-2"), token: "USDC", ...window() }, 7);
    const hot2 = truth().transfers.filter((x) => x.token === USDC && (x.from === A("cex-x-hot-2") || x.to === A("cex-x-hot-2")));
    const others = new Set(hot2.map((x) => (x.from === A("cex-x-hot-2") ? x.to : x.from)));
    // Hot wallet 1 sweeping into hot wallet 2 is a user here: the venue is only the one address.
    expect(others.has(A("cex-x-hot-1"))).toBe(true);
    expect(body.venue).toMatchObject({ id: "seeded-exchange-x", addresses: [A("cex-x-hot-2")], class: "cex" });
    expect(body.users_total).toBe(others.size);
  });
});

describe("bad requests are 400s naming the field, never charged", () => {
  const cases: [string, string, () => unknown, string][] = [
    ["portfolio", "a malformed address", () => ({ address: "0x1234" }), "body.address"],
    ["counterparties", "an address that is not hex", () => ({ address: `0x${"zz".repeat(20)}` }), "body.address"],
    ["trace", "a start that is neither address nor hash", () => ({ from: "0xabc" }), "body.from"],
    ["venue-users", "an unknown venue id", () => ({ venue: "no-such-venue" }), "body.venue"],
    ["trace", "max_hops 6", () => ({ from: A("exploiter"), max_hops: 6 }), "body.max_hops"],
    ["exchange-flow", "blocks 50000", () => ({ blocks: 50_000 }), "body.blocks"],
    ["counterparties", "limit 101", () => ({ address: A("holder"), limit: 101 }), "body.limit"],
    ["exchange-flow", "an unsupported token name", () => ({ token: "DAI" }), "body.token"],
    ["portfolio", "a to_block after the head", () => ({ address: A("holder"), to_block: 10_000_000 }), "body.to_block"],
    ["use-cases", "an unknown field", () => ({ role: "x", colour: "red" }), "body.colour"],
  ];
  for (const [route, what, input, field] of cases) {
    it(`${route}: ${what}`, async () => {
      const { status, body, spent } = await paidPost(service, `/api/entity-intel/${route}`, input(), 7);
      expect(status).toBe(400);
      expect(spent).toBe(0n);
      const error = (body as { error: { code: string; details: { fields: { field: string }[] } } }).error;
      expect(error.code).toBe("invalid_request");
      expect(error.details.fields.map((f) => f.field)).toContain(field);
    });
  }
});

describe("budgets and a picky chain node", () => {
  const started: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.close()));
  });

  it("a trace whose log budget runs out says truncated and marks the unexpanded nodes budget; charged for what it answers", async () => {
    const limited = await startTestService({ config: testConfig({ ENTITY_INTEL_MAX_LOGS: "1" }) });
    started.push(limited);
    const t = truth().trace;
    const { status, body, spent } = await paidPost(limited, "/api/entity-intel/trace", { from: t.origin, max_hops: 4, ...window() });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    expect(body).toMatchObject({
      truncated: true,
      hops: [{ hop: 1, edges: [edge(t.hops[0]?.[0] as Edge)] }],
      nodes: [node(A("exploiter"), 0, null), node(A("hop-1"), 1, "budget")],
      reached: reached({ budget: 1 }),
      // The exploiter's two transfers (the hop and the dust) were read before the budget was checked again.
      budget: { logs_read: 2, ms: expect.any(Number), max_logs: 1, max_ms: 20000 },
    });
  });

  it("a trace whose onward transfers are all in tokens past the price cap says tokens_not_priced, not no_further_transfers, and lists them", async () => {
    // With no token priced, the exploiter's 80,000 USDC onward transfer cannot be valued: the
    // trace must not call the exploiter a dead end.
    const config = testConfig();
    const capped = await startTestService({ config, analytics: { mode: "local", upstreams: config.upstreams, pricedTokens: 0 } });
    started.push(capped);
    const t = truth().trace;
    const { status, body, spent } = await paidPost(capped, "/api/entity-intel/trace", { from: t.origin, max_hops: 4, ...window() });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    expect(body).toMatchObject({
      hops: [{ hop: 1, edges: [] }],
      nodes: [node(A("exploiter"), 0, "tokens_not_priced")],
      reached: reached({ tokens_not_priced: 1 }),
      truncated: false,
      tokens_not_looked_up: [USDC],
    });
  });

  /** A service reading chunks of `chunkSize` blocks whose entity answers may read `maxLogs` transfers. */
  async function budgeted(chunkSize: number, maxLogs: number): Promise<RunningService> {
    const config = testConfig();
    const limited = await startTestService({
      config,
      analytics: { mode: "local", upstreams: config.upstreams, scanner: { chunkSize }, entityBudget: { maxLogs, maxMs: 60_000 } },
    });
    started.push(limited);
    return limited;
  }

  /** The aligned chunks of `size` blocks from `from` to `to`, newest first, as [first, last] blocks. */
  function chunksOf(size: number, from: number, to: number): [number, number][] {
    const out: [number, number][] = [];
    for (let end = to; end >= from; ) {
      const start = Math.max(from, Math.floor(end / size) * size);
      out.push([start, end]);
      end = start - 1;
    }
    return out;
  }

  it("exchange-flow past its log budget stops within one chunk of it, covers the newest part of the window and says from which block", async () => {
    const chunk = 25;
    const maxLogs = 2;
    const limited = await budgeted(chunk, maxLogs);
    const t = truth();
    const { status, body, spent } = await paidPost(limited, "/api/entity-intel/exchange-flow", { ...window() });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    const venueClass = new Map<string, { id: string; cls: string }>();
    for (const v of t.venues) for (const a of v.addresses) venueClass.set(a, { id: v.id, cls: v.class });
    // The transfers the two queries (USDC from a venue, USDC to a venue) find in a range: one between two venues is found by both.
    const usdcOfVenues = t.transfers.filter((x) => x.token === USDC && (venueClass.has(x.from) || venueClass.has(x.to)));
    const logsIn = ([from, to]: [number, number]) =>
      usdcOfVenues
        .filter((x) => x.block >= from && x.block <= to)
        .reduce((n, x) => n + (venueClass.has(x.from) ? 1 : 0) + (venueClass.has(x.to) ? 1 : 0), 0);
    const covered = body.covered_from_block as number;
    expect(body).toMatchObject({ truncated: true, from_block: t.window.fromBlock, to_block: t.window.toBlock });
    expect(covered).toBeGreaterThan(t.window.fromBlock);
    expect(covered).toBeLessThanOrEqual(t.window.toBlock);
    expect(covered % chunk).toBe(0);
    // Every chunk from covered_from_block on was read, and at most one older chunk besides: the
    // budget was checked before each request, so it was passed by at most one chunk's transfers.
    const read = chunksOf(chunk, Math.max(t.window.fromBlock, covered - chunk), t.window.toBlock);
    const oneChunk = Math.max(...read.map(logsIn));
    const logsRead = (body.budget as { logs_read: number }).logs_read;
    expect(logsRead).toBeGreaterThanOrEqual(logsIn([covered, t.window.toBlock]));
    expect(logsRead).toBeLessThanOrEqual(maxLogs + oneChunk);
    // A read of the newest eight chunks at once, as before, would have gone well past that.
    expect(logsIn([Math.floor(t.window.toBlock / (8 * chunk)) * 8 * chunk, t.window.toBlock])).toBeGreaterThan(maxLogs + oneChunk);
    const flows: Record<string, { inflow: bigint; outflow: bigint; transfers: number }> = {};
    for (const cls of ["cex", "dex", "bridge"]) flows[cls] = { inflow: 0n, outflow: 0n, transfers: 0 };
    for (const x of usdcOfVenues.filter((x) => x.block >= covered && x.block <= t.window.toBlock)) {
      const from = venueClass.get(x.from);
      const to = venueClass.get(x.to);
      if (from && to && from.id === to.id) continue;
      for (const [side, key] of [
        [to, "inflow"],
        [from, "outflow"],
      ] as const) {
        if (!side) continue;
        flows[side.cls] ??= { inflow: 0n, outflow: 0n, transfers: 0 };
        const row = flows[side.cls] as { inflow: bigint; outflow: bigint; transfers: number };
        row[key] += BigInt(x.value);
        row.transfers++;
      }
    }
    expect(Object.values(flows).some((r) => r.transfers > 0)).toBe(true);
    expect(
      Object.fromEntries(
        Object.entries(body.by_class as Record<string, { inflow: string; outflow: string; transfers: number }>).map(([k, r]) => [
          k,
          [r.inflow, r.outflow, r.transfers],
        ]),
      ),
    ).toEqual(Object.fromEntries(Object.entries(flows).map(([k, r]) => [k, [decimal(r.inflow, 6), decimal(r.outflow, 6), r.transfers]])));
  });

  it("venue-users whose users' read spends the budget says which blocks its users come from, and apart that no funder was read", async () => {
    const chunk = 25;
    const limited = await budgeted(chunk, 20);
    const t = truth();
    const { status, body, spent } = await paidPost(limited, "/api/entity-intel/venue-users", { venue: "seeded-exchange-x", ...window() });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    const covered = body.covered_from_block as number;
    // The users' read covers the newest part of the window: not "nothing read", though users are listed.
    expect(body).toMatchObject({ truncated: true, from_block: t.window.fromBlock, to_block: t.window.toBlock });
    expect(covered).toBeGreaterThan(t.window.fromBlock);
    expect(covered).toBeLessThanOrEqual(t.window.toBlock);
    expect(covered % chunk).toBe(0);
    const x = t.venues.find((v) => v.id === "seeded-exchange-x")?.addresses as Address[];
    const users = new Set(
      t.transfers
        .filter((tr) => tr.block >= covered && tr.block <= t.window.toBlock && x.includes(tr.from) !== x.includes(tr.to))
        .map((tr) => (x.includes(tr.from) ? tr.to : tr.from)),
    );
    expect(users.size).toBeGreaterThan(0);
    expect(body.users_total).toBe(users.size);
    // Nothing was left for the funders' read: it says so, and lists none.
    expect(body.flagged_funders_scan).toEqual({ truncated: true, covered_from_block: t.window.toBlock + 1 });
    expect(body.flagged_funders).toEqual([]);
  });

  it("a node refusing ranges over 20 blocks still gives the exact answer in smaller requests, and is charged", async () => {
    const rpc = await startRpcProxy(devnet().rpcUrl, { maxLogRange: 20 });
    started.push(rpc);
    const picky = await startTestService({ readTransport: http(rpc.url, { retryCount: 0 }) });
    started.push(picky);
    const reference = await paidPost(service, "/api/entity-intel/venue-users", { venue: "seeded-exchange-x", ...window() }, 7);
    const answer = await paidPost(picky, "/api/entity-intel/venue-users", { venue: "seeded-exchange-x", ...window() });
    expect(answer.status).toBe(200);
    expect(answer.spent).toBe(PRICE);
    const strip = (b: Record<string, unknown>) => ({ ...b, budget: undefined });
    expect(strip(answer.body)).toEqual(strip(reference.body));
    expect(rpc.getLogs.some((r) => r.refused)).toBe(true);
    expect(rpc.getLogs.filter((r) => !r.refused).every((r) => r.to - r.from + 1 <= 20)).toBe(true);
  });

  it("a node refusing every range fails the call with 502, not charged", async () => {
    const rpc = await startRpcProxy(devnet().rpcUrl, { maxLogRange: 0 });
    started.push(rpc);
    const refusing = await startTestService({ readTransport: http(rpc.url, { retryCount: 0 }) });
    started.push(refusing);
    const { status, body, spent, headers } = await paidPost(refusing, "/api/entity-intel/counterparties", {
      address: A("holder"),
      ...window(),
    });
    expect(status).toBe(502);
    expect(spent).toBe(0n);
    expect(headers.get("payment-response")).toBeNull();
    expect(body).toMatchObject({ error: { code: "upstream_error", details: { upstream: "rpc" } } });
  });
});
