/** x402 ecosystem intelligence routes: conformance checks, directory search, trust scores (issue 5). */
import type { RouteDef } from "../route.ts";

/** The x402 intelligence routes, in listing order. */
export const intelRoutes: readonly RouteDef[] = [];
