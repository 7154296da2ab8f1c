/**
 * Every error body links to its code's section of /errors, and ERROR_DOCS
 * (src/error-docs.ts) documents exactly the codes the service sends.
 */

import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Value } from "@sinclair/typebox/value";
import { expect, it } from "vitest";
import {
  ERROR_CODES,
  ERROR_DOCS,
  ErrorBody,
  errorBody,
  InvalidRequestError,
  NotFoundError,
  ServiceError,
  statusOf,
  toErrorResponse,
  UpstreamError,
} from "../src/errors.ts";

it("answers a generic 500 for anything that is not a service error, without its message", () => {
  expect(new Error("x") instanceof ServiceError).toBe(false);
  expect(toErrorResponse(new Error("secret detail")).body.error.message).not.toContain("secret");
});

it("links every error body to its code's section of /errors", () => {
  const headers = { Allow: "POST" };
  expect(toErrorResponse(new ServiceError("method_not_allowed", "POST only.", { details: { allow: ["POST"] }, headers }))).toEqual({
    status: 405,
    headers,
    body: {
      error: { code: "method_not_allowed", message: "POST only.", details: { allow: ["POST"] }, docs: "/errors#method_not_allowed" },
    },
  });
  expect(toErrorResponse(new NotFoundError("gone")).body).toEqual({
    error: { code: "not_found", message: "gone", docs: "/errors#not_found" },
  });
  expect(toErrorResponse(new Error("boom")).body).toEqual({
    error: { code: "internal_error", message: "The service failed while answering; you were not charged.", docs: "/errors#internal_error" },
  });
  expect(errorBody("payment_in_progress", "busy")).toEqual({
    error: { code: "payment_in_progress", message: "busy", docs: "/errors#payment_in_progress" },
  });
  expect(errorBody("invalid_payload", "bad header", { field: "payload.signature" })).toEqual({
    error: { code: "invalid_payload", message: "bad header", details: { field: "payload.signature" }, docs: "/errors#invalid_payload" },
  });
});

it("documents exactly the 22 codes the service sends, each with its status, never charged", () => {
  const expected: Record<string, number> = {
    invalid_request: 400,
    non_canonical_path: 400,
    target_not_allowed: 400,
    payment_required: 402,
    invalid_payload: 402,
    payment_already_used: 402,
    insufficient_balance: 402,
    signin_required: 402,
    signin_invalid: 402,
    settlement_failed: 402,
    settlement_unknown: 402,
    not_found: 404,
    method_not_allowed: 405,
    payment_in_progress: 409,
    payment_id_conflict: 409,
    payload_too_large: 413,
    rate_limited: 429,
    internal_error: 500,
    upstream_error: 502,
    unavailable: 503,
    payment_unavailable: 503,
    upstream_timeout: 504,
  };
  expect(Object.keys(ERROR_DOCS).sort()).toEqual(Object.keys(expected).sort());
  for (const [code, doc] of Object.entries(ERROR_DOCS)) {
    expect(doc.status, code).toBe(expected[code]);
    expect(doc.charged, code).toBe(false);
    for (const text of [doc.title, doc.when, doc.fix]) expect(text.trim().length, code).toBeGreaterThan(0);
  }
});

it("is quoted in the docs with the status the service sends it with", () => {
  const files = ["README.md", ...readdirSync("docs").map((f) => path.join("docs", f))].filter((f) => f.endsWith(".md"));
  const quoted: string[] = [];
  for (const file of files) {
    for (const m of readFileSync(file, "utf8").matchAll(/\b([1-5][0-9]{2})\s+`([a-z_]+)`/g)) {
      const [, status, code] = m as unknown as [string, string, string];
      if (!(code in ERROR_DOCS)) continue;
      quoted.push(code);
      expect(Number(status), `${file}: ${status} ${code}`).toBe(ERROR_DOCS[code as keyof typeof ERROR_DOCS].status);
    }
  }
  expect(new Set(quoted).size).toBeGreaterThan(15);
});

it("takes every error's status from the one error table", () => {
  for (const code of ERROR_CODES) {
    const error = new ServiceError(code, "m");
    expect(error.status, code).toBe(ERROR_DOCS[code].status);
    expect(toErrorResponse(error).status, code).toBe(statusOf(code));
  }
  expect(new InvalidRequestError("bad").status).toBe(400);
  expect(new NotFoundError("gone").status).toBe(404);
  expect(["upstream_error", "unavailable", "upstream_timeout"].map((k) => new UpstreamError(k as never, "rpc", "x").status)).toEqual([
    502, 503, 504,
  ]);
});

it("describes the error body once, in TypeBox, with the table's codes: every body the service builds fits it", () => {
  expect(ErrorBody.properties.error.properties.code.anyOf.map((l) => l.const)).toEqual(Object.keys(ERROR_DOCS));
  for (const code of ERROR_CODES) {
    expect(Value.Check(ErrorBody, errorBody(code, "m", { a: 1 })), code).toBe(true);
    expect(Value.Check(ErrorBody, toErrorResponse(new ServiceError(code, "m")).body), code).toBe(true);
  }
  expect(Value.Check(ErrorBody, { error: { code: "no_such_code", message: "m", docs: "/errors" } })).toBe(false);
});
