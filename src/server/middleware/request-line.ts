/**
 * The request line and Host header, checked before anything routes on them.
 *
 * `knownMethods`: the service answers GET, HEAD and POST; any other method (TRACE, PROPFIND,
 * PUT, …) is a 405 JSON error with `Allow` naming what the path does answer.
 *
 * `saneHost`: the Host header only ever names this service. A value that is not a plain
 * `host[:port]` is replaced before Astro builds the request URL from it, so no Host header can
 * change which page or function runs; the dispatcher routes on Express's path anyway.
 */
import type { NextFunction, Request, Response } from "express";
import type { RouteDef } from "../../../spec/route.ts";
import { sendError } from "./send-error.ts";

const KNOWN = new Set(["GET", "HEAD", "POST"]);

/** Endpoints outside the route table and what they answer: the remote MCP endpoint (src/pages/mcp.ts). */
const ENDPOINTS: Record<string, string[]> = { "/mcp": ["POST"] };

/** The methods `path` answers: those of its routes (HEAD with GET), or GET and HEAD for pages and files. */
export function allowedMethods(routes: readonly RouteDef[], path: string): string[] {
  const endpoint = ENDPOINTS[path];
  if (endpoint) return endpoint;
  const methods = routes.filter((r) => r.path === path).map((r) => r.method as string);
  if (methods.length === 0) return ["GET", "HEAD"];
  return methods.includes("GET") ? [...methods, "HEAD"] : methods;
}

/** Middleware factory: 405 for methods outside GET, HEAD and POST. */
export function knownMethods(routes: readonly RouteDef[]) {
  return function knownMethodsMiddleware(req: Request, res: Response, next: NextFunction): void {
    if (KNOWN.has(req.method)) {
      next();
      return;
    }
    const allow = allowedMethods(routes, req.path).join(", ");
    req.resume();
    sendError(
      res,
      "method_not_allowed",
      `${req.method} is not answered here; this path answers ${allow}.`,
      { allow: allow.split(", ") },
      {
        Allow: allow,
      },
    );
  };
}

const HOST = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::[0-9]{1,5})?$/;

/** Middleware factory: replace a Host header that is not a plain `host[:port]` with the public (or local) host. */
export function saneHost(publicUrl: string | undefined) {
  const fallback = publicUrl ? new URL(publicUrl).host : undefined;
  return function saneHostMiddleware(req: Request, _res: Response, next: NextFunction): void {
    const host = req.headers.host;
    if (typeof host !== "string" || !HOST.test(host)) {
      req.headers.host = fallback ?? `localhost:${req.socket.localPort ?? 80}`;
    }
    delete req.headers["x-forwarded-host"];
    next();
  };
}
