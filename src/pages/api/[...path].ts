/**
 * The one Astro endpoint for `/api/*`: it hands every request to the dispatcher, which
 * answers from the route table and `functions/`.
 */
import type { APIRoute } from "astro";
import { dispatch } from "../../dispatch.ts";

export const ALL: APIRoute = ({ request, locals }) => dispatch(request, locals);
