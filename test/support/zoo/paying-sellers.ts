/**
 * Sellers that really take payments: each verifies and settles through a facilitator on a
 * local chain (src/payments/facilitator.ts's in-process one, paying gas from the devnet's
 * facilitator key), and then does what its mode says with the request:
 *
 * - `serve`: verify, settle, answer 200 JSON with PAYMENT-RESPONSE, as a library seller does;
 * - `settle_then_402`: verify, settle, and answer 402 with the challenge again (charged, nothing served);
 * - `ignore_payment`: never read a payment header, answer every call with the same 402;
 * - `x_payment_only`: quote x402 v2 but read only v1's X-PAYMENT header, so a v2 client's
 *   PAYMENT-SIGNATURE is never seen and every call gets the 402 again.
 *
 * Each remembers what the facilitator said to the last payment it tried, the ground truth of
 * why a payment did not go through.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decodePaymentSignatureHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { discoveryAnswer } from "./hand-made-sellers.ts";
import type { ZooSeller } from "./library-sellers.ts";

const PATH = "/api/data";

/** What a paying seller does with a payment. */
export type PayingMode = "serve" | "settle_then_402" | "ignore_payment" | "x_payment_only";

/** A running paying seller. */
export interface PayingSeller extends ZooSeller {
  origin: string;
  /** The facilitator's refusal of the last payment tried (verify's invalidReason or settle's errorReason), or null. */
  lastRefusal(): string | null;
  /** Payments this seller settled. */
  settled(): number;
}

/** Start a seller quoting `challenge(url)` that settles through `facilitator`. */
export async function startPayingSeller(spec: {
  challenge: (url: string) => Record<string, unknown>;
  mode: PayingMode;
  facilitator: FacilitatorClient;
}): Promise<PayingSeller> {
  let origin = "";
  let refusal: string | null = null;
  let settledCount = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (discoveryAnswer({}, path, res, json)) return;
    const url = `${origin}${path}`;
    const challenge = spec.challenge(url);
    const unpaid = (error?: string) =>
      json(
        402,
        { ...challenge, ...(error ? { error } : {}) },
        {
          "PAYMENT-REQUIRED": Buffer.from(JSON.stringify({ ...challenge, ...(error ? { error } : {}) })).toString("base64"),
        },
      );
    if (path !== PATH) return json(404, { error: "not found" });
    const header = spec.mode === "x_payment_only" ? req.headers["x-payment"] : req.headers["payment-signature"];
    if (spec.mode === "ignore_payment" || typeof header !== "string") return unpaid();
    try {
      const payload = decodePaymentSignatureHeader(header);
      const accepts = challenge.accepts as PaymentRequirements[];
      const requirements =
        accepts.find((a) => JSON.stringify(a) === JSON.stringify(payload.accepted)) ?? (accepts[0] as PaymentRequirements);
      const verified = await spec.facilitator.verify(payload, requirements);
      if (!verified.isValid) {
        refusal = verified.invalidReason ?? "invalid";
        return unpaid(refusal);
      }
      const settled = await spec.facilitator.settle(payload, requirements);
      if (!settled.success) {
        refusal = settled.errorReason ?? "settle_failed";
        return unpaid(refusal);
      }
      refusal = null;
      settledCount++;
      if (spec.mode === "settle_then_402") return unpaid();
      return json(200, { data: "paid answer" }, { "PAYMENT-RESPONSE": encodePaymentResponseHeader(settled) });
    } catch (error) {
      refusal = error instanceof Error ? error.message : String(error);
      return unpaid(refusal);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}${PATH}`,
    method: "GET",
    lastRefusal: () => refusal,
    settled: () => settledCount,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
