/**
 * Answers 409 `payment_in_progress` to a request whose payment authorisation is already
 * being used by another request in flight, so one payment runs its function once and is
 * settled once, however many copies arrive together.
 */
import type { NextFunction, Request, Response } from "express";
import { authorizationKey } from "./payment-header.ts";
import { LEDGER_DONE, RELEASE_CLAIM } from "./payment-ledger.ts";
import { sendError } from "./send-error.ts";

/** Where in-flight authorisations are held; in memory here, shared storage across instances. */
export interface InFlightRegistry {
  /** Claim `key`; false when another request already holds it. */
  claim(key: string): Promise<boolean>;
  /** Release a claimed `key`. */
  release(key: string): Promise<void>;
}

/** An in-process registry (one service instance). */
export function memoryInFlightRegistry(): InFlightRegistry {
  const held = new Set<string>();
  return {
    async claim(key) {
      if (held.has(key)) return false;
      held.add(key);
      return true;
    },
    async release(key) {
      held.delete(key);
    },
  };
}

/** Middleware factory: one request per payment authorisation at a time. */
export function inFlightGuard(registry: InFlightRegistry = memoryInFlightRegistry()) {
  return async function inFlightGuardMiddleware(req: Request, res: Response, next: NextFunction): Promise<void> {
    const key = authorizationKey(req);
    if (!key) return next();
    if (!(await registry.claim(key))) {
      sendError(
        res,
        409,
        "payment_in_progress",
        "This payment is already being used by another request in flight; wait for that answer instead of resending the same payment.",
        undefined,
        { "Retry-After": "1" },
      );
      return;
    }
    // Held until the request's work is really over: a client that disconnects closes the
    // response early, while verify, the function and settlement go on. With the ledger, that is
    // when its outcome is recorded; without it, when the final write happens.
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await registry.release(key);
    };
    if (res.locals[LEDGER_DONE]) {
      // The ledger releases the claim once the outcome is recorded, before the answer goes out.
      res.locals[RELEASE_CLAIM] = release;
    } else {
      const end = res.end.bind(res) as (...args: unknown[]) => Response;
      res.end = ((...args: unknown[]) => {
        const result = end(...args);
        void release();
        return result;
      }) as Response["end"];
    }
    next();
  };
}
