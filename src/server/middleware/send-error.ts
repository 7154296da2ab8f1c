/** Writes a JSON error response in the service's one error shape; used by every Express middleware. */
import type { ServerResponse } from "node:http";
import { type ErrorCode, ServiceError, toErrorResponse } from "../../errors.ts";

/** Answer `res` with the error body for `code`/`status`/`message`. */
export function sendError(
  res: ServerResponse,
  status: number,
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  const { body } = toErrorResponse(new ServiceError(code, status, message, details ? { details } : {}));
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify(body));
}
