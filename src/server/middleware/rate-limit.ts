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
 * Static files (fonts, icons, scripts of the pages) and `/metrics` are not counted.
 */
import type { ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { RouteDef } from "../../../spec/route.ts";
import { ServiceError } from "../../errors.ts";
import { clientKey } from "../../limits/client-key.ts";
import { ALLOWED, type BucketVerdict, type TokenBuckets } from "../../limits/token-buckets.ts";
import type { Logger } from "../../log.ts";
import { isProblem } from "../../payments/payload.ts";
import { paymentOf, routeOf } from "./route-match.ts";
import { sendError } from "./send-error.ts";

/** The budget a request is counted against. */
export type Budget = "free" | "challenge" | "paid_in_flight";

/** Options of `rateLimit`. */
export interface RateLimitOptions {
  routes: readonly RouteDef[];
  /** The free budget; null: free requests are not limited. */
  free: TokenBuckets | null;
  /** The budget of unpaid challenges; null: not limited. */
  challenge: TokenBuckets | null;
  /** Paid calls one payer may have in flight; 0: not limited. */
  paidInFlightPerPayer: number;
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
  log: Logger;
  /** Told of each refusal (the metrics count them). */
  onRefusal?: (budget: Budget) => void;
}

const STATIC_FILE = /\.(?:css|js|mjs|map|svg|png|ico|jpg|jpeg|webp|gif|woff2?|txt|webmanifest)$/i;

/** What `req` asks for: a free or a paid route (matched once, src/server/middleware/route-match.ts), or a file nobody needs to limit. */
export function requestKind(req: Request): "free" | "paid" | "exempt" {
  const path = req.path;
  if (path === "/metrics" || path.startsWith("/_astro/") || STATIC_FILE.test(path)) return "exempt";
  const route = routeOf(req)?.route;
  return route && !(route instanceof ServiceError) && route.price !== null ? "paid" : "free";
}

/** The payer a payment header names (unverified), or undefined when the header is not a readable payment. */
function payerOf(req: Request): string | undefined {
  const decoded = paymentOf(req);
  return decoded === undefined || isProblem(decoded) ? undefined : decoded.authorization.from.toLowerCase();
}

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
}

/** Middleware factory: the three limits above. */
export function rateLimit(options: RateLimitOptions) {
  return rateLimiter(options).middleware;
}

/** The three limits above: the middleware, and the free budget alone. */
export function rateLimiter(options: RateLimitOptions): RateLimiter {
  const { free, challenge, paidInFlightPerPayer, log, onRefusal } = options;
  const now = options.now ?? Date.now;
  const inFlight = new Map<string, number>();

  const refuse = (res: ServerResponse, budget: Budget, retryAfterSeconds: number, message: string, details: Record<string, unknown>) => {
    onRefusal?.(budget);
    res.req.resume();
    sendError(res, 429, "rate_limited", message, { budget, ...details }, { "Retry-After": String(retryAfterSeconds) });
  };

  const decide = (res: ServerResponse, next: () => void, buckets: TokenBuckets, budget: Budget, verdict: BucketVerdict) => {
    if (verdict.allowed) {
      next();
      return;
    }
    refuseBucket(res, buckets, budget, verdict);
  };

  const refuseBucket = (res: ServerResponse, buckets: TokenBuckets, budget: Budget, verdict: BucketVerdict) => {
    const what = budget === "free" ? "free requests" : "unpaid challenges";
    refuse(
      res,
      budget,
      verdict.retryAfterSeconds,
      `Too many ${what} from your address: ${buckets.perMinute} a minute. Retry after ${verdict.retryAfterSeconds} s; paid calls are not limited.`,
      { per_minute: buckets.perMinute },
    );
  };

  const limitByBucket = (address: string | undefined, res: ServerResponse, next: () => void, buckets: TokenBuckets, budget: Budget) => {
    const key = clientKey(address);
    if (buckets.takeNow) {
      decide(res, next, buckets, budget, buckets.takeNow(key, now()));
      return;
    }
    buckets.take(key, now()).then(
      (verdict: BucketVerdict) => decide(res, next, buckets, budget, verdict),
      (error: unknown) => {
        // The budget's store failing must not take the free routes down with it: let the request through.
        log.warn("rate limit not checked: the bucket store failed", { error: error as Error });
        next();
      },
    );
  };

  const middleware = function rateLimitMiddleware(req: Request, res: Response, next: NextFunction): void {
    const kind = requestKind(req);
    const payer = kind === "paid" && paidInFlightPerPayer > 0 ? payerOf(req) : undefined;
    // No payment, or a header that does not decode (the gate refuses it with the challenge): the challenge budget.
    const buckets = kind === "free" ? free : kind === "paid" && payer === undefined ? challenge : null;
    if (kind === "exempt" || (payer === undefined && buckets === null)) {
      next();
      return;
    }
    if (payer === undefined) {
      limitByBucket(req.ip ?? req.socket.remoteAddress, res, next, buckets as TokenBuckets, kind === "free" ? "free" : "challenge");
      return;
    }
    const held = inFlight.get(payer) ?? 0;
    if (held >= paidInFlightPerPayer) {
      refuse(
        res,
        "paid_in_flight",
        1,
        `${paidInFlightPerPayer} paid calls of ${payer} are already in flight; send this one when one of them has answered. This payment was not looked at, so nothing was charged.`,
        { payer, in_flight: held, max_in_flight: paidInFlightPerPayer },
      );
      return;
    }
    inFlight.set(payer, held + 1);
    res.once("close", () => {
      const left = (inFlight.get(payer) ?? 1) - 1;
      if (left <= 0) inFlight.delete(payer);
      else inFlight.set(payer, left);
    });
    next();
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
      if (free !== null) refuseBucket(res, free, "free", verdict);
    },
  };
}
