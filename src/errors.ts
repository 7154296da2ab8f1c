/**
 * One error base class for the whole service. Every failure a caller can see is a
 * `ServiceError` with a stable snake_case `code`, an HTTP `status`, a message the
 * caller can act on, and optional machine-readable `details`. `toErrorResponse` is the one
 * place that turns any thrown value into the JSON error body (`errorBody` builds one without
 * throwing); every body links to the code's entry on the free `/errors` page
 * (src/pages/errors.astro, text in src/error-docs.ts).
 */

export { ERROR_DOCS, type ErrorDoc } from "./error-docs.ts";

/**
 * Stable error codes; callers match on these, never on message text. Exactly the codes the
 * service sends, each with its status and documentation in src/error-docs.ts.
 */
export type ErrorCode =
  /** 400: a field is missing or malformed; `details.fields` names each one. */
  | "invalid_request"
  /** 400: dot segments, encoded slashes, `//` or percent-encoding (src/server/middleware/canonical-path.ts). */
  | "non_canonical_path"
  /** 400: a caller-chosen URL leads to a private, loopback or otherwise refused address (src/outbound/). */
  | "target_not_allowed"
  /** 402: the x402 challenge. */
  | "payment_required"
  /** 402: the payment header cannot be read; `details.field` names the field. */
  | "invalid_payload"
  /** 402: the authorisation was already settled for another request, or its retry window has passed. */
  | "payment_already_used"
  /** 402: the prepaid balance named by `user_id` does not cover the price; the body carries the per-call challenge. */
  | "insufficient_balance"
  /** 401: the request spends or reads a balance but carries no Sign-In-With-X proof. */
  | "signin_required"
  /** 401: the Sign-In-With-X proof is expired, replayed, for another origin or signed by another wallet. */
  | "signin_invalid"
  /** 402: the transfer was not made. */
  | "settlement_failed"
  /** 402: the transfer may have landed; the same request with the same payment settles it or answers. */
  | "settlement_unknown"
  | "not_found"
  /** 405: sent with an `Allow` header. */
  | "method_not_allowed"
  /** 409: the same payment is in use by a request in flight; `Retry-After: 1`. */
  | "payment_in_progress"
  /** 409: the payment-identifier id was already used with another request or payer. */
  | "payment_id_conflict"
  /** 413: bodies over 64 KiB (src/server/middleware/body-limit.ts). */
  | "payload_too_large"
  /** 429: a client's free budget, its unpaid challenges, or a payer's calls in flight (src/server/middleware/rate-limit.ts); `Retry-After`. */
  | "rate_limited"
  | "internal_error"
  | "upstream_error"
  /** 503: a dependency of the call (database, a needed service) is down. */
  | "unavailable"
  /** 503: the facilitator or the chain RPC did not answer within the time budget; `Retry-After`. */
  | "payment_unavailable"
  | "upstream_timeout";

/** The JSON body of every error response. */
export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    details?: Record<string, unknown>;
    /** Relative URL of the code's entry on the free `/errors` page, e.g. `/errors#not_found`. */
    docs: string;
  };
}

/** Base class of every error the service reports to a caller. */
export class ServiceError extends Error {
  override name = "ServiceError";
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers, e.g. `Allow` on a 405 or `Retry-After` on a 409 or 503. */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    status: number,
    message: string,
    options: { details?: Record<string, unknown>; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
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
  readonly fields: FieldProblem[];
  constructor(message: string, fields: FieldProblem[] = []) {
    super("invalid_request", 400, message, fields.length > 0 ? { details: { fields } } : {});
    this.fields = fields;
  }
}

/** 404: the path, topic, slug or transaction does not exist. */
export class NotFoundError extends ServiceError {
  override name = "NotFoundError";
  constructor(message: string, details?: Record<string, unknown>) {
    super("not_found", 404, message, details ? { details } : {});
  }
}

/** The upstream failure kinds and their statuses (none is ever charged). */
const UPSTREAM_STATUS = { upstream_error: 502, unavailable: 503, upstream_timeout: 504 } as const;

/** 502/503/504: a chain node or third-party API failed; the call is not charged. */
export class UpstreamError extends ServiceError {
  override name = "UpstreamError";
  readonly upstream: string;
  constructor(
    kind: keyof typeof UPSTREAM_STATUS,
    upstream: string,
    message: string,
    options: { cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(kind, UPSTREAM_STATUS[kind], message, {
      details: { upstream },
      cause: options.cause,
      headers: options.retryAfterSeconds ? { "Retry-After": String(options.retryAfterSeconds) } : {},
    });
    this.upstream = upstream;
  }
}

/** The relative URL documenting `code`: its section of the free `/errors` page. */
export function errorDocsUrl(code: ErrorCode): string {
  return `/errors#${code}`;
}

/** The error body for `code`, for code that answers an error without throwing one. */
export function errorBody(code: ErrorCode, message: string, details?: Record<string, unknown>): ErrorBody {
  return { error: { code, message, ...(details ? { details } : {}), docs: errorDocsUrl(code) } };
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
