/** The discovery documents and the landing page are generated from the route table and served by the running service. */
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, expect, it } from "vitest";
import { atomicUsdc, routeKey } from "../spec/route.ts";
import { paidRoutes, routes } from "../spec/routes.ts";
import type { RunningService } from "../src/server/service.ts";
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
  expect(listed.sort()).toEqual(routes.map(routeKey).sort());
  for (const route of routes) {
    const op = doc.paths[route.path]?.[route.method.toLowerCase()];
    expect(op?.operationId).toBe(route.operationId);
    expect(op?.["x-price-usd"]).toBe(route.price ?? 0);
    expect(op?.security).toEqual(route.price === null ? [] : [{ x402: [] }]);
    if (route.price !== null) expect(op?.["x-payment-info"]?.amount).toBe(atomicUsdc(route.price));
  }
});

it("/.well-known/x402 lists every paid route in the shape x402scan reads", async () => {
  const res = await fetch(`${service.url}/.well-known/x402`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const doc = (await res.json()) as {
    version: number;
    resources: string[];
    instructions: string;
    endpoints: { path: string; amount: string }[];
  };
  expect(doc.version).toBe(1);
  expect(doc.resources).toEqual(paidRoutes.map(routeKey));
  expect(doc.instructions).toMatch(/x402/);
  expect(doc.endpoints.map((e) => [e.path, e.amount])).toEqual(paidRoutes.map((r) => [r.path, atomicUsdc(r.price as number)]));
});

it("the landing page lists every route with its method and price, and links the documents", async () => {
  const res = await fetch(`${service.url}/`);
  expect(res.status).toBe(200);
  const html = await res.text();
  for (const route of routes) {
    expect(html).toContain(`<code>${route.path}</code>`);
    expect(html).toContain(escapeHtml(route.summary));
  }
  expect(html).toContain('href="/openapi.json"');
  expect(html).toContain('href="/.well-known/x402"');
  expect(html).toContain("$0.10");
});

it("GET /api/pricing lists every route's price from the route table", async () => {
  const res = await fetch(`${service.url}/api/pricing`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as {
    network: string;
    asset: string;
    pay_to: string;
    routes: { method: string; path: string; amount: string; free: boolean }[];
  };
  expect(body.network).toBe("eip155:8453");
  expect(body.asset).toBe("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
  expect(body.routes.map((r) => [r.method, r.path, r.free, r.amount])).toEqual(
    routes.map((r) => [r.method, r.path, r.price === null, r.price === null ? "0" : atomicUsdc(r.price)]),
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
