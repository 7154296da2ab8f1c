/**
 * The Express application: the only place that knows Express, and only HTTP plumbing. The
 * request path is request id and logging → metrics → canonical paths → known methods → a sane
 * Host → `/metrics` → rate limits → document cache → body limit → static files (from memory) →
 * Astro, whose endpoint hands paid routes to the payment gate (src/payments/gate.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import express, { type NextFunction, type Request, type Response } from "express";
import { routes } from "../../spec/routes.ts";
import type { Config } from "../config.ts";
import type { ApiLocals, Services } from "../context.ts";
import { memoryBuckets, storeBuckets } from "../limits/token-buckets.ts";
import type { ServiceMetrics } from "../metrics/metrics.ts";
import type { PaymentGate } from "../payments/gate.ts";
import { bodyLimit } from "./middleware/body-limit.ts";
import { canonicalPath } from "./middleware/canonical-path.ts";
import { documentCache } from "./middleware/document-cache.ts";
import type { Drain } from "./middleware/drain.ts";
import { metricsEndpoint, requestMetrics } from "./middleware/metrics.ts";
import { rateLimit } from "./middleware/rate-limit.ts";
import { requestContext, requestIdOf } from "./middleware/request-context.ts";
import { knownMethods, saneHost } from "./middleware/request-line.ts";
import { sendError } from "./middleware/send-error.ts";
import { staticFromMemory } from "./middleware/static-memory.ts";

/** Astro's node-adapter handler in middleware mode. */
export type AstroHandler = (req: Request, res: Response, next: NextFunction, locals: ApiLocals) => Promise<void>;

/** Everything `createApp` needs. */
export interface AppOptions {
  config: Config;
  services: Services;
  gate: PaymentGate;
  /** The built Astro handler (`dist/server/entry.mjs`). */
  astro: AstroHandler;
  /** Built static files (`dist/client`). */
  clientDir: string;
  /** Serve `cache: "process"` documents from memory; off only in the benchmark that measures the Astro path. */
  documentCache?: boolean;
  /** Tracks requests in flight for a graceful stop (src/server/middleware/drain.ts). */
  drain?: Drain;
  /** The service's Prometheus metrics, served at `/metrics`. */
  metrics: ServiceMetrics;
  /** The clock of the rate limits, epoch milliseconds (tests move it). */
  now?: () => number;
}

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

/** Build the Express app. */
export function createApp({
  config,
  services,
  gate,
  astro,
  clientDir,
  documentCache: withDocumentCache = true,
  drain,
  metrics,
  now,
}: AppOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.mode === "production" ? "loopback, linklocal, uniquelocal" : false);
  app.set("etag", false);

  if (drain) app.use(drain.middleware);
  app.use(requestContext({ log: services.log }));
  app.use(requestMetrics({ metrics, routes }));
  app.use(canonicalPath());
  app.use(knownMethods(routes));
  app.use(saneHost(config.publicUrl));
  app.use(metricsEndpoint({ metrics, routes, token: config.metricsToken }));
  // Instances on one PostgreSQL share each client's free budget; the challenge budget stays in
  // memory, since a challenge must stay cheaper than a database round trip.
  const { freePerMinute, challengePerMinute, paidInFlightPerPayer } = config.limits;
  const store = services.store;
  app.use(
    rateLimit({
      routes,
      free: freePerMinute === 0 ? null : store.engine === "postgres" ? storeBuckets(store, freePerMinute) : memoryBuckets(freePerMinute),
      challenge: challengePerMinute === 0 ? null : memoryBuckets(challengePerMinute),
      paidInFlightPerPayer,
      log: services.log,
      onRefusal: (budget) => metrics.rateLimitRefusals.inc({ budget }),
      ...(now ? { now } : {}),
    }),
  );
  if (withDocumentCache) app.use(documentCache(routes));
  app.use(bodyLimit({ maxBytes: 64 * 1024 }));

  // The crawler document has no file extension and lives in a dot folder, which the static
  // server rightly refuses; it is small, so it is read once and served from memory.
  const wellKnownFile = path.resolve(clientDir, ".well-known/x402");
  const wellKnown = existsSync(wellKnownFile) ? withAbsoluteResources(readFileSync(wellKnownFile), config.publicUrl) : undefined;
  app.get("/.well-known/x402", (_req, res) => {
    if (!wellKnown) return sendError(res, 404, "not_found", "The discovery document was not built; run `npm run build`.");
    res.type("application/json").setHeader("Cache-Control", "public, max-age=300");
    res.end(wellKnown);
  });
  // API paths are never files: skipping the static lookup saves a filesystem stat per call.
  // Built files are served from memory; the disk server remains for files too large to hold.
  const fromMemory = staticFromMemory(clientDir);
  const serveStatic = express.static(clientDir, { index: ["index.html"], maxAge: "5m", extensions: ["html"] });
  app.use((req: Request, res: Response, next: NextFunction) =>
    req.path.startsWith("/api/") ? next() : fromMemory(req, res, () => serveStatic(req, res, next)),
  );

  app.use((req: Request, res: Response, next: NextFunction) => {
    const locals: ApiLocals = { services, requestId: requestIdOf(req), path: req.path, gate };
    astro(req, res, next, locals).catch(next);
  });

  app.use((req: Request, res: Response) => {
    sendError(res, 404, "not_found", `Nothing at ${req.path}. The API is described at /openapi.json.`);
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    services.log.error("unhandled error", { request_id: requestIdOf(req), error: error instanceof Error ? error : String(error) });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const status = (error as { status?: number }).status;
    if (status === 400) sendError(res, 400, "invalid_request", "The request could not be read.");
    else sendError(res, 500, "internal_error", "The service failed while answering; you were not charged.");
  });
  return app;
}
