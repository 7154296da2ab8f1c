/**
 * A prepaid balance pays for the calls it can pay for, also while they run. The debit comes after
 * the function answered, so a wallet holding 1 USD (ten calls at 0.10) that starts twelve at once
 * must have the two it cannot pay for refused at once, not run alongside the ten and refused
 * after: otherwise one small balance starts any number of paid runs (chain scans, upstream calls)
 * and pays for ten.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInHeader } from "../scripts/buyer/sign-in.ts";
import type { RunningService } from "../src/server/service.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
import { payingFetch, startTestService, testConfig } from "./support/service.ts";
import { type Stub, startStub } from "./support/stub-server.ts";

type Answer = { error?: { code: string; message: string; details?: Record<string, unknown> } };

describe("calls paid from a balance, in flight together", () => {
  let service: RunningService;
  let dexscreener: Stub;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  beforeAll(async () => {
    // DexScreener holds every answer until released, then fails: the price comes from DefiLlama.
    dexscreener = await startStub(async (_req, res) => {
      await held;
      res.writeHead(503, { "content-type": "application/json" }).end("{}");
    });
    service = await startTestService({ config: testConfig({ DEXSCREENER_URL: dexscreener.url }) });
  });
  afterAll(async () => {
    release();
    await service?.close();
    await dexscreener?.close();
  });

  it("runs the ten that 1 USD pays for and refuses the other two before running them", async () => {
    const buyer = await freshBuyer(2_000_000n);
    const topup = await payingFetch(buyer)(`${service.url}/api/balance/topup?amount=1`, { method: "POST" });
    expect(topup.status).toBe(200);

    const url = `${service.url}/api/gas-tracker`;
    const call = async () => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "SIGN-IN-WITH-X": await signInHeader(buyer, url) },
        body: "{}",
      });
      return { status: res.status, body: (await res.json()) as Answer };
    };
    const answered: { status: number; body: Answer }[] = [];
    const calls = Array.from({ length: 12 }, () => call().then((a) => answered.push(a)));

    // While every running call waits on DexScreener, the two the balance cannot cover are answered.
    for (let i = 0; i < 100 && answered.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(dexscreener.requests.length).toBeGreaterThan(0);
    expect(answered.map((a) => a.status)).toEqual([402, 402]);
    for (const { body } of answered) {
      expect(body.error?.code).toBe("insufficient_balance");
      expect(body.error?.details).toMatchObject({ balance: 1, in_flight: 1, price: 0.1 });
      expect(body.error?.message).toBe(
        `The balance of ${buyer.address.toLowerCase()} holds 1 USDC, of which its calls still in flight take 1, which leaves less than this call's 0.1. Nothing was debited. Send it again when they have answered, top the balance up with POST /api/balance/topup?amount=<USD>, or pay this call with the challenge in this answer. You were not charged.`,
      );
    }

    release();
    await Promise.all(calls);
    expect(answered.slice(2).map((a) => a.status)).toEqual(Array(10).fill(200));
    const read = await fetch(`${service.url}/api/balance`, {
      headers: { "SIGN-IN-WITH-X": await signInHeader(buyer, `${service.url}/api/balance`) },
    });
    expect(((await read.json()) as { balance: number }).balance).toBe(0);
  });
});
