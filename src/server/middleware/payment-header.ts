/**
 * Accepts the payment in `X-Payment` (any case) as an alias of `PAYMENT-SIGNATURE`, the
 * only header `@x402/express` decodes. Two different payments in the two headers are refused.
 */
import type { NextFunction, Request, Response } from "express";
import { sendError } from "./send-error.ts";

/** Middleware factory: copy `X-Payment` into `PAYMENT-SIGNATURE`. */
export function paymentHeaderAlias() {
  return function paymentHeaderAliasMiddleware(req: Request, res: Response, next: NextFunction): void {
    const alias = req.headers["x-payment"];
    const signature = req.headers["payment-signature"];
    if (Array.isArray(alias) || Array.isArray(signature)) {
      sendError(res, 400, "invalid_request", "Send one payment header, once.", {
        fields: [{ field: "header.x-payment", expected: "one base64 payment payload" }],
      });
      return;
    }
    if (alias !== undefined) {
      if (signature !== undefined && signature !== alias) {
        sendError(res, 400, "invalid_request", "PAYMENT-SIGNATURE and X-Payment carry different payments; send one.", {
          fields: [{ field: "header.x-payment", expected: "absent, or the same value as PAYMENT-SIGNATURE" }],
        });
        return;
      }
      req.headers["payment-signature"] = alias;
    }
    next();
  };
}

/** What a payment header claims (unverified until the facilitator verifies it). */
export interface ClaimedPayment {
  payer: string;
  nonce: string;
  amount: string;
  asset: string;
  network: string;
  validBefore: number | null;
}

const claims = new WeakMap<Request, ClaimedPayment | null>();

/** Decode the EIP-3009 payment in a request's `PAYMENT-SIGNATURE` header, if it carries one (decoded once per request). */
export function claimedPayment(req: Request): ClaimedPayment | null {
  if (claims.has(req)) return claims.get(req) ?? null;
  const claim = decodeClaim(req.headers["payment-signature"]);
  claims.set(req, claim);
  return claim;
}

function decodeClaim(header: string | string[] | undefined): ClaimedPayment | null {
  if (typeof header !== "string" || header.length > 16_384) return null;
  try {
    const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as {
      accepted?: { amount?: unknown; asset?: unknown; network?: unknown };
      payload?: { authorization?: { from?: unknown; nonce?: unknown; value?: unknown; validBefore?: unknown } };
    };
    const auth = payload.payload?.authorization;
    if (typeof auth?.from !== "string" || typeof auth.nonce !== "string") return null;
    const validBefore = Number(auth.validBefore);
    return {
      payer: auth.from.toLowerCase(),
      nonce: auth.nonce.toLowerCase(),
      amount: String(auth.value ?? payload.accepted?.amount ?? "0").replace(/[^0-9]/g, "") || "0",
      asset: String(payload.accepted?.asset ?? ""),
      network: String(payload.accepted?.network ?? ""),
      validBefore: Number.isSafeInteger(validBefore) ? validBefore : null,
    };
  } catch {
    return null;
  }
}

/** The EIP-3009 authorisation identity (payer and nonce) of a request's payment header, if it has one. */
export function authorizationKey(req: Request): string | null {
  const claim = claimedPayment(req);
  return claim ? `${claim.payer}:${claim.nonce}` : null;
}
