/**
 * The one dispatcher behind the Astro endpoint `src/pages/api/[...path].ts`: it matches a
 * request to the route table, validates its input, refuses a paid route without a verified
 * payment for that exact route, runs the route's function and turns errors into JSON.
 */
import { type RouteDef, routeKey } from "../spec/route.ts";
import { routes } from "../spec/routes.ts";
import type { ApiLocals, FunctionContext, RouteFunction } from "./context.ts";
import { InvalidRequestError, NotFoundError, ServiceError, toErrorResponse } from "./errors.ts";
import { responseProblems, validateBody, validateQuery } from "./validate.ts";

/** Loads a function module by its `fn` name. */
export type FunctionLoader = (fn: string) => Promise<RouteFunction | undefined>;

const byPath = new Map<string, RouteDef[]>();
for (const route of routes) {
  const list = byPath.get(route.path) ?? [];
  list.push(route);
  byPath.set(route.path, list);
}

/** Find the route for a method and path, or throw 404/405. */
export function matchRoute(method: string, pathname: string): RouteDef {
  const path = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
  const candidates = byPath.get(path);
  if (!candidates) {
    // Under a family of routes (e.g. /api/howto/<slug>), name the valid ones.
    const parent = path.slice(0, path.lastIndexOf("/"));
    const siblings = parent.length > "/api".length ? [...byPath.keys()].filter((p) => p.startsWith(`${parent}/`)) : [];
    if (siblings.length > 0) {
      throw new NotFoundError(`No route ${path}. Valid paths here: ${siblings.join(", ")}.`, { path, valid_paths: siblings });
    }
    throw new NotFoundError(`No route ${path}. The routes are listed at /openapi.json.`, { path });
  }
  const wanted = method === "HEAD" ? "GET" : method;
  const route = candidates.find((r) => r.method === wanted);
  if (!route) {
    const allow = candidates.map((r) => r.method).join(", ");
    throw new ServiceError("method_not_allowed", 405, `${path} answers ${allow}, not ${method}.`, {
      details: { allow: candidates.map((r) => r.method) },
      headers: { Allow: allow },
    });
  }
  return route;
}

async function readJsonBody(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidRequestError("The request body is not valid JSON; send a JSON object.", [
      { field: "body", expected: "a JSON object" },
    ]);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new InvalidRequestError("The request body must be a JSON object.", [
      { field: "body", expected: "a JSON object", received: Array.isArray(parsed) ? "array" : typeof parsed },
    ]);
  }
  return parsed;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const bytes = Buffer.from(JSON.stringify(body));
  // A known length lets Node send the answer in one write instead of chunked encoding.
  return new Response(bytes, {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", "Content-Length": String(bytes.length), ...headers },
  });
}

/** Answer one `/api/*` request. Never throws: every failure becomes a JSON error response. */
export async function dispatch(request: Request, locals: ApiLocals, load: FunctionLoader): Promise<Response> {
  const url = new URL(request.url);
  const log = locals.services.log.child({ request_id: locals.requestId });
  try {
    const route = matchRoute(request.method, url.pathname);
    const input =
      route.method === "POST"
        ? route.body
          ? validateBody(route.body, await readJsonBody(request))
          : {}
        : route.query
          ? validateQuery(route.query, url.searchParams)
          : {};

    if (route.price !== null) {
      // Defence in depth: x402 runs before us, but a paid function never runs unless the
      // payment verified for this request was quoted for exactly this route.
      const payment = locals.payment;
      if (!payment || payment.route !== routeKey(route)) {
        log.error("paid route reached without a verified payment", { route: routeKey(route) });
        throw new ServiceError("payment_required", 402, `${routeKey(route)} is paid; pay with x402 and retry.`);
      }
    }

    const fn = await load(route.fn);
    if (!fn || fn.route.operationId !== route.operationId) {
      throw new Error(`functions/${route.fn}.ts does not export the function of ${route.operationId}`);
    }
    const ctx: FunctionContext = { ...locals.services, requestId: locals.requestId, payment: locals.payment, route, now: () => new Date() };
    const started = performance.now();
    const output = await fn.run(input as never, ctx);
    locals.timings.functionMs = Math.round((performance.now() - started) * 100) / 100;
    log.debug("function answered", { route: `${route.method} ${route.path}`, ms: locals.timings.functionMs });
    if (locals.services.config.validateResponses) {
      const problems = responseProblems(route.response, output);
      if (problems.length > 0) throw new Error(`${route.operationId} answered outside its schema: ${problems.join("; ")}`);
    }
    return json(200, output, route.price === null ? {} : { "Cache-Control": "private, no-store" });
  } catch (error) {
    const { status, headers, body } = toErrorResponse(error);
    if (status >= 500)
      log.error("function failed", {
        status,
        error: error instanceof Error ? error : String(error),
        cause: error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined,
      });
    return json(status, body, headers);
  }
}
