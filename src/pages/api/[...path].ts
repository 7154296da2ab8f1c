/**
 * The one Astro endpoint for `/api/*`: it hands every request to the dispatcher, which
 * answers from the route table and `functions/`.
 */
import type { APIRoute } from "astro";
import type { RouteFunction } from "../../context.ts";
import { dispatch } from "../../dispatch.ts";

export const prerender = false;

const modules = import.meta.glob<{ default: RouteFunction }>("../../../functions/*.ts");

async function load(fn: string): Promise<RouteFunction | undefined> {
  const importer = modules[`../../../functions/${fn}.ts`];
  return importer ? (await importer()).default : undefined;
}

export const ALL: APIRoute = ({ request, locals }) => dispatch(request, locals, load);
