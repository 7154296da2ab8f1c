/**
 * Sponsored placements (`content/ads/`, `GET /api/ads`, the pages' slots): a bad placement file
 * fails the build naming its file and line; one whose expires_at passes disappears from the API
 * and its page at that instant, without a rebuild (the service's clock is injected); pages mark
 * it "Sponsored" with rel="sponsored noopener" and are never cached past it; paid answers never
 * carry one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileContent } from "../scripts/content/compile.ts";
import { ContentError } from "../scripts/content/problems.ts";
import type { RunningService } from "../src/server/service.ts";
import { writeContentFixture } from "./support/content-fixture.ts";
import { buyerAccount, payingFetch, startTestService, usdcBalance } from "./support/service.ts";

/** The shipped placements, read from content/ads/ by hand (the ground truth of these tests). */
const BUNDLE = {
  id: "playbook-bundle",
  sponsor: "x402 chain data & playbooks (house ad)",
  title: "All 13 x402 builder playbooks for 0.91 USDC",
  text: "Steps with the exact commands, pitfalls and checks for shipping, pricing and listing a paid x402 endpoint on Base. One call to POST /api/compute/playbook-bundle, settled in USDC; the preview is free.",
  url: "/playbooks",
  placement: "home",
  starts_at: "2026-01-01T00:00:00Z",
  expires_at: "2027-12-31T23:59:59Z",
};
const LAUNCH = {
  id: "trust-leaderboard-launch",
  sponsor: "x402 chain data & playbooks (house ad)",
  title: "New: the x402 seller trust leaderboard",
  text: "Every origin in the public x402 catalogue probed and scored 0-100 before you pay a stranger. The top 10 are free to read. (Launch notice; this placement has ended and is kept as an example of one that expired.)",
  url: "/leaderboard",
  placement: "howto",
  starts_at: "2026-03-01T00:00:00Z",
  expires_at: "2026-04-30T23:59:59Z",
};

const ad = (front: Record<string, string>, body = "A short plain text.") =>
  `---\n${Object.entries(front)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n")}\n---\n\n${body}\n`;
const good = {
  sponsor: "Fixture sponsor",
  title: "Fixture title",
  url: "https://example.com/offer",
  placement: "kb",
  starts_at: "2026-01-01T00:00:00Z",
  expires_at: "2026-02-01T00:00:00Z",
};

describe("the build", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "x402-ads-"));
    writeContentFixture(dir);
    mkdirSync(path.join(dir, "content/ads"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("compiles placements in slot order and refuses each bad file with its file, line and field", async () => {
    writeFileSync(path.join(dir, "content/ads/good-one.md"), ad(good));
    writeFileSync(path.join(dir, "content/ads/good-two.md"), ad({ ...good, placement: "home" }, "Wrapped\ntext."));
    const ok = await compileContent(dir, { outFile: null, today: "2026-11-21" });
    expect(ok.ads).toEqual([
      { id: "good-two", ...good, placement: "home", text: "Wrapped text." },
      { id: "good-one", ...good, text: "A short plain text." },
    ]);

    writeFileSync(path.join(dir, "content/ads/plain-http.md"), ad({ ...good, url: "http://example.com/offer", placement: "playbooks" }));
    writeFileSync(path.join(dir, "content/ads/no-slot.md"), ad({ ...good, placement: "sidebar" }));
    writeFileSync(
      path.join(dir, "content/ads/bad-dates.md"),
      ad({ ...good, placement: "howto", starts_at: "2026-02-30T00:00:00Z", expires_at: "2026-01-01" }),
    );
    writeFileSync(
      path.join(dir, "content/ads/backwards.md"),
      ad({ ...good, placement: "leaderboard", expires_at: "2025-12-31T00:00:00Z" }),
    );
    writeFileSync(path.join(dir, "content/ads/too-long.md"), ad({ ...good, placement: "playbooks", url: "/playbooks" }, "x".repeat(281)));
    writeFileSync(path.join(dir, "content/ads/overlap.md"), ad({ ...good, starts_at: "2026-01-15T00:00:00Z" }));
    const error = await compileContent(dir, { outFile: null, today: "2026-11-21" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContentError);
    const lines = (error as ContentError).message
      .split("\n")
      .slice(1)
      .map((l) => l.trim());
    expect(lines).toEqual([
      "content/ads/backwards.md:7: expires_at: expected a time after starts_at (2026-01-01T00:00:00Z); found 2025-12-31T00:00:00Z",
      'content/ads/bad-dates.md:7: expires_at: expected a UTC time YYYY-MM-DDTHH:MM:SSZ; found "2026-01-01"',
      'content/ads/no-slot.md:5: placement: expected one of the slots home, playbooks, howto, kb, leaderboard; found "sidebar"',
      'content/ads/plain-http.md:4: url: expected an https:// URL, or a path on this service starting with a single /; found "http://example.com/offer"',
      "content/ads/too-long.md:10: text: expected at most 280 characters; found 281",
      "content/ads/overlap.md: starts_at: expected a start at or after 2026-02-01T00:00:00Z, when content/ads/good-one.md leaves the kb slot (one placement per slot at a time); found 2026-01-15T00:00:00Z",
    ]);
  });

  it("refuses an impossible calendar time that YAML would roll over", async () => {
    for (const name of ["plain-http", "no-slot", "backwards", "too-long", "overlap", "bad-dates"])
      rmSync(path.join(dir, `content/ads/${name}.md`));
    writeFileSync(
      path.join(dir, "content/ads/feb-30.md"),
      ad({ ...good, placement: "howto", starts_at: "2026-02-30T00:00:00Z", expires_at: "2026-03-31T00:00:00Z" }),
    );
    const error = await compileContent(dir, { outFile: null, today: "2026-11-21" }).catch((e: unknown) => e);
    expect(
      (error as ContentError).message
        .split("\n")
        .slice(1)
        .map((l) => l.trim()),
    ).toEqual(["content/ads/feb-30.md:6: starts_at: expected a real UTC time YYYY-MM-DDTHH:MM:SSZ; found 2026-02-30T00:00:00Z"]);
  });
});

describe("a running service", () => {
  let now = Date.parse("2026-04-30T23:59:58Z");
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService({ now: () => new Date(now) });
  });
  afterAll(() => service.close());

  const ads = async () => (await (await fetch(`${service.url}/api/ads`)).json()) as unknown[];

  it("serves the placements active now, and one whose expires_at passes is gone at that instant without a rebuild", async () => {
    expect(await ads()).toEqual([BUNDLE, LAUNCH]);
    const page = await fetch(`${service.url}/howto`);
    expect(page.status).toBe(200);
    // Cached no longer than the placement shows: one second here.
    expect(page.headers.get("cache-control")).toBe("public, max-age=1");
    const html = await page.text();
    expect(html).toContain('<aside class="sponsored" aria-label="Sponsored"');
    expect(html).toContain('data-ad="trust-leaderboard-launch"');
    expect(html).toMatch(/Sponsored · x402 chain data &amp; playbooks \(house ad\)/);
    expect(html).toContain('<a href="/leaderboard" rel="sponsored noopener"');

    now = Date.parse(LAUNCH.expires_at);
    expect(await ads()).toEqual([BUNDLE]);
    const after = await (await fetch(`${service.url}/howto`)).text();
    expect(after).not.toContain("<aside");
    expect(after).toContain("x402 How-to SOPs</h1>");

    // The kb slot's placement starts on its starts_at, again without a rebuild.
    now = Date.parse("2026-06-01T00:00:00Z");
    expect(((await ads()) as { id: string }[]).map((a) => a.id)).toEqual(["playbook-bundle", "create-x402-endpoint-sop"]);
    expect(await (await fetch(`${service.url}/kb`)).text()).toContain('data-ad="create-x402-endpoint-sop"');
    expect(await (await fetch(`${service.url}/`)).text()).toContain('<a href="/playbooks" rel="sponsored noopener"');
  });

  it("holds a free page as a shared cache would (same bytes, an Age header), until its max-age passes on the service's clock", async () => {
    now = Date.parse("2026-06-02T00:00:00Z");
    const first = await fetch(`${service.url}/kb`);
    expect(first.status).toBe(200);
    expect(first.headers.get("age")).toBeNull();
    const maxAge = Number(/max-age=(\d+)/.exec(first.headers.get("cache-control") ?? "")?.[1]);
    expect(maxAge).toBeGreaterThan(2);
    const body = await first.text();
    now += 2_000;
    const second = await fetch(`${service.url}/kb`);
    expect(second.headers.get("age")).toBe("2");
    expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(await second.text()).toBe(body);
    now += maxAge * 1_000;
    expect((await fetch(`${service.url}/kb`)).headers.get("age")).toBeNull();
  });

  it("never puts a placement in a paid answer", async () => {
    now = Date.parse("2026-06-01T00:00:00Z");
    const active = (await ads()) as { id: string; title: string; url: string }[];
    expect(active).toHaveLength(2);
    const buyer = buyerAccount(0);
    const before = await usdcBalance(buyer.address);
    const res = await payingFetch(buyer)(`${service.url}/api/kb/ask`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ question: "How do I create an x402 endpoint on Base?" }),
    });
    expect(res.status).toBe(200);
    expect(await usdcBalance(buyer.address)).toBe(before - 30_000n);
    const body = await res.text();
    for (const a of active) {
      expect(body).not.toContain(a.title);
      expect(body).not.toContain(a.id);
    }
    expect(body.toLowerCase()).not.toContain("sponsored");
  });
});
