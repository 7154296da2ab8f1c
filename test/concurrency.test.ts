/** Five copies of one payment sent at once: the function runs once, one settlement, four 409s. */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunningService } from "../src/server/service.ts";
import {
  buyerAccount,
  capturingLogger,
  chainClient,
  challengeOf,
  devnet,
  signPayment,
  startTestService,
  usdcBalance,
} from "./support/service.ts";

let service: RunningService;
const log = capturingLogger("debug");
beforeAll(async () => {
  service = await startTestService({ log });
});
afterAll(() => service.close());

it("answers one request, refuses the others with 409 payment_in_progress, and settles once", async () => {
  const buyer = buyerAccount(6);
  const before = await usdcBalance(buyer.address);
  const facilitatorTxs = await chainClient().getTransactionCount({ address: devnet().facilitator.address });
  const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
  const call = () =>
    fetch(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { "content-type": "application/json", "X-Payment": header },
      body: JSON.stringify({ tx_hash: `0x${"33".repeat(32)}` }),
    });
  log.lines.length = 0;
  const responses = await Promise.all([call(), call(), call(), call(), call()]);
  const statuses = responses.map((r) => r.status).sort();
  expect(statuses).toEqual([200, 409, 409, 409, 409]);
  for (const res of responses.filter((r) => r.status === 409)) {
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payment_in_progress");
  }
  const runs = log.lines.filter((l) => l.msg === "function answered" && l.route === "POST /api/payment-verify");
  expect(runs).toHaveLength(1);
  expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
  expect(await chainClient().getTransactionCount({ address: devnet().facilitator.address })).toBe(facilitatorTxs + 1);
});
