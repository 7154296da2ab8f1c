/**
 * The status feed through the real service: the document's exact shape and groups from real
 * probes (the devnet, its facilitator, local stand-ins of every upstream, the ledger after a
 * paid call), a stopped stand-in turning its check down at the next generation, the free
 * /status page with one 24-hour chart per group, and two instances on one PostgreSQL serving
 * the same bytes and counting each other.
 */
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { StatusDocument } from "../spec/routes/status.ts";
import { startUpstreamStubs, type UpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { base } from "../src/networks/base.ts";
import { instanceLabel } from "../src/operations/status-feed.ts";
import type { RunningService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { operationsConfig, startDirectoryStub } from "./support/operations.ts";
import { freshPostgresStore } from "./support/postgres.ts";
import { buyerAccount, chainClient, freshSqliteStore, payingFetch, startTestService } from "./support/service.ts";
import type { Stub } from "./support/stub-server.ts";

const check = TypeCompiler.Compile(StatusDocument);
const UPSTREAM_NAMES = ["DexScreener", "DefiLlama TVL", "DefiLlama prices", "Hyperliquid", "CDP Bazaar directory", "x402 List directory"];

async function statusOf(service: RunningService): Promise<{ text: string; doc: StatusDocument }> {
  const res = await fetch(`${service.url}/api/status.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("payment-required")).toBeNull();
  const text = await res.text();
  return { text, doc: JSON.parse(text) as StatusDocument };
}

const groupOf = (doc: StatusDocument, id: string) => {
  const found = doc.groups.find((g) => g.id === id);
  if (!found) throw new Error(`no group ${id}`);
  return found;
};

describe("the status feed of one instance", () => {
  let store: Store;
  let directories: Stub;
  let dexscreener: UpstreamStubs;
  let others: UpstreamStubs;
  let service: RunningService;
  beforeAll(async () => {
    store = await freshSqliteStore();
    directories = await startDirectoryStub();
    // DexScreener alone on its own stand-in, so stopping it stops nothing else.
    dexscreener = await startUpstreamStubs();
    others = await startUpstreamStubs();
    service = await startTestService({
      store,
      instance: "status-test",
      maintenance: true,
      config: operationsConfig(directories, {
        DEXSCREENER_URL: dexscreener.urls.dexscreener,
        DEFILLAMA_URL: others.urls.defillama,
        DEFILLAMA_COINS_URL: others.urls.defillamaCoins,
        HYPERLIQUID_URL: others.urls.hyperliquid,
      }),
    });
  });
  afterAll(async () => {
    await service?.close();
    await store?.close();
    await directories?.close();
    await dexscreener?.close();
    await others?.close();
  });

  it("is generated once at start, before anything asks for it", async () => {
    for (let i = 0; i < 100; i++) {
      const [row] = await store.query<{ n: number }>("select cast(count(*) as integer) as n from status_documents");
      if (row?.n === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const runs = await store.query("select instance, trigger, outcome, detail from job_runs where job = 'status'");
    expect(runs).toEqual([{ instance: "status-test", trigger: "start", outcome: "ok", detail: "overall operational" }]);
  });

  it("has the exact shape and groups, from real probes and the ledger", async () => {
    const paid = await payingFetch(buyerAccount(3))(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tx_hash: `0x${"5a".repeat(32)}` }),
    });
    expect(paid.status).toBe(200);
    const run = await service.jobs.runNow("status");
    expect(run).toMatchObject({ job: "status", instance: "status-test", trigger: "manual", outcome: "ok" });
    const block = Number(await chainClient().getBlockNumber());
    const { doc } = await statusOf(service);

    expect(check.Check(doc), [...check.Errors(doc)].map((e) => `${e.path}: ${e.message}`).join("; ")).toBe(true);
    expect(Object.keys(doc)).toEqual(["generated_at", "next_update_at", "interval_seconds", "overall", "groups"]);
    expect(doc.interval_seconds).toBe(540);
    expect(Date.parse(doc.next_update_at) - Date.parse(doc.generated_at)).toBe(540_000);
    expect(Date.parse(doc.generated_at)).toBeGreaterThanOrEqual(Date.parse(run.started_at) - 1_000);
    expect(Date.parse(doc.generated_at)).toBeLessThanOrEqual(Date.parse(run.finished_at as string) + 1_000);
    expect(doc.overall).toBe("operational");
    expect(doc.groups.map((g) => [g.id, g.name, g.status, g.workers])).toEqual([
      ["api", "API instances", "operational", { total: 1, healthy: 1 }],
      ["chain", "Chain (RPC nodes)", "operational", { total: 1, healthy: 1 }],
      ["payments", "Payments", "operational", { total: 1, healthy: 1 }],
      ["upstreams", "Upstream data APIs", "operational", { total: 6, healthy: 6 }],
      ["jobs", "Scheduled jobs", "operational", { total: 3, healthy: 3 }],
    ]);

    const [api] = groupOf(doc, "api").checks;
    expect(api).toMatchObject({ name: instanceLabel("status-test"), status: "operational" });
    expect(api?.detail).toMatch(/^version 1\.0\.0, started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, last heartbeat (just now|\d+ s ago)$/);

    const [node] = groupOf(doc, "chain").checks;
    expect(node).toMatchObject({ name: "anvil (local chain)", status: "operational" });
    const seen = Number(/^latest block (\d+), 0 behind the best node$/.exec(node?.detail ?? "")?.[1]);
    // Settlements of this file mine blocks; the probe ran before the block number read above.
    expect(seen).toBeLessThanOrEqual(block);
    expect(seen).toBeGreaterThan(block - 5);
    expect(node?.latency_ms).toBeTypeOf("number");

    expect(groupOf(doc, "payments").checks.map((c) => [c.name, c.status, c.detail])).toEqual([
      ["facilitator", "operational", `reachable, supports exact on ${base.id}`],
      ["settlements (last hour)", "operational", "1 settled, 0 failed or unknown"],
    ]);

    const upstreams = groupOf(doc, "upstreams").checks;
    expect(upstreams.map((c) => [c.name, c.status])).toEqual(UPSTREAM_NAMES.map((n) => [n, "operational"]));
    for (const c of upstreams) expect(c.detail).toBe(`answered; last success ${doc.generated_at.replace(/\.\d{3}Z$/, "Z")} (just now)`);

    const jobs = groupOf(doc, "jobs").checks;
    expect(jobs.map((c) => [c.name, c.status])).toEqual([
      ["Trust crawl", "operational"],
      ["Ledger upkeep", "operational"],
      ["Status generator", "operational"],
    ]);
    expect(jobs[0]?.detail).toBe("not scheduled: CRAWL_INTERVAL_MINUTES is 0 on this deployment");
    expect(jobs[1]?.detail).toMatch(new RegExp(`^every 60 s; last run \\S+Z \\(.+\\) on ${instanceLabel("status-test")}: ok$`));
    expect(jobs[2]?.detail).toMatch(
      new RegExp(
        `^every 540 s; last run \\S+Z \\(.+\\) on ${instanceLabel("status-test")}: ok; this document is its current run on ${instanceLabel("status-test")}$`,
      ),
    );
  });

  it("turns a stopped upstream stand-in's check down, and its group degraded, at the next generation", async () => {
    const before = (await statusOf(service)).doc;
    await dexscreener.close();
    // Served from the store: nothing changes until the next generation.
    expect((await statusOf(service)).doc).toEqual(before);
    await service.jobs.runNow("status");
    const { doc } = await statusOf(service);
    expect(doc.generated_at > before.generated_at).toBe(true);
    const upstreams = groupOf(doc, "upstreams");
    expect([upstreams.status, upstreams.workers]).toEqual(["degraded", { total: 6, healthy: 5 }]);
    const [dex, ...rest] = upstreams.checks;
    expect(dex?.name).toBe("DexScreener");
    expect(dex?.status).toBe("down");
    expect(dex?.detail).toMatch(
      new RegExp(
        `^failed: dexscreener is unreachable; retry shortly\\.; last success ${before.generated_at.replace(/\.\d{3}Z$/, "Z")} \\(.+\\)$`,
      ),
    );
    expect(rest.map((c) => c.status)).toEqual(["operational", "operational", "operational", "operational", "operational"]);
    expect(doc.overall).toBe("degraded");
    expect(groupOf(doc, "api").status).toBe("operational");
  });

  it("renders /status with one 24-hour chart per group, sized, and no script", async () => {
    const res = await fetch(`${service.url}/status`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toContain("<script");
    const charts = [
      ...html.matchAll(/<svg class="status-chart" role="img" aria-label="([^"]+)" viewBox="0 0 960 40" width="960" height="40"/g),
    ];
    expect(charts.map((m) => m[1]?.split(",")[0])).toEqual([
      "API instances",
      "Chain (RPC nodes)",
      "Payments",
      "Upstream data APIs",
      "Scheduled jobs",
    ]);
    // Three documents so far, all in the newest quarter-hour or the one before: the upstreams bar shows the worst, degraded.
    expect(charts[3]?.[1]).toMatch(/of [12] quarter-hours measured in the last 24 hours: [01] operational, 1 degraded, 0 down$/);
    const upstreamChart = html.slice(charts[3]?.index, html.indexOf("</svg>", charts[3]?.index));
    expect(upstreamChart.match(/<rect /g)).toHaveLength(96);
    expect(upstreamChart).toContain('class="bar degraded"');
  });
});

const databaseUrl = inject("databaseUrl");
describe.runIf(databaseUrl)("two instances on one PostgreSQL", () => {
  let store: Store;
  let directories: Stub;
  let a: RunningService;
  let b: RunningService;
  beforeAll(async () => {
    store = await freshPostgresStore(databaseUrl as string);
    directories = await startDirectoryStub();
    const config = operationsConfig(directories);
    a = await startTestService({ store, config, instance: "instance-a", maintenance: true });
    b = await startTestService({ store, config, instance: "instance-b", maintenance: true });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store?.close();
    await directories?.close();
  });

  it("serve identical bytes and count two workers", async () => {
    await b.jobs.runNow("status");
    const [one, two] = await Promise.all([statusOf(a), statusOf(b)]);
    expect(one.text).toBe(two.text);
    expect(groupOf(one.doc, "api").workers).toEqual({ total: 2, healthy: 2 });
    expect(
      groupOf(one.doc, "api")
        .checks.map((c) => c.name)
        .sort(),
    ).toEqual([instanceLabel("instance-a"), instanceLabel("instance-b")].sort());
    const [row] = await store.query<{ instance: string }>("select instance from status_documents order by generated_at desc limit 1");
    expect(row?.instance).toBe("instance-b");

    // The other instance generates the next one; both serve it.
    await a.jobs.runNow("status");
    const [three, four] = await Promise.all([statusOf(a), statusOf(b)]);
    expect(three.text).toBe(four.text);
    expect(three.doc.generated_at > one.doc.generated_at).toBe(true);
  });
});
