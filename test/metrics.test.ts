/**
 * `GET /metrics` (src/metrics/metrics.ts, src/server/middleware/metrics.ts): the exposition
 * parses with a strict Prometheus text parser, which first shows it refuses broken input; one
 * paid call is counted as settled with its revenue and the facilitator's verify and settle
 * times; the endpoint answers loopback, or a forwarded client only with METRICS_TOKEN.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { createMetrics, observedCrawl } from "../src/metrics/metrics.ts";
import { type RunningService, startService } from "../src/server/service.ts";
import { parsePrometheusText, sampleValue } from "./support/prometheus-text.ts";
import { buyerAccount, payingFetch, productionConfig, startTestService, testStore, usdcBalance } from "./support/service.ts";

describe("the strict parser", () => {
  const valid = [
    "# HELP h_seconds Time.",
    "# TYPE h_seconds histogram",
    'h_seconds_bucket{le="0.1"} 1',
    'h_seconds_bucket{le="+Inf"} 2',
    "h_seconds_sum 0.3",
    "h_seconds_count 2",
    "# TYPE c_total counter",
    'c_total{a="x\\"y",b="z"} 3',
    "",
  ].join("\n");

  it("reads a valid exposition", () => {
    const families = parsePrometheusText(valid);
    expect(families.get("h_seconds")?.type).toBe("histogram");
    expect(sampleValue(families, "c_total", { a: 'x"y', b: "z" })).toBe(3);
    expect(sampleValue(families, "h_seconds_bucket", { le: "+Inf" })).toBe(2);
  });

  it("refuses what a Prometheus server would refuse or misread", () => {
    const broken: [string, string][] = [
      [valid.replace('le="+Inf"} 2', 'le="+Inf"} 0'), "not cumulative"],
      [valid.replace("h_seconds_count 2", "h_seconds_count 3"), "differs from the +Inf bucket"],
      [`${valid}c_total{a="x\\"y",b="z"} 4\n`, "given twice"],
      [valid.replace("c_total{a", "c_total{9a"), "bad label name"],
      [valid.replace('\\"y"', '\\qy"'), "bad escape"],
      [valid.replace("} 3", "} three"), "bad value"],
      [`${valid}# TYPE c_total counter\n`, "after its samples"],
      [valid.replace("} 3", "} -1"), "counter c_total is -1"],
      [valid.slice(0, -1), "end with a newline"],
      [`${valid}h_seconds_sum 1\n`, "not together"],
    ];
    for (const [text, problem] of broken) expect(() => parsePrometheusText(text), problem).toThrow(problem);
  });
});

describe("a local service", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("counts one paid call: challenged, then settled with its revenue, verify and settle times", async () => {
    const buyer = buyerAccount(2);
    const before = await usdcBalance(buyer.address);
    const res = await payingFetch(buyer)(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tx_hash: `0x${"5e".repeat(32)}` }),
    });
    expect(res.status).toBe(200);
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
    expect((await fetch(`${service.url}/api/health`)).status).toBe(200);

    const answer = await fetch(`${service.url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const families = parsePrometheusText(await answer.text());
    const route = "POST /api/payment-verify";
    expect(sampleValue(families, "x402_paid_calls_total", { route, outcome: "challenged" })).toBe(1);
    expect(sampleValue(families, "x402_paid_calls_total", { route, outcome: "settled" })).toBe(1);
    expect(sampleValue(families, "x402_revenue_atomic_usdc_total", { route })).toBe(100_000);
    expect(sampleValue(families, "x402_verify_duration_seconds_count")).toBe(1);
    expect(sampleValue(families, "x402_settle_duration_seconds_count")).toBe(1);
    expect(sampleValue(families, "x402_settle_duration_seconds_sum")).toBeGreaterThan(0);
    expect(sampleValue(families, "http_requests_total", { route: "/api/payment-verify", method: "POST", status: "402" })).toBe(1);
    expect(sampleValue(families, "http_requests_total", { route: "/api/payment-verify", method: "POST", status: "200" })).toBe(1);
    expect(sampleValue(families, "http_requests_total", { route: "/api/health", method: "GET", status: "200" })).toBe(1);
    expect(sampleValue(families, "store_query_duration_seconds_count", { statement: "update" })).toBeGreaterThan(0);
    expect(families.get("rate_limit_refusals_total")?.type).toBe("counter");
    expect(families.get("trust_crawl_origins")?.type).toBe("gauge");
    expect(families.get("process_resident_memory_bytes")?.type).toBe("gauge");
  });
});

describe("behind a proxy (production mode)", () => {
  const token = "metrics-token-0123456789";
  let service: RunningService;
  beforeAll(async () => {
    const config = productionConfig({ METRICS_TOKEN: token });
    service = await startService({ config, store: await testStore(), maintenance: false });
  });
  afterAll(() => service.close());

  it("serves a forwarded client only with the bearer token, and the proxy host itself without", async () => {
    const get = (headers: Record<string, string>) => fetch(`${service.url}/metrics`, { headers }).then((r) => r.status);
    const forwarded = { "X-Forwarded-For": "203.0.113.5" };
    expect(await get(forwarded)).toBe(404);
    expect(await get({ ...forwarded, Authorization: "Bearer metrics-token-wrong-guess" })).toBe(404);
    expect(await get({ ...forwarded, Authorization: `Bearer ${token}` })).toBe(200);
    expect(await get({})).toBe(200);
  });

  it("refuses a too-short METRICS_TOKEN at start", () => {
    expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow("METRICS_TOKEN must be at least 16 characters (its value is not shown)");
  });
});

describe("a trust crawl's metrics", () => {
  it("follow its progress while it runs and count how it ended", async () => {
    const metrics = createMetrics();
    /** The crawl metrics as "name{labels}" → value. */
    const read = async () => {
      const all = await Promise.all([metrics.crawlRunning, metrics.crawlOrigins, metrics.crawlRuns].map((m) => m.get()));
      return Object.fromEntries(all.flatMap((m) => m.values.map((v) => [`${m.name}${JSON.stringify(v.labels)}`, v.value] as const)));
    };
    let during: Record<string, number> = {};
    const result = await observedCrawl(metrics, async (onProgress) => {
      onProgress(3, 7);
      during = await read();
      onProgress(7, 7);
      return "crawled";
    });
    expect(result).toBe("crawled");
    expect(during).toEqual({
      "trust_crawl_running{}": 1,
      'trust_crawl_origins{"state":"done"}': 3,
      'trust_crawl_origins{"state":"total"}': 7,
    });
    await expect(
      observedCrawl(metrics, async () => {
        throw new Error("catalogue unreachable");
      }),
    ).rejects.toThrow("catalogue unreachable");
    // The failed run started from none done; the total is the last one reported.
    expect(await read()).toEqual({
      "trust_crawl_running{}": 0,
      'trust_crawl_origins{"state":"done"}': 0,
      'trust_crawl_origins{"state":"total"}': 7,
      'trust_crawl_runs_total{"outcome":"done"}': 1,
      'trust_crawl_runs_total{"outcome":"failed"}': 1,
    });
  });
});
