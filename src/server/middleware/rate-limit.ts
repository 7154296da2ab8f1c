/**
 * Limits on what costs us and not the caller, per client address (src/limits/client-key.ts),
 * decided before anything else runs, each refusal a 429 `rate_limited` with `Retry-After`:
 *
 *   free routes and pages      → the free budget (RATE_LIMIT_PER_MINUTE, shared by instances on PostgreSQL)
 *   a paid route, unpaid       → its 402 challenge, from a separate budget in memory, far above any payer's pace
 *   a paid route with payment  → never limited by rate when the payer's own signature checks out
 *                                locally (the payment is the limit); a payment that names a payer
 *                                without its signature is only a stranger's claim, and counts
 *                                against the challenge budget as an unpaid request does. One payer
 *                                has at most `paidInFlightPerPayer` calls in flight from one client
 *                                address, counted once the body is read; the next is refused
 *                                before the payment goes to the facilitator, so it is never charged
 *
 * The in-flight places are per payer and client: a payer's address is public, so places keyed on
 * the payer alone could be held by anyone naming it. Static files (fonts, icons, scripts of the
 * pages) and `/metrics` are not counted. A call that does not arrive as its own HTTP request (an
 * MCP tool call, several to one `POST /mcp`) is counted by `admit` exactly as the HTTP request of
 * its route would be, against the same budgets; every other message of a `POST /mcp` batch (a
 * `tools/list`, say) takes a free token of its own, as it would as a request of its own.
 */
import type { ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { RouteDef } from "../../../spec/route.ts";
import { errorResponse, ServiceError } from "../../errors.ts";
import { clientKey } from "../../limits/client-key.ts";
import { ALLOWED, type BucketVerdict, memoryBuckets, type TokenBuckets } from "../../limits/token-buckets.ts";
import type { Logger } from "../../log.ts";
import { type DecodedPayment, isProblem, type PayloadProblem } from "../../payments/payload.ts";
import { storedAddress } from "../../store/dialect.ts";
import { type PaymentDecoder, paymentOf, routeOf } from "./route-match.ts";
import { sendError } from "./send-error.ts";

/** The budget a request is counted against. */
export type Budget = "free" | "challenge" | "paid_in_flight";

/** Options of `rateLimit`. */
export interface RateLimitOptions {
  /** The free budget; null: free requests are not limited. */
  free: TokenBuckets | null;
  /**
   * The budget of unpaid challenges; null: not limited. Payment headers get a budget of their own
   * as large, in memory: past it, only a payment carrying its payer's own signature goes on.
   */
  challenge: TokenBuckets | null;
  /** Paid calls one payer may have in flight; 0: not limited. */
  paidInFlightPerPayer: number;
  /** How the site's payment scheme reads a payer from a payment header (an MCP call's). */
  decode: PaymentDecoder;
  /**
   * Whether a decoded payment carries its payer's own signature, checked locally: the site's
   * scheme's check, answered once per decoded payment, so the gate asking again costs nothing.
   */
  signedByPayer: (decoded: DecodedPayment) => Promise<boolean>;
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
  log: Logger;
  /** Told of each refusal (the metrics count them). */
  onRefusal?: (budget: Budget) => void;
}

const STATIC_FILE = /\.(?:css|js|mjs|map|svg|png|ico|jpg|jpeg|webp|gif|woff2?|txt|webmanifest)$/i;

/** Static files and `/metrics`, which are not counted. */
const isExempt = (path: string) => path === "/metrics" || path.startsWith("/_astro/") || STATIC_FILE.test(path);

/**
 * The payer a decoded payment header names (unverified), or undefined when there is none or it is
 * not a readable payment; as the ledger keeps it, since only EVM addresses ignore case (Solana's
 * base58 does not).
 */
function payerIn(decoded: ReturnType<PaymentDecoder> | undefined): string | undefined {
  return decoded === undefined || isProblem(decoded) ? undefined : storedAddress(decoded.authorization.from);
}

/**
 * The client address of `req` as Express resolves it. Express's `req.ip` runs the trusted-proxy
 * resolution on every read, so it is read only where a request is counted, never for the
 * requests that are not (static files).
 */
export const addressOf = (req: Request): string | undefined => req.ip ?? req.socket.remoteAddress;

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

/** The three limits above, for the Express chain and for answers given before it. */
export function rateLimiter(options: RateLimitOptions) {
  const { free, challenge, paidInFlightPerPayer, log, onRefusal } = options;
  // Payment headers' own budget, there exactly when the challenge budget is.
  const payments = challenge && memoryBuckets(challenge.perMinute);
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
    return errorResponse(
      new ServiceError("rate_limited", message, { details: { budget, ...details }, headers: { "Retry-After": String(retryAfterSeconds) } }),
    );
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
    message: `${paidInFlightPerPayer} paid calls of ${payer} from your address are already in flight; send this one when one of them has answered. This payment was not verified, so nothing was charged.`,
    details: { payer, in_flight: held, max_in_flight: paidInFlightPerPayer },
  });
  /** Take one of `payer`'s in-flight places for the client at `address`; the function gives it back, once. */
  const takeInFlight = (address: string | undefined, payer: string): (() => void) | Refusal => {
    const key = `${clientKey(address)} ${payer}`;
    const held = inFlight.get(key) ?? 0;
    if (held >= paidInFlightPerPayer) return inFlightRefusal(payer, held);
    inFlight.set(key, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (inFlight.get(key) ?? 1) - 1;
      if (left <= 0) inFlight.delete(key);
      else inFlight.set(key, left);
    };
  };

  /** `count` tokens of `address` from `buckets`, all at once: the refusal, or undefined when they were taken (or the store failed). */
  const takeTokens = async (buckets: TokenBuckets, address: string | undefined, count: number): Promise<BucketVerdict | undefined> => {
    const key = clientKey(address);
    let verdict: BucketVerdict;
    try {
      verdict = buckets.takeNow ? buckets.takeNow(key, now(), count) : await buckets.take(key, now(), count);
    } catch (error) {
      // The budget's store failing must not take the free routes down with it: let the request through.
      log.warn("rate limit not checked: the bucket store failed", { error: error as Error });
      return undefined;
    }
    return verdict.allowed ? undefined : verdict;
  };
  /** `next` when `address` has a token in `buckets`, else the 429; a bucket kept in memory answers without waiting. */
  const limitByBucket = (address: string | undefined, res: ServerResponse, next: () => void, buckets: TokenBuckets, budget: Budget) => {
    const decide = (refused: BucketVerdict | undefined) => (refused ? refuse(res, bucketRefusal(buckets, budget, refused)) : next());
    if (!buckets.takeNow) {
      void takeTokens(buckets, address, 1).then(decide);
      return;
    }
    const verdict = buckets.takeNow(clientKey(address), now());
    decide(verdict.allowed ? undefined : verdict);
  };

  /**
   * A free request from `address` (the client address as Express would resolve it): `next` once
   * its free budget allows it, else the 429.
   */
  const limitFree = (address: string | undefined, res: ServerResponse, next: () => void): void => {
    if (free === null) next();
    else limitByBucket(address, res, next, free, "free");
  };

  /** The middleware before the body is read: the budgets of every request, by its kind. */
  const middleware = function rateLimitMiddleware(req: Request, res: Response, next: NextFunction): void {
    const kind = kindOfRequest(req);
    if (kind === "exempt") {
      next();
      return;
    }
    if (kind === "free") {
      limitFree(addressOf(req), res, next);
      return;
    }
    if (challenge === null || payments === null) {
      next();
      return;
    }
    const address = addressOf(req);
    const decoded = paymentOf(req);
    // No payment, or a header that does not decode (the gate refuses it with the challenge): the challenge budget.
    if (decoded === undefined || isProblem(decoded)) {
      limitByBucket(address, res, next, challenge, "challenge");
      return;
    }
    // A payer's address is public and a junk signature costs nothing to make: payment headers have
    // a budget of their own, and past it only the payer's own signature lets one on (a real payer is
    // never refused). Junk then reaches the ledger and the facilitator no faster than unpaid
    // challenges, and a payment within the budget costs no signature check here.
    const verdict = payments.takeNow(clientKey(address), now());
    if (verdict.allowed) {
      next();
      return;
    }
    options.signedByPayer(decoded).then((signed) => (signed ? next() : refuse(res, bucketRefusal(challenge, "challenge", verdict))), next);
  };
  /** The middleware once the body is read: a paid request's in-flight place (so a body trickled in holds none). */
  const afterBody = function rateLimitAfterBody(req: Request, res: Response, next: NextFunction): void {
    const payer = paidInFlightPerPayer > 0 && kindOfRequest(req) === "paid" ? payerIn(paymentOf(req)) : undefined;
    if (payer === undefined) {
      next();
      return;
    }
    const taken = takeInFlight(addressOf(req), payer);
    if (typeof taken !== "function") {
      refuse(res, taken);
      return;
    }
    res.once("close", taken);
    next();
  };
  /**
   * Count one call that is not an HTTP request of its own against the budget its HTTP request
   * would use. A paid call's in-flight place is taken before this first waits, so calls admitted
   * in one turn of the event loop are counted in the order they were admitted.
   */
  const admit = async (call: CallToAdmit): Promise<Admission> => {
    const kind = call.route.price === null ? "free" : "paid";
    const decoded = kind === "paid" && call.payment !== undefined ? options.decode(call.payment) : undefined;
    const payer = payerIn(decoded);
    // The place is taken before anything is awaited, so the calls of one batch are counted in order.
    let done = () => {};
    if (payer !== undefined && paidInFlightPerPayer > 0) {
      const taken = takeInFlight(call.address, payer);
      if (typeof taken !== "function") return { refused: refusal(taken) };
      done = taken;
    }
    const admitted = (): Admission => ({ done, ...(decoded ? { payment: decoded } : {}) });
    const buckets = kind === "free" ? free : challenge;
    if (buckets === null) return admitted();
    // As over HTTP: a payment takes from the payments' budget, and past it goes on only with its payer's own signature.
    const paying = payer !== undefined && payments !== null;
    const budget: Budget = kind === "free" ? "free" : "challenge";
    const refused = await takeTokens(paying ? payments : buckets, call.address, 1);
    if (refused !== undefined && paying && (await options.signedByPayer(decoded as DecodedPayment))) return admitted();
    if (refused === undefined) return admitted();
    done();
    return { refused: refusal(bucketRefusal(buckets, budget, refused)) };
  };
  return {
    middleware,
    afterBody,
    free: limitFree,
    /**
     * The free budget's verdict for a request from `address`, taken without waiting when it can be
     * (the budget is kept in memory, or there is none); undefined when the budget is kept in the
     * store, which `free` asks. A refusal is answered with `refuseFree`.
     */
    freeNow(address: string | undefined): BucketVerdict | undefined {
      if (free === null) return ALLOWED;
      return free.takeNow?.(clientKey(address), now());
    },
    /** Answer the 429 of a free request `freeNow` refused. */
    refuseFree(res: ServerResponse, verdict: BucketVerdict): void {
      if (free !== null) refuse(res, bucketRefusal(free, "free", verdict));
    },
    admit,
    /**
     * Count `count` requests from `address` that are not HTTP requests of their own (the messages
     * of a `POST /mcp` batch besides its tool calls and its first) against the free budget, taken
     * at once: undefined when they may run, else the 429 the HTTP request would have had.
     */
    async admitFree(address: string | undefined, count: number): Promise<globalThis.Response | undefined> {
      if (free === null || count <= 0) return undefined;
      const refused = await takeTokens(free, address, count);
      return refused && refusal(bucketRefusal(free, "free", refused));
    },
  };
}
