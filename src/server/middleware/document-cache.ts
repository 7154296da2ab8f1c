/**
 * Answers from memory what does not change between two requests:
 *
 * - free documents whose answer depends only on the build and the configuration (routes marked
 *   `cache: "process"`), kept for the life of the process after their first answer;
 * - pages rendered per request only because of their sponsored slot (`adPages`), kept per
 *   interval between two starts or expiries of a placement (src/content/ad-schedule.ts): the
 *   first request of an interval renders the page through Astro, the next ones get those bytes,
 *   and the first request at or after the next start or expiry renders again. A placement that
 *   expires at noon is gone from the request at noon, with no client script; the Cache-Control of
 *   each answer is worked out at its moment so no cache keeps the page past the change.
 *
 * Each kept answer carries a strong ETag (the hash of its bytes) and a matching If-None-Match
 * gets a 304. `lookup` and `send` let the site's handler answer a held document before the
 * Express chain (src/server/app.ts); the middleware answers and fills in the chain.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { AdPlacement } from "../../../spec/content-schema.ts";
import type { RouteDef } from "../../../spec/route.ts";
import { type AdWindow, adSchedule } from "../../content/ad-schedule.ts";
import { routeLabel } from "./metrics.ts";
import { matchesEtag } from "./static-memory.ts";

/** The longest a page with a sponsored slot may be cached by a client (seconds), as src/content/ads.ts says. */
const AD_PAGE_MAX_AGE = 300;

/** An answer held in memory, valid for the interval `interval` (always 0 for documents of the process). */
export interface HeldAnswer {
  readonly interval: number;
  readonly body: Buffer;
  readonly etag: string;
  /** Every header but Cache-Control of a page with a slot, which depends on the moment. */
  readonly headers: Readonly<Record<string, string>>;
  /** The metrics `route` label of its path. */
  readonly route: string;
  /** The page's sponsored slot, when it has one. */
  readonly slot?: AdPlacement;
}

/** Options of `documentCache`. */
export interface DocumentCacheOptions {
  /** The site's routes: its `cache: "process"` free GETs are held for the life of the process. */
  routes: readonly RouteDef[];
  /** Pages whose only changing part is their sponsored slot, by path (with and without a trailing slash). */
  adPages?: ReadonlyMap<string, AdPlacement>;
  /** When the placements start and end (`dist/ad-windows.json`); without them no page with a slot is held. */
  adWindows?: readonly AdWindow[] | undefined;
  /** The clock the pages read (`services.now`), epoch milliseconds; tests move it. */
  now?: () => number;
}

/** The memory answers of one site. */
export interface DocumentCache {
  /** The held answer of GET or HEAD `url` right now, if any (`url` with a query string is never held). */
  lookup(url: string | undefined): HeldAnswer | undefined;
  /**
   * Answer `req` with `held`: 304 when its If-None-Match names the ETag, else 200 (no body for
   * HEAD). `requestId`, when given, goes out as the answer's `X-Request-Id`.
   */
  send(req: IncomingMessage, res: ServerResponse, held: HeldAnswer, requestId?: string): void;
  /** The middleware: answers held documents, and keeps the 200 answer of a cacheable one that is not held yet. */
  middleware(req: Request, res: Response, next: NextFunction): void;
}

/** Cache-Control values by max-age, built once. */
const CACHE_CONTROL = Array.from({ length: AD_PAGE_MAX_AGE + 1 }, (_, s) => `public, max-age=${s}`);

const etagOf = (body: Buffer) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;

/** Create the memory answers of a site. */
export function documentCache({ routes, adPages = new Map(), adWindows, now = Date.now }: DocumentCacheOptions): DocumentCache {
  const documents = new Set(routes.filter((r) => r.cache === "process" && r.method === "GET" && r.price === null).map((r) => r.path));
  const schedule = adWindows ? adSchedule(adWindows) : undefined;
  const slots = schedule ? adPages : new Map<string, AdPlacement>();
  const routePaths = new Set(routes.map((r) => r.path));
  const held = new Map<string, HeldAnswer>();

  /** The interval `path` is held for at `t`, or undefined when it is not cacheable. */
  const intervalOf = (path: string, t: number): number | undefined =>
    documents.has(path) ? 0 : slots.has(path) ? (schedule?.interval(t) ?? undefined) : undefined;

  const lookup = (url: string | undefined): HeldAnswer | undefined => {
    if (url === undefined) return undefined;
    const hit = held.get(url);
    if (!hit) return undefined;
    return hit.slot === undefined || hit.interval === schedule?.interval(now()) ? hit : undefined;
  };

  const send = (req: IncomingMessage, res: ServerResponse, hit: HeldAnswer, requestId?: string): void => {
    // The request id first, as `res.setHeader` would have put it: one headers object, not two
    // merged by Node header by header.
    let headers: Record<string, string> = requestId === undefined ? hit.headers : { "X-Request-Id": requestId, ...hit.headers };
    if (hit.slot !== undefined && schedule) {
      const t = now();
      const until = Math.min(schedule.nextChange(hit.slot, t), t + AD_PAGE_MAX_AGE * 1000);
      headers = { ...headers, "cache-control": CACHE_CONTROL[Math.max(0, Math.floor((until - t) / 1000))] as string };
    }
    const ifNoneMatch = req.headers["if-none-match"];
    if (ifNoneMatch !== undefined && matchesEtag(ifNoneMatch, hit.etag)) {
      const cacheControl = headers["cache-control"];
      const notModified: Record<string, string> = cacheControl ? { etag: hit.etag, "cache-control": cacheControl } : { etag: hit.etag };
      res.writeHead(304, requestId === undefined ? notModified : { "X-Request-Id": requestId, ...notModified });
      res.end();
      return;
    }
    res.writeHead(200, headers);
    res.end(req.method === "HEAD" ? undefined : hit.body);
  };

  /** Keep the answer `res` is about to write for `path`, if it is a 200 written within interval `interval`. */
  const keep = (path: string, interval: number, res: Response) => {
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    const collect = (chunk: unknown) => {
      if (chunk !== undefined && chunk !== null && typeof chunk !== "function")
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
    };
    res.write = ((...args: unknown[]) => {
      collect(args[0]);
      return write(...args);
    }) as Response["write"];
    res.end = ((...args: unknown[]) => {
      collect(args[0]);
      const result = end(...args);
      // A page rendered across a change of placements may show either side: it is not kept.
      if (res.statusCode === 200 && intervalOf(path, now()) === interval) {
        const slot = slots.get(path);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.getHeaders())) {
          if (value === undefined || name === "x-request-id" || name === "date") continue;
          if (slot !== undefined && name === "cache-control") continue;
          headers[name] = String(value);
        }
        const body = Buffer.concat(chunks);
        // The bytes are fixed for the interval (documents: for the process), so their hash is a strong validator.
        const etag = etagOf(body);
        headers.etag = etag;
        headers["content-length"] = String(body.length);
        held.set(path, { interval, body, etag, headers, route: routeLabel(routePaths, path, 200), ...(slot ? { slot } : {}) });
      }
      return result;
    }) as Response["end"];
  };

  return {
    lookup,
    send,
    middleware: function documentCacheMiddleware(req: Request, res: Response, next: NextFunction): void {
      if (req.method !== "GET" && req.method !== "HEAD") {
        next();
        return;
      }
      const hit = lookup(req.url);
      if (hit) {
        send(req, res, hit);
        return;
      }
      const path = req.path;
      const interval = req.method === "GET" && !req.url.includes("?") ? intervalOf(path, now()) : undefined;
      if (interval !== undefined) keep(path, interval, res);
      next();
    },
  };
}
