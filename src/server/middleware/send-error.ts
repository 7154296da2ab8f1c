/** Writes a JSON error response in the service's one error shape; used by every Express middleware. */
import type { ServerResponse } from "node:http";
import { type ErrorCode, errorBody, statusOf } from "../../errors.ts";

/** Answer `res` with the error body for `code` and `message`, at the code's status (src/error-docs.ts). */
export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  res.statusCode = statusOf(code);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify(errorBody(code, message, details)));
}
