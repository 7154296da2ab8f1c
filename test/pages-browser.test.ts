/**
 * The free reader pages in a real headless Chromium, served by the real service: each loads
 * with status 200, no console error, no failed request and no script, shows its compiled
 * content (exact titles, counts, prices and the exact buy call), has one `main` landmark and
 * headings that never skip a level, and keeps text contrast at WCAG AA in light and dark mode.
 * The /errors page is also fetched over plain HTTP, which needs no browser.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CompiledContent } from "../spec/content-schema.ts";
import { ERROR_DOCS } from "../src/errors.ts";
import type { RunningService } from "../src/server/service.ts";
import { launchBrowser, skipBrowserTests, visit } from "./support/browser.ts";
import { operationsConfig, startDirectoryStub } from "./support/operations.ts";
import { startTestService } from "./support/service.ts";
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
