/**
 * The function behind `GET` and `POST /api/howto/<slug>`: the same SOP record for both. Each
 * of the eight routes has its own module in `functions/` (the dispatcher binds one module to
 * one route); each is this function bound to its route and slug.
 */
import type { RouteDef } from "../../spec/route.ts";
import { defineFunction, type RouteFunction } from "../context.ts";
import { sopBySlug } from "./catalog.ts";

/** The function answering `route` with the compiled record of SOP `slug`. */
export function sopRecordFunction(route: RouteDef, slug: string): RouteFunction {
  return defineFunction(route, async () => {
    const sop = sopBySlug(slug);
    // The compiler refuses a build without all four SOPs, so this is a build mistake, not the caller's.
    if (!sop) throw new Error(`the compiled content has no SOP ${slug}`);
    return sop.record;
  });
}
