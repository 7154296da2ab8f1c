/**
 * Knows which requests are in flight, so a stopping service can let them finish: a paid call
 * that has verified its payment must settle and answer, never be cut off between the two.
 * Once draining, a request arriving on a connection that was already open is answered 503
 * with `Connection: close` (the client retries on another instance), and every answer still
 * to be written closes its connection, so the server ends up with no sockets at all.
 */
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { NextFunction, Request, Response } from "express";
import { sendError } from "./send-error.ts";

/** The drain state of one server. */
export type Drain = ReturnType<typeof drainable>;

/** Middleware factory: track requests in flight for a graceful stop. */
export function drainable() {
  const open = new Set<Response | ServerResponse>();
  const waiters = new Set<() => void>();
  let draining = false;

  const settled = (res: Response | ServerResponse) => {
    if (!open.delete(res)) return;
    if (open.size === 0) for (const wake of waiters) wake();
  };

  /** Count `res` as in flight until the function returned is called (when it has closed). */
  const hold = (res: Response | ServerResponse) => {
    open.add(res);
    return () => settled(res);
  };

  return {
    /** True once `start` was called. */
    get draining() {
      return draining;
    },
    hold,
    /** Requests being answered now. */
    get inFlight() {
      return open.size;
    },
    /** The connections of the requests being answered now. */
    sockets() {
      const sockets = new Set<Socket>();
      for (const res of open) if (res.socket) sockets.add(res.socket);
      return sockets;
    },
    /** The middleware to mount first. */
    middleware: function drainMiddleware(_req: Request, res: Response, next: NextFunction): void {
      if (draining) {
        res.setHeader("Connection", "close");
        sendError(res, "unavailable", "The service is shutting down; send the request again (another instance answers it).", undefined, {
          "Retry-After": "1",
        });
        return;
      }
      res.on("close", hold(res));
      next();
    },
    /** Refuse new requests from now on and close connections after their answers. */
    start() {
      draining = true;
      // An answer not yet started is told to close its connection; one already writing closes when the server shuts.
      for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
    },
    /** Resolves true once no request is in flight, or false after `timeoutMs`. */
    idle(timeoutMs: number): Promise<boolean> {
      if (open.size === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (ok: boolean) => {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(ok);
        };
        const wake = () => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        waiters.add(wake);
      });
    },
  };
}
