/**
 * The free reader pages in a real headless Chromium, served by the real service: each loads
 * with status 200, no console error, no failed request and no script, shows its compiled
 * content (exact titles, counts, prices and the exact buy call), has one `main` landmark and
 * headings that never skip a level, and keeps text contrast at WCAG AA in light and dark mode.
 * The /errors page is also fetched over plain HTTP, which needs no browser. On a leaderboard
 * with three recorded crawls, the score distribution and each top origin's history are inline
 * SVGs of their stated size whose numbers are the recorded ones, readable in light and dark
 * mode; the home page's sponsored slot is marked and linked as sponsored.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CompiledContent } from "../spec/content-schema.ts";
import { askKb } from "../spec/routes/content.ts";
import { baseToolsSite, primarySite } from "../spec/sites.ts";
import { ERROR_DOCS } from "../src/errors.ts";
import { CHECK_NAMES } from "../src/intel/conformance.ts";
import { finishRun, insertRows, startRun, summarise, type TrustRecord } from "../src/intel/leaderboard.ts";
import { notMeasured } from "../src/intel/reputation.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { launchBrowser, skipBrowserTests, visit } from "./support/browser.ts";
import { operationsConfig, startDirectoryStub } from "./support/operations.ts";
import { freshSqliteStore, startTestService } from "./support/service.ts";
import type { Stub } from "./support/stub-server.ts";

const root = path.resolve(import.meta.dirname, "..");
const compiled = JSON.parse(readFileSync(path.join(root, ".generated/content.json"), "utf8")) as CompiledContent;

let service: RunningService;
let browser: Browser;
let directories: Stub;

// Plain HTTP, so it runs even where the Chromium tests below are skipped.
describe("the free /errors page", () => {
  let plain: RunningService;
  beforeAll(async () => {
    plain = await startTestService();
  });
  afterAll(() => plain?.close());

  it("answers 200 HTML with a section for every code, which every error body's docs points at", async () => {
    const res = await fetch(`${plain.url}/errors`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("payment-required")).toBeNull();
    const html = await res.text();
    expect(html).toContain('id="payment_unavailable"');
    expect(html).toContain('id="invalid_payload"');
    for (const code of Object.keys(ERROR_DOCS)) expect(html).toContain(`id="${code}"`);
    const missing = await fetch(`${plain.url}/api/no-such-route`);
    const { error } = (await missing.json()) as { error: { code: string; docs: string } };
    expect(error).toMatchObject({ code: "not_found", docs: "/errors#not_found" });
  });
});

describe.skipIf(skipBrowserTests())("the free pages in Chromium", () => {
  beforeAll(async () => {
    // The status feed on, its directory probes answered locally, and one document made for /status.
    directories = await startDirectoryStub();
    service = await startTestService({ statusFeed: true, config: operationsConfig(directories) });
    await service.jobs.runNow("status");
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await directories?.close();
  });

  /** Load `pathname` and check what every page must have, then run the page's own checks. */
  async function page(pathname: string, check: (page: Page) => Promise<void>): Promise<void> {
    await visit(browser, `${service.url}${pathname}`, async (p, v) => {
      expect(v.status).toBe(200);
      expect(v.errors).toEqual([]);
      expect(v.scripts).toBe(0);
      expect(await p.locator("html").getAttribute("lang")).toBe("en");
      expect(await p.locator("main").count()).toBe(1);
      expect(await p.locator("nav").count()).toBeGreaterThanOrEqual(1);
      expect(await p.locator("h1").count()).toBe(1);
      const levels = await p.locator("h1, h2, h3, h4, h5, h6").evaluateAll((hs) => hs.map((h) => Number(h.tagName.slice(1))));
      levels.forEach((level, i) => {
        if (i > 0) expect(level, `heading ${i + 1} of ${pathname} skips a level`).toBeLessThanOrEqual((levels[i - 1] as number) + 1);
      });
      for (const table of await p.locator("table").all()) expect(await table.locator("th").count()).toBeGreaterThan(0);
      await check(p);
    });
  }

  const text = async (p: Page, selector: string) => ((await p.locator(selector).first().textContent()) ?? "").trim();
  const texts = async (p: Page, selector: string) => (await p.locator(selector).allTextContents()).map((t) => t.trim());

  it("/playbooks shows the bundle preview: the 13 titles in order, the price and the exact buy call", async () => {
    await page("/playbooks", async (p) => {
      expect(await p.title()).toBe(`${compiled.bundle.bundle}: 13 playbooks`);
      expect(await text(p, "h1")).toBe(compiled.bundle.bundle);
      expect(await texts(p, "table[aria-labelledby=playbooks] tbody th")).toEqual(compiled.playbooks.map((pb) => pb.preview.title));
      expect(await texts(p, "table[aria-labelledby=playbooks] tbody td code")).toEqual(compiled.playbooks.map((pb) => pb.preview.id));
      expect(await texts(p, "pre code")).toContain("npm run buy -- POST /api/compute/playbook-bundle '{}'");
      expect(await p.locator("main").textContent()).toContain("0.91 USDC");
      expect(await p.locator("main").textContent()).toContain("910000 atomic");
    });
  });

  it("/howto lists the 4 SOPs with their links, counts and prices", async () => {
    await page("/howto", async (p) => {
      expect(await text(p, "h1")).toBe(compiled.howto.service);
      const rows = p.locator("table[aria-labelledby=sops] tbody tr");
      expect(await rows.count()).toBe(4);
      for (const [i, sop] of compiled.sops.entries()) {
        const row = rows.nth(i);
        expect(await row.locator("a").textContent()).toBe(sop.index.title);
        expect(await row.locator("a").getAttribute("href")).toBe(`/howto/${sop.index.slug}`);
        expect(await row.locator("td").allTextContents()).toEqual([
          String(sop.index.steps),
          String(sop.index.pitfalls),
          sop.index.last_verified,
          `${sop.index.price_usdc.toFixed(2)} USDC`,
        ]);
      }
      expect(await texts(p, "pre code")).toContain(
        `npm run buy -- POST /api/howto/${compiled.sops[0]?.index.slug} '{"sop":"${compiled.sops[0]?.index.slug}"}'`,
      );
    });
  });

  for (const sop of compiled.sops) {
    it(`/howto/${sop.index.slug} shows the title, counts, prerequisites and the exact buy call`, async () => {
      await page(`/howto/${sop.index.slug}`, async (p) => {
        expect(await p.title()).toBe(`${sop.index.title} (SOP)`);
        expect(await text(p, "h1")).toBe(sop.index.title);
        const facts = Object.fromEntries(
          await p
            .locator("table[aria-labelledby=facts] tr")
            .evaluateAll((rows) => rows.map((r) => [r.querySelector("th")?.textContent, r.querySelector("td")?.textContent])),
        );
        expect(facts).toEqual({
          Steps: String(sop.index.steps),
          Pitfalls: String(sop.index.pitfalls),
          "Files it creates or edits": String(sop.record.files.length),
          Tags: sop.index.tags.join(", "),
          "Last verified": sop.index.last_verified,
          Price: `${sop.index.price_usdc.toFixed(2)} USDC`,
        });
        expect(await p.locator("h2#prerequisites + ul > li").count()).toBe(sop.record.prerequisites.length);
        expect(await texts(p, "pre code")).toContain(`npm run buy -- GET /api/howto/${sop.index.slug}`);
      });
    });
  }

  it("/kb lists the 15 entry titles under their categories, and how to ask", async () => {
    await page("/kb", async (p) => {
      expect(await text(p, "h1")).toBe("Knowledge base");
      for (const category of compiled.kb.categories) {
        const section = p.locator(`section[aria-labelledby=cat-${category.name}]`);
        expect(await section.locator("li").count()).toBe(category.count);
        const titles = await section.locator("li").evaluateAll((items) => items.map((li) => li.firstChild?.textContent?.trim()));
        expect(titles).toEqual(compiled.kb.entries.filter((e) => e.category === category.name).map((e) => e.title));
      }
      expect(await p.locator("main li").count()).toBe(15);
      expect((await texts(p, "pre code")).some((t) => t.startsWith('npm run buy -- POST /api/kb/ask \'{"question":'))).toBe(true);
    });
  });

  it("the landing page links the content pages", async () => {
    await page("/", async (p) => {
      for (const href of ["/playbooks", "/howto", "/kb"]) expect(await p.locator(`main a[href="${href}"]`).count()).toBeGreaterThan(0);
    });
  });

  it("the home page starts with what it answers and three ways to buy a first answer, then the route table", async () => {
    await page("/", async (p) => {
      const order = await p.locator("main h2").evaluateAll((hs) => hs.map((h) => h.id));
      expect(order.indexOf("answers")).toBe(0);
      expect(order.indexOf("start-here")).toBe(1);
      expect(order.indexOf("routes")).toBeGreaterThan(order.indexOf("start-here"));
      expect(await texts(p, "#start-here-section h3")).toEqual([
        "With an x402 client",
        "From a browser wallet",
        "From an AI agent over MCP",
      ]);
      const snippets = await texts(p, "#start-here-section pre code");
      expect(snippets[0]).toBe(`npm run buy -- POST /api/kb/ask '${JSON.stringify(askKb.example?.input)}'`);
      // Every snippet that pays defines its client first.
      for (const code of snippets.filter((c) => c.includes("await pay("))) {
        expect(code.indexOf("new x402Client()")).toBeGreaterThan(-1);
        expect(code.indexOf("new x402Client()")).toBeLessThan(code.indexOf("const pay"));
      }
      expect(snippets.some((c) => c.includes('"mcpServers"'))).toBe(true);
      // The full table still lists every route, after the start.
      expect(await p.locator("main table td.route code").count()).toBe(primarySite.routes.length);
    });
  });

  it("/markets draws each watched pair's price and 24 h move, with the figures of GET /api/markets", async () => {
    const api = (await (await fetch(`${service.url}/api/markets`)).json()) as {
      pairs: { symbol: string; price_usd: string; change_24h_pct: number | null }[];
    };
    expect(api.pairs.length).toBeGreaterThanOrEqual(4);
    await page("/markets", async (p) => {
      const chart = p.locator('main svg[data-chart="moves"]');
      expect(await chart.count()).toBe(1);
      const bars = await chart
        .locator("[data-symbol]")
        .evaluateAll((els) => els.map((e) => [e.getAttribute("data-symbol"), e.getAttribute("data-change")]));
      expect(bars).toEqual(api.pairs.map((pair) => [pair.symbol, pair.change_24h_pct === null ? "" : String(pair.change_24h_pct)]));
      // A rise is drawn right of the zero line, a fall left of it, and the largest move is the longest bar.
      const zero = Number(await chart.locator("line").first().getAttribute("x1"));
      const largest = Math.max(...api.pairs.map((pair) => Math.abs(pair.change_24h_pct ?? 0)));
      const longest = Math.max(...(await chart.locator("rect").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("width"))))));
      expect(longest).toBeGreaterThan(50);
      for (const pair of api.pairs.filter((x) => x.change_24h_pct !== null)) {
        const bar = chart.locator(`rect[data-symbol="${pair.symbol}"]`);
        const x = Number(await bar.getAttribute("x"));
        const width = Number(await bar.getAttribute("width"));
        if ((pair.change_24h_pct as number) >= 0) expect(x, pair.symbol).toBe(zero);
        else expect(x + width, pair.symbol).toBeCloseTo(zero, 0);
        expect(width, pair.symbol).toBeCloseTo((Math.abs(pair.change_24h_pct as number) / largest) * longest, 0);
      }
      const label = (await chart.getAttribute("aria-label")) ?? "";
      for (const pair of api.pairs) expect(label).toContain(pair.symbol);
      const rows = await p.locator("main table tbody th").allTextContents();
      expect(rows).toEqual(api.pairs.map((pair) => pair.symbol));
    });
  });

  it("/entity-intel's example bodies use the seeded chain's wallets, never the burn address", async () => {
    await page("/entity-intel", async (p) => {
      const html = await p.content();
      expect(html).not.toMatch(/dEaD/i);
      const bodies = await texts(p, "main ol pre code");
      expect(bodies.length).toBeGreaterThan(10);
      for (const body of bodies) expect(() => JSON.parse(body)).not.toThrow();
    });
  });

  for (const width of [1280, 390]) {
    for (const scheme of ["light", "dark"] as const) {
      it(`no free page scrolls sideways at ${width} px in ${scheme} mode`, async () => {
        const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme });
        try {
          const wide: string[] = [];
          for (const pathname of [
            "/",
            "/markets",
            "/entity-intel",
            "/playbooks",
            "/howto",
            "/kb",
            "/methodology",
            "/leaderboard",
            "/errors",
            "/status",
          ]) {
            const p = await context.newPage();
            await p.goto(`${service.url}${pathname}`);
            const [scroll, client] = await p.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
            if ((scroll as number) > (client as number)) wide.push(`${pathname}: ${scroll} px wide in a ${client} px window`);
            await p.close();
          }
          if (service.secondaryUrl) {
            const p = await context.newPage();
            await p.goto(service.secondaryUrl);
            const [scroll, client] = await p.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
            if ((scroll as number) > (client as number)) wide.push(`secondary /: ${scroll} px wide in a ${client} px window`);
            await p.close();
          }
          expect(wide).toEqual([]);
        } finally {
          await context.close();
        }
      });
    }
  }

  it("the secondary site's landing page names its network in words and its snippet defines its client", async () => {
    expect(service.secondaryUrl).toBeDefined();
    await visit(browser, `${service.secondaryUrl}/`, async (p, v) => {
      expect(v.status).toBe(200);
      expect(v.errors).toEqual([]);
      const main = (await p.locator("main").textContent()) ?? "";
      expect(main).toContain(`challenge on ${base.id};`);
      expect(main).not.toMatch(/oneip155/);
      const snippets = (await p.locator("main pre code").allTextContents()).filter((c) => c.includes("await pay("));
      expect(snippets.length).toBeGreaterThan(0);
      for (const code of snippets) {
        expect(code).toMatch(/^import /);
        expect(code.indexOf("new x402Client()")).toBeGreaterThan(-1);
        expect(code.indexOf("new x402Client()")).toBeLessThan(code.indexOf("const pay"));
      }
      expect(await p.locator("main table td.route code").count()).toBe(baseToolsSite.routes.length);
    });
  });

  it("/methodology shows each analytics endpoint's method and limits", async () => {
    await page("/methodology", async (p) => {
      const body = (await p.locator("main").textContent()) ?? "";
      for (const route of ["/api/wallet-profile", "/api/gas-tracker", "/api/token-check", "/api/whale-watch", "/api/defi-sentiment"]) {
        expect(body).toContain(route);
      }
      expect(body).toContain("not a screening product");
    });
  });

  it("/errors has a section per error code, each saying never charged, and the footer links to it", async () => {
    await page("/errors", async (p) => {
      expect(await text(p, "h1")).toBe("Error codes");
      const ids = await p.locator("main section[id]").evaluateAll((sections) => sections.map((s) => s.id));
      expect(ids).toEqual(Object.keys(ERROR_DOCS));
      for (const [code, doc] of Object.entries(ERROR_DOCS)) {
        const section = p.locator(`section#${code}`);
        expect(await section.locator("h2").textContent()).toBe(code);
        const body = (await section.textContent()) ?? "";
        for (const part of [`HTTP ${doc.status}`, doc.when, doc.fix, "never charged"]) expect(body, code).toContain(part);
      }
      expect(await p.locator('footer a[href="/errors"]').count()).toBe(1);
    });
  });

  it("/leaderboard explains itself before the first crawl", async () => {
    await page("/leaderboard", async (p) => {
      expect(await text(p, "h1")).toMatch(/leaderboard/i);
      expect((await p.locator("main").textContent()) ?? "").toMatch(/crawl/i);
    });
  });

  it("/status draws each group's last 24 hours as a sized inline SVG of 96 bars, and lists its checks", async () => {
    await page("/status", async (p) => {
      expect(await text(p, "h1")).toBe("Service status");
      expect(await texts(p, "main h2")).toEqual([
        "API instances: operational",
        "Chain (RPC nodes): operational",
        "Payments: operational",
        "Upstream data APIs: operational",
        "Scheduled jobs: operational",
      ]);
      const charts = p.locator("svg.status-chart");
      expect(await charts.count()).toBe(5);
      for (const chart of await charts.all()) {
        const box = await chart.boundingBox();
        // 960 x 40 CSS pixels, narrowed to the 60rem column less its padding.
        expect(box?.height).toBe(40);
        expect(box?.width).toBeGreaterThan(800);
        expect(box?.width).toBeLessThanOrEqual(960);
        expect(await chart.locator("rect").count()).toBe(96);
        expect(await chart.getAttribute("aria-label")).toMatch(
          /, last 24 hours: of [12] quarter-hours measured in the last 24 hours: [12] operational, 0 degraded, 0 down$/,
        );
        // The newest bar holds the document just made; the colours come from the page's theme.
        const newest = chart.locator("rect").last();
        expect(await newest.getAttribute("class")).toBe("bar operational");
        expect(await newest.evaluate((r) => getComputedStyle(r).fill)).toBe("rgb(26, 127, 55)");
      }
      expect(await p.locator("main table").count()).toBe(5);
    });
  });

  it("/status bars keep their colours distinct from the page in dark mode", async () => {
    const context = await browser.newContext({ colorScheme: "dark" });
    try {
      const p = await context.newPage();
      await p.goto(`${service.url}/status`);
      const fills = await p
        .locator("svg.status-chart")
        .first()
        .locator("rect")
        .evaluateAll((rects) => [...new Set(rects.map((r) => `${r.getAttribute("class")}=${getComputedStyle(r).fill}`))].sort());
      expect(fills).toEqual(["bar none=rgb(48, 54, 61)", "bar operational=rgb(63, 185, 80)"]);
      expect(await p.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(13, 17, 23)");
    } finally {
      await context.close();
    }
  });

  for (const scheme of ["light", "dark"] as const) {
    it(`text keeps a contrast of at least 4.5:1 in ${scheme} mode on every free page`, async () => {
      const pages = [
        "/",
        "/markets",
        "/entity-intel",
        "/playbooks",
        "/howto",
        `/howto/${compiled.sops[0]?.index.slug}`,
        "/kb",
        "/methodology",
        "/leaderboard",
        "/errors",
        "/status",
      ];
      const context = await browser.newContext({ colorScheme: scheme });
      try {
        for (const pathname of pages) {
          const p = await context.newPage();
          await p.goto(`${service.url}${pathname}`);
          const worst = await p.evaluate(() => {
            const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
            const lum = ([r = 0, g = 0, b = 0]: number[]) => {
              const f = (v: number) => {
                const s = v / 255;
                return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
              };
              return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
            };
            const background = (el: Element | null): number[] => {
              for (let e = el; e; e = e.parentElement) {
                const c = rgb(getComputedStyle(e).backgroundColor);
                if (c.length >= 3 && (c[3] === undefined || c[3] > 0)) return c;
              }
              return [255, 255, 255];
            };
            let result = { ratio: 21, what: "" };
            for (const el of Array.from(document.querySelectorAll("main *, header *, footer *"))) {
              const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && (n.textContent ?? "").trim() !== "");
              if (!own) continue;
              const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))];
              const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
              if (ratio < result.ratio)
                result = { ratio, what: `${el.tagName.toLowerCase()}.${el.className}: ${(el.textContent ?? "").trim().slice(0, 40)}` };
            }
            return result;
          });
          expect(worst.ratio, `${pathname} (${scheme}): ${worst.what}`).toBeGreaterThanOrEqual(4.5);
          await p.close();
        }
      } finally {
        await context.close();
      }
    });
  }
});

/** Score of origin `o` (0-11) in crawl `run` (0-2): spread over the bins, some rising, some falling. */
const seededScore = (o: number, run: number) => Math.min(100, Math.max(0, o * 9 + (o % 3 === 0 ? run * 5 : -run * 4)));
/** Origin 11 answers only in the last crawl; origin 10 never answers (unreachable, score 0). */
const seededOrigins = Array.from({ length: 12 }, (_v, o) => `https://seller-${String(o).padStart(2, "0")}.example`);

function seededRow(o: number, run: number, at: Date): TrustRecord {
  const reachable = o !== 10;
  return {
    origin: seededOrigins[o] as string,
    endpoint: `${seededOrigins[o]}/api/x`,
    method: "POST",
    endpoints: 1,
    reachable,
    status: reachable ? 402 : null,
    score: reachable ? seededScore(o, run) : 0,
    verdict: reachable && seededScore(o, run) >= 50 ? "pay_with_caution" : "avoid",
    penalties: [],
    checks: Object.fromEntries(CHECK_NAMES.map((c) => [c, reachable])) as TrustRecord["checks"],
    payable: reachable,
    conformant: reachable,
    discoverable: false,
    price_usd: 0.01,
    pay_to: null,
    network: base.id,
    x402_version: 2,
    reputation: notMeasured("seeded for the page test"),
    latency_ms: reachable ? 20 : null,
    probed_at: at,
  };
}

describe.skipIf(skipBrowserTests())("the leaderboard's charts and the sponsored slot in Chromium", () => {
  let seeded: RunningService;
  let store: Store;
  let chromium: Browser;
  beforeAll(async () => {
    store = await freshSqliteStore();
    for (let run = 0; run < 3; run++) {
      const at = new Date(Date.parse("2026-11-20T00:00:00Z") + run * 3_600_000);
      const rows = seededOrigins.map((_o, o) => seededRow(o, run, at)).filter((_r, o) => o !== 11 || run === 2);
      const id = await startRun(store, "test", at);
      await insertRows(store, id, rows);
      await finishRun(store, id, summarise(rows, rows.length, { test: "ok" }), at);
    }
    seeded = await startTestService({ store, now: () => new Date("2026-11-23T12:00:00Z") });
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium?.close();
    await seeded?.close();
    await store?.close();
  });

  it("draws the score distribution of the latest crawl and a sparkline of each top origin's history, at their sizes", async () => {
    await visit(chromium, `${seeded.url}/leaderboard`, async (p, v) => {
      expect(v.status).toBe(200);
      expect(v.errors).toEqual([]);
      expect(v.scripts).toBe(0);
      const histogram = p.locator('svg[data-chart="histogram"]');
      expect(await histogram.count()).toBe(1);
      // Ground truth: the reachable origins' scores in the last crawl, counted by ten-point bin.
      const expected = Array<number>(10).fill(0);
      for (let o = 0; o < 12; o++) {
        const bin = Math.min(9, Math.floor(seededScore(o, 2) / 10));
        if (o !== 10) expected[bin] = (expected[bin] ?? 0) + 1;
      }
      expect(await histogram.locator("rect").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("data-count"))))).toEqual(expected);
      expect(await histogram.getAttribute("aria-label")).toBe("Scores of the 11 origins that answered, in bins of ten points");
      const box = await histogram.boundingBox();
      expect(box?.width).toBe(560);
      expect(box?.height).toBe(180);
      // The tallest bar fills the plot; an empty bin has no height.
      const heights = await histogram.locator("rect").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("height"))));
      expect(Math.max(...heights)).toBe(140);
      expect(heights.filter((h, i) => h === 0 && expected[i] !== 0)).toEqual([]);

      const rows = p.locator("main table").first().locator("tbody tr");
      expect(await rows.count()).toBe(10);
      for (let i = 0; i < 10; i++) {
        const row = rows.nth(i);
        const origin = ((await row.locator("code").textContent()) ?? "").trim();
        const o = seededOrigins.indexOf(origin);
        const spark = row.locator('svg[data-chart="sparkline"]');
        expect(await spark.count(), origin).toBe(1);
        const size = await spark.boundingBox();
        expect([size?.width, size?.height], origin).toEqual([120, 24]);
        const history = o === 11 ? [seededScore(o, 2)] : [0, 1, 2].map((run) => seededScore(o, run));
        expect(await spark.getAttribute("data-points"), origin).toBe(String(history.length));
        expect(await spark.getAttribute("aria-label"), origin).toBe(
          history.length > 1
            ? `Score history of ${origin}: from ${history[0]} to ${history[2]} over 3 crawls`
            : `Score history of ${origin}: ${history[0]} in its only crawl`,
        );
        // A single crawl is a dot; three are a line through three points.
        expect(await spark.locator("polyline").count(), origin).toBe(history.length > 1 ? 1 : 0);
        if (history.length > 1) {
          expect(((await spark.locator("polyline").getAttribute("points")) ?? "").split(" ")).toHaveLength(3);
        }
      }
    });
  });

  for (const scheme of ["light", "dark"] as const) {
    it(`keeps the charts and the leaderboard readable in ${scheme} mode`, async () => {
      const context = await chromium.newContext({ colorScheme: scheme });
      try {
        const p = await context.newPage();
        await p.goto(`${seeded.url}/leaderboard`);
        const contrast = await p.evaluate(() => {
          const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
          const lum = ([r = 0, g = 0, b = 0]: number[]) => {
            const f = (v: number) => {
              const x = v / 255;
              return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
            };
            return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
          };
          const ratio = (a: number[], b: number[]) => {
            const [x, y] = [lum(a), lum(b)];
            return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
          };
          const page = rgb(getComputedStyle(document.body).backgroundColor);
          const marks = Array.from(document.querySelectorAll("svg rect, svg circle")).map((e) =>
            ratio(rgb(getComputedStyle(e).fill), page),
          );
          const lines = Array.from(document.querySelectorAll("svg polyline")).map((e) => ratio(rgb(getComputedStyle(e).stroke), page));
          const labels = Array.from(document.querySelectorAll("svg text")).map((e) => ratio(rgb(getComputedStyle(e).fill), page));
          const text = Array.from(document.querySelectorAll("main *"))
            .filter((el) => Array.from(el.childNodes).some((n) => n.nodeType === 3 && (n.textContent ?? "").trim() !== ""))
            .map((el) => ({ what: `${el.tagName}.${el.getAttribute("class") ?? ""}`, r: ratio(rgb(getComputedStyle(el).color), page) }));
          return { marks, lines, labels, worstText: text.sort((a, b) => a.r - b.r)[0] };
        });
        expect(contrast.marks.length).toBeGreaterThan(10);
        expect(contrast.lines.length).toBeGreaterThan(0);
        expect(contrast.labels).toHaveLength(20);
        // Bars and lines are graphics (WCAG non-text contrast, 3:1); labels are text (4.5:1).
        expect(Math.min(...contrast.marks, ...contrast.lines)).toBeGreaterThanOrEqual(3);
        expect(Math.min(...contrast.labels)).toBeGreaterThanOrEqual(4.5);
        expect(contrast.worstText?.r, contrast.worstText?.what).toBeGreaterThanOrEqual(4.5);
      } finally {
        await context.close();
      }
    });
  }

  it("shows the home page's sponsored placement, marked and linked as sponsored", async () => {
    await visit(chromium, `${seeded.url}/`, async (p, v) => {
      expect(v.status).toBe(200);
      expect(v.scripts).toBe(0);
      const slot = p.locator('aside[aria-label="Sponsored"]');
      expect(await slot.count()).toBe(1);
      expect(((await slot.locator(".sponsored-label").textContent()) ?? "").trim()).toBe(
        "Sponsored · x402 chain data & playbooks (house ad)",
      );
      const link = slot.locator("a");
      expect(await link.getAttribute("href")).toBe("/playbooks");
      expect(await link.getAttribute("rel")).toBe("sponsored noopener");
      expect(await link.textContent()).toBe("All 13 x402 builder playbooks for 0.91 USDC");
    });
  });
});
