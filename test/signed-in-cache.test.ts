/**
 * A free answer read by signing in is one wallet's own (its balance, movements and spending by
 * route): no cache on the way may keep it and hand it to the next caller of the same URL, who
 * sends a different SIGN-IN-WITH-X header (a header shared caches do not key on).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInHeader } from "../scripts/buyer/sign-in.ts";
import type { RunningService } from "../src/server/service.ts";
import { buyerAccount, payingFetch, startTestService } from "./support/service.ts";

describe("GET /api/balance, signed in", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("answers the wallet's balance marked private and not to be stored", async () => {
    const buyer = buyerAccount(6);
    const topup = await payingFetch(buyer)(`${service.url}/api/balance/topup?amount=1`, { method: "POST" });
    expect(topup.status).toBe(200);
    const res = await fetch(`${service.url}/api/balance`, {
      headers: { "SIGN-IN-WITH-X": await signInHeader(buyer, `${service.url}/api/balance`) },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { user_id: string; movements: { kind: string; amount: number }[] };
    expect(body.user_id).toBe(buyer.address.toLowerCase());
    expect(body.movements[0]).toMatchObject({ kind: "topup", amount: 1 });
    expect(res.headers.get("cache-control")).toBe("private, no-store");
  });

  it("keeps free answers that are the same for everyone cacheable as before", async () => {
    const res = await fetch(`${service.url}/api/kb/search?q=facilitator`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBeNull();
  });
});
