/**
 * The one dispatcher behind the Astro endpoints of the API paths (`src/pages/api/[...path].ts`,
 * `src/pages/v1/[...path].ts`, `src/pages/health.ts`): it matches the path Express routed (never
 * one derived from the Host header) to the route table of the site the request came to, hands a
 * paid route to the payment gate (src/payments/gate.ts) with the function to run, validates
 * the input, runs the route's function and turns errors into JSON.
 */
import { functionFor } from "../functions/index.ts";
import type { RouteDef } from "../spec/route.ts";
import { type SiteDef, siteById } from "../spec/sites.ts";
import type { ApiLocals, FunctionContext, VerifiedPayment } from "./context.ts";
import { errorResponse, jsonResponse, NotFoundError, ServiceError } from "./errors.ts";
import { clientKey } from "./limits/client-key.ts";
import type { Logger } from "./log.ts";
import { inputOf, type RequestBody, requestBody, responseProblems } from "./validate.ts";

/** Each site's routes by path, built on first use. */
const byPathOfSite = new Map<SiteDef, Map<string, RouteDef[]>>();

function pathsOf(site: SiteDef): Map<string, RouteDef[]> {
  let byPath = byPathOfSite.get(site);
  if (!byPath) {
    byPath = Map.groupBy(site.routes, (route) => route.path);
    byPathOfSite.set(site, byPath);
  }
  return byPath;
}

/** Find the route of `site` for a method and path, or throw 404/405: another site's routes are not found here. */
export function matchRoute(method: string, pathname: string, site: SiteDef): RouteDef {
  const byPath = pathsOf(site);
  const path = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
  const candidates = byPath.get(path);
  if (!candidates) {
    // Under a family of routes (e.g. /api/howto/<slug>), name the valid ones.
    const parent = path.slice(0, path.lastIndexOf("/"));
    const siblings = parent.length > site.apiPrefix.length - 1 ? [...byPath.keys()].filter((p) => p.startsWith(`${parent}/`)) : [];
    if (siblings.length > 0) {
      throw new NotFoundError(`No route ${path}. Valid paths here: ${siblings.join(", ")}.`, { path, valid_paths: siblings });
    }
    throw new NotFoundError(`No route ${path}. The routes are listed at /openapi.json.`, { path });
  }
  const wanted = method === "HEAD" ? "GET" : method;
  const route = candidates.find((r) => r.method === wanted);
  if (!route) {
    const allow = candidates.map((r) => r.method).join(", ");
    throw new ServiceError("method_not_allowed", `${path} answers ${allow}, not ${method}.`, {
      details: { allow: candidates.map((r) => r.method) },
      headers: { Allow: allow },
    });
  }
  return route;
}

function errorJson(error: unknown, log: Logger): Response {
  const response = errorResponse(error);
  if (response.status >= 500)
    log.error("function failed", {
      status: response.status,
      error: error instanceof Error ? error : String(error),
      cause: error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined,
    });
  return response;
}

/** Validate the input of `route` and run its function; every failure is a JSON error response. */
async function answer(
  route: RouteDef,
  url: URL,
  body: RequestBody,
  payment: VerifiedPayment | null,
  locals: ApiLocals,
  log: Logger,
  signedIn?: `0x${string}`,
): Promise<Response> {
  try {
    const input = inputOf(route, url, body);
    const ctx: FunctionContext = {
      ...locals.services,
      requestId: locals.requestId,
      payment,
      route,
      now: locals.services.now ?? (() => new Date()),
      ...(signedIn ? { signedIn } : {}),
    };
    const output = await functionFor(route).run(input as never, ctx);
    log.debug("function answered", { route: `${route.method} ${route.path}` });
    if (locals.services.config.validateResponses) {
      const problems = responseProblems(route.response, output);
      if (problems.length > 0) throw new Error(`${route.operationId} answered outside its schema: ${problems.join("; ")}`);
    }
    // A paid answer is its payer's, and a free one read by signing in is the wallet's own (its
    // balance): no shared cache may keep either for the next caller of the URL.
    const own = route.price !== null || route.signIn === true;
    return jsonResponse(200, output, own ? { "Cache-Control": "private, no-store" } : {});
  } catch (error) {
    return errorJson(error, log);
  }
}

/** Answer one API request of the site in `locals`. Never throws: every failure becomes a JSON error response. */
export async function dispatch(request: Request, locals: ApiLocals): Promise<Response> {
  const url = new URL(request.url);
  const log = locals.services.log.child({ request_id: locals.requestId });
  try {
    // Matched once by Express (src/server/middleware/route-match.ts); a call made here (MCP's) is matched now.
    const matched =
      locals.matched?.path === locals.path ? locals.matched.route : matchRoute(request.method, locals.path, siteById(locals.site));
    if (matched instanceof ServiceError) throw matched;
    const route = matched;
    // The body is read once and its JSON parsed once, for the gate, the validation and the function.
    const body = requestBody(request.method === "GET" || request.method === "HEAD" ? new Uint8Array() : await request.bytes());
    if (route.price === null && route.signIn) {
      const signedIn = await locals.gate.signIn(request, route, body);
      if (signedIn instanceof Response) return signedIn;
      return await answer(route, url, body, null, locals, log, signedIn.wallet);
    }
    if (route.price === null) return await answer(route, url, body, null, locals, log);
    // The client as the rate limits see it: a bare retry of a settled payment is answered only to the one that paid.
    const address = locals.calls?.address;
    const client = address === undefined ? null : clientKey(address);
    const given = { body, client, ...(locals.payment ? { payment: locals.payment } : {}) };
    return await locals.gate.handle(request, route, (payment) => answer(route, url, body, payment, locals, log), given);
  } catch (error) {
    return errorJson(error, log);
  }
}
