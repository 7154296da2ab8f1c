/**
 * Cross-origin access for browsers as buyers: any origin may call any path, read a 402's
 * PAYMENT-REQUIRED and a paid answer's PAYMENT-RESPONSE, and send a payment or a sign-in.
 * No credentials are involved (a payment travels in a header, never in a cookie), so the
 * wildcard origin is safe and keeps every answer cacheable by shared caches. A preflight is
 * answered 204 here, before the method check, which would refuse OPTIONS.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import cors from "cors";

/**
 * Headers a page may send: the payment (x402 v2 and v1), a sign-in, JSON bodies and the MCP
 * transport's. `@x402/fetch` also sends `Access-Control-Expose-Headers` as a request header on
 * its paid retry; a preflight that did not allow it would block every buyer using that client.
 */
export const CORS_ALLOWED_HEADERS = [
  "Content-Type",
  "PAYMENT-SIGNATURE",
  "X-Payment",
  "SIGN-IN-WITH-X",
  "Access-Control-Expose-Headers",
  "Mcp-Protocol-Version",
  "Mcp-Session-Id",
];

/**
 * Headers a page may read besides the safelisted ones. Kept short: it is sent with every
 * answer, a 402 included, whose whole header block has a budget (src/payments/requirements.ts).
 */
export const CORS_EXPOSED_HEADERS = [
  "PAYMENT-REQUIRED",
  "PAYMENT-RESPONSE",
  "Balance-Debited",
  "Balance-Remaining",
  "Retry-After",
  "WWW-Authenticate",
];

/** A day: browsers cap it lower (Chromium at 2 h), which is fine. */
const PREFLIGHT_MAX_AGE_SECONDS = 86_400;

/** Middleware (Express or plain Node): the CORS headers of every answer, and preflights answered 204. */
export function corsHeaders() {
  return cors({
    origin: "*",
    methods: ["GET", "HEAD", "POST"],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
  });
}

/**
 * The headers `corsHeaders` gives every answer to a GET or HEAD, read once from the middleware
 * itself: fixed, since the origin is "*". Answers held in memory carry them without running it.
 */
export function corsGetHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: string) => {
      headers[name] = value;
    },
    getHeader: () => undefined,
  };
  corsHeaders()({ method: "GET", headers: {} } as IncomingMessage, recorder as unknown as ServerResponse, () => {});
  return headers;
}
