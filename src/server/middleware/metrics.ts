/**
 * Counts and times every request for the Prometheus metrics (src/metrics/metrics.ts) and
 * serves them at `GET /metrics`: to loopback clients (the address Express resolved, so a
 * trusted proxy's forwarded client counts, not the proxy), or to anyone sending
 * `Authorization: Bearer <METRICS_TOKEN>`. Anyone else is told nothing is there.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { RouteDef } from "../../../spec/route.ts";
import { ServiceError } from "../../errors.ts";
import { isLoopback } from "../../limits/client-key.ts";
import type { ServiceMetrics } from "../../metrics/metrics.ts";
import { routeOf } from "./route-match.ts";
import { sendError } from "./send-error.ts";

const FILE_NAME = /\.[a-z0-9]+$/i;
const METHODS = new Set(["GET", "HEAD", "POST"]);

/**
 * Start timing `req`; the function returned counts and times it (call it once its answer has
 * ended) under `route` (a label already known), or the label of its path and status.
 */
export function requestCounter(
  metrics: ServiceMetrics,
  req: IncomingMessage,
  res: ServerResponse,
  route: string | ((status: number) => string),
): () => void {
  const started = process.hrtime.bigint();
  return () => countRequestNow(metrics, req, typeof route === "string" ? route : route(res.statusCode), res.statusCode, started);
}

/** Count and time `req`, answered `status`, under `route`, timed from `started` (`process.hrtime.bigint()`). */
export function countRequestNow(metrics: ServiceMetrics, req: IncomingMessage, route: string, status: number, started: bigint): void {
  const method = METHODS.has(req.method as string) ? (req.method as string) : "other";
  metrics.requests.inc({ route, method, status: String(status) });
  metrics.requestSeconds.observe({ route, method }, Number(process.hrtime.bigint() - started) / 1e9);
}

/**
 * The `route` label of a request: the path of its route (matched once, src/server/middleware/route-match.ts),
 * or a fixed word (never the raw path, which a caller chooses).
 */
export function routeLabel(route: RouteDef | ServiceError | undefined, path: string, status: number): string {
  if (path === "/metrics") return "metrics";
  if (path.startsWith("/api/")) return route && !(route instanceof ServiceError) ? route.path : "/api/unmatched";
  if (path.startsWith("/_astro/") || FILE_NAME.test(path)) return "static";
  return status === 404 ? "unmatched" : "page";
}

/** Middleware factory: count and time each request when its answer ends. */
export function requestMetrics(metrics: ServiceMetrics) {
  return function requestMetricsMiddleware(req: Request, res: Response, next: NextFunction): void {
    const label = (status: number) => routeLabel(routeOf(req)?.route, req.path, status);
    res.once("close", requestCounter(metrics, req, res, label));
    next();
  };
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Middleware factory: `GET /metrics` in the Prometheus text format, for loopback or the bearer of `token` (METRICS_TOKEN; undefined: loopback only). */
export function metricsEndpoint(metrics: ServiceMetrics, token: string | undefined) {
  return function metricsEndpointMiddleware(req: Request, res: Response, next: NextFunction): void {
    if (req.path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      next();
      return;
    }
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const allowed =
      isLoopback(req.ip ?? req.socket.remoteAddress) || (token !== undefined && bearer !== undefined && sameToken(bearer, token));
    if (!allowed) {
      sendError(res, "not_found", "Nothing at /metrics for this client. The API is described at /openapi.json.");
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        res.status(200).setHeader("Content-Type", metrics.registry.contentType);
        res.setHeader("Cache-Control", "no-store");
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (error: unknown) => next(error),
    );
  };
}
