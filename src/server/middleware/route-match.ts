/**
 * A request's route, matched once against its site's route table and kept with the request for
 * every later step (the metrics label, the rate limits, the dispatcher), and its payment header,
 * decoded once for whichever step reads it first.
 */
import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { RouteDef } from "../../../spec/route.ts";
import type { SiteDef } from "../../../spec/sites.ts";
import { matchRoute } from "../../dispatch.ts";
import { ServiceError } from "../../errors.ts";
import type { DecodedPayment, PayloadProblem } from "../../payments/payload.ts";

/** How a site reads a payment header into its payer and identity: its payment scheme's `decode`. */
export type PaymentDecoder = (header: string) => DecodedPayment | PayloadProblem;

/** The match of an API request: the path it was matched on, its route or the 404/405 the path earns, and its site's `decode`. */
export interface RouteMatch {
  path: string;
  route: RouteDef | ServiceError;
  decode: PaymentDecoder;
}

const matches = new WeakMap<IncomingMessage, RouteMatch>();
const payments = new WeakMap<IncomingMessage, DecodedPayment | PayloadProblem | undefined>();

/** The route `req` was matched to, when it is a request for the site's API. */
export function routeOf(req: IncomingMessage): RouteMatch | undefined {
  return matches.get(req);
}

/**
 * The payment header of `req` (`PAYMENT-SIGNATURE`, or v1's `X-Payment`), decoded on first use by
 * its site's scheme; undefined when absent or when the request was not matched to a site's API.
 */
export function paymentOf(req: IncomingMessage): DecodedPayment | PayloadProblem | undefined {
  if (payments.has(req)) return payments.get(req);
  const header = req.headers["payment-signature"] ?? req.headers["x-payment"];
  const decode = matches.get(req)?.decode;
  const decoded = typeof header === "string" && decode ? decode(header) : undefined;
  payments.set(req, decoded);
  return decoded;
}

/**
 * Middleware factory: match each request for the site's API (its prefix, or a route outside it)
 * to its route, once, and keep `decode` (the site's payment scheme's) to read its payment header.
 */
export function routeMatch(site: SiteDef, decode: PaymentDecoder) {
  const ownPaths = new Set(site.routes.map((r) => r.path));
  return function routeMatchMiddleware(req: Request, _res: Response, next: NextFunction): void {
    const path = req.path;
    if (path.startsWith(site.apiPrefix) || ownPaths.has(path)) {
      let route: RouteDef | ServiceError;
      try {
        route = matchRoute(req.method, path, site);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        route = error;
      }
      matches.set(req, { path, route, decode });
    }
    next();
  };
}
