/** Assigns each request an id (echoing a safe incoming `X-Request-Id`) and logs one line when it ends. */
import { randomUUID } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../../log.ts";

const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const ids = new WeakMap<Request, string>();

/** The id assigned to a request. */
export function requestIdOf(req: Request): string {
  return ids.get(req) ?? "unknown";
}

/** Options of `requestContext`. */
export interface RequestContextOptions {
  log: Logger;
  /** Extra fields for the access-log line, e.g. the verified payer. */
  describe?: (req: Request, res: Response) => Record<string, unknown>;
}

/** Middleware factory: request id plus one structured access-log line per request. */
export function requestContext({ log, describe }: RequestContextOptions) {
  return function requestContextMiddleware(req: Request, res: Response, next: NextFunction): void {
    const incoming = req.header("x-request-id");
    const id = incoming && SAFE_ID.test(incoming) ? incoming : randomUUID();
    ids.set(req, id);
    res.setHeader("X-Request-Id", id);
    const started = process.hrtime.bigint();
    res.once("close", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info("request", {
        request_id: id,
        method: req.method,
        path: req.originalUrl.split("?")[0],
        status: res.statusCode,
        ms: Math.round(ms * 100) / 100,
        ...(describe ? describe(req, res) : {}),
      });
    });
    next();
  };
}
