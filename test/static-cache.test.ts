/**
 * Built pages and static files are served from memory (src/server/middleware/static-memory.ts)
 * with the bytes of the build, a strong ETag that is the hash of those bytes, and a
 * Cache-Control fit for the file; a matching If-None-Match gets a 304 without a body. Free
 * documents cached in memory (/api/pricing, /api/kb) carry an ETag and revalidate the same way,
 * and so do the pages with a sponsored slot, held per interval between two placement changes.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/log.ts";
import { IMMUTABLE_CACHE, loadStaticFiles, matchesEtag, PAGE_CACHE } from "../src/server/middleware/static-memory.ts";
import type { RunningService } from "../src/server/service.ts";
import { rawRequest, startTestService } from "./support/service.ts";

const client = path.resolve(import.meta.dirname, "../dist/client");
const etagOf = (bytes: Buffer) => `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`;

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

describe("pages and static files", () => {
  it.each([
    ["/methodology/", "methodology/index.html", "text/html; charset=utf-8"],
    ["/errors/", "errors/index.html", "text/html; charset=utf-8"],
    ["/howto/x402-register/", "howto/x402-register/index.html", "text/html; charset=utf-8"],
    ["/favicon.svg", "favicon.svg", "image/svg+xml"],
    ["/icon-192.png", "icon-192.png", "image/png"],
    ["/favicon.ico", "favicon.ico", "image/vnd.microsoft.icon"],
  ])("GET %s answers the built %s with its hash as ETag and a five-minute Cache-Control", async (url, file, type) => {
    const bytes = readFileSync(path.join(client, file));
    const res = await fetch(`${service.url}${url}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    expect(res.headers.get("etag")).toBe(etagOf(bytes));
    expect(res.headers.get("cache-control")).toBe(PAGE_CACHE);
    expect(res.headers.get("content-type")).toBe(type);
    expect(res.headers.get("content-length")).toBe(String(bytes.length));
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 304 without a body to a matching If-None-Match, also among several or weak tags, and 200 to another", async () => {
    const etag = etagOf(readFileSync(path.join(client, "methodology/index.html")));
    for (const header of [etag, `"other", ${etag}`, `W/${etag}`, "*"]) {
      const res = await rawRequest(service.url, "GET", "/methodology/", { "if-none-match": header });
      expect(res.status, header).toBe(304);
      expect(res.body).toBe("");
      expect(res.headers.etag).toBe(etag);
      expect(res.headers["cache-control"]).toBe(PAGE_CACHE);
    }
    const other = await rawRequest(service.url, "GET", "/methodology/", { "if-none-match": '"stale"' });
    expect(other.status).toBe(200);
    expect(other.body).toBe(readFileSync(path.join(client, "methodology/index.html"), "utf8"));
  });

  it("HEAD answers the headers of GET without the body", async () => {
    const bytes = readFileSync(path.join(client, "methodology/index.html"));
    const res = await rawRequest(service.url, "HEAD", "/methodology/");
    expect(res.status).toBe(200);
    expect(res.body).toBe("");
    expect(res.headers["content-length"]).toBe(String(bytes.length));
    expect(res.headers.etag).toBe(etagOf(bytes));
  });

  it("a directory without its slash redirects to it, keeping the query", async () => {
    const res = await rawRequest(service.url, "GET", "/methodology?q=gas");
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe("/methodology/?q=gas");
  });

  it("POST to a page is not served from memory", async () => {
    const res = await rawRequest(service.url, "POST", "/methodology/", { "content-type": "application/json" }, "{}");
    expect(res.status).not.toBe(200);
  });
});

describe("free documents cached in memory", () => {
  it.each(["/api/pricing", "/api/kb"])("%s carries a strong ETag of its bytes and revalidates with 304", async (url) => {
    const first = await fetch(`${service.url}${url}`);
    const bytes = Buffer.from(await first.arrayBuffer());
    expect(first.status).toBe(200);
    // The first answer is the one that fills the cache; from the second on the ETag is there.
    const second = await fetch(`${service.url}${url}`);
    const again = Buffer.from(await second.arrayBuffer());
    expect(again.equals(bytes)).toBe(true);
    const etag = etagOf(bytes);
    expect(second.headers.get("etag")).toBe(etag);
    expect(second.headers.get("content-length")).toBe(String(bytes.length));
    const revalidated = await rawRequest(service.url, "GET", url, { "if-none-match": etag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.body).toBe("");
    expect(revalidated.headers.etag).toBe(etag);
    expect(revalidated.headers["cache-control"]).toBe(second.headers.get("cache-control") ?? undefined);
  });

  it("an answer from memory carries the caller's request id when it is a safe token, else a new one, on a 304 too", async () => {
    const url = "/api/kb";
    await fetch(`${service.url}${url}`);
    const echoed = await rawRequest(service.url, "GET", url, { "x-request-id": "trace.42:a-b_c" });
    expect([echoed.status, echoed.headers["x-request-id"]]).toEqual([200, "trace.42:a-b_c"]);
    const unsafe = await rawRequest(service.url, "GET", url, { "x-request-id": "two words" });
    expect(unsafe.headers["x-request-id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const notModified = await rawRequest(service.url, "GET", url, {
      "if-none-match": echoed.headers.etag as string,
      "x-request-id": "r-304",
    });
    expect([notModified.status, notModified.headers["x-request-id"], notModified.headers.etag]).toEqual([
      304,
      "r-304",
      echoed.headers.etag,
    ]);
  });
});

describe("pages with a sponsored slot, held in memory per interval between placement changes", () => {
  // content/ads/trust-leaderboard-launch.md fills the howto slot until 2026-04-30T23:59:59Z.
  const EXPIRY = Date.parse("2026-04-30T23:59:59Z");
  let now = EXPIRY - 9_000;
  const lines: string[] = [];
  let held: RunningService;
  beforeAll(async () => {
    held = await startTestService({ now: () => new Date(now), log: createLogger("info", {}, (line) => lines.push(line)) });
  });
  afterAll(() => held.close());

  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await rawRequest(held.url, "GET", url, headers);
    return { ...res, bytes: Buffer.from(res.body) };
  };

  it("renders /howto/ once, answers from memory with a strong ETag until the placement expires, and renders again at that instant", async () => {
    const rendered = await get("/howto/");
    expect(rendered.status).toBe(200);
    expect(rendered.body).toContain('data-ad="trust-leaderboard-launch"');
    // The render itself carries no ETag; its bytes are kept.
    expect(rendered.headers.etag).toBeUndefined();
    expect(rendered.headers["cache-control"]).toBe("public, max-age=9");

    now = EXPIRY - 8_000;
    const kept = await get("/howto/");
    expect(kept.status).toBe(200);
    expect(kept.body).toBe(rendered.body);
    const etag = etagOf(kept.bytes);
    expect(kept.headers.etag).toBe(etag);
    expect(kept.headers["content-length"]).toBe(String(kept.bytes.length));
    expect(kept.headers["content-type"]).toBe("text/html");
    // Never cached by a client past the expiry.
    expect(kept.headers["cache-control"]).toBe("public, max-age=8");
    const revalidated = await get("/howto/", { "if-none-match": etag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.body).toBe("");
    expect(revalidated.headers["cache-control"]).toBe("public, max-age=8");
    const head = await rawRequest(held.url, "HEAD", "/howto/");
    expect([head.status, head.body, head.headers.etag]).toEqual([200, "", etag]);

    now = EXPIRY - 1;
    const last = await get("/howto/");
    expect([last.headers.etag, last.headers["cache-control"]]).toEqual([etag, "public, max-age=0"]);
    expect(last.body).toContain('data-ad="trust-leaderboard-launch"');

    // At the expiry the placement is gone, even for a client revalidating the old ETag.
    now = EXPIRY;
    const after = await get("/howto/", { "if-none-match": etag });
    expect(after.status).toBe(200);
    expect(after.body).not.toContain("<aside");
    expect(after.body).toContain("x402 How-to SOPs</h1>");
    expect(after.headers.etag).toBeUndefined();
    const keptAfter = await get("/howto/");
    expect(keptAfter.body).toBe(after.body);
    expect(keptAfter.headers.etag).toBe(etagOf(keptAfter.bytes));
    expect(keptAfter.headers.etag).not.toBe(etag);
    // The slot has no later placement: five minutes, the most any page is cached.
    expect(keptAfter.headers["cache-control"]).toBe("public, max-age=300");

    // A clock going back to before the expiry renders the placement again rather than serving the later bytes.
    now = EXPIRY - 5_000;
    const back = await get("/howto/");
    expect(back.body).toContain('data-ad="trust-leaderboard-launch"');
    expect(back.headers.etag).toBeUndefined();
  });

  it("holds /, /playbooks and /kb the same way, with and without the trailing slash", async () => {
    for (const url of ["/", "/playbooks", "/playbooks/", "/kb", "/kb/"]) {
      const first = await get(url);
      const second = await get(url);
      expect(first.status, url).toBe(200);
      expect(second.body, url).toBe(first.body);
      expect(second.headers.etag, url).toBe(etagOf(first.bytes));
    }
    // A query string is rendered every time.
    expect((await get("/kb?x=1")).headers.etag).toBeUndefined();
  });

  it("writes one log line per request, the answers from memory included, with its id, path, status and time", () => {
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((r) => r.msg === "request");
    const howto = records.filter((r) => r.path === "/howto/");
    expect(howto.map((r) => [r.method, r.status])).toEqual([
      ["GET", 200],
      ["GET", 200],
      ["GET", 304],
      ["HEAD", 200],
      ["GET", 200],
      ["GET", 200],
      ["GET", 200],
      ["GET", 200],
    ]);
    for (const r of howto) {
      expect(r.request_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.ms).toBeTypeOf("number");
      expect(Object.keys(r)).toEqual(["level", "t", "request_id", "method", "path", "status", "ms", "msg"]);
    }
    expect(new Set(howto.map((r) => r.request_id)).size).toBe(howto.length);
  });

  it("counts the answers from memory in the metrics", async () => {
    const text = await (await fetch(`${held.url}/metrics`)).text();
    expect(text).toContain('http_requests_total{route="page",method="GET",status="304"} 1');
    expect(text).toContain('http_requests_total{route="page",method="HEAD",status="200"} 1');
  });
});

describe("loadStaticFiles", () => {
  it("maps directories, .html names and hashed assets, and skips dotfiles", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "static-"));
    try {
      mkdirSync(path.join(dir, "_astro"));
      mkdirSync(path.join(dir, "docs"));
      mkdirSync(path.join(dir, ".well-known"));
      writeFileSync(path.join(dir, "_astro/app.Ab12Cd.js"), "console.log(1)");
      writeFileSync(path.join(dir, "docs/index.html"), "<p>docs</p>");
      writeFileSync(path.join(dir, "about.html"), "<p>about</p>");
      writeFileSync(path.join(dir, ".env"), "SECRET=1");
      writeFileSync(path.join(dir, ".well-known/x402"), "{}");
      const entries = loadStaticFiles(dir);
      expect([...entries.keys()].sort()).toEqual(["/_astro/app.Ab12Cd.js", "/about", "/about.html", "/docs", "/docs/", "/docs/index.html"]);
      const asset = entries.get("/_astro/app.Ab12Cd.js");
      expect(asset && "file" in asset && asset.file.headers).toEqual({
        "Content-Type": "text/javascript; charset=utf-8",
        "Content-Length": "14",
        "Cache-Control": IMMUTABLE_CACHE,
        ETag: etagOf(Buffer.from("console.log(1)")),
      });
      expect(entries.get("/docs")).toEqual({ redirect: "/docs/" });
      const about = entries.get("/about");
      expect(about && "file" in about && about.file.body.toString()).toBe("<p>about</p>");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("matches If-None-Match lists, weak tags and *", () => {
    expect(matchesEtag('"a"', '"a"')).toBe(true);
    expect(matchesEtag('"b", W/"a"', '"a"')).toBe(true);
    expect(matchesEtag("*", '"a"')).toBe(true);
    expect(matchesEtag('"b"', '"a"')).toBe(false);
    expect(matchesEtag(undefined, '"a"')).toBe(false);
  });
});
