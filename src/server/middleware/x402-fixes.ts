/**
 * Two corrections around `@x402/express`, each placed where it must run.
 *
 * `challengeBodies` (before x402): x402 answers 402 with an empty JSON body and its own
 * `{error: string}` bodies for facilitator failures; we put the challenge itself in the 402
 * body (decoded from the `PAYMENT-REQUIRED` header, so the two are identical) and give every
 * other error the service's one error shape.
 *
 * `statusFromWriteHead` (after x402): x402 buffers `writeHead` and decides whether to settle
 * from `res.statusCode`, but Astro sets the status through `writeHead(status, headers)`.
 * Recording the status first means a failing endpoint is seen as failing and never settled.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { NextFunction, Request, Response } from "express";
import type { ErrorCode } from "../../errors.ts";

const isEmpty = (body: unknown) => body === undefined || body === null || (typeof body === "object" && Object.keys(body).length === 0);

/** Middleware factory: the challenge in every 402 body, and one error shape for x402's own errors. */
export function challengeBodies() {
  return function challengeBodiesMiddleware(_req: Request, res: Response, next: NextFunction): void {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const status = res.statusCode;
      const challenge = res.getHeader("PAYMENT-REQUIRED");
      if (status === 402 && typeof challenge === "string" && isEmpty(body)) {
        return json(decodePaymentRequiredHeader(challenge));
      }
      if (status === 402 && isEmpty(body)) {
        return json({
          error: {
            code: "settlement_failed",
            message: "The payment could not be settled; you were not charged. Sign a fresh authorisation and retry.",
          },
        });
      }
      if (status >= 500 && body && typeof (body as { error?: unknown }).error === "string") {
        const code: ErrorCode = status === 502 ? "upstream_error" : "internal_error";
        const message =
          status === 502
            ? "The payment facilitator failed; you were not charged. Retry shortly."
            : "The service failed while handling the payment; you were not charged.";
        return json({ error: { code, message } });
      }
      return json(body);
    };
    next();
  };
}

/** Middleware factory: make a status passed to `writeHead` visible as `res.statusCode`. */
export function statusFromWriteHead() {
  return function statusFromWriteHeadMiddleware(_req: Request, res: Response, next: NextFunction): void {
    const writeHead = res.writeHead;
    res.writeHead = function patchedWriteHead(this: Response, ...args: unknown[]) {
      if (typeof args[0] === "number") res.statusCode = args[0];
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as Response["writeHead"];
    next();
  };
}
