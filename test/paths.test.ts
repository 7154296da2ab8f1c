/**
 * Non-canonical paths never reach a paid function unpaid: x402 matches on Express's path
 * while Astro normalises dot segments and backslashes, so they are refused before either.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunningService } from "../src/server/service.ts";
import { capturingLogger, rawRequest, startTestService } from "./support/service.ts";

let service: RunningService;
const log = capturingLogger("debug");
beforeAll(async () => {
  service = await startTestService({ log });
});
afterAll(() => service.close());

const body = JSON.stringify({ tx_hash: `0x${"44".repeat(32)}` });
const headers = { "content-type": "application/json" };

it.each([
  ["/api/./payment-verify", "dot segments (. and ..) are not allowed in paths"],
  ["/api/a/../payment-verify", "dot segments (. and ..) are not allowed in paths"],
  ["/api\\payment-verify", "backslashes are not allowed in paths"],
  ["/api/%2e/payment-verify", "encoded dots, slashes, backslashes and NULs are not allowed in paths"],
  ["/api/%2E%2E/api/payment-verify", "encoded dots, slashes, backslashes and NULs are not allowed in paths"],
  ["/api/payment-verify/.", "dot segments (. and ..) are not allowed in paths"],
  ["/api%2fpayment-verify", "encoded dots, slashes, backslashes and NULs are not allowed in paths"],
  ["//api/payment-verify", "empty path segments (//) are not allowed"],
  ["/api/%70ayment-verify", "API paths are plain ASCII; percent-encoding is not allowed"],
])("%s is refused with 400 non_canonical_path", async (path, reason) => {
  log.lines.length = 0;
  const res = await rawRequest(service.url, "POST", path, headers, body);
  expect(res.status).toBe(400);
  expect(JSON.parse(res.body)).toEqual({
    error: {
      code: "non_canonical_path",
      message: `Path refused: ${reason}. Use the canonical path listed in /openapi.json.`,
      details: { path },
      docs: "/errors#non_canonical_path",
    },
  });
  expect(log.lines.filter((l) => l.msg === "function answered")).toEqual([]);
});

it("the canonical path still asks for payment", async () => {
  const res = await rawRequest(service.url, "POST", "/api/payment-verify", headers, body);
  expect(res.status).toBe(402);
});

it("a trailing slash is the same paid route, not a free one", async () => {
  const res = await rawRequest(service.url, "POST", "/api/payment-verify/", headers, body);
  expect(res.status).toBe(402);
});

it("other letter cases do not reach the function unpaid", async () => {
  const res = await rawRequest(service.url, "POST", "/API/Payment-Verify", headers, body);
  expect([402, 404]).toContain(res.status);
  expect(log.lines.filter((l) => l.msg === "function answered")).toEqual([]);
});

it("unknown API paths answer 404 JSON, not HTML", async () => {
  const res = await rawRequest(service.url, "GET", "/api/nope");
  expect(res.status).toBe(404);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(JSON.parse(res.body).error.code).toBe("not_found");
});

it("a known path with the wrong method answers 405 with Allow", async () => {
  const res = await rawRequest(service.url, "DELETE", "/api/health");
  expect(res.status).toBe(405);
  expect(res.headers.allow).toBe("GET, HEAD");
  expect(JSON.parse(res.body).error.code).toBe("method_not_allowed");
});

it("an unknown path under a family of routes lists the valid ones", async () => {
  const res = await rawRequest(service.url, "GET", "/api/howto/nope");
  expect(res.status).toBe(404);
  expect(JSON.parse(res.body).error.details).toEqual({
    path: "/api/howto/nope",
    valid_paths: [
      "/api/howto/create-x402-endpoint",
      "/api/howto/vps-gdrive-connect",
      "/api/howto/x402-register",
      "/api/howto/youtube-auto-ai",
    ],
  });
});
