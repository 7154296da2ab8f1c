/**
 * The route table: every route the service answers, under `/api/` on the primary site and
 * under `/v1/` on the secondary site (spec/sites.ts). Each area keeps its
 * entries in `spec/routes/<area>.ts`; add a route by adding one entry there and one module
 * in `functions/` that binds it with `defineFunction` (`functions/index.ts` finds it there).
 * Everything else (validation, dispatch, x402 config, `/openapi.json`, `/.well-known/x402`,
 * the landing page) derives from this list.
 */
import { type RouteDef, routeKey } from "./route.ts";
import { analyticsRoutes } from "./routes/analytics.ts";
import { assistantRoutes } from "./routes/assistant.ts";
import { baseToolsRoutes } from "./routes/base-tools.ts";
import { contentRoutes } from "./routes/content.ts";
import { coreRoutes } from "./routes/core.ts";
import { entityIntelRoutes } from "./routes/entity-intel.ts";
import { intelRoutes } from "./routes/intel.ts";
import { solanaRoutes } from "./routes/solana.ts";
import { statusRoutes } from "./routes/status.ts";

/** The primary site's routes, in the order its landing page and discovery documents list them. */
export const routes: readonly RouteDef[] = [
  ...coreRoutes,
  ...contentRoutes,
  ...analyticsRoutes,
  ...entityIntelRoutes,
  ...assistantRoutes,
  ...intelRoutes,
  ...statusRoutes,
];

/** The primary site's paid routes. */
export const paidRoutes: readonly RouteDef[] = routes.filter((r) => r.price !== null);

/** Every route of every site: one function table serves them all. */
export const allRoutes: readonly RouteDef[] = [...routes, ...baseToolsRoutes, ...solanaRoutes];

// A path is unique within its site; sites on different origins may share one (`/v1/meme-hunter`).
const repeated = (values: readonly string[]) => values.find((value, i) => values.indexOf(value) !== i);
for (const siteRoutes of [routes, baseToolsRoutes, solanaRoutes]) {
  const key = repeated(siteRoutes.map(routeKey));
  if (key) throw new Error(`spec/routes: ${key} is declared twice`);
}
const operationId = repeated(allRoutes.map((route) => route.operationId));
if (operationId) throw new Error(`spec/routes: operationId ${operationId} is used twice`);
