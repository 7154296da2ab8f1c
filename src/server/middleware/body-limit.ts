/**
 * Reads request bodies up to a limit before anything verifies a payment, so an oversized
 * body is refused with 413 and never charged. The bytes are handed to Astro unchanged
 * (as a Buffer in `req.body`, which the node adapter uses as the request body).
 */
import type { NextFunction, Request, Response } from "express";
import { sendError } from "./send-error.ts";

/** Options of `bodyLimit`. */
export interface BodyLimitOptions {
  /** Largest accepted body in bytes; default 64 KiB. */
  maxBytes?: number;
}

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Middleware factory: buffer the body (at most `maxBytes`) into `req.body`, or answer 413. */
export function bodyLimit({ maxBytes = 64 * 1024 }: BodyLimitOptions = {}) {
  const tooLarge = (res: Response) =>
    sendError(res, "payload_too_large", `Request bodies are limited to ${maxBytes} bytes; send a smaller body.`, {
      max_bytes: maxBytes,
    });
  return function bodyLimitMiddleware(req: Request, res: Response, next: NextFunction): void {
    // Any method can carry a body (a GET included), so every body is measured; only methods
    // with a body hand it on, since a GET Request with a body is an error in the fetch API.
    const hasBody = Number(req.headers["content-length"] ?? "0") > 0 || req.headers["transfer-encoding"] !== undefined;
    if (!hasBody && !METHODS_WITH_BODY.has(req.method)) {
      next();
      return;
    }
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > maxBytes) {
      res.setHeader("Connection", "close");
      tooLarge(res);
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on("data", (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxBytes) {
        failed = true;
        res.setHeader("Connection", "close");
        tooLarge(res);
        return;
      }
      chunks.push(chunk);
    });
    req.once("end", () => {
      if (failed) return;
      if (METHODS_WITH_BODY.has(req.method)) req.body = Buffer.concat(chunks);
      next();
    });
    req.once("error", (error) => {
      if (!failed) next(error);
    });
  };
}
