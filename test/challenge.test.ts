/**
 * Every paid route answers an unpaid call with the exact x402 v2 challenge, in the header and
 * the body, quoting the amount of the price contract (test/support/price-contract.ts), not one
 * computed from the route table the challenge is generated from. The challenge parses with
 * @x402/core, its Bazaar extension validates with @x402/extensions and declares the output,
 * x402scan's validator (@agentcash/discovery) finds nothing, and the header stays under 4 KB.
 */
import { validatePaymentRequiredDetailed } from "@agentcash/discovery";
import { type TObject, Type } from "@sinclair/typebox";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { parsePaymentRequired } from "@x402/core/schemas";
import { type DiscoveryExtension, validateDiscoveryExtension } from "@x402/extensions/bazaar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineRoute, routeKey } from "../spec/route.ts";
import { paidRoutes, routes } from "../spec/routes.ts";
import { loadConfig } from "../src/config.ts";
import { base } from "../src/networks/base.ts";
import { CHALLENGE_BUDGET, paymentRoutes } from "../src/payments/requirements.ts";
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
      network: base.id,
      asset: base.usdc.address,
      amount: contract.atomic,
      payTo: devnet().payTo,
      maxTimeoutSeconds: 300,
      extra: { name: "USD Coin", version: "2", primaryType: "TransferWithAuthorization" },
    });
    expect(header.extensions?.bazaar).toBeDefined();
  });

  it("parses with @x402/core, validates as Bazaar metadata with its output, and fits a 4 KB header", async () => {
    const route = routes.find((r) => routeKey(r) === key);
    if (!route) throw new Error(`${key} is not in the route table`);
    const res = await fetch(`${service.url}${route.path}`, {
      method: route.method,
      ...(route.method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}),
    });
    const raw = res.headers.get("payment-required") as string;
    // nginx's default proxy buffer (proxy_buffer_size) is 4 KB for the whole header block.
    expect(raw.length).toBeLessThan(4096);
    const header = decodePaymentRequiredHeader(raw);
    expect(parsePaymentRequired(header).success).toBe(true);

    const bazaar = header.extensions?.bazaar as DiscoveryExtension & {
      info: { output?: { type: string; example: Record<string, unknown> } };
      schema: { properties: { output?: { properties: { example: { properties: Record<string, unknown> } } } } };
    };
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    // The output names the route's fields: the required ones in the example and, when the outline
    // fits the header budget, every field with its type in the schema.
    const response = route.response as TObject;
    expect(bazaar.info.output?.type).toBe("json");
    expect(Object.keys(bazaar.info.output?.example ?? {}).sort()).toEqual([...(response.required ?? [])].sort());
    const outline = bazaar.schema.properties.output?.properties.example.properties;
    if (outline) expect(Object.keys(outline).sort()).toEqual(Object.keys(response.properties).sort());

    const detailed = validatePaymentRequiredDetailed(await res.json());
    expect(detailed.issues).toEqual([]);
    expect(detailed.valid).toBe(true);
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
    for (const route of paidRoutes) {
      const paid = await fetch(`${proxied.url}${route.path}`, { method: route.method });
      expect((paid.headers.get("payment-required") as string).length, routeKey(route)).toBeLessThan(4096);
    }
    const wellKnown = (await (await fetch(`${proxied.url}/.well-known/x402`)).json()) as { resources: string[]; resource_urls: string[] };
    expect(wellKnown.resource_urls).toEqual(wellKnown.resources.map((r) => `https://api.example.com${r.split(" ")[1]}`));
  } finally {
    await proxied.close();
  }
});

it("drops the output outline of a route whose challenge would pass the budget, and refuses one that passes it even so", () => {
  const fields = (n: number) => Type.Object(Object.fromEntries(Array.from({ length: n }, (_, i) => [`field_${i}`, Type.String()])));
  const wide = defineRoute({
    method: "POST",
    path: "/api/wide",
    operationId: "wide",
    summary: "A route with a wide answer",
    description: "Test only.",
    tags: ["free"],
    price: 0.1,
    body: Type.Object({}),
    response: fields(45),
    errors: [],
  });
  const payTo = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
  const config = loadConfig({ PUBLIC_URL: "https://api.example.com" });
  const entries = paymentRoutes([wide], config, payTo) as unknown as Record<string, { extensions: { bazaar: DiscoveryExtension } }>;
  const bazaar = entries["POST /api/wide"]?.extensions.bazaar as DiscoveryExtension & {
    info: { input: Record<string, unknown>; output: { example: Record<string, unknown> } };
  };
  expect(Object.keys(bazaar.info.output.example)).toHaveLength(45);
  expect(
    (bazaar.schema as unknown as { properties: { output: { properties: { example: unknown } } } }).properties.output.properties.example,
  ).toEqual({
    type: "object",
  });
  // The resource server fills in the method from the route key when it answers.
  const answered = { ...bazaar, info: { ...bazaar.info, input: { ...bazaar.info.input, method: "POST" } } } as DiscoveryExtension;
  expect(validateDiscoveryExtension(answered)).toEqual({ valid: true });

  expect(() => paymentRoutes([{ ...wide, response: fields(400) }], config, payTo)).toThrow(
    new RegExp(`^POST /api/wide: its 402 challenge takes \\d+ bytes in base64, over ${CHALLENGE_BUDGET}: `),
  );
});
