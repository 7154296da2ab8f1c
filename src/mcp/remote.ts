/**
 * `POST /mcp`: the remote MCP server (streamable HTTP, stateless, JSON answers) whose tools are
 * the routes of the site the request came to (spec/sites.ts: the primary's `/api/` routes, or the
 * secondary's `/v1/` ones and its `/health`; src/mcp/tools.ts), paid through the x402 MCP transport.
 *
 * A `tools/call` becomes the HTTP request of its route, with the `PaymentPayload` of
 * `params._meta["x402/payment"]` as its PAYMENT-SIGNATURE header, and is answered by the same
 * dispatcher as `/api/*` (src/dispatch.ts): validation, the payment gate (src/payments/gate.ts),
 * the ledger and the never-charged rules are those of HTTP, and a retry with the same payment
 * and arguments is the same request to the gate, so it is never charged twice. The answer
 * becomes the tool result by src/mcp/results.ts: unpaid, the `PaymentRequired` as an error
 * result; paid, the answer with the settlement in `_meta["x402/payment-response"]`.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import packageJson from "../../package.json" with { type: "json" };
import type { RouteDef } from "../../spec/route.ts";
import { errorBody } from "../errors.ts";
import { PAYMENT_META_KEY, toolResultOf } from "./results.ts";
import { type RouteTool, routeRequest, routeTools, toolNamed } from "./tools.ts";

/** Answers the HTTP request of one route exactly as `/api/*` does (the Astro endpoint binds src/dispatch.ts). */
export type RouteDispatch = (request: Request, route: RouteDef) => Promise<Response>;

/** Each site's tools, built once per route table. */
const toolsOfRoutes = new WeakMap<readonly RouteDef[], readonly RouteTool[]>();

function toolsOf(routes: readonly RouteDef[]): readonly RouteTool[] {
  let tools = toolsOfRoutes.get(routes);
  if (!tools) {
    tools = routeTools(routes);
    toolsOfRoutes.set(routes, tools);
  }
  return tools;
}

const INSTRUCTIONS =
  'Each tool is one route of this service\'s HTTP API. A paid tool called without payment answers an error result whose structuredContent is the x402 PaymentRequired; sign one of its `accepts` and call again with the PaymentPayload in params._meta["x402/payment"]. The paid result carries the settlement in _meta["x402/payment-response"]. A call that fails is never charged; the same call with the same payment is answered again without a second charge.';

/**
 * The headers a tool call's `_meta` carries into its route's request: PAYMENT-SIGNATURE from
 * `_meta["x402/payment"]` (a `PaymentPayload` object, or an already encoded header value), and
 * SIGN-IN-WITH-X from `_meta["sign-in-with-x"]` (a prepaid balance pays, as over HTTP).
 */
function paymentHeader(meta: Record<string, unknown> | undefined): Record<string, string> {
  const payment = meta?.[PAYMENT_META_KEY];
  const signIn = meta?.["sign-in-with-x"];
  return {
    ...(payment === undefined
      ? {}
      : { "PAYMENT-SIGNATURE": typeof payment === "string" ? payment : encodePaymentSignatureHeader(payment as PaymentPayload) }),
    ...(typeof signIn === "string" ? { "SIGN-IN-WITH-X": signIn } : {}),
  };
}

function createRemoteServer(origin: string, tools: readonly RouteTool[], dispatchRoute: RouteDispatch): Server {
  const server = new Server(
    { name: packageJson.name, version: packageJson.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args, _meta } = request.params;
    const entry = toolNamed(tools, name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${name}; tools/list names them all.`);
    const call = routeRequest(entry.route, args, origin, paymentHeader(_meta));
    return toolResultOf(await dispatchRoute(call, entry.route));
  });
  return server;
}

/** Answer one `POST /mcp` request with the tools of `routes` (its site's): a fresh stateless server and transport per request. */
export async function answerMcp(request: Request, routes: readonly RouteDef[], dispatchRoute: RouteDispatch): Promise<Response> {
  const server = createRemoteServer(new URL(request.url).origin, toolsOf(routes), dispatchRoute);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    await server.close();
  }
}

/** Stateless, so no SSE stream (GET) and no session to end (DELETE): only POST is answered. */
export function mcpMethodNotAllowed(method: string): Response {
  const body = errorBody("method_not_allowed", `/mcp answers POST (MCP streamable HTTP, stateless), not ${method}.`, { allow: ["POST"] });
  return new Response(JSON.stringify(body), {
    status: 405,
    headers: { "Content-Type": "application/json; charset=utf-8", Allow: "POST" },
  });
}
