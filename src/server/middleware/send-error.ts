/** Writes a JSON error response in the service's one error shape; used by every Express middleware. */
import type { ServerResponse } from "node:http";
import { type ErrorCode, ServiceError, toErrorResponse } from "../../errors.ts";

/** Answer `res` with the error body for `code` and `message`, at the code's status (src/error-docs.ts). */
export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  const { status, body } = toErrorResponse(new ServiceError(code, message, details ? { details } : {}));
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify(body));
}
