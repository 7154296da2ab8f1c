/**
 * The Astro endpoint of `POST /mcp`, the remote MCP server (src/mcp/remote.ts), on each site with
 * that site's routes as its tools. Each tool call is handed to the dispatcher of the site's API as
 * the HTTP request of its route, so it is validated, paid and charged exactly as that route is over HTTP.
 */
import type { APIRoute } from "astro";
import { siteById } from "../../spec/sites.ts";
import { dispatch } from "../dispatch.ts";
import { answerMcp, mcpMethodNotAllowed } from "../mcp/remote.ts";

export const POST: APIRoute = ({ request, locals }) =>
  answerMcp(
    request,
    siteById(locals.site).routes,
    (call, route, payment) => dispatch(call, { ...locals, path: route.path, payment: () => payment }),
    locals.calls,
  );

export const ALL: APIRoute = ({ request }) => mcpMethodNotAllowed(request.method);
