/**
 * Directory search: both adapters read every documented item variant, the two directories
 * are paged through and merged by URL (an endpoint listed by both shows both sources), each
 * directory's status is reported when it is down, slow or malformed, and the paid
 * `x402-directory` route filters and limits, charging only when a directory answered.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCatalogue, readDirectories, searchCatalogue } from "../src/intel/catalogue.ts";
import {
  cdpItems,
  type ListedEndpoint,
  type LocalDirectories,
  startLocalDirectories,
  x402ListItems,
} from "../src/local/stubs/directory-stubs.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { cdpBazaarDirectory, cdpItemToEntry } from "../src/upstreams/directory-cdp.ts";
import { parseListedPrice, x402ListDirectory, x402ListItemToEntry } from "../src/upstreams/directory-x402-list.ts";
import { buyerAccount, payingFetch, startTestService, testConfig, usdcBalance } from "./support/service.ts";
import { type Stub, startStub } from "./support/stub-server.ts";

const USDC = base.usdc.address;

/** The origin of a port that was bound and released: connections to it are refused. */
let closed: string;
beforeAll(async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closed = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** The item of the CDP documentation, as published. */
const documentedCdpItem = {
  resource: "https://api.example.com/weather/forecast",
  description: "Real-time weather forecast data.",
  type: "http",
  x402Version: 2,
  lastUpdated: "2024-01-15T10:30:00Z",
  accepts: [
    {
      scheme: "exact",
      network: base.id,
      amount: "1000000",
      payTo: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
      asset: USDC,
      maxTimeoutSeconds: 60,
    },
  ],
  extensions: { bazaar: { info: { input: { type: "http", method: "GET" } }, schema: {} } },
  quality: { l30DaysTotalCalls: 42, l30DaysUniquePayers: 15, lastCalledAt: "2024-01-15T10:30:00Z" },
  serviceName: "Weather API",
  tags: ["weather", "data"],
  iconUrl: "https://example.com/icon.png",
};

/** The item of the x402 List documentation, as published. */
const documentedListItem = {
  slug: "weather",
  name: "Weather API",
  description: "Forecasts",
  url: "https://API.example.com/weather/forecast/",
  network: "base",
  status: "online",
  endpoints: 5,
  price_per_request: "$0.01",
  uptime_24h: 99.8,
  tags: [],
};

describe("adapters", () => {
  it("read the documented CDP item", () => {
    expect(cdpItemToEntry(documentedCdpItem)).toEqual({
      url: "https://api.example.com/weather/forecast",
      origin: "https://api.example.com",
      name: "Weather API",
      description: "Real-time weather forecast data.",
      network: base.id,
      price_usd: 1,
      pay_to: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
      method: "GET",
      tags: ["weather", "data"],
    });
  });

  it("read the v1 variant (maxAmountRequired, network base, unix lastUpdated, description and method on the option)", () => {
    const [, v1] = cdpItems([
      { url: "https://a.example/x", method: "GET", amount: "1", payTo: "0x1", description: "-", name: "-" },
      {
        url: "https://b.example/prices",
        method: "POST",
        amount: "5000",
        payTo: "0x00000000000000000000000000000000000000b1",
        description: "Token prices",
        name: "Prices",
      },
    ]);
    expect(v1).toMatchObject({ x402Version: 1, lastUpdated: 1768473000, accepts: [{ network: "base", maxAmountRequired: "5000" }] });
    expect(cdpItemToEntry(v1)).toEqual({
      url: "https://b.example/prices",
      origin: "https://b.example",
      name: null,
      description: "Token prices",
      network: base.id,
      price_usd: 0.005,
      pay_to: "0x00000000000000000000000000000000000000b1",
      method: "POST",
      tags: [],
    });
  });

  it("read the metadata variant and skip items without a usable URL", () => {
    const items = cdpItems(
      [0, 1, 2].map((i) => ({
        url: `https://m.example/${i}`,
        method: "GET" as const,
        amount: "20000",
        payTo: "0xabc",
        description: `d${i}`,
        name: `n${i}`,
      })),
    );
    expect(cdpItemToEntry(items[2])).toMatchObject({ name: "n2", description: "d2", price_usd: 0.02, method: "GET" });
    expect(cdpItemToEntry({ resource: "ftp://nope.example/" })).toBeNull();
    expect(cdpItemToEntry("junk")).toBeNull();
  });

  it("read the documented x402 List item (price as a $ string, no payTo)", () => {
    expect(x402ListItemToEntry(documentedListItem)).toEqual({
      url: "https://api.example.com/weather/forecast",
      origin: "https://api.example.com",
      name: "Weather API",
      description: "Forecasts",
      network: base.id,
      price_usd: 0.01,
      pay_to: null,
      method: null,
      tags: [],
    });
  });

  it("parse listed prices", () => {
    expect([" $0.01", "0.25 USDC", "$0.002/request", 0.5, "free", "varies", "", null, -1].map(parseListedPrice)).toEqual([
      0.01,
      0.25,
      0.002,
      0.5,
      0,
      null,
      null,
      null,
      null,
    ]);
  });
});

/** 25 endpoints: 10 in both directories, 8 only in CDP, 7 only in x402 List. */
function catalogue(): { cdp: ListedEndpoint[]; list: ListedEndpoint[] } {
  const make = (i: number, host: string): ListedEndpoint => ({
    url: `https://${host}.example/api/${i}`,
    method: i % 2 ? "POST" : "GET",
    amount: String((i + 1) * 10_000),
    payTo: `0x${String(i + 1).padStart(40, "0")}`,
    description: i % 5 === 0 ? `Weather forecast ${i}` : `Token data ${i}`,
    name: `svc ${i}`,
    ...(i === 3 ? { network: "eip155:137" } : {}),
  });
  const both = Array.from({ length: 10 }, (_, i) => make(i, "both"));
  const cdpOnly = Array.from({ length: 8 }, (_, i) => make(10 + i, "cdp"));
  const listOnly = Array.from({ length: 7 }, (_, i) => make(18 + i, "list"));
  return { cdp: [...both, ...cdpOnly], list: [...both, ...listOnly] };
}

describe("merge, paging and status", () => {
  let dirs: LocalDirectories;
  let big: LocalDirectories;
  let broken: Stub;
  beforeAll(async () => {
    const c = catalogue();
    dirs = await startLocalDirectories({ cdp: cdpItems(c.cdp), x402List: x402ListItems(c.list) });
    const many = Array.from({ length: 1_050 }, (_, i) => ({
      url: `https://p${i}.example/x`,
      method: "GET" as const,
      amount: "10000",
      payTo: "0x1",
      description: "-",
      name: `p${i}`,
    }));
    big = await startLocalDirectories({ cdp: cdpItems(many), x402List: x402ListItems(many.slice(0, 250)) });
    broken = await startStub((req, res) => {
      if (req.url?.startsWith("/hang")) return;
      if (req.url?.startsWith("/stall")) {
        // Headers and the start of a page, then nothing: the read must still end at the deadline.
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"items": [');
        return;
      }
      if (req.url?.startsWith("/huge")) {
        // A page past the 16 MiB cap, sent a megabyte at a time until the reader hangs up.
        res.writeHead(200, { "content-type": "application/json" });
        const chunk = Buffer.alloc(1024 * 1024, " ");
        for (let i = 0; i < 17 && !res.destroyed; i++) res.write(chunk);
        res.end();
        return;
      }
      if (req.url?.startsWith("/shape")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ resources: "nope" }));
        return;
      }
      res.writeHead(500);
      res.end("boom");
    });
  });
  afterAll(async () => {
    await Promise.all([dirs.close(), big.close(), broken.close()]);
  });

  it("merges by URL and says which directories list each endpoint", async () => {
    const snapshot = await readDirectories([cdpBazaarDirectory(dirs.cdpUrl), x402ListDirectory(dirs.x402ListUrl)], 5_000);
    expect(snapshot.sources).toEqual({ cdp_bazaar: "ok", x402_list: "ok" });
    expect(snapshot.endpoints).toHaveLength(25);
    const byUrl = new Map(snapshot.endpoints.map((e) => [e.url, e]));
    expect(byUrl.get("https://both.example/api/1")).toEqual({
      url: "https://both.example/api/1",
      origin: "https://both.example",
      name: "svc 1", // the v1 CDP variant has none: filled from x402 List
      description: "Token data 1",
      network: base.id,
      price_usd: 0.02,
      pay_to: `0x${"2".padStart(40, "0")}`,
      method: "POST",
      tags: [],
      sources: ["cdp_bazaar", "x402_list"],
    });
  });

  it("pages through both directories", async () => {
    const before = { ...big.requests };
    const snapshot = await readDirectories([cdpBazaarDirectory(big.cdpUrl), x402ListDirectory(big.x402ListUrl)], 5_000);
    expect(snapshot.endpoints).toHaveLength(1_050);
    expect(big.requests.cdp - before.cdp).toBe(2); // 1000 + 50
    expect(big.requests.x402List - before.x402List).toBe(3); // 100 + 100 + 50
  });

  it("reports a directory that is down, slow, failing or malformed, and keeps the other", async () => {
    const list = x402ListDirectory(dirs.x402ListUrl);
    const cases: [string, string][] = [
      [`${closed}/resources`, "error: connection refused"],
      [`${broken.url}/hang`, "timeout"],
      [`${broken.url}/stall`, "timeout"],
      [`${broken.url}/huge`, "error: page larger than 16 MiB"],
      [`${broken.url}/fail`, "error: HTTP 500"],
      [`${broken.url}/shape`, "error: unexpected response shape (no items array)"],
    ];
    for (const [url, status] of cases) {
      const snapshot = await readDirectories([cdpBazaarDirectory(url), list], 400);
      expect(snapshot.sources).toEqual({ cdp_bazaar: status, x402_list: "ok" });
      expect(snapshot.sources_ok).toBe(1);
      expect(snapshot.endpoints.map((e) => e.url)).toHaveLength(17);
      expect(snapshot.endpoints.every((e) => e.sources.length === 1 && e.sources[0] === "x402_list")).toBe(true);
    }
  });

  it("caches the catalogue: concurrent reads share one read of each directory, later reads reuse it, a fresh read reads again", async () => {
    const cached = createCatalogue([cdpBazaarDirectory(dirs.cdpUrl), x402ListDirectory(dirs.x402ListUrl)]);
    const before = { ...dirs.requests };
    const [first, second] = await Promise.all([cached.read(), cached.read({ fresh: true })]);
    expect(second).toBe(first);
    expect(first.endpoints).toHaveLength(25);
    expect(await cached.read()).toBe(first);
    expect({ cdp: dirs.requests.cdp - before.cdp, x402List: dirs.requests.x402List - before.x402List }).toEqual({ cdp: 1, x402List: 1 });
    const fresh = await cached.read({ fresh: true });
    expect(fresh).not.toBe(first);
    expect(fresh.endpoints).toEqual(first.endpoints);
    expect({ cdp: dirs.requests.cdp - before.cdp, x402List: dirs.requests.x402List - before.x402List }).toEqual({ cdp: 2, x402List: 2 });
  });

  it("filters by words, network (either spelling), price and limit", async () => {
    const snapshot = await readDirectories([cdpBazaarDirectory(dirs.cdpUrl), x402ListDirectory(dirs.x402ListUrl)], 5_000);
    const urls = (q: Parameters<typeof searchCatalogue>[1]) => searchCatalogue(snapshot, q).endpoints.map((e) => e.url);
    // "Weather forecast" items: i = 0, 5, 10, 15, 20; both-listed first.
    expect(urls({ query: "weather FORECAST", limit: 20 })).toEqual([
      "https://both.example/api/0",
      "https://both.example/api/5",
      "https://cdp.example/api/10",
      "https://cdp.example/api/15",
      "https://list.example/api/20",
    ]);
    expect(urls({ network: "polygon", limit: 20 })).toEqual(["https://both.example/api/3"]);
    expect(searchCatalogue(snapshot, { network: "base", limit: 100 }).matched).toBe(24);
    expect(urls({ max_price_usd: 0.03, limit: 20 })).toEqual([
      "https://both.example/api/0",
      "https://both.example/api/1",
      "https://both.example/api/2",
    ]);
    expect(searchCatalogue(snapshot, { limit: 4 })).toMatchObject({ matched: 25 });
    expect(urls({ limit: 4 })).toEqual([
      "https://both.example/api/0",
      "https://both.example/api/1",
      "https://both.example/api/2",
      "https://both.example/api/3",
    ]);
  });
});

describe("paid x402-directory", () => {
  let dirs: LocalDirectories;
  let service: RunningService;
  let oneDown: RunningService;
  let allDown: RunningService;
  const withDirectories = (cdpDiscoveryUrl: string, x402ListUrl: string) =>
    ((c) => ({ ...c, intel: { ...c.intel, cdpDiscoveryUrl, x402ListUrl } }))(testConfig());
  const search = (s: RunningService, body: unknown) =>
    payingFetch(buyerAccount(5))(`${s.url}/api/x402-directory`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    const c = catalogue();
    dirs = await startLocalDirectories({ cdp: cdpItems(c.cdp), x402List: x402ListItems(c.list) });
    service = await startTestService({ config: withDirectories(dirs.cdpUrl, dirs.x402ListUrl) });
    oneDown = await startTestService({ config: withDirectories(`${closed}/resources`, dirs.x402ListUrl) });
    allDown = await startTestService({ config: withDirectories(`${closed}/resources`, `${closed}/services`) });
  });
  afterAll(async () => {
    await Promise.all([service.close(), oneDown.close(), allDown.close()]);
    await dirs.close();
  });

  it("answers 20 endpoints by default, both-listed first, and charges 0.10", async () => {
    const buyer = buyerAccount(5);
    const before = await usdcBalance(buyer.address);
    const res = await search(service, {});
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      sources: unknown;
      results: number;
      matched: number;
      limit: number;
      endpoints: { url: string; sources: string[] }[];
    };
    expect(body).toMatchObject({ sources: { cdp_bazaar: "ok", x402_list: "ok" }, results: 20, matched: 25, limit: 20, query: null });
    expect(body.endpoints.slice(0, 10).every((e) => e.sources.join() === "cdp_bazaar,x402_list")).toBe(true);
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
  });

  it("filters and shows each endpoint's fields", async () => {
    const res = await search(service, { query: "forecast", network: base.id, max_price_usd: 0.05, limit: 2 });
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ query: "forecast", network: base.id, max_price_usd: 0.05, limit: 2, results: 1, matched: 1 });
    expect(body.endpoints).toEqual([
      {
        url: "https://both.example/api/0",
        price_usd: 0.01,
        sources: ["cdp_bazaar", "x402_list"],
        network: base.id,
        payTo: `0x${"1".padStart(40, "0")}`,
        description: "Weather forecast 0",
        name: "svc 0",
        method: "GET",
        tags: [],
      },
    ]);
  });

  it("reports a directory that is down and answers from the other", async () => {
    const res = await search(oneDown, { limit: 100 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sources: unknown; matched: number };
    expect(body.sources).toEqual({ cdp_bazaar: "error: connection refused", x402_list: "ok" });
    expect(body.matched).toBe(17);
  });

  it("fails with 503 and charges nothing when no directory answers", async () => {
    const buyer = buyerAccount(5);
    const before = await usdcBalance(buyer.address);
    const res = await search(allDown, {});
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; details: unknown } };
    expect(body.error.code).toBe("unavailable");
    expect(body.error.details).toEqual({ sources: { cdp_bazaar: "error: connection refused", x402_list: "error: connection refused" } });
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("refuses a limit over 100 as a bad request", async () => {
    const res = await search(service, { limit: 101 });
    expect(res.status).toBe(400);
  });
});
