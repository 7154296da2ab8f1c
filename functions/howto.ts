/**
 * `GET` and `POST /api/howto/<slug>`: the paid SOP record, the same for both methods. The
 * routes are generated from `SOP_CATALOGUE` (`spec/content-schema.ts`) in
 * `spec/routes/content.ts`, and so are their functions here: one `run` bound to every SOP route,
 * which finds the SOP from the path of the route it is called for. The optional `sop` input must
 * name the path's SOP; the route's schema enforces it.
 */
import { SOP_CATALOGUE, type SopSlug } from "../spec/content-schema.ts";
import { howtoRoutes } from "../spec/routes/content.ts";
import { sopBySlug } from "../src/content/catalog.ts";
import { defineFunction, type FunctionContext, type RouteFunction } from "../src/context.ts";

const slugByPath = new Map<string, SopSlug>(SOP_CATALOGUE.map((s) => [howtoRoutes[s.slug].get.path, s.slug]));

/** Answers any SOP route with the compiled record of the SOP its path names. */
export async function sopRecord(_input: unknown, ctx: FunctionContext): Promise<unknown> {
  const slug = slugByPath.get(ctx.route.path);
  if (!slug) throw new Error(`functions/howto.ts answers the SOP routes only, not ${ctx.route.method} ${ctx.route.path}`);
  const sop = sopBySlug(slug);
  // The compiler refuses a build without every SOP, so this is a build mistake, not the caller's.
  if (!sop) throw new Error(`the compiled content has no SOP ${slug}`);
  return sop.record;
}

/** One function per SOP route (GET and POST for each SOP of the catalogue, in catalogue order), all running `sopRecord`. */
const howto: readonly RouteFunction[] = SOP_CATALOGUE.flatMap((s) => [
  defineFunction(howtoRoutes[s.slug].get, sopRecord),
  defineFunction(howtoRoutes[s.slug].post, sopRecord),
]);
export default howto;
