/**
 * The route table (`spec/routes.ts`) and the functions (`functions/index.ts`) match one to one:
 * every route has exactly one function bound to that very route entry, and the SOP routes
 * generated from `SOP_CATALOGUE` share one implementation (`functions/howto.ts`).
 */
import { describe, expect, it } from "vitest";
import howto, { sopRecord } from "../functions/howto.ts";
import { functionFor, functions } from "../functions/index.ts";
import { SOP_CATALOGUE } from "../spec/content-schema.ts";
import { routeKey } from "../spec/route.ts";
import { allRoutes, routes } from "../spec/routes.ts";
import { sopBySlug } from "../src/content/catalog.ts";
import type { FunctionContext } from "../src/context.ts";

describe("functions/index.ts", () => {
  it("has one function per route of spec/routes.ts, on every site", () => {
    expect(functions.length).toBe(allRoutes.length);
    expect(new Set(functions).size).toBe(allRoutes.length);
    expect(new Set(functions.map((f) => f.route)).size).toBe(allRoutes.length);
  });

  it.each(allRoutes.map((r) => [routeKey(r), r] as const))("%s has exactly one function, bound to its own entry", (_key, route) => {
    expect(functions.filter((f) => f.route === route)).toHaveLength(1);
    const fn = functionFor(route);
    expect(fn.route).toBe(route);
    expect(functions).toContain(fn);
  });

  it("refuses a route that is not in the table, even a copy of one", () => {
    const copy = { ...(routes[0] as (typeof routes)[number]) };
    expect(() => functionFor(copy)).toThrow(`${routeKey(copy)} is not a route of spec/routes.ts`);
  });
});

describe("the SOP routes (functions/howto.ts)", () => {
  const sopRoutes = routes.filter((r) => r.path.startsWith("/api/howto/"));

  it("are GET and POST /api/howto/<slug> for each SOP of the catalogue: 8 routes", () => {
    expect(sopRoutes).toHaveLength(8);
    expect(sopRoutes).toHaveLength(2 * SOP_CATALOGUE.length);
    expect(sopRoutes.map(routeKey).sort()).toEqual(
      SOP_CATALOGUE.flatMap((s) => [`GET /api/howto/${s.slug}`, `POST /api/howto/${s.slug}`]).sort(),
    );
  });

  it("share one run implementation", () => {
    expect(howto).toHaveLength(8);
    expect(howto.map((f) => f.route)).toEqual(expect.arrayContaining(sopRoutes));
    for (const route of sopRoutes) expect(functionFor(route).run).toBe(sopRecord);
    expect(new Set(sopRoutes.map((r) => functionFor(r).run)).size).toBe(1);
  });

  it.each(sopRoutes.map((r) => [routeKey(r), r] as const))("%s answers the record of its path's SOP", async (_key, route) => {
    const slug = route.path.slice("/api/howto/".length);
    const expected = sopBySlug(slug)?.record;
    expect(expected).toBeDefined();
    await expect(functionFor(route).run({} as never, { route } as FunctionContext)).resolves.toEqual(expected);
  });
});
