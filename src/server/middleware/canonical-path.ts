/**
 * Refuses request targets that are not in canonical form. x402 matches paid routes on
 * Express's `req.path`, while Astro and URL parsing normalise dot segments, backslashes and
 * percent-encoding; a non-canonical path could be matched as free by one and routed to a
 * paid function by the other. Refusing them first closes that gap for every route.
 */
import type { NextFunction, Request, Response } from "express";
import { sendError } from "./send-error.ts";

/** Why a raw request path is not canonical, or `null` when it is. */
export function nonCanonicalReason(rawPath: string): string | null {
  if (!rawPath.startsWith("/")) return "the request target must be an absolute path starting with /";
  if (rawPath.includes("\\")) return "backslashes are not allowed in paths";
  if (/%(2e|2f|5c|00)/i.test(rawPath)) return "encoded dots, slashes, backslashes and NULs are not allowed in paths";
  if (rawPath.includes("//")) return "empty path segments (//) are not allowed";
  const segments = rawPath.split("/");
  if (segments.some((s) => s === "." || s === "..")) return "dot segments (. and ..) are not allowed in paths";
  if (rawPath.startsWith("/api/") && rawPath.includes("%")) return "API paths are plain ASCII; percent-encoding is not allowed";
  if (/[\u0000-\u001f\u007f]/.test(rawPath)) return "control characters are not allowed in paths";
  return null;
}

/** Middleware: 400 `non_canonical_path` for any non-canonical request path. */
export function canonicalPath(req: Request, res: Response, next: NextFunction): void {
  const raw = req.url.split("?")[0] ?? "";
  const reason = nonCanonicalReason(raw);
  if (reason) {
    sendError(res, "non_canonical_path", `Path refused: ${reason}. Use the canonical path listed in /openapi.json.`, {
      path: raw.slice(0, 200),
    });
    return;
  }
  next();
}
