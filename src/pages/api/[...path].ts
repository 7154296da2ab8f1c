/**
 * The one Astro endpoint for `/api/*`: it hands every request to the dispatcher, which
 * answers from the route table and `functions/`.
 */
import type { APIRoute } from "astro";
import type { RouteFunction } from "../../context.ts";
import { dispatch } from "../../dispatch.ts";

export const prerender = false;

const modules = import.meta.glob<{ default: RouteFunction }>("../../../functions/*.ts");

// Each module is imported once: a dynamic import() per request costs a trip through the loader.
const loaded = new Map<string, Promise<RouteFunction | undefined>>();

function load(fn: string): Promise<RouteFunction | undefined> {
  let found = loaded.get(fn);
  if (!found) {
    const importer = modules[`../../../functions/${fn}.ts`];
    found = importer ? importer().then((m) => m.default) : Promise.resolve(undefined);
    loaded.set(fn, found);
  }
  return found;
}

export const ALL: APIRoute = ({ request, locals }) => dispatch(request, locals, load);
