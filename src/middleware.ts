/**
 * Astro's middleware: the free pages held as a shared cache in front would hold them. A page whose
 * content is the build's and its sponsored slot's only (it sets `locals.holdPage`: the landing
 * page, /kb, /playbooks, /howto), answered 200 to a GET as HTML with `Cache-Control: public,
 * max-age=N` (until its slot changes, at most 5 minutes), is kept under its host and path for
 * N seconds of the service's clock, with an `Age` header as RFC 9111 asks of a cache. The site's
 * handler answers a held page before the Express chain, as it answers the held free documents
 * (src/server/app.ts, `heldPage`). API answers, a request carrying a payment or a sign-in, and a
 * page that says `private`, `no-store` or no max-age are never held.
 */
import type { MiddlewareHandler } from "astro";
import createEtag from "etag";
import { LRUCache } from "lru-cache";
import type { ApiLocals } from "./context.ts";
import type { HeldAnswer } from "./server/middleware/document-cache.ts";

/** A page held: an answer as a held document's, with when it was stored. */
type HeldPage = Omit<HeldAnswer, "route"> & { storedAt: number };

/** Pages held at most; each is tens of kilobytes. */
const MAX_PAGES = 256;
const NOT_PAGES = /^\/(?:api|v1|mcp)(?:\/|$)/;
/** Request headers that make an answer someone's own: never answered from, nor put in, the hold. */
export const PRIVATE_HEADERS = ["payment-signature", "x-payment", "sign-in-with-x", "authorization", "cookie"];

/** One hold per service, on that service's clock (tests move it). */
const holds = new WeakMap<ApiLocals["services"], LRUCache<string, HeldPage>>();
function holdOf(services: ApiLocals["services"]): LRUCache<string, HeldPage> {
  let hold = holds.get(services);
  if (!hold) {
    const now = () => (services.now?.() ?? new Date()).getTime();
    hold = new LRUCache<string, HeldPage>({ max: MAX_PAGES, perf: { now }, ttlResolution: 0 });
    holds.set(services, hold);
  }
  return hold;
}

/** Seconds a shared cache may hold an answer with `cacheControl`, or 0. */
function sharedMaxAge(cacheControl: string | null): number {
  if (!cacheControl) return 0;
  const directives = cacheControl
    .toLowerCase()
    .split(",")
    .map((d) => d.trim());
  if (!directives.includes("public") || directives.some((d) => d === "private" || d === "no-store" || d === "no-cache")) return 0;
  const maxAge = directives.find((d) => d.startsWith("max-age="));
  return maxAge ? Number(maxAge.slice("max-age=".length)) || 0 : 0;
}

export const onRequest: MiddlewareHandler = async (context, next) => {
  const { request } = context;
  const services = (context.locals as Partial<ApiLocals>).services;
  if (
    request.method !== "GET" ||
    !services ||
    NOT_PAGES.test(context.url.pathname) ||
    PRIVATE_HEADERS.some((h) => request.headers.has(h))
  ) {
    return next();
  }
  const hold = holdOf(services);
  const key = `${context.url.host}${context.url.pathname}${context.url.search}`;
  const held = heldPage(services, key);
  if (held) return new Response(new Uint8Array(held.body), { status: 200, headers: held.headers });
  const response = await next();
  const seconds = sharedMaxAge(response.headers.get("cache-control"));
  const html = (response.headers.get("content-type") ?? "").startsWith("text/html");
  const holdable = (context.locals as Partial<ApiLocals>).holdPage === true;
  if (!holdable || response.status !== 200 || !html || seconds <= 0 || response.headers.has("set-cookie")) return response;
  const body = Buffer.from(await response.arrayBuffer());
  const etag = createEtag(body);
  const headers = { ...Object.fromEntries(response.headers), etag, "content-length": String(body.length) };
  // Fresh while younger than max-age (RFC 9111): stale at that very instant, when the page may change.
  hold.set(key, { body, etag, headers, storedAt: hold.perf.now() }, { ttl: seconds * 1000 - 1 });
  return new Response(new Uint8Array(body), { status: 200, headers });
};

/**
 * The page held for `key` (host, path and query, as the request named them) by `services`' site,
 * with its age, in the shape the site's handler answers held documents in (its headers with
 * `common`, those every answer the handler sends carries, as a held document's are); undefined
 * when none is fresh.
 */
export function heldPage(
  services: ApiLocals["services"],
  key: string,
  common: Readonly<Record<string, string>> = {},
): (HeldAnswer & { route: "page" }) | undefined {
  const hold = holds.get(services);
  const held = hold?.get(key);
  if (!hold || !held) return undefined;
  const age = String(Math.max(0, Math.floor((hold.perf.now() - held.storedAt) / 1000)));
  return { body: held.body, etag: held.etag, headers: { ...common, ...held.headers, age }, route: "page" };
}
