/**
 * One error base class for the whole service. Every failure a caller can see is a
 * `ServiceError` with a stable snake_case `code`, the HTTP `status` the code's entry in the
 * error table (src/error-docs.ts) gives it, a message the
 * caller can act on, and optional machine-readable `details`. `toErrorResponse` is the one
 * place that turns any thrown value into the JSON error body (`errorBody` builds one without
 * throwing); every body links to the code's entry on the free `/errors` page
 * (src/pages/errors.astro, text in src/error-docs.ts).
 */

import { type ErrorBody, type ErrorCode, statusOf } from "./error-docs.ts";

export { ERROR_CODES, ERROR_DOCS, ErrorBody, type ErrorCode, type ErrorDoc, statusOf } from "./error-docs.ts";

/** What a `ServiceError` may carry beyond its code and message. */
export interface ServiceErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Extra response headers, e.g. `Allow` on a 405 or `Retry-After` on a 409 or 503. */
  headers?: Record<string, string>;
}

/** Base class of every error the service reports to a caller. */
export class ServiceError extends Error {
  override name = "ServiceError";
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers, e.g. `Allow` on a 405 or `Retry-After` on a 409 or 503. */
  readonly headers: Record<string, string>;

  /** `code`'s status comes from the error table. */
  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    const status = statusOf(code);
    super(message, { cause: options.cause });
    this.code = code;
    this.status = status;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

/** One problem with one request field, as listed in a 400's `details.fields`. */
export interface FieldProblem {
  /** JSON-pointer-like location, e.g. `body.tx_hash` or `query.q`. */
  field: string;
  /** What was expected there, in words. */
  expected: string;
  /** What was received, when it is short enough to echo. */
  received?: unknown;
}

/** 400: the request was understood but a field is missing or malformed. */
export class InvalidRequestError extends ServiceError {
  override name = "InvalidRequestError";
  constructor(message: string, fields: FieldProblem[] = []) {
    super("invalid_request", message, fields.length > 0 ? { details: { fields } } : {});
  }
}

/** 404: the path, topic, slug or transaction does not exist. */
export class NotFoundError extends ServiceError {
  override name = "NotFoundError";
  constructor(message: string, details?: Record<string, unknown>) {
    super("not_found", message, details ? { details } : {});
  }
}

/** 502/503/504: a chain node or third-party API failed; the call is not charged. */
export class UpstreamError extends ServiceError {
  override name = "UpstreamError";
  readonly upstream: string;
  constructor(
    kind: "upstream_error" | "unavailable" | "upstream_timeout",
    upstream: string,
    message: string,
    options: { cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(kind, message, {
      details: { upstream },
      cause: options.cause,
      headers: options.retryAfterSeconds ? { "Retry-After": String(options.retryAfterSeconds) } : {},
    });
    this.upstream = upstream;
  }
}

/** The error body for `code`, for code that answers an error without throwing one; `docs` is the code's section of the free `/errors` page. */
export function errorBody(code: ErrorCode, message: string, details?: Record<string, unknown>): ErrorBody {
  return { error: { code, message, ...(details ? { details } : {}), docs: `/errors#${code}` } };
}

/** A JSON answer; its known length lets Node send it in one write instead of chunked encoding. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const bytes = Buffer.from(JSON.stringify(body));
  return new Response(bytes, {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", "Content-Length": String(bytes.length), ...headers },
  });
}

/** The JSON error answer of anything thrown (`toErrorResponse`). */
export function errorResponse(error: unknown): Response {
  const { status, headers, body } = toErrorResponse(error);
  return jsonResponse(status, body, headers);
}

/** Turn anything thrown into a status, headers and error body; unknown errors become a generic 500. */
export function toErrorResponse(error: unknown): { status: number; headers: Record<string, string>; body: ErrorBody } {
  if (error instanceof ServiceError) {
    return { status: error.status, headers: error.headers, body: errorBody(error.code, error.message, error.details) };
  }
  return {
    status: 500,
    headers: {},
    body: errorBody("internal_error", "The service failed while answering; you were not charged."),
  };
}
