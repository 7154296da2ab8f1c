/**
 * The MCP tools of the service, generated from the route table (spec/routes.ts): one tool per
 * route, named by its operationId, taking the route's query (GET) or JSON body (POST) schema
 * as its input schema, described with its price. Both MCP servers (the stdio one in
 * scripts/mcp/stdio.ts and `POST /mcp` in src/mcp/remote.ts) list these and turn a call into the
 * HTTP request of its route with `routeRequest`, so a tool call is the same request as the
 * HTTP API's and is validated, priced and charged the same way.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { formatUnits } from "viem";
import { atomicUsdc, type RouteDef } from "../../spec/route.ts";
import { NoInput } from "../../spec/schemas.ts";
import { sites } from "../../spec/sites.ts";
import { networkById } from "../networks/index.ts";

/** One tool and the route it calls. */
export interface RouteTool {
  /** What `tools/list` shows. */
  tool: Tool;
  route: RouteDef;
}

/** Atomic USDC (6 decimals) as dollars with at least two decimals: 100000n → "$0.10". */
export function usd(atomic: bigint): string {
  const [whole, fraction = ""] = formatUnits(atomic, 6).split(".");
  return `$${whole}.${fraction.padEnd(2, "0")}`;
}

/** The JSON Schema of a route's input, as plain JSON (TypeBox's symbol keys dropped). */
function inputSchemaOf(route: RouteDef): Tool["inputSchema"] {
  // A POST without a body takes its query as its input (the top-up's amount); a route without input takes an empty object.
  const schema = (route.method === "GET" ? route.query : (route.body ?? route.query)) ?? NoInput;
  return JSON.parse(JSON.stringify(schema)) as Tool["inputSchema"];
}

/** The name of the network a route is paid on: its site's first (a route outside the table: Base, the primary's). */
function networkNameOf(route: RouteDef): string {
  const site = sites.find((s) => s.routes.includes(route));
  return (site && networkById(site.networks[0])?.name) ?? "Base";
}

function descriptionOf(route: RouteDef): string {
  const atomic = route.price === null ? null : BigInt(atomicUsdc(route.price));
  const network = networkNameOf(route);
  const price =
    atomic === null
      ? "Price: free, no payment needed."
      : route.dynamicPrice
        ? `Price: the ${route.dynamicPrice} you choose, in USD (default ${usd(atomic)}), paid in USDC on ${network} with x402; a call that fails is not charged.`
        : `Price: ${usd(atomic)} per call, paid in USDC on ${network} with x402; a call that fails is not charged.`;
  const summary = /[.!?]$/.test(route.summary) ? route.summary : `${route.summary}.`;
  return `${summary}\n\n${route.description}\n\n${price}\nHTTP: ${route.method} ${route.path}.`;
}

/** Each route table's tools, built once (`POST /mcp` lists a site's tools on every request). */
const toolsOfRoutes = new WeakMap<readonly RouteDef[], readonly RouteTool[]>();

/** The tools of `routes`, in the order of the route table. */
export function routeTools(routes: readonly RouteDef[]): readonly RouteTool[] {
  let tools = toolsOfRoutes.get(routes);
  if (!tools) {
    tools = routes.map((route) => ({
      route,
      tool: {
        name: route.operationId,
        title: route.summary,
        description: descriptionOf(route),
        inputSchema: inputSchemaOf(route),
      },
    }));
    toolsOfRoutes.set(routes, tools);
  }
  return tools;
}

/** The tool named `name` among `tools`, if any. */
export function toolNamed<T extends RouteTool>(tools: readonly T[], name: string): T | undefined {
  return tools.find((t) => t.tool.name === name);
}

/** A query string value: scalars as text, arrays as repeated keys, objects as JSON. */
function appendQuery(params: URLSearchParams, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) for (const item of value) appendQuery(params, key, item);
  else params.append(key, typeof value === "object" ? JSON.stringify(value) : String(value));
}

/**
 * The HTTP request of a tool call: GET with the arguments as the query string, POST with them as
 * the JSON body. The same arguments give the same bytes, so a retry of a paid call is "the same
 * request" to the payment gate and is never charged twice.
 */
export function routeRequest(
  route: RouteDef,
  args: Record<string, unknown> | undefined,
  baseUrl: string,
  headers: Record<string, string> = {},
): Request {
  const url = new URL(route.path, baseUrl);
  if (route.method === "GET") {
    for (const [key, value] of Object.entries(args ?? {})) appendQuery(url.searchParams, key, value);
    return new Request(url, { method: "GET", headers });
  }
  // A POST's query parameters (a top-up's amount) go in the query string, the rest in the body.
  const inQuery = new Set(Object.keys(route.query?.properties ?? {}));
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args ?? {})) {
    if (inQuery.has(key)) appendQuery(url.searchParams, key, value);
    else body[key] = value;
  }
  return new Request(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}
