/**
 * Built pages and static files are served by express.static with a validator and a
 * Cache-Control fit for the file; a matching If-None-Match gets a 304 without a body. Free
 * documents held in memory (/api/pricing, /api/kb) carry a strong ETag of their bytes and
 * revalidate the same way; each of their requests is logged and counted like any other.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import createEtag from "etag";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/log.ts";
import { PAGE_CACHE } from "../src/server/app.ts";
import type { RunningService } from "../src/server/service.ts";
import { rawRequest, startTestService } from "./support/service.ts";

const client = path.resolve(import.meta.dirname, "../dist/client");

let service: RunningService;
const lines: string[] = [];
beforeAll(async () => {
  service = await startTestService({ log: createLogger("info", {}, (line) => lines.push(line)) });
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
  ])("GET %s answers the built %s with a validator and a five-minute Cache-Control", async (url, file, type) => {
    const bytes = readFileSync(path.join(client, file));
    const res = await fetch(`${service.url}${url}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    expect(res.headers.get("etag")).toMatch(/^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    expect(res.headers.get("cache-control")).toBe(PAGE_CACHE);
    expect(res.headers.get("content-type")).toBe(type);
    expect(res.headers.get("content-length")).toBe(String(bytes.length));
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 304 without a body to a matching If-None-Match, also among several tags, and 200 to another", async () => {
    const etag = (await rawRequest(service.url, "GET", "/methodology/")).headers.etag as string;
    for (const header of [etag, `"other", ${etag}`, "*"]) {
      const res = await rawRequest(service.url, "GET", "/methodology/", { "if-none-match": header });
      expect(res.status, header).toBe(304);
      expect(res.body).toBe("");
      expect(res.headers.etag).toBe(etag);
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
  });

  it("a directory without its slash redirects to it, keeping the query", async () => {
    const res = await rawRequest(service.url, "GET", "/methodology?q=gas");
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe("/methodology/?q=gas");
  });

  it("POST to a page is not served as a file", async () => {
    const res = await rawRequest(service.url, "POST", "/methodology/", { "content-type": "application/json" }, "{}");
    expect(res.status).not.toBe(200);
  });
});

describe("free documents held in memory", () => {
  it.each(["/api/pricing", "/api/kb"])(
    "%s carries a strong ETag of its bytes from the first answer and revalidates with 304",
    async (url) => {
      const first = await fetch(`${service.url}${url}`);
      const bytes = Buffer.from(await first.arrayBuffer());
      expect(first.status).toBe(200);
      const etag = createEtag(bytes);
      expect(first.headers.get("etag")).toBe(etag);
      expect(first.headers.get("content-length")).toBe(String(bytes.length));
      expect(first.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const second = await fetch(`${service.url}${url}`);
      expect(Buffer.from(await second.arrayBuffer()).equals(bytes)).toBe(true);
      const revalidated = await rawRequest(service.url, "GET", url, { "if-none-match": etag });
      expect(revalidated.status).toBe(304);
      expect(revalidated.body).toBe("");
      expect(revalidated.headers.etag).toBe(etag);
      const head = await rawRequest(service.url, "HEAD", url);
      expect([head.status, head.body, head.headers.etag]).toEqual([200, "", etag]);
    },
  );

  it("an answer from memory carries the caller's request id when it is a safe token, else a new one, on a 304 too", async () => {
    const url = "/api/kb";
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

  it("an answer from memory carries the CORS headers the chain gives the same path (a query string takes the chain), on a 304 and a HEAD too", async () => {
    const cors = (headers: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith("access-control-")));
    const chain = await rawRequest(service.url, "GET", "/api/kb?via=chain", { origin: "https://app.example" });
    expect(cors(chain.headers)).toEqual({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "PAYMENT-REQUIRED,PAYMENT-RESPONSE,Balance-Debited,Balance-Remaining,Retry-After,WWW-Authenticate",
    });
    const held = await rawRequest(service.url, "GET", "/api/kb", { origin: "https://app.example" });
    const notModified = await rawRequest(service.url, "GET", "/api/kb", { "if-none-match": held.headers.etag as string });
    const head = await rawRequest(service.url, "HEAD", "/api/kb");
    expect([held, notModified, head].map((r) => [r.status, cors(r.headers)])).toEqual([
      [200, cors(chain.headers)],
      [304, cors(chain.headers)],
      [200, cors(chain.headers)],
    ]);
  });

  it("a page held in memory (GET /) carries the CORS headers of the chain's answer, on a 304 and a HEAD too", async () => {
    const cors = (headers: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith("access-control-")));
    const expected = {
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "PAYMENT-REQUIRED,PAYMENT-RESPONSE,Balance-Debited,Balance-Remaining,Retry-After,WWW-Authenticate",
    };
    // The first answer is the chain's, and holds the page.
    const chain = await rawRequest(service.url, "GET", "/", { origin: "https://app.example" });
    expect([chain.status, cors(chain.headers)]).toEqual([200, expected]);
    const held = await rawRequest(service.url, "GET", "/", { origin: "https://app.example" });
    // Only a held page says its age.
    expect(held.headers.age).toBeDefined();
    const notModified = await rawRequest(service.url, "GET", "/", { "if-none-match": held.headers.etag as string });
    const head = await rawRequest(service.url, "HEAD", "/");
    expect([held, notModified, head].map((r) => [r.status, cors(r.headers)])).toEqual([
      [200, expected],
      [304, expected],
      [200, expected],
    ]);
  });

  it("writes one log line per request, the answers from memory included, with its id, path, status and time", () => {
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((r) => r.msg === "request");
    const pricing = records.filter((r) => r.path === "/api/pricing");
    expect(pricing.map((r) => [r.method, r.status])).toEqual([
      ["GET", 200],
      ["GET", 200],
      ["GET", 304],
      ["HEAD", 200],
    ]);
    for (const r of pricing) {
      expect(r.request_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.ms).toBeTypeOf("number");
      expect(Object.keys(r)).toEqual(["level", "t", "request_id", "method", "path", "status", "ms", "msg"]);
    }
    expect(new Set(pricing.map((r) => r.request_id)).size).toBe(pricing.length);
  });

  it("counts the answers from memory in the metrics", async () => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    expect(text).toContain('http_requests_total{route="/api/pricing",method="GET",status="304"} 1');
    expect(text).toContain('http_requests_total{route="/api/pricing",method="HEAD",status="200"} 1');
  });
});
