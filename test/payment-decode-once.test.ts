/**
 * One paid call reads its payment header and its body once: the site's scheme decodes the payment
 * header once (for the per-payer in-flight cap, and the gate reuses it), and the body's JSON is
 * parsed once (for the checks before charging, the validation and the function), over HTTP and
 * over MCP, on the real service and the devnet. The EVM scheme's decoder is wrapped in a counter
 * (the same function, counted); `JSON.parse` is watched for the body's exact text. The payer's
 * signature is recovered at most once per request, though the rate limits and the gate both may ask.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningService } from "../src/server/service.ts";
import { type McpAnswer, mcpRpc } from "./support/mcp.ts";
import { buyerAccount, challengeOf, signPayment, startTestService } from "./support/service.ts";

const decodes = vi.hoisted(() => ({ count: 0, signatureChecks: 0 }));
vi.mock("../src/payments/payload.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/payments/payload.ts")>();
  return {
    ...original,
    decodePayment: (header: string) => {
      decodes.count++;
      return original.decodePayment(header);
    },
    signedByPayer: (...args: Parameters<typeof original.signedByPayer>) => {
      decodes.signatureChecks++;
      return original.signedByPayer(...args);
    },
  };
});

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());
afterEach(() => vi.restoreAllMocks());

/** How many times `JSON.parse` read exactly `text` while `run` ran. */
async function parsesOf(text: string, run: () => Promise<void>): Promise<number> {
  const parse = vi.spyOn(JSON, "parse");
  await run();
  const count = parse.mock.calls.filter(([read]) => read === text).length;
  parse.mockRestore();
  return count;
}

describe("a paid call decodes its payment header once and parses its body once", () => {
  it("over HTTP", async () => {
    const url = `${service.url}/api/payment-verify`;
    const body = JSON.stringify({ tx_hash: `0x${"d1".repeat(32)}` });
    const header = await signPayment(await challengeOf(url, { method: "POST" }), buyerAccount(5));
    decodes.count = 0;
    let status = 0;
    const parses = await parsesOf(body, async () => {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "payment-signature": header }, body });
      status = res.status;
      await res.arrayBuffer();
    });
    expect(status).toBe(200);
    expect(decodes.count).toBe(1);
    expect(parses).toBe(1);
  });

  it("over MCP", async () => {
    const args = { tx_hash: `0x${"d2".repeat(32)}` };
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyerAccount(5));
    const message = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "verifyPayment", arguments: args, _meta: { "x402/payment": header } },
    };
    decodes.count = 0;
    let answer: McpAnswer<{ isError?: boolean; _meta?: Record<string, unknown> }> | undefined;
    const parses = await parsesOf(JSON.stringify(args), async () => {
      answer = (await mcpRpc<{ isError?: boolean; _meta?: Record<string, unknown> }>(service.url, message)).answers[0];
    });
    expect(answer?.result?.isError ?? false).toBe(false);
    expect((answer?.result?._meta?.["x402/payment-response"] as { success?: boolean } | undefined)?.success).toBe(true);
    expect(decodes.count).toBe(1);
    expect(parses).toBe(1);
  });
});

describe("a paid call recovers its payer's signature at most once", () => {
  it("none within the payments' rate budget, one when the gate reads a replay of a settled payment", async () => {
    const url = `${service.url}/api/payment-verify`;
    const body = JSON.stringify({ tx_hash: `0x${"d3".repeat(32)}` });
    const header = await signPayment(await challengeOf(url, { method: "POST" }), buyerAccount(5));
    const post = () => fetch(url, { method: "POST", headers: { "content-type": "application/json", "payment-signature": header }, body });
    decodes.signatureChecks = 0;
    const first = await post();
    await first.arrayBuffer();
    expect([first.status, decodes.signatureChecks]).toEqual([200, 0]);
    // The same authorisation again is known to the ledger, so the gate checks the signature.
    decodes.signatureChecks = 0;
    const again = await post();
    await again.arrayBuffer();
    expect([again.status, decodes.signatureChecks]).toEqual([200, 1]);
  });

  it("signedOnce runs the check once per decoded payment, even for two asks at once, and again for another payment", async () => {
    const { signedOnce } = await import("../src/payments/payload.ts");
    let runs = 0;
    const check = signedOnce(async () => {
      runs++;
      return true;
    });
    const decoded = { payload: {} } as unknown as Parameters<typeof check>[0];
    expect(await Promise.all([check(decoded), check(decoded)])).toEqual([true, true]);
    expect(runs).toBe(1);
    await check({ payload: {} } as unknown as Parameters<typeof check>[0]);
    expect(runs).toBe(2);
  });
});
