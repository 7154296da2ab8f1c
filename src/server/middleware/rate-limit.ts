/**
 * Limits on what costs us and not the caller, per client address (src/limits/client-key.ts),
 * decided before anything else runs, each refusal a 429 `rate_limited` with `Retry-After`:
 *
 *   free routes and pages      → the free budget (RATE_LIMIT_PER_MINUTE, shared by instances on PostgreSQL)
 *   a paid route, unpaid       → its 402 challenge, from a separate budget in memory, far above any payer's pace
 *   a paid route with payment  → never limited by rate (the payment is the limit), but one payer
 *                                has at most `paidInFlightPerPayer` calls in flight; the next is
 *                                refused before the payment is looked at, so it is never charged
 *
 * Static files (fonts, icons, scripts of the pages) and `/metrics` are not counted. A call that
 * does not arrive as its own HTTP request (an MCP tool call, several to one `POST /mcp`) is
 * counted by `admit` exactly as the HTTP request of its route would be, against the same budgets.
 */
import type { ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { RouteDef } from "../../../spec/route.ts";
import { errorBody, ServiceError } from "../../errors.ts";
import { clientKey } from "../../limits/client-key.ts";
import { ALLOWED, type BucketVerdict, type TokenBuckets } from "../../limits/token-buckets.ts";
import type { Logger } from "../../log.ts";
import { type DecodedPayment, isProblem, type PayloadProblem } from "../../payments/payload.ts";
import { type PaymentDecoder, paymentOf, routeOf } from "./route-match.ts";
import { sendError } from "./send-error.ts";

/** The budget a request is counted against. */
export type Budget = "free" | "challenge" | "paid_in_flight";

/** Options of `rateLimit`. */
export interface RateLimitOptions {
  /** The free budget; null: free requests are not limited. */
  free: TokenBuckets | null;
  /** The budget of unpaid challenges; null: not limited. */
  challenge: TokenBuckets | null;
  /** Paid calls one payer may have in flight; 0: not limited. */
  paidInFlightPerPayer: number;
  /** How the site's payment scheme reads a payer from a payment header (an MCP call's). */
  decode: PaymentDecoder;
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
  log: Logger;
  /** Told of each refusal (the metrics count them). */
  onRefusal?: (budget: Budget) => void;
}

const STATIC_FILE = /\.(?:css|js|mjs|map|svg|png|ico|jpg|jpeg|webp|gif|woff2?|txt|webmanifest)$/i;

/** Static files and `/metrics`, which are not counted. */
const isExempt = (path: string) => path === "/metrics" || path.startsWith("/_astro/") || STATIC_FILE.test(path);

/** The payer a decoded payment header names (unverified), or undefined when there is none or it is not a readable payment. */
function payerIn(decoded: ReturnType<PaymentDecoder> | undefined): string | undefined {
  return decoded === undefined || isProblem(decoded) ? undefined : decoded.authorization.from.toLowerCase();
}

/** An HTTP request's kind, by the route matched once at the edge (src/server/middleware/route-match.ts). */
function kindOfRequest(req: Request): "free" | "paid" | "exempt" {
  if (isExempt(req.path)) return "exempt";
  const route = routeOf(req)?.route;
  return route && !(route instanceof ServiceError) && route.price !== null ? "paid" : "free";
}

/** One call to count that is not an HTTP request of its own (an MCP tool call). */
export interface CallToAdmit {
  /** The route it calls (the caller found it by the tool's name). */
  route: RouteDef;
  /** The client's address, as Express resolved it for the request that carried the call. */
  address: string | undefined;
  /** The call's payment, as a PAYMENT-SIGNATURE header value. */
  payment?: string | undefined;
}

/**
 * `admit`'s answer: the 429 the HTTP request would have had, or the call may run and calls `done`
 * when it has answered; `payment` is its payment header as decoded here, for the gate to reuse.
 */
export type Admission = { refused: globalThis.Response } | { done: () => void; payment?: DecodedPayment | PayloadProblem };

/** The limits above, for the Express chain and for answers given before it. */
export interface RateLimiter {
  /** The middleware: every request, by its kind. */
  middleware(req: Request, res: Response, next: NextFunction): void;
  /**
   * A free request from `address` (the client address as Express would resolve it): `next` once
   * its free budget allows it, else the 429.
   */
  free(address: string | undefined, res: ServerResponse, next: () => void): void;
  /**
   * The free budget's verdict for a request from `address`, taken without waiting when it can be
   * (the budget is kept in memory, or there is none); undefined when the budget is kept in the
   * store, which `free` asks. A refusal is answered with `refuseFree`.
   */
  freeNow(address: string | undefined): BucketVerdict | undefined;
  /** Answer the 429 of a free request `freeNow` refused. */
  refuseFree(res: ServerResponse, verdict: BucketVerdict): void;
  /**
   * Count one call that is not an HTTP request of its own against the budget its HTTP request
   * would use. A paid call's in-flight place is taken before this returns, so calls admitted in
   * one turn of the event loop are counted in the order they were admitted.
   */
  admit(call: CallToAdmit): Promise<Admission>;
}

/** The three limits above: the middleware, and the free budget alone. */
export function rateLimiter(options: RateLimitOptions): RateLimiter {
  const { free, challenge, paidInFlightPerPayer, log, onRefusal } = options;
  const now = options.now ?? Date.now;
  const inFlight = new Map<string, number>();

  /** A 429 to give: to an HTTP response (`refuse`) or as a web Response (`refusal`). */
  interface Refusal {
    budget: Budget;
    retryAfterSeconds: number;
    message: string;
    details: Record<string, unknown>;
  }
  const refuse = (res: ServerResponse, { budget, retryAfterSeconds, message, details }: Refusal) => {
    onRefusal?.(budget);
    res.req.resume();
    sendError(res, "rate_limited", message, { budget, ...details }, { "Retry-After": String(retryAfterSeconds) });
  };
  const refusal = ({ budget, retryAfterSeconds, message, details }: Refusal): globalThis.Response => {
    onRefusal?.(budget);
    return new globalThis.Response(JSON.stringify(errorBody("rate_limited", message, { budget, ...details })), {
      status: 429,
      headers: { "Content-Type": "application/json; charset=utf-8", "Retry-After": String(retryAfterSeconds) },
    });
  };
  const bucketRefusal = (buckets: TokenBuckets, budget: Budget, verdict: BucketVerdict): Refusal => {
    const what = budget === "free" ? "free requests" : "unpaid challenges";
    return {
      budget,
      retryAfterSeconds: verdict.retryAfterSeconds,
      message: `Too many ${what} from your address: ${buckets.perMinute} a minute. Retry after ${verdict.retryAfterSeconds} s; paid calls are not limited.`,
      details: { per_minute: buckets.perMinute },
    };
  };
  const inFlightRefusal = (payer: string, held: number): Refusal => ({
    budget: "paid_in_flight",
    retryAfterSeconds: 1,
    message: `${paidInFlightPerPayer} paid calls of ${payer} are already in flight; send this one when one of them has answered. This payment was not looked at, so nothing was charged.`,
    details: { payer, in_flight: held, max_in_flight: paidInFlightPerPayer },
  });
  /** Take one of `payer`'s in-flight places; the function gives it back, once. */
  const takeInFlight = (payer: string): (() => void) | Refusal => {
    const held = inFlight.get(payer) ?? 0;
    if (held >= paidInFlightPerPayer) return inFlightRefusal(payer, held);
    inFlight.set(payer, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (inFlight.get(payer) ?? 1) - 1;
      if (left <= 0) inFlight.delete(payer);
      else inFlight.set(payer, left);
    };
  };
  /** Which budget a request of `kind` with `payer` counts against. */
  const budgetOf = (kind: "free" | "paid" | "exempt", payer: string | undefined) =>
    kind === "free" ? free : kind === "paid" && payer === undefined ? challenge : null;

  /** `next` when `address` has a token in `buckets`, else the 429; a bucket kept in memory answers without waiting. */
  const limitByBucket = (address: string | undefined, res: ServerResponse, next: () => void, buckets: TokenBuckets, budget: Budget) => {
    const decide = (verdict: BucketVerdict) => (verdict.allowed ? next() : refuse(res, bucketRefusal(buckets, budget, verdict)));
    const key = clientKey(address);
    if (buckets.takeNow) {
      decide(buckets.takeNow(key, now()));
      return;
    }
    buckets.take(key, now()).then(decide, (error: unknown) => {
      // The budget's store failing must not take the free routes down with it: let the request through.
      log.warn("rate limit not checked: the bucket store failed", { error: error as Error });
      next();
    });
  };

  const middleware = function rateLimitMiddleware(req: Request, res: Response, next: NextFunction): void {
    const kind = kindOfRequest(req);
    const payer = kind === "paid" && paidInFlightPerPayer > 0 ? payerIn(paymentOf(req)) : undefined;
    // No payment, or a header that does not decode (the gate refuses it with the challenge): the challenge budget.
    const buckets = budgetOf(kind, payer);
    if (kind === "exempt" || (payer === undefined && buckets === null)) {
      next();
      return;
    }
    if (payer === undefined) {
      limitByBucket(req.ip ?? req.socket.remoteAddress, res, next, buckets as TokenBuckets, kind === "free" ? "free" : "challenge");
      return;
    }
    const taken = takeInFlight(payer);
    if (typeof taken !== "function") {
      refuse(res, taken);
      return;
    }
    res.once("close", taken);
    next();
  };
  const admit = async (call: CallToAdmit): Promise<Admission> => {
    const kind = call.route.price === null ? "free" : "paid";
    // The payer a payment header names (unverified); none when the header is not a readable payment.
    const decoded = kind === "paid" && paidInFlightPerPayer > 0 && call.payment !== undefined ? options.decode(call.payment) : undefined;
    const payer = payerIn(decoded);
    const admitted = (done: () => void): Admission => ({ done, ...(decoded ? { payment: decoded } : {}) });
    if (payer !== undefined) {
      const taken = takeInFlight(payer);
      return typeof taken === "function" ? admitted(taken) : { refused: refusal(taken) };
    }
    const buckets = budgetOf(kind, payer);
    if (buckets === null) return admitted(() => {});
    const budget: Budget = kind === "free" ? "free" : "challenge";
    const key = clientKey(call.address);
    let verdict: BucketVerdict;
    try {
      verdict = buckets.takeNow ? buckets.takeNow(key, now()) : await buckets.take(key, now());
    } catch (error) {
      log.warn("rate limit not checked: the bucket store failed", { error: error as Error });
      return admitted(() => {});
    }
    return verdict.allowed ? admitted(() => {}) : { refused: refusal(bucketRefusal(buckets, budget, verdict)) };
  };
  return {
    middleware,
    free(address, res, next) {
      if (free === null) next();
      else limitByBucket(address, res, next, free, "free");
    },
    freeNow(address) {
      if (free === null) return ALLOWED;
      return free.takeNow?.(clientKey(address), now());
    },
    refuseFree(res, verdict) {
      if (free !== null) refuse(res, bucketRefusal(free, "free", verdict));
    },
    admit,
  };
}
