/**
 * `/health`, a free route of the secondary site (the primary's is `/api/health`): handed to the
 * dispatcher, which answers it only on the site whose route table lists it.
 */
import type { APIRoute } from "astro";
import { dispatch } from "../dispatch.ts";

export const prerender = false;

export const ALL: APIRoute = ({ request, locals }) => dispatch(request, locals);
