/** Live chain analytics routes: wallet profiles, gas, token checks, whale watch, sentiment, markets (issue 4). */
import type { RouteDef } from "../route.ts";

/** The analytics routes, in listing order. */
export const analyticsRoutes: readonly RouteDef[] = [];
