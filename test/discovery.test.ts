/**
 * The discovery documents and the landing page are generated from the route table and served
 * by the running service. Their prices are checked against the price contract written out in
 * test/support/price-contract.ts, not against the route table they are generated from.
 */
import { compileErrors, validate } from "@readme/openapi-parser";
import { recoverMessageAddress } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { routes } from "../spec/routes.ts";
import { buildOpenApi } from "../src/discovery/openapi.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { contractKey, PAID_CONTRACT, PRICE_CONTRACT } from "./support/price-contract.ts";
import { devnet, startTestService, testConfig } from "./support/service.ts";

const escapeHtml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");

/** A route only a signed-in wallet reads: it names the SIWX scheme. */
const signedIn = new Set(["GET /api/balance"]);
/** A top-up's price is the amount asked, 1 to 100 USD (`?amount`). */
const dynamic: Record<string, { min: string; max: string }> = { "POST /api/balance/topup": { min: "1.00", max: "100.00" } };

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
    paths: Record<string, Record<string, { operationId: string; security: unknown[]; "x-price-usd": number; "x-payment-info"?: unknown }>>;
    security: unknown[];
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
  // The contract's X-Payment scheme is the document's default; every operation opts out of it,
  // because discovery tools list an operation whose security names an API key as needing one.
  expect(doc.security).toEqual([{ x402: [] }]);
  for (const c of PRICE_CONTRACT) {
    const key = contractKey(c);
    const op = doc.paths[c.path]?.[c.method.toLowerCase()];
    expect(op?.["x-price-usd"], key).toBe(c.usd ?? 0);
    expect(op?.security, key).toEqual(signedIn.has(key) ? [{ siwx: [] }] : []);
    const price = dynamic[key]
      ? { mode: "dynamic", currency: "USD", ...dynamic[key] }
      : { mode: "fixed", currency: "USD", amount: c.usd?.toFixed(2) };
    expect(op?.["x-payment-info"], key).toEqual(c.usd === null ? undefined : { price, protocols: [{ x402: {} }] });
  }
  for (const route of routes) expect(doc.paths[route.path]?.[route.method.toLowerCase()]?.operationId).toBe(route.operationId);
});

it("/openapi.json names a contact, a licence, guidance for agents, and a description for every tag", async () => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
    info: { contact: unknown; license: unknown; "x-guidance": string };
    tags: { name: string; description: string }[];
  };
  expect(doc.info.contact).toEqual({ name: "Service pages and error codes", url: `${service.url}/` });
  const head = await fetch(`${service.url}/openapi.json`, { method: "HEAD" });
  expect(head.status).toBe(200);
  expect(head.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(doc.info.license).toEqual({ name: "Proprietary: answers are for the paying caller's own use", url: `${service.url}/#terms` });
  // Under 4000 characters, agents' directories inline it in their first answer.
  expect(doc.info["x-guidance"].length).toBeLessThan(4000);
  expect(doc.info["x-guidance"]).toContain("- Verify a USDC settlement transaction on Base: POST /api/payment-verify ($0.10)\n");
  // A family of four or more routes under one parent path shares one heading.
  expect(doc.info["x-guidance"]).toContain("- how-to:\n  GET /api/howto (free)\n  GET/POST /api/howto/create-x402-endpoint ($0.30)\n");
  expect(doc.info["x-guidance"]).toContain("- Price list of every route: GET /api/pricing (free)\n");
  for (const c of PRICE_CONTRACT) {
    const key = contractKey(c);
    const bounds = dynamic[key];
    const price = bounds ? `$${bounds.min}-$${bounds.max}, ?amount` : c.usd === null ? "free" : `$${c.usd.toFixed(2)}`;
    expect(`${doc.info["x-guidance"]}\n`).toContain(` ${c.path} (${signedIn.has(key) ? "free, Sign-In-With-X" : price})\n`);
  }
  // Every tag a route carries is declared once, with a description.
  expect(doc.tags.map((t) => t.name)).toEqual([...new Set(routes.flatMap((r) => r.tags))]);
  for (const tag of doc.tags) expect(tag.description.length, tag.name).toBeGreaterThan(40);
});

it("local mode publishes the devnet payTo key's ownership proof of the origin it is called on", async () => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as Record<string, { ownershipProofs: string[] }>;
  const proofs = doc["x-agentcash-provenance"]?.ownershipProofs ?? [];
  expect(proofs).toHaveLength(1);
  expect(doc["x-discovery"]?.ownershipProofs).toEqual(proofs);
  expect(await recoverMessageAddress({ message: service.url, signature: proofs[0] as `0x${string}` })).toBe(devnet().payTo);

  const proxied = await startTestService({ config: { ...testConfig(), publicUrl: "https://api.example.com" } });
  try {
    const behindProxy = (await (await fetch(`${proxied.url}/openapi.json`)).json()) as Record<string, { ownershipProofs: string[] }> & {
      info: { contact: { url: string } };
    };
    const signature = behindProxy["x-agentcash-provenance"]?.ownershipProofs[0] as `0x${string}`;
    expect(await recoverMessageAddress({ message: "https://api.example.com", signature })).toBe(devnet().payTo);
    expect(behindProxy.info.contact.url).toBe("https://api.example.com/");
  } finally {
    await proxied.close();
  }
});

it("publishes configured ownership proofs where x402scan reads them, and none when there are none", () => {
  const proof = `0x${"1b".repeat(65)}`;
  const withProofs = buildOpenApi(routes, { version: "1.0.0", origin: "https://api.example.com", ownershipProofs: [proof] });
  expect(withProofs["x-agentcash-provenance"]).toEqual({ ownershipProofs: [proof] });
  expect(withProofs["x-discovery"]).toEqual({ ownershipProofs: [proof] });
  const without = buildOpenApi(routes, { version: "1.0.0", origin: "https://api.example.com" });
  expect(Object.keys(without)).not.toContain("x-agentcash-provenance");
  expect(Object.keys(without)).not.toContain("x-discovery");
});

it("serves a favicon and icons, linked from every page's head", async () => {
  for (const [file, type] of [
    ["/favicon.svg", "image/svg+xml"],
    ["/favicon.ico", "image/vnd.microsoft.icon"],
    ["/apple-touch-icon.png", "image/png"],
    ["/icon-192.png", "image/png"],
  ] as const) {
    const res = await fetch(`${service.url}${file}`);
    expect(res.status, file).toBe(200);
    expect(res.headers.get("content-type"), file).toBe(type);
    expect((await res.arrayBuffer()).byteLength, file).toBeGreaterThan(300);
  }
  for (const page of ["/", "/errors", "/howto"]) {
    const html = await (await fetch(`${service.url}${page}`)).text();
    expect(html, page).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    expect(html, page).toContain('<link rel="apple-touch-icon" href="/apple-touch-icon.png">');
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
  expect(body.network).toBe(base.id);
  expect(body.asset).toBe(base.usdc.address);
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
