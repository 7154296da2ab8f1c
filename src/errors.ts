/**
 * One error base class for the whole service. Every failure a caller can see is a
 * `ServiceError` with a stable snake_case `code`, an HTTP `status`, a message the
 * caller can act on, and optional machine-readable `details`. `toErrorBody` is the one
 * place that turns any thrown value into the JSON error body.
 */

/** Stable error codes; callers match on these, never on message text. */
export type ErrorCode =
  | "invalid_request"
  | "non_canonical_path"
  | "not_found"
  | "method_not_allowed"
  | "payment_required"
  | "payment_in_progress"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "internal_error"
  | "upstream_error"
  | "unavailable"
  | "upstream_timeout"
  | "settlement_failed"
  /** 400: a caller-chosen URL leads to a private, loopback or otherwise refused address (issue 5). */
  | "target_not_allowed";

/** The JSON body of every error response. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

/**
 * Marks service errors across module copies: the Astro build bundles its own copy of this
 * file while the Express side loads the source, so a plain `instanceof` would not recognise
 * an error thrown by the other copy (and a 503 would become a 500).
 */
const BRAND = Symbol.for("x402-chain-data-service/ServiceError");

/** Base class of every error the service reports to a caller. */
export class ServiceError extends Error {
  /** Identifies the class across module copies; each subclass declares its own. */
  static readonly errorName: string = "ServiceError";

  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class `instanceof` asks about (maybe a subclass), so it cannot be named.
    // biome-ignore lint/complexity/noThisInStatic: the receiver is the class being tested
    const tested = this as typeof ServiceError;
    if (Function.prototype[Symbol.hasInstance].call(tested, value)) return true;
    const names = (value as { [BRAND]?: unknown } | null)?.[BRAND];
    return Array.isArray(names) && names.includes(tested.errorName);
  }

  override name = "ServiceError";
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers, e.g. `Allow` on a 405 or `Retry-After` on a 429. */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    status: number,
    message: string,
    options: { details?: Record<string, unknown>; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    const names: string[] = [];
    for (let c = new.target as typeof ServiceError | undefined; c?.errorName; c = Object.getPrototypeOf(c)) {
      if (!names.includes(c.errorName)) names.push(c.errorName);
    }
    Object.defineProperty(this, BRAND, { value: names });
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
  static override readonly errorName: string = "InvalidRequestError";
  override name = "InvalidRequestError";
  readonly fields: FieldProblem[];
  constructor(message: string, fields: FieldProblem[] = []) {
    super("invalid_request", 400, message, fields.length > 0 ? { details: { fields } } : {});
    this.fields = fields;
  }
}

/** 404: the path, topic, slug or transaction does not exist. */
export class NotFoundError extends ServiceError {
  static override readonly errorName: string = "NotFoundError";
  override name = "NotFoundError";
  constructor(message: string, details?: Record<string, unknown>) {
    super("not_found", 404, message, details ? { details } : {});
  }
}

/** The upstream failure kinds and their statuses (none is ever charged). */
const UPSTREAM_STATUS = { upstream_error: 502, unavailable: 503, upstream_timeout: 504 } as const;

/** 502/503/504: a chain node or third-party API failed; the call is not charged. */
export class UpstreamError extends ServiceError {
  static override readonly errorName: string = "UpstreamError";
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

/** Turn anything thrown into a status, headers and error body; unknown errors become a generic 500. */
export function toErrorResponse(error: unknown): { status: number; headers: Record<string, string>; body: ErrorBody } {
  if (error instanceof ServiceError) {
    const body: ErrorBody = { error: { code: error.code, message: error.message } };
    if (error.details) body.error.details = error.details;
    return { status: error.status, headers: error.headers, body };
  }
  return {
    status: 500,
    headers: {},
    body: { error: { code: "internal_error", message: "The service failed while answering; you were not charged." } },
  };
}
