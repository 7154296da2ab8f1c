/**
 * Every request carrying a decodable payment gets a ledger row, refusals included: an
 * authorisation that already paid for one request, presented with another, is refused
 * `payment_already_used` and leaves a `not_charged` row (status 402, that reason, the second
 * request's id and hash) beside the settled one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningService } from "../src/server/service.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { authorizationOf, challengeOf, signPayment, startTestService, usdcBalance } from "./support/service.ts";

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.close());

const verify = (header: string, tx: string, requestId: string) =>
  fetch(`${service.url}/api/payment-verify`, {
    method: "POST",
    headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": header, "X-Request-Id": requestId },
    body: JSON.stringify({ tx_hash: tx }),
  });

describe("the ledger records refused payments", () => {
  it("keeps a not_charged row for an authorisation refused as payment_already_used", async () => {
    const buyer = await freshBuyer(100_000n);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const { nonce } = authorizationOf(header);
    expect((await verify(header, `0x${"a1".repeat(32)}`, "ledger-refusal-first")).status).toBe(200);

    const refused = await verify(header, `0x${"a2".repeat(32)}`, "ledger-refusal-second");
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("payment_already_used");
    expect(await usdcBalance(buyer.address)).toBe(0n);

    const rows = await ledgerRowsOf(service.services.store, buyer.address, nonce);
    expect(rows.map((r) => [r.request_id, r.route, r.outcome, r.status, r.reason])).toEqual([
      ["ledger-refusal-first", "POST /api/payment-verify", "settled", 200, null],
      ["ledger-refusal-second", "POST /api/payment-verify", "not_charged", 402, "payment_already_used"],
    ]);
    expect(rows[1]?.request_hash).not.toBe(rows[0]?.request_hash);
    expect(rows[1]?.settlement_tx).toBeNull();
  });
});
