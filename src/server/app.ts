/**
 * The Express application of one site: the only place that knows Express, and only HTTP
 * plumbing. A GET of a document held in memory is answered in front of the chain (`createApp`);
 * every other request path is request id and logging → metrics → CORS → canonical paths → known
 * methods → a sane Host → the site's own paths → `/metrics` → rate limits → body limit → paid calls in flight →
 * static files → Astro, whose endpoint hands paid routes to the
 * payment gate (src/payments/gate.ts). `siteRouter` chooses between the sites' applications by
 * host name when they share a port.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import proxyaddr from "proxy-addr";
import { primarySite, type SiteDef, sites } from "../../spec/sites.ts";
import type { Config } from "../config.ts";
import type { ApiLocals, Services } from "../context.ts";
import { wellKnownFile } from "../discovery/well-known.ts";
import { dispatch } from "../dispatch.ts";
import { memoryBuckets, storeBuckets } from "../limits/token-buckets.ts";
import type { ServiceMetrics } from "../metrics/metrics.ts";
import { heldPage, PRIVATE_HEADERS } from "../middleware.ts";
import type { PaymentGate } from "../payments/gate.ts";
import { bodyLimit } from "./middleware/body-limit.ts";
import { canonicalPath } from "./middleware/canonical-path.ts";
import { corsGetHeaders, corsHeaders } from "./middleware/cors.ts";
import { documentCache, type HeldAnswer } from "./middleware/document-cache.ts";
import type { Drain } from "./middleware/drain.ts";
import { countRequestNow, metricsEndpoint, requestCounter, requestMetrics } from "./middleware/metrics.ts";
import { addressOf, rateLimiter } from "./middleware/rate-limit.ts";
import { beginRequest, logRequestLine, requestContext, requestIdFor, requestIdOf } from "./middleware/request-context.ts";
import { knownMethods, saneHost } from "./middleware/request-line.ts";
import { paymentOf, routeMatch, routeOf } from "./middleware/route-match.ts";
import { sendError } from "./middleware/send-error.ts";

/** The request handler of one site (`createApp`). */
export type SiteHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Astro's node-adapter handler in middleware mode. */
export type AstroHandler = (req: Request, res: Response, next: NextFunction, locals: ApiLocals) => Promise<void>;

/** Everything `createApp` needs. */
export interface AppOptions {
  config: Config;
  /** The site this application serves (default: the primary). */
  site?: SiteDef;
  /** The site's services: the shared ones, with the site's public URL (when known) in their configuration. */
  services: Services;
  gate: PaymentGate;
  /** The built Astro handler (`dist/server/entry.mjs`). */
  astro: AstroHandler;
  /** Serve `cache: "process"` documents from memory; off only in the benchmark that measures the Astro path. */
  documentCache?: boolean;
  /** Tracks requests in flight for a graceful stop (src/server/middleware/drain.ts). */
  drain: Drain;
  /** The service's Prometheus metrics, served at `/metrics`. */
  metrics: ServiceMetrics;
}

/** Built static files. */
const CLIENT_DIR = "dist/client";

/** Load the built Astro handler from `distDir`; a missing build is a clear start-up error. */
export async function loadAstroHandler(distDir = "dist"): Promise<AstroHandler> {
  const entry = path.resolve(distDir, "server/entry.mjs");
  if (!existsSync(entry)) throw new Error(`No build at ${entry}: run \`npm run build\` first.`);
  const mod = (await import(pathToFileURL(entry).href)) as { handler: AstroHandler };
  return mod.handler;
}

/**
 * The built crawler document, plus `resource_urls` (absolute) when the public origin is known:
 * x402scan reads `resources` as "METHOD /path", some crawlers want absolute URLs.
 */
function withAbsoluteResources(built: Buffer, publicUrl: string | undefined): Buffer {
  if (!publicUrl) return built;
  const doc = JSON.parse(built.toString("utf8")) as { resources?: string[] };
  const urls = (doc.resources ?? []).map((r) => `${publicUrl}${r.slice(r.indexOf(" ") + 1)}`);
  return Buffer.from(`${JSON.stringify({ ...doc, resource_urls: urls }, null, 2)}\n`);
}

/** Cache-Control of files whose name carries their content hash (Astro's `/_astro/` bundle): they never change. */
export const IMMUTABLE_CACHE = "public, max-age=31536000, immutable";
/** Cache-Control of everything else: pages change with each deploy, so clients revalidate after five minutes. */
export const PAGE_CACHE = "public, max-age=300";

/** Paths every site serves: its discovery documents, error codes and the shared icons and page assets. */
const SHARED_FILES = /^\/(?:favicon\.(?:svg|ico)|apple-touch-icon\.png|icon-192\.png|_astro\/.+)$/;

/**
 * Middleware factory: the paths a site does not serve answer 404 JSON before anything else reads
 * them: the other sites' API prefixes and built landing pages, and on a site other than the
 * primary every reader page it does not list (so no page offers calls the site does not answer).
 */
export function sitePaths(site: SiteDef) {
  const foreignPrefixes = sites.filter((s) => s.apiPrefix !== site.apiPrefix).map((s) => s.apiPrefix);
  const ownPaths = new Set(site.routes.map((r) => r.path));
  return function sitePathsMiddleware(req: Request, res: Response, next: NextFunction): void {
    const p = req.path;
    // A built page is a folder: the static server redirects /errors to /errors/.
    const page = p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p;
    const known =
      ownPaths.has(p) ||
      p.startsWith(site.apiPrefix) ||
      p === "/openapi.json" ||
      p === "/.well-known/x402" ||
      p === "/" ||
      (site.pages === "all"
        ? !foreignPrefixes.some((prefix) => p.startsWith(prefix)) && !p.startsWith("/sites/")
        : site.pages.includes(page)) ||
      SHARED_FILES.test(p);
    if (known) {
      next();
      return;
    }
    req.resume();
    sendError(res, "not_found", `Nothing at ${p} on this site. Its routes are described at /openapi.json.`, { path: p });
  };
}

/**
 * Express handlers run in order as one stage, under `name`: each answers or calls its `next`,
 * and an error goes to the application's error handler, as between Express's own layers.
 */
function inOrder(name: string, ...handlers: RequestHandler[]): RequestHandler {
  const stage = (req: Request, res: Response, next: NextFunction): void => {
    let i = 0;
    const step = (error?: unknown): void => {
      const handler = handlers[i++];
      if (error !== undefined && error !== null) next(error);
      else if (!handler) next();
      else handler(req, res, step);
    };
    step();
  };
  return Object.defineProperty(stage, "name", { value: name });
}

/**
 * Build the request handler of one site: its Express app, behind a check that answers a GET or
 * HEAD of a document held in memory (src/server/middleware/document-cache.ts) without the
 * Express chain. Such an answer still gets everything the chain would give it: the drain's
 * count, its request id and log line, its metrics and the free rate limit; the other steps of
 * the chain (canonical path, method, Host, the site's paths) cannot refuse a path that is held.
 */
export function createApp({
  config,
  site = primarySite,
  services,
  gate,
  astro,
  documentCache: withDocumentCache = true,
  drain,
  metrics,
}: AppOptions): SiteHandler {
  const publicUrl = services.config.publicUrl;
  const app = express();
  app.disable("x-powered-by");
  const trustsProxies = config.mode === "production";
  app.set("trust proxy", trustsProxies ? "loopback, linklocal, uniquelocal" : false);
  app.set("etag", false);

  // Each step below is one named stage of docs/architecture.md; a stage's parts run in order and
  // any of them may answer (a refusal, a preflight) instead of going on.
  app.use(inOrder("observe", drain.middleware, requestContext(services.log), requestMetrics(metrics)));
  const cors = corsHeaders();
  app.use(
    inOrder(
      "requestLine",
      cors,
      canonicalPath,
      routeMatch(site, gate.scheme.decode),
      knownMethods(site.routes),
      saneHost(publicUrl),
      sitePaths(site),
    ),
  );
  app.use(metricsEndpoint(metrics, config.metricsToken));
  // Instances on one PostgreSQL share each client's free budget; the challenge budget stays in
  // memory, since a challenge must stay cheaper than a database round trip.
  const { freePerMinute, challengePerMinute, paidInFlightPerPayer } = config.limits;
  const store = services.store;
  const limiter = rateLimiter({
    free: freePerMinute === 0 ? null : store.engine === "postgres" ? storeBuckets(store, freePerMinute) : memoryBuckets(freePerMinute),
    challenge: challengePerMinute === 0 ? null : memoryBuckets(challengePerMinute),
    paidInFlightPerPayer,
    decode: gate.scheme.decode,
    signedByPayer: gate.scheme.signedByPayer,
    log: services.log,
    onRefusal: (budget) => metrics.rateLimitRefusals.inc({ budget }),
    // The rate limits' clock is the functions' (tests move it).
    ...(services.now ? { now: () => (services.now as () => Date)().getTime() } : {}),
  });
  app.use(limiter.middleware);
  // A held document is made by the route's own answer, as the API endpoint below gives it.
  const render = (path: string) =>
    dispatch(new Request(new URL(path, "http://localhost")), { services, requestId: randomUUID(), path, gate, site: site.id });
  // The CORS headers of a GET, which answers given before the chain (held documents and pages) carry.
  const getHeaders = corsGetHeaders();
  const cache = withDocumentCache ? documentCache({ routes: site.routes, render, headers: getHeaders }) : undefined;
  app.use(bodyLimit(64 * 1024));
  // A paid call's in-flight place is taken only once its body is in: a body trickled in holds none.
  app.use(limiter.afterBody);

  // The crawler document has no file extension and lives in a dot folder, which the static
  // server rightly refuses; it is small, so it is read once and served from memory.
  const builtWellKnown = wellKnownFile(path.dirname(path.resolve(CLIENT_DIR)), site);
  const wellKnown = existsSync(builtWellKnown) ? withAbsoluteResources(readFileSync(builtWellKnown), publicUrl) : undefined;
  app.get("/.well-known/x402", (_req, res) => {
    if (!wellKnown) return sendError(res, "not_found", "The discovery document was not built; run `npm run build`.");
    res.type("application/json").setHeader("Cache-Control", PAGE_CACHE);
    res.end(wellKnown);
  });
  // A site other than the primary has its landing page built under /sites/<id>.
  if (site.landing !== "/") {
    const landing = path.resolve(CLIENT_DIR, `.${site.landing}/index.html`);
    app.get("/", (_req, res) => {
      if (!existsSync(landing)) return sendError(res, "not_found", "The landing page was not built; run `npm run build`.");
      res.setHeader("Cache-Control", PAGE_CACHE);
      res.sendFile(landing);
    });
    // Its error codes in its own frame: the primary's page links reader pages this site does not serve.
    const errors = path.resolve(CLIENT_DIR, `.${site.landing}/errors/index.html`);
    app.get(["/errors", "/errors/"], (_req, res) => {
      if (!existsSync(errors)) return sendError(res, "not_found", "The error codes page was not built; run `npm run build`.");
      res.setHeader("Cache-Control", PAGE_CACHE);
      res.sendFile(errors);
    });
  }
  // API paths are never files: skipping the static lookup saves a filesystem stat per call.
  // Astro's hashed assets never change; pages change with each deploy, so clients revalidate.
  const serveStatic = express.static(CLIENT_DIR, {
    index: ["index.html"],
    extensions: ["html"],
    setHeaders: (res, file) => res.setHeader("Cache-Control", file.includes(`${path.sep}_astro${path.sep}`) ? IMMUTABLE_CACHE : PAGE_CACHE),
  });
  app.use((req: Request, res: Response, next: NextFunction) =>
    req.path.startsWith(site.apiPrefix) ? next() : serveStatic(req, res, next),
  );

  app.use((req: Request, res: Response, next: NextFunction) => {
    const matched = routeOf(req);
    const locals: ApiLocals = {
      services,
      requestId: requestIdOf(req),
      path: req.path,
      gate,
      site: site.id,
      calls: {
        // Read only by /mcp (addressOf resolves the trusted proxies at each read).
        get address() {
          return addressOf(req);
        },
        admit: limiter.admit,
        admitFree: limiter.admitFree,
      },
      payment: () => paymentOf(req),
      ...(matched ? { matched } : {}),
    };
    astro(req, res, next, locals).catch(next);
  });

  app.use((req: Request, res: Response) => {
    sendError(res, "not_found", `Nothing at ${req.path}. The API is described at /openapi.json.`);
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    services.log.error("unhandled error", { request_id: requestIdOf(req), error: error instanceof Error ? error : String(error) });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const status = (error as { status?: number }).status;
    if (status === 400) sendError(res, "invalid_request", "The request could not be read.");
    else sendError(res, "internal_error", "The service failed while answering; you were not charged.");
  });

  if (!cache) return app;
  const trust = app.get("trust proxy fn") as (address: string, hop: number) => boolean;
  const log = services.log;
  /** Answer a held document: the drain's count, the request id, the log line, the metrics and the free rate limit, as the chain gives them. */
  const answerHeld = (req: IncomingMessage, res: ServerResponse, held: HeldAnswer, started: bigint): void => {
    // The client address exactly as Express's req.ip resolves it (proxy-addr, with the same trust
    // function); without trusted proxies, the socket's peer.
    const address = trustsProxies && req.socket.remoteAddress !== undefined ? proxyaddr(req, trust) : req.socket.remoteAddress;
    const verdict = limiter.freeNow(address);
    if (verdict?.allowed) {
      // The free budget is kept in memory: the answer is written within this call, and its log
      // line and metrics follow it at once (its time is the time to write it), with no
      // listener. An answer the socket could not take whole is in flight until it closes.
      const id = requestIdFor(req);
      cache.send(req, res, held, id);
      if (res.writableLength > 0) res.once("close", drain.hold(res));
      logRequestLine(log, req, req.url as string, id, res.statusCode, started);
      countRequestNow(metrics, req, held.route, res.statusCode, started);
      return;
    }
    // Refused, or the budget is kept in the store and must be asked: the CORS headers of any
    // answer (a refusal too), the drain's count, the log line and the metrics, ended by one listener.
    cors(req, res, () => {});
    const release = drain.hold(res);
    const logged = beginRequest(req, res, log);
    const counted = requestCounter(metrics, req, res, held.route);
    res.once("close", () => {
      release();
      logged();
      counted();
    });
    if (verdict) limiter.refuseFree(res, verdict);
    else limiter.free(address, res, () => cache.send(req, res, held));
  };
  return function siteHandler(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url;
    if ((req.method !== "GET" && req.method !== "HEAD") || drain.draining) {
      app(req, res);
      return;
    }
    if (!cache.holds(url)) {
      const page =
        url !== undefined && !PRIVATE_HEADERS.some((h) => h in req.headers)
          ? heldPage(services, `${req.headers.host}${url}`, getHeaders)
          : undefined;
      if (page) answerHeld(req, res, page, process.hrtime.bigint());
      else app(req, res);
      return;
    }
    const started = process.hrtime.bigint();
    const held = cache.lookup(url);
    if (held) {
      answerHeld(req, res, held, started);
      return;
    }
    // Its first request makes it; an answer that is not a 200 goes the whole way, as any request.
    cache.make(url).then(
      (made) => (made ? answerHeld(req, res, made, started) : app(req, res)),
      () => app(req, res),
    );
  };
}

/**
 * The request handler of a port several sites share: a request whose Host header names a site's
 * host goes to that site's application, every other request to the primary's.
 */
export function siteRouter(primary: SiteHandler, byHost: ReadonlyMap<string, SiteHandler>) {
  return function siteRouterHandler(req: IncomingMessage, res: ServerResponse): void {
    const host = (req.headers.host ?? "").toLowerCase().replace(/:[0-9]+$/, "");
    (byHost.get(host) ?? primary)(req, res);
  };
}
