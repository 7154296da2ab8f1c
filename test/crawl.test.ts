/**
 * The trust crawl over 200 local fake origins spread across 127.0.0.2-9 and many ports, listed
 * by local stand-ins of both directories: every origin gets the expected score, verdict and
 * penalties; coverage, statistics and common penalties are exact; the paid leaderboard routes,
 * the free preview and the reader page show them; a second run adds history; the service
 * crawls on its own schedule; and the same SQL runs on PostgreSQL when one is available.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createCatalogue } from "../src/intel/catalogue.ts";
import { RULES_VERSION } from "../src/intel/conformance.ts";
import { type CrawlResult, runCrawl } from "../src/intel/crawl.ts";
import { originHistory } from "../src/intel/leaderboard.ts";
import { PENALTIES, type PenaltyId, type Verdict } from "../src/intel/trust-score.ts";
import { type SellerKind, startSellers } from "../src/local/sellers/demo-sellers.ts";
import {
  cdpItems,
  type ListedEndpoint,
  type LocalDirectories,
  startLocalDirectories,
  x402ListItems,
} from "../src/local/stubs/directory-stubs.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { createSafeFetcher } from "../src/outbound/safe-fetch.ts";
import type { RunningService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { cdpBazaarDirectory } from "../src/upstreams/directory-cdp.ts";
import { x402ListDirectory } from "../src/upstreams/directory-x402-list.ts";
import { EXPECTED_TRUST, freshAddress, payUsdc } from "./support/fake-sellers.ts";
import { freshPostgresStore } from "./support/postgres.ts";
import {
  buyerAccount,
  chainClient,
  devnet,
  freshSqliteStore,
  payingFetch,
  startTestService,
  testConfig,
  testStore,
  usdcBalance,
} from "./support/service.ts";

/** How many origins of each kind; 10 of the conforming ones are paid to by real transfers. */
const MIX: readonly [SellerKind, number][] = [
  ["conforming_v2", 60],
  ["v1_only", 25],
  ["body_only", 25],
  ["decimal_amount", 15],
  ["missing_pay_to", 15],
  ["free_200", 20],
  ["expensive", 20],
  ["slow", 10],
  ["dead", 10],
];
const FUNDED = 10;

const quietPayTo = freshAddress();
const fundedPayTo = freshAddress();
const log = createLogger("silent");

interface Origin {
  origin: string;
  kind: SellerKind;
  funded: boolean;
  endpoints: number;
  expected: { score: number; verdict: Verdict; penalties: PenaltyId[] };
}

let origins: Origin[] = [];
let closeSellers: () => Promise<void>;
let directories: LocalDirectories;
let small: LocalDirectories;
let store: Store;

/** Origins 0, 3, 6... also list a second endpoint (x402 List only, no method): the representative must stay /api/data. */
function listings(sellers: { url: string; origin: string }[]): { cdp: ListedEndpoint[]; list: ListedEndpoint[] } {
  const cdp: ListedEndpoint[] = [];
  const list: ListedEndpoint[] = [];
  for (const [i, s] of sellers.entries()) {
    const main: ListedEndpoint = {
      url: s.url,
      method: "GET",
      amount: "10000",
      payTo: quietPayTo,
      description: `seller ${i}`,
      name: `seller ${i}`,
    };
    cdp.push(main);
    if (i % 2 === 0) list.push(main);
    if (i % 3 === 0) list.push({ ...main, url: `${s.origin}/api/more`, description: `more ${i}` });
  }
  return { cdp, list };
}

// Sellers and checker share this process: signing for 32 origins at once on a busy machine can hold an answer back past a second.
const fetcher = createSafeFetcher({ allowLoopback: true, connectTimeoutMs: 1_500, totalTimeoutMs: 2_500 });
const crawl = (s: Store, dirs: LocalDirectories, trigger = "test") =>
  runCrawl({
    store: s,
    catalogue: createCatalogue([cdpBazaarDirectory(dirs.cdpUrl), x402ListDirectory(dirs.x402ListUrl)]),
    fetcher,
    chain: { client: chainClient(), network: base.id, usdc: devnet().usdc },
    concurrency: 32,
    originTimeoutMs: 3_000,
    trigger,
    log,
  });

beforeAll(async () => {
  const specs = MIX.flatMap(([kind, n]) => Array.from({ length: n }, (_, i) => ({ kind, funded: kind === "conforming_v2" && i < FUNDED })));
  const started = await startSellers(
    specs.map((s, i) => ({ kind: s.kind, host: `127.0.0.${2 + (i % 8)}`, payTo: s.funded ? fundedPayTo : quietPayTo, slowMs: 5_000 })),
  );
  closeSellers = started.close;
  origins = started.sellers.map((seller, i) => {
    const spec = specs[i] as (typeof specs)[number];
    return {
      origin: seller.origin,
      kind: spec.kind,
      funded: spec.funded,
      endpoints: i % 3 === 0 ? 2 : 1,
      expected: spec.funded ? { score: 95, verdict: "pay", penalties: ["few_payers"] } : EXPECTED_TRUST[spec.kind],
    };
  });
  const { cdp, list } = listings(started.sellers);
  directories = await startLocalDirectories({ cdp: cdpItems(cdp), x402List: x402ListItems(list) });
  const few = listings(started.sellers.slice(0, 12));
  small = await startLocalDirectories({ cdp: cdpItems(few.cdp), x402List: x402ListItems(few.list) });
  await payUsdc(fundedPayTo, [
    { buyer: 4, usdc: "0.01" },
    { buyer: 4, usdc: "0.01" },
    { buyer: 5, usdc: "0.01" },
  ]);
  store = await testStore();
});
afterAll(async () => {
  await directories?.close();
  await small?.close();
  await closeSellers?.();
});

describe("a crawl of 200 origins", () => {
  let first: CrawlResult;
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("has no leaderboard before the first crawl (503, not charged)", async () => {
    const preview = await fetch(`${service.url}/api/trust-leaderboard/preview`);
    expect(preview.status).toBe(503);
    const buyer = buyerAccount(4);
    const before = await usdcBalance(buyer.address);
    const paid = await payingFetch(buyer)(`${service.url}/api/trust-leaderboard`);
    expect(paid.status).toBe(503);
    expect(await usdcBalance(buyer.address)).toBe(before);
    const page = await fetch(`${service.url}/leaderboard`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("No crawl has completed yet.");
  });

  it("covers every origin with the expected coverage and statistics", async () => {
    const started = Date.now();
    first = await crawl(store, directories);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(origins).toHaveLength(200);
    expect(new Set(origins.map((o) => new URL(o.origin).hostname)).size).toBe(8);
    expect(first).toMatchObject({
      origins_in_catalogue: 200,
      origins_total: 200,
      origins_scored: 180,
      unreachable: 20,
      verdicts: { pay: 10, pay_with_caution: 75, avoid: 115 },
      // Scores of the 180 that answered: 10x35, 20x15, 25x25, 34x20, 71x25, 85x50, 95x10 (the $25 sellers are refused by the default client's $1 cap).
      score_stats: { median: 34, mean: 49.6, p90: 85, unreachable: 20 },
      sources: { cdp_bazaar: "ok", x402_list: "ok" },
    });
  });

  it("gives every origin the expected score, verdict, penalties and endpoint count", async () => {
    const rows = await store.query<{
      origin: string;
      endpoint: string;
      score: number;
      verdict: string;
      penalties: PenaltyId[];
      endpoints: number;
    }>("select origin, endpoint, score, verdict, penalties, endpoints from trust_rows where run_id = $1", [first.run_id]);
    expect(rows).toHaveLength(200);
    const byOrigin = new Map(rows.map((r) => [r.origin, r]));
    for (const o of origins) {
      const row = byOrigin.get(o.origin);
      expect({
        kind: o.kind,
        score: row?.score,
        verdict: row?.verdict,
        penalties: row?.penalties,
        endpoints: row?.endpoints,
        endpoint: row?.endpoint,
      }).toEqual({
        kind: o.kind,
        ...o.expected,
        endpoints: o.endpoints,
        endpoint: `${o.origin}/api/data`,
      });
    }
  });

  it("shows the free preview: the top 10, coverage and common penalties, and nothing more", async () => {
    const res = await fetch(`${service.url}/api/trust-leaderboard/preview`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    const top = origins
      .filter((o) => o.funded)
      .map((o) => o.origin)
      .sort();
    expect(doc.free_preview_top_10).toEqual(
      top.map((origin) => ({ origin, score: 95, verdict: "pay", endpoints: origins.find((o) => o.origin === origin)?.endpoints })),
    );
    expect(doc.coverage).toEqual({
      origins_in_catalogue: 200,
      origins_scored: 180,
      origins_total: 200,
      verdicts: { pay: 10, pay_with_caution: 75, avoid: 115 },
    });
    expect(doc.score_stats).toEqual({ median: 34, mean: 49.6, p90: 85, unreachable: 20 });
    const t = (id: PenaltyId) => PENALTIES[id].text;
    expect(doc.common_penalties).toEqual({
      [t("no_usdc_received")]: 135,
      [t("not_payable")]: 55,
      [t("no_header")]: 25,
      [t("no_openapi")]: 45,
      [t("no_well_known")]: 45,
      [t("no_bazaar")]: 25,
      [t("not_v2")]: 25,
      [t("not_402")]: 20,
      [t("price_very_high")]: 20,
      [t("refused_by_spend_controls")]: 20,
      [t("unreachable")]: 20,
      [t("bad_amount")]: 15,
      [t("no_pay_to")]: 15,
      [t("bad_accepts")]: 15,
      [t("reputation_not_measured")]: 15,
      [t("few_payers")]: 10,
    });
    expect(Object.keys(doc).sort()).toEqual(
      [
        "caveat",
        "common_penalties",
        "coverage",
        "endpoints",
        "free_preview_top_10",
        "freshness",
        "not_checked",
        "price_usdc_per_call",
        "provider",
        "score_stats",
        "verified_by_purchase",
        "what_it_is",
      ].sort(),
    );
    expect(doc.price_usdc_per_call).toBe(0.05);
    expect(doc.what_it_is).toContain("does not answer an unpaid call with HTTP 402 -60*");
    expect(doc.what_it_is).toContain(`${PENALTIES.not_payable.text} -50*`);
    expect(doc.what_it_is).toContain(`Rules version ${RULES_VERSION};`);
    expect(doc.endpoints).toEqual([
      { route: "GET /api/trust-leaderboard", price_usd: 0.05 },
      { route: "POST /api/trust-leaderboard", price_usd: 0.05 },
      { route: "GET /api/trust-leaderboard/preview", price_usd: 0 },
      { route: "POST /api/x402-trust", price_usd: 0.05 },
    ]);
  });

  it("sells the rows, worst first, for 0.05", async () => {
    const buyer = buyerAccount(4);
    const before = await usdcBalance(buyer.address);
    const res = await payingFetch(buyer)(`${service.url}/api/trust-leaderboard?limit=5&order=worst`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      order: string;
      limit: number;
      rows_matching: number;
      rows: { rank: number; score: number; verdict: string; reachable: boolean }[];
      run: { runs_total: number };
    };
    expect(doc).toMatchObject({ order: "worst", limit: 5, rows_matching: 200, run: { runs_total: 1, rules_version: 3 } });
    expect(doc.rows.map((r) => [r.rank, r.score, r.verdict, r.reachable])).toEqual(
      [196, 197, 198, 199, 200].reverse().map((rank) => [rank, 0, "avoid", false]),
    );
    expect(await usdcBalance(buyer.address)).toBe(before - 50_000n);
  });

  it("filters rows by verdict and minimum score", async () => {
    const res = await payingFetch(buyerAccount(5))(`${service.url}/api/trust-leaderboard`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ verdict: "pay", min_score: 90, limit: 50 }),
    });
    const doc = (await res.json()) as { rows_matching: number; rows: Record<string, unknown>[] };
    expect(doc.rows_matching).toBe(10);
    const first = doc.rows[0] as Record<string, unknown>;
    expect(first).toMatchObject({
      rank: 1,
      score: 95,
      verdict: "pay",
      previous_score: null,
      reachable: true,
      status: 402,
      payable: true,
      conformant: true,
      discoverable: true,
      failed_checks: [],
      penalties: [PENALTIES.few_payers.text],
      price_usd: 0.01,
      pay_to: fundedPayTo,
      network: base.id,
      x402_version: 2,
      method: "GET",
      reputation: { measured: true, transfers: 3, distinct_payers: 2 },
    });
    const caution = await payingFetch(buyerAccount(5))(`${service.url}/api/trust-leaderboard`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ verdict: "pay_with_caution", min_score: 81, limit: 500 }),
    });
    expect(((await caution.json()) as { rows_matching: number }).rows_matching).toBe(50); // the 85s
  });

  it("shows the page to readers", async () => {
    const res = await fetch(`${service.url}/leaderboard`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const top = origins
      .filter((o) => o.funded)
      .map((o) => o.origin)
      .sort()[0] as string;
    expect(html).toContain(top);
    expect(html).toContain("200 origins probed");
    expect(html).toContain(PENALTIES.no_usdc_received.text);
    expect(html).toContain(PENALTIES.not_payable.text);
    expect(html).toContain("A standard client can pay");
  });

  it("adds history on a second run", async () => {
    const second = await crawl(store, directories);
    expect(second.run_id).toBeGreaterThan(first.run_id);
    expect(second.verdicts).toEqual(first.verdicts);
    const [{ n }] = (await store.query<{ n: number }>("select cast(count(*) as integer) as n from trust_rows where run_id in ($1, $2)", [
      first.run_id,
      second.run_id,
    ])) as [{ n: number }];
    expect(n).toBe(400);
    const runs = await store.query<{ id: string | number; rules_version: number }>(
      "select id, rules_version from trust_runs where id in ($1, $2) order by id",
      [first.run_id, second.run_id],
    );
    expect(runs.map((r) => [Number(r.id), r.rules_version])).toEqual([
      [first.run_id, RULES_VERSION],
      [second.run_id, RULES_VERSION],
    ]);
    const some = origins[7] as Origin;
    expect((await originHistory(store, some.origin)).map((h) => [h.run_id, h.rules_version, h.score])).toEqual([
      [second.run_id, RULES_VERSION, some.expected.score],
      [first.run_id, RULES_VERSION, some.expected.score],
    ]);
    const res = await payingFetch(buyerAccount(4))(`${service.url}/api/trust-leaderboard?limit=3`);
    const doc = (await res.json()) as { run: { id: number; runs_total: number }; rows: { score: number; previous_score: number | null }[] };
    expect(doc.run).toMatchObject({ id: second.run_id, runs_total: 2 });
    expect(doc.rows.map((r) => [r.score, r.previous_score])).toEqual([
      [95, 95],
      [95, 95],
      [95, 95],
    ]);
  });
});

describe("the scheduled crawl inside the service", () => {
  it("crawls soon after start when no recent run exists, then waits for the interval", async () => {
    const own = await freshSqliteStore();
    const config = testConfig();
    const service = await startTestService({
      store: own,
      config: {
        ...config,
        intel: {
          ...config.intel,
          cdpDiscoveryUrl: small.cdpUrl,
          x402ListUrl: small.x402ListUrl,
          crawlIntervalMinutes: 60,
          crawlOriginTimeoutSeconds: 2,
        },
      },
      crawlAllowLoopback: true,
    });
    try {
      let runs: { trigger: string; status: string; summary: { origins_total: number } | null }[] = [];
      for (let i = 0; i < 100 && !runs.some((r) => r.status === "done"); i++) {
        await new Promise((r) => setTimeout(r, 100));
        runs = await own.query("select trigger, status, summary from trust_runs");
      }
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ trigger: "schedule", status: "done", summary: { origins_total: 12 } });
      // Caller-chosen URLs stay refused: only the crawl was allowed loopback.
      const res = await payingFetch(buyerAccount(5))(`${service.url}/api/x402-check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: `${origins[0]?.origin}/api/data` }),
      });
      expect(res.status).toBe(400);
    } finally {
      await service.close();
      await own.close();
    }
  });
});

const databaseUrl = inject("databaseUrl");
describe.runIf(databaseUrl)("on PostgreSQL", () => {
  it("records runs and rows, and reads the leaderboard back, with the same SQL", async () => {
    const pg = await freshPostgresStore(databaseUrl as string);
    try {
      const one = await crawl(pg, small);
      const two = await crawl(pg, small);
      expect(two.verdicts).toEqual(one.verdicts);
      expect(one.origins_total).toBe(12);
      const { fullLeaderboard, documentContext } = await import("../src/intel/leaderboard.ts");
      const doc = await fullLeaderboard(pg, documentContext({ version: "test", publicUrl: undefined }), { limit: 500, order: "best" });
      expect(doc.run).toMatchObject({ id: two.run_id, runs_total: 2 });
      expect(doc.rows).toHaveLength(12);
      const byOrigin = new Map(origins.slice(0, 12).map((o) => [o.origin, o]));
      for (const row of doc.rows) {
        expect([row.score, row.previous_score, row.verdict]).toEqual([
          byOrigin.get(row.origin)?.expected.score,
          byOrigin.get(row.origin)?.expected.score,
          byOrigin.get(row.origin)?.expected.verdict,
        ]);
      }
    } finally {
      await pg.close();
    }
  });
});
