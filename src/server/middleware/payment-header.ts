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

/** The EIP-3009 authorisation identity (payer and nonce) of a request's payment header, if it has one. */
export function authorizationKey(req: Request): string | null {
  const header = req.headers["payment-signature"];
  if (typeof header !== "string" || header.length > 16_384) return null;
  try {
    const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as {
      payload?: { authorization?: { from?: unknown; nonce?: unknown } };
    };
    const auth = payload.payload?.authorization;
    if (typeof auth?.from !== "string" || typeof auth.nonce !== "string") return null;
    return `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`;
  } catch {
    return null;
  }
}
