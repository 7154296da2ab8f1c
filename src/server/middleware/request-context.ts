/**
 * Assigns each request an id (echoing a safe incoming `X-Request-Id`) and logs one line when
 * it ends. The id is written back into the request's `X-Request-Id` header, so everything
 * downstream (Astro's Fetch `Request`, the payment gate) reads the same id.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../../log.ts";

const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The id assigned to a request. */
export function requestIdOf(req: Request): string {
  return String(req.headers["x-request-id"] ?? "unknown");
}

/**
 * Give `req` its id (in its `X-Request-Id` header and the answer's) and return what logs its
 * line once the answer has ended: `request_id`, `method`, `path` (without the query, at most 200
 * characters), `status` and `ms`. `url` is the request target as received (Express rewrites
 * `req.url` under a mounted router; its `originalUrl` is the received one).
 */
export function beginRequest(req: IncomingMessage, res: ServerResponse, log: Logger, url = req.url ?? ""): () => void {
  const id = requestIdFor(req);
  req.headers["x-request-id"] = id;
  res.setHeader("X-Request-Id", id);
  const started = process.hrtime.bigint();
  return () => logRequestLine(log, req, url, id, res.statusCode, started);
}

/** The id of `req`: its own `X-Request-Id` when that is a safe token (at most 64 characters of `A-Za-z0-9._:-`), else a new UUID. */
export function requestIdFor(req: IncomingMessage): string {
  const incoming = req.headers["x-request-id"];
  return typeof incoming === "string" && SAFE_ID.test(incoming) ? incoming : randomUUID();
}

/** Log the access line of `req`, received as `url`, answered `status`, timed from `started` (`process.hrtime.bigint()`). */
export function logRequestLine(log: Logger, req: IncomingMessage, url: string, id: string, status: number, started: bigint): void {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const query = url.indexOf("?");
  log.info("request", {
    request_id: id,
    method: req.method ?? "",
    path: (query >= 0 ? url.slice(0, query) : url).slice(0, 200),
    status,
    ms: Math.round(ms * 100) / 100,
  });
}

/** Middleware factory: request id plus one structured access-log line per request. */
export function requestContext(log: Logger) {
  return function requestContextMiddleware(req: Request, res: Response, next: NextFunction): void {
    res.once("close", beginRequest(req, res, log, req.originalUrl));
    next();
  };
}
