/**
 * Every function of the service, and `functionFor`, the lookup `src/dispatch.ts` uses to find
 * the one answering a route. Each module of this folder binds its entry of
 * `spec/routes/<area>.ts` with `defineFunction` (`src/context.ts`) and exports it as default (a
 * list of them where several routes share one implementation); a new route's module is found by
 * being here. The checks below run once, when this module loads: a route of `spec/routes.ts`
 * without a function, with two, or a function whose route is not in the table stops the service at start.
 */
import { readdirSync } from "node:fs";
import { type RouteDef, routeKey } from "../spec/route.ts";
import { allRoutes } from "../spec/routes.ts";
import type { RouteFunction } from "../src/context.ts";

/** This folder's function modules. */
const modules = readdirSync(new URL(".", import.meta.url)).filter((file) => /^[a-z0-9-]+\.ts$/.test(file) && file !== "index.ts");

/** Every function, one per route of every site. */
export const functions: readonly RouteFunction[] = (
  await Promise.all(modules.map(async (file) => ((await import(`./${file}`)) as { default: RouteFunction | RouteFunction[] }).default))
).flat();

/** Each route of the table to its function, keyed by the route object itself. */
const byRoute = new Map<RouteDef, RouteFunction>();
{
  const inTable = new Set<RouteDef>(allRoutes);
  for (const fn of functions) {
    const key = routeKey(fn.route);
    if (!inTable.has(fn.route)) throw new Error(`functions/index.ts: a function answers ${key}, which is not a route of spec/routes.ts`);
    if (byRoute.has(fn.route)) throw new Error(`functions/index.ts: ${key} has two functions`);
    byRoute.set(fn.route, fn);
  }
  const missing = allRoutes.filter((r) => !byRoute.has(r)).map(routeKey);
  if (missing.length > 0) throw new Error(`functions/index.ts: no function answers ${missing.join(", ")}`);
}

/** The function answering `route`, a route of `spec/routes.ts`. */
export function functionFor(route: RouteDef): RouteFunction {
  const fn = byRoute.get(route);
  if (!fn) throw new Error(`${routeKey(route)} is not a route of spec/routes.ts`);
  return fn;
}
