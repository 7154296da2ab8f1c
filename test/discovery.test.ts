/**
 * The discovery documents and the landing page are generated from the route table and served
 * by the running service. Their prices are checked against the price contract written out in
 * test/support/price-contract.ts, not against the route table they are generated from.
 */
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, expect, it } from "vitest";
import { routes } from "../spec/routes.ts";
import type { RunningService } from "../src/server/service.ts";
import { contractKey, PAID_CONTRACT, PRICE_CONTRACT } from "./support/price-contract.ts";
import { startTestService } from "./support/service.ts";

const escapeHtml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

it("/openapi.json is a valid OpenAPI 3.1.0 document listing every route with its price", async () => {
  const res = await fetch(`${service.url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const doc = (await res.json()) as {
    openapi: string;
    info: { version: string };
    paths: Record<
      string,
      Record<string, { operationId: string; security: unknown[]; "x-price-usd": number; "x-payment-info"?: { amount: string } }>
    >;
    components: { securitySchemes: Record<string, unknown> };
  };
  const result = await validate(structuredClone(doc) as never);
  expect(result.valid ? "valid" : compileErrors(result)).toBe("valid");
  expect(doc.openapi).toBe("3.1.0");
  expect(doc.info.version).toBe("1.0.0");
  expect(doc.components.securitySchemes.x402).toEqual({
    type: "apiKey",
    in: "header",
    name: "X-Payment",
    description: expect.any(String),
  });
  const listed = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
  expect(listed.sort()).toEqual(PRICE_CONTRACT.map(contractKey).sort());
  for (const c of PRICE_CONTRACT) {
    const op = doc.paths[c.path]?.[c.method.toLowerCase()];
    expect(op?.["x-price-usd"], contractKey(c)).toBe(c.usd ?? 0);
    expect(op?.security, contractKey(c)).toEqual(c.usd === null ? [] : [{ x402: [] }]);
    expect(op?.["x-payment-info"]?.amount, contractKey(c)).toBe(c.atomic ?? undefined);
  }
  for (const route of routes) expect(doc.paths[route.path]?.[route.method.toLowerCase()]?.operationId).toBe(route.operationId);
});

it("/.well-known/x402 lists every paid route in the shape x402scan reads", async () => {
  const res = await fetch(`${service.url}/.well-known/x402`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const doc = (await res.json()) as {
    version: number;
    resources: string[];
    instructions: string;
    endpoints: { method: string; path: string; price_usd: number; amount: string }[];
  };
  expect(doc.version).toBe(1);
  expect([...doc.resources].sort()).toEqual(PAID_CONTRACT.map(contractKey).sort());
  expect(doc.instructions).toMatch(/x402/);
  const byKey = (rows: [string, ...unknown[]][]) => [...rows].sort(([a], [b]) => a.localeCompare(b));
  expect(byKey(doc.endpoints.map((e) => [contractKey(e), e.price_usd, e.amount]))).toEqual(
    byKey(PAID_CONTRACT.map((c) => [contractKey(c), c.usd, c.atomic])),
  );
});

it("the landing page lists every route with its method and price, and links the documents", async () => {
  const res = await fetch(`${service.url}/`);
  expect(res.status).toBe(200);
  const html = await res.text();
  for (const route of routes) {
    expect(html).toContain(`<code>${route.path}</code>`);
    expect(html).toContain(escapeHtml(route.summary));
  }
  // Each table row: method, path, ..., price cell ("free" or "$0.10").
  const rows = [
    ...html.matchAll(
      /<tr[^>]*>\s*<td[^>]*>\s*<span class="method"[^>]*>(GET|POST)<\/span>\s*<code[^>]*>([^<]+)<\/code>[\s\S]*?<td class="price"[^>]*>([\s\S]*?)<\/td>\s*<\/tr>/g,
    ),
  ].map((m) => [`${m[1]} ${m[2]}`, (m[3] ?? "").replace(/<[^>]*>/g, "").trim()]);
  const sorted = (list: string[][]) => [...list].sort(([a = ""], [b = ""]) => a.localeCompare(b));
  expect(sorted(rows)).toEqual(sorted(PRICE_CONTRACT.map((c) => [contractKey(c), c.usd === null ? "free" : `$${c.usd.toFixed(2)}`])));
  expect(html).toContain('href="/openapi.json"');
  expect(html).toContain('href="/.well-known/x402"');
});

it("GET /api/pricing lists every route's price as the contract states it", async () => {
  const res = await fetch(`${service.url}/api/pricing`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as {
    network: string;
    asset: string;
    pay_to: string;
    routes: { method: string; path: string; amount: string; price_usd: number; free: boolean }[];
  };
  expect(body.network).toBe("eip155:8453");
  expect(body.asset).toBe("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
  const byKey = (rows: [string, ...unknown[]][]) => [...rows].sort(([a], [b]) => a.localeCompare(b));
  expect(byKey(body.routes.map((r) => [contractKey(r), r.free, r.price_usd, r.amount]))).toEqual(
    byKey(PRICE_CONTRACT.map((c) => [contractKey(c), c.usd === null, c.usd ?? 0, c.atomic ?? "0"])),
  );
});

it("serves a cacheable free document from memory with the same bytes and headers, and a fresh request id", async () => {
  const first = await fetch(`${service.url}/api/pricing`);
  const second = await fetch(`${service.url}/api/pricing`);
  expect(second.status).toBe(200);
  expect(await second.text()).toBe(await first.text());
  expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"));
  expect(second.headers.get("content-length")).toBe(first.headers.get("content-length"));
  expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
});
