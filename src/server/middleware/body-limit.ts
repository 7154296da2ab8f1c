/**
 * Reads request bodies up to a limit before anything verifies a payment, so an oversized
 * body is refused with 413 and never charged. The bytes are handed to Astro unchanged
 * (as a Buffer in `req.body`, which the node adapter uses as the request body).
 */
import type { NextFunction, Request, Response } from "express";
import getRawBody from "raw-body";
import { sendError } from "./send-error.ts";

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Middleware factory: buffer the body (at most `maxBytes`, read by raw-body) into `req.body`, or answer 413. */
export function bodyLimit(maxBytes: number) {
  return function bodyLimitMiddleware(req: Request, res: Response, next: NextFunction): void {
    // Any method can carry a body (a GET included), so every body is measured; only methods
    // with a body hand it on, since a GET Request with a body is an error in the fetch API.
    const hasBody = Number(req.headers["content-length"] ?? "0") > 0 || req.headers["transfer-encoding"] !== undefined;
    if (!hasBody && !METHODS_WITH_BODY.has(req.method)) {
      next();
      return;
    }
    getRawBody(req, { limit: maxBytes, length: req.headers["content-length"] }).then(
      (body) => {
        if (METHODS_WITH_BODY.has(req.method)) req.body = body;
        next();
      },
      (error: { type?: string }) => {
        // A client that went away has nobody left to answer.
        if (error.type === "request.aborted") return;
        if (error.type !== "entity.too.large") return next(error);
        res.setHeader("Connection", "close");
        sendError(res, "payload_too_large", `Request bodies are limited to ${maxBytes} bytes; send a smaller body.`, {
          max_bytes: maxBytes,
        });
        req.resume();
      },
    );
  };
}
