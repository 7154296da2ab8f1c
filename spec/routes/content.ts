/** Content routes: playbook bundle, how-to SOPs and the knowledge base (issue 3). */
import type { RouteDef } from "../route.ts";

/** The content routes, in listing order. */
export const contentRoutes: readonly RouteDef[] = [];
