/**
 * The header budget of a 402: the whole raw response header block (status line, every header,
 * the blank line) of every paid route of both sites stays under 3,584 bytes, so nginx's default
 * 4 KB `proxy_buffer_size` holds it with upstream keep-alive and room to spare. Measured from the
 * bytes a socket receives, as nginx reads them, with an Origin (CORS headers included) and
 * `Connection: keep-alive`; unpaid, and with a payment refused for a reason (x402 puts the reason
 * in the challenge's `error`).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteDef } from "../spec/route.ts";
import { baseToolsRoutes } from "../spec/routes/base-tools.ts";
import { routes } from "../spec/routes.ts";
import { CHALLENGE_BUDGET } from "../src/payments/requirements.ts";
import { type RunningService, startService } from "../src/server/service.ts";
import { productionConfig, startTestService, testStore } from "./support/service.ts";

/** nginx's default buffer is 4,096 bytes; 512 are left for what a proxy or a longer public origin adds. */
const HEADER_BLOCK_BUDGET = 3584;

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.close());

/** Send one raw HTTP/1.1 request on a keep-alive connection; resolve with the status and the raw header block, in bytes. */
function headerBlock(base: string, method: string, path: string, headers: Record<string, string>, body = "", host?: string) {
  const url = new URL(base);
  return new Promise<{ status: number; bytes: number; text: string }>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      const text = received.subarray(0, end + 4).toString("latin1");
      socket.destroy();
      resolve({ status: Number(text.slice(9, 12)), bytes: end + 4, text });
    });
    socket.on("error", reject);
    const lines = [
      `${method} ${path} HTTP/1.1`,
      `Host: ${host ?? url.host}`,
      "Connection: keep-alive",
      "Origin: https://buyer.example",
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ...(method === "POST" ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
    ];
    socket.write(`${lines.join("\r\n")}\r\n\r\n${body}`);
  });
}

/** The request of a route's example: its query string or JSON body. */
function requestOf(route: RouteDef): { path: string; headers: Record<string, string>; body: string } {
  const input = (route.example?.input ?? {}) as Record<string, unknown>;
  if (route.method === "GET") {
    const query = new URLSearchParams(Object.entries(input).map(([k, v]) => [k, String(v)])).toString();
    return { path: query ? `${route.path}?${query}` : route.path, headers: {}, body: "" };
  }
  // A POST's query parameters (a top-up's amount) go in the query string, the rest in the body.
  const inQuery = new Set(Object.keys((route.query?.properties ?? {}) as Record<string, unknown>));
  const query = new URLSearchParams(
    Object.entries(input)
      .filter(([k]) => inQuery.has(k))
      .map(([k, v]) => [k, String(v)]),
  ).toString();
  const body = Object.fromEntries(Object.entries(input).filter(([k]) => !inQuery.has(k)));
  return {
    path: query ? `${route.path}?${query}` : route.path,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
}

const paid = [
  ...routes.filter((r) => r.price !== null).map((route) => ({ route, site: "primary" as const })),
  ...baseToolsRoutes.filter((r) => r.price !== null).map((route) => ({ route, site: "secondary" as const })),
];

describe("the raw header block of every 402", () => {
  it("is under 3,584 bytes for every paid route of both sites, unpaid", async () => {
    const sizes: [string, number, number][] = [];
    for (const { route, site } of paid) {
      const base = site === "primary" ? service.url : (service.secondaryUrl as string);
      const { path, headers, body } = requestOf(route);
      const answer = await headerBlock(base, route.method, path, headers, body);
      sizes.push([`${route.method} ${route.path}`, answer.status, answer.bytes]);
    }

    expect(sizes.filter(([, status]) => status !== 402)).toEqual([]);
    expect(sizes.filter(([, , bytes]) => bytes >= HEADER_BLOCK_BUDGET)).toEqual([]);
    // The secondary's honeypot check, the largest challenge when this was measured (4,110 bytes).
    expect(sizes.find(([key]) => key === "POST /v1/honeypot-check")?.[2]).toBeLessThan(HEADER_BLOCK_BUDGET);
  });

  it("is under 3,584 bytes when a payment is refused with its reason", async () => {
    const route = baseToolsRoutes.find((r) => r.path === "/v1/honeypot-check") as RouteDef;
    const { path, headers, body } = requestOf(route);
    // A payment header that decodes to nothing usable: refused with the challenge and the reason;
    // the buyer's own request id (64 characters, the longest echoed) in place of a UUID.
    const refused = await headerBlock(
      service.secondaryUrl as string,
      "POST",
      path,
      { ...headers, "PAYMENT-SIGNATURE": "bm90LWEtcGF5bWVudA==", "X-Request-Id": "r".repeat(64) },
      body,
    );
    expect(refused.status).toBe(402);
    expect(refused.text).toMatch(/\r\npayment-required: /i);
    expect(refused.text).toContain(`X-Request-Id: ${"r".repeat(64)}`);
    expect(refused.bytes).toBeLessThan(HEADER_BLOCK_BUDGET);
  });
});

describe("behind a proxy with a long public origin", () => {
  // 49 characters: the longest origin whose challenges fit (POST /api/x402-check is the widest).
  const fits = "https://api.x402-chain-data-service.example.co.uk";
  const secondary = "https://token-risk.x402-chain-data-service.example.co.uk";

  it("answers every 402 of both sites within the budget, the sign-in declaration's origin counted", async () => {
    expect(fits).toHaveLength(49);
    const config = productionConfig({ PUBLIC_URL: fits, SECONDARY_PUBLIC_URL: secondary });
    const proxied = await startService({ config, store: await testStore(), maintenance: false });
    try {
      const sizes: [string, number, number, number][] = [];
      for (const { route, site } of paid) {
        const host = new URL(site === "primary" ? fits : secondary).host;
        const { path, headers, body } = requestOf(route);
        const answer = await headerBlock(proxied.url, route.method, path, { ...headers, "X-Request-Id": "r".repeat(64) }, body, host);
        const challenge = /\r\npayment-required: ([^\r]*)\r\n/i.exec(answer.text)?.[1] ?? "";
        sizes.push([`${route.method} ${route.path}`, answer.status, challenge.length, answer.bytes]);
      }
      expect(sizes.filter(([, status]) => status !== 402)).toEqual([]);
      expect(sizes.filter(([, , challenge, bytes]) => challenge > CHALLENGE_BUDGET || bytes >= HEADER_BLOCK_BUDGET)).toEqual([]);
    } finally {
      await proxied.close();
    }
  });

  it("refuses to start with a public origin its challenges cannot carry, naming the route and the origin", async () => {
    // 56 characters: once served with its sign-in declaration, x402-check's challenge took 3,132 bytes.
    const long = "https://apis.x402-chain-data-for-agents.example-corp.com";
    const config = productionConfig({ PUBLIC_URL: long });
    const outcome = await startService({ config, store: await testStore(), maintenance: false }).then(
      async (started) => {
        await started.close();
        return "started";
      },
      (error: Error) => error.message,
    );
    expect(outcome).toBe(
      `POST /api/x402-check: its 402 challenge takes 3132 bytes in base64, over ${CHALLENGE_BUDGET} with the public origin ${long} (56 characters): use a shorter public origin`,
    );
  });
});
