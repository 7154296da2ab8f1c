/**
 * Assigns each request an id (echoing a safe incoming `X-Request-Id`) and logs one line when
 * it ends. The id is written back into the request's `X-Request-Id` header, so everything
 * downstream (Astro's Fetch `Request`, the payment gate) reads the same id.
 */
import { randomUUID } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../../log.ts";

const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The id assigned to a request. */
export function requestIdOf(req: Request): string {
  return String(req.headers["x-request-id"] ?? "unknown");
}

/** Options of `requestContext`. */
export interface RequestContextOptions {
  log: Logger;
}

/** Middleware factory: request id plus one structured access-log line per request. */
export function requestContext({ log }: RequestContextOptions) {
  return function requestContextMiddleware(req: Request, res: Response, next: NextFunction): void {
    const incoming = req.headers["x-request-id"];
    const id = typeof incoming === "string" && SAFE_ID.test(incoming) ? incoming : randomUUID();
    req.headers["x-request-id"] = id;
    res.setHeader("X-Request-Id", id);
    const started = process.hrtime.bigint();
    res.once("close", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info("request", {
        request_id: id,
        method: req.method,
        path: req.originalUrl.split("?")[0]?.slice(0, 200),
        status: res.statusCode,
        ms: Math.round(ms * 100) / 100,
      });
    });
    next();
  };
}
