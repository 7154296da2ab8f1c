/**
 * Every paid route answers an unpaid call with the exact x402 v2 challenge, in the header and
 * the body, quoting the amount of the price contract (test/support/price-contract.ts), not one
 * computed from the route table the challenge is generated from.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routeKey } from "../spec/route.ts";
import { paidRoutes, routes } from "../spec/routes.ts";
import type { RunningService } from "../src/server/service.ts";
import { contractKey, PAID_CONTRACT } from "./support/price-contract.ts";
import { devnet, startTestService } from "./support/service.ts";

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

it("the route table's paid routes are exactly the contract's", () => {
  expect(paidRoutes.map(routeKey).sort()).toEqual(PAID_CONTRACT.map(contractKey).sort());
});

describe.each(PAID_CONTRACT.map((c) => [contractKey(c), c] as const))("unpaid %s", (key, contract) => {
  it("answers 402 with the same challenge in PAYMENT-REQUIRED and the body", async () => {
    const route = routes.find((r) => routeKey(r) === key);
    if (!route) throw new Error(`${key} is not in the route table`);
    const res = await fetch(`${service.url}${route.path}`, {
      method: route.method,
      ...(route.method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}),
    });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const header = decodePaymentRequiredHeader(res.headers.get("payment-required") as string);
    const body = await res.json();
    expect(body).toEqual(JSON.parse(JSON.stringify(header)));

    expect(header.x402Version).toBe(2);
    expect(header.resource).toEqual({ url: `${service.url}${route.path}`, description: route.summary, mimeType: "application/json" });
    expect(header.accepts).toHaveLength(1);
    expect(header.accepts[0]).toEqual({
      scheme: "exact",
      network: "eip155:8453",
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      amount: contract.atomic,
      payTo: devnet().payTo,
      maxTimeoutSeconds: 300,
      extra: { name: "USD Coin", version: "2" },
    });
    expect(header.extensions?.bazaar).toBeDefined();
  });
});

it("quotes payment-verify at exactly 100000 atomic USDC (0.10)", async () => {
  const res = await fetch(`${service.url}/api/payment-verify`, { method: "POST" });
  const body = (await res.json()) as { accepts: { amount: string }[] };
  expect(body.accepts[0]?.amount).toBe("100000");
});

it("uses PUBLIC_URL for resource URLs behind a proxy", async () => {
  const { testConfig } = await import("./support/service.ts");
  const proxied = await startTestService({ config: { ...testConfig(), publicUrl: "https://api.example.com" } });
  try {
    const res = await fetch(`${proxied.url}/api/payment-verify`, { method: "POST" });
    const body = (await res.json()) as { resource: { url: string } };
    expect(body.resource.url).toBe("https://api.example.com/api/payment-verify");
    const wellKnown = (await (await fetch(`${proxied.url}/.well-known/x402`)).json()) as { resources: string[]; resource_urls: string[] };
    expect(wellKnown.resource_urls).toEqual(wellKnown.resources.map((r) => `https://api.example.com${r.split(" ")[1]}`));
  } finally {
    await proxied.close();
  }
});
