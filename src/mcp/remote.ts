/**
 * `POST /mcp`: the remote MCP server (streamable HTTP, stateless, JSON answers) whose tools are
 * the routes of the site the request came to (spec/sites.ts: the primary's `/api/` routes, or the
 * secondary's `/v1/` ones and its `/health`; src/mcp/tools.ts), paid through the x402 MCP transport
 * (x402 `specs/transports-v2/mcp.md`), in both of its bindings.
 *
 * A `tools/call` becomes the HTTP request of its route, with the `PaymentPayload` of
 * `params._meta["x402/payment"]` as its PAYMENT-SIGNATURE header, and is answered by the same
 * dispatcher as `/api/*` (src/dispatch.ts): validation, the payment gate (src/payments/gate.ts),
 * the ledger and the never-charged rules are those of HTTP, and a retry with the same payment
 * and arguments is the same request to the gate, so it is never charged twice. Each call is
 * counted by the HTTP rate limiter as its own request (`CallLimits`): the free budget, the
 * challenge budget, and the payer's in-flight cap, however many calls share one batch.
 *
 * Refused before anything runs, with JSON-RPC `-32602` (invalid params) and the HTTP error body
 * as its `data`: a `tools/call` without a tool name, with arguments that are not an object, or
 * nested deeper than an HTTP body may be (MAX_JSON_DEPTH), and an unknown tool.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  ErrorCode,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentRequiredHeader, encodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import packageJson from "../../package.json" with { type: "json" };
import type { RouteDef } from "../../spec/route.ts";
import { errorBody, type ErrorCode as ServiceErrorCode } from "../errors.ts";
import { isObject, type JsonObject, parseJsonOrUndefined } from "../json.ts";
import type { DecodedPayment, PayloadProblem } from "../payments/payload.ts";
import type { Admission, CallToAdmit } from "../server/middleware/rate-limit.ts";
import { MAX_JSON_DEPTH } from "../validate.ts";
import { PAYMENT_META_KEY, type ResultBinding, toolResultOf } from "./results.ts";
import { type RouteTool, routeRequest, routeTools, toolNamed } from "./tools.ts";

/**
 * Answers the HTTP request of one route exactly as `/api/*` does (the Astro endpoint binds
 * src/dispatch.ts); `payment` is its payment header as the rate limits decoded it, when they did.
 */
export type RouteDispatch = (request: Request, route: RouteDef, payment?: DecodedPayment | PayloadProblem) => Promise<Response>;

/** The HTTP rate limiter, for the client that sent this `POST /mcp` (src/server/middleware/rate-limit.ts). */
export interface CallLimits {
  address: string | undefined;
  admit(call: CallToAdmit): Promise<Admission>;
  /** Count `count` free requests of `address` at once: undefined when they may run, else the HTTP 429. */
  admitFree(address: string | undefined, count: number): Promise<Response | undefined>;
}

/** The extension binding's identifier, advertised by a client in its request's capabilities and by this server. */
export const PAYMENT_EXTENSION = "org.x402/payment";
/** The first MCP revision whose results carry `resultType`. */
const RESULT_TYPE_REVISION = "2026-07-28";

const INSTRUCTIONS =
  'Each tool is one route of this service\'s HTTP API. A paid tool called without payment answers an error result whose structuredContent is the x402 PaymentRequired (or, for a client advertising the org.x402/payment extension, a payment_required result); sign one of its `accepts` and call again with the PaymentPayload in params._meta["x402/payment"]. The paid result carries the settlement in _meta["x402/payment-response"]. A call that fails is never charged; the same call with the same payment is answered again without a second charge.';

/**
 * The nesting depth of a parsed JSON value (a scalar is 0, `{}` is 1), counted without recursion
 * (a value nested 10,000 deep would overflow the stack) and stopping past `limit`.
 */
export function valueDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    const d = depth + 1;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d]);
  }
  return max;
}

/** A JSON-RPC `-32602` whose `data` is the service's error body, as HTTP would answer the same input. */
function invalidParams(message: string, code: ServiceErrorCode, details: JsonObject): McpError {
  return new McpError(ErrorCode.InvalidParams, message, errorBody(code, message, details));
}

/**
 * Why a message cannot be handed to the MCP server at all: nested deeper than the arguments of a
 * tool call may be (which would overflow the stack of the SDK or of the JSON encoder).
 */
function tooDeep(message: unknown): McpError | undefined {
  // The envelope adds two levels above the arguments: the message and its params.
  if (valueDepth(message, MAX_JSON_DEPTH + 2) <= MAX_JSON_DEPTH + 2) return undefined;
  return invalidParams(`The request nests deeper than ${MAX_JSON_DEPTH} levels in its arguments.`, "invalid_request", {
    fields: [{ field: "params.arguments", expected: `a JSON object nested at most ${MAX_JSON_DEPTH} levels deep` }],
  });
}

/** The PAYMENT-SIGNATURE header of a `_meta["x402/payment"]`: a `PaymentPayload` object, or an already encoded header value. */
function paymentHeader(payment: unknown): string | undefined {
  if (payment === undefined) return undefined;
  return typeof payment === "string" ? payment : encodePaymentSignatureHeader(payment as PaymentPayload);
}

/** The binding a request asks for, from its per-request `_meta` (MCP 2026-07-28's capabilities and revision). */
function bindingOf(meta: JsonObject | undefined): ResultBinding {
  const capabilities = meta?.["io.modelcontextprotocol/clientCapabilities"];
  const extensions = isObject(capabilities) ? capabilities.extensions : undefined;
  const revision = meta?.["io.modelcontextprotocol/protocolVersion"];
  return {
    extension: isObject(extensions) && isObject(extensions[PAYMENT_EXTENSION]),
    resultType: typeof revision === "string" && revision >= RESULT_TYPE_REVISION,
  };
}

/** The `_meta` key of a wallet's sign-in, sent on as the SIGN-IN-WITH-X header. */
const SIGN_IN_META_KEY = "sign-in-with-x";
/** What an HTTP header value may hold here: printable ASCII. */
const HEADER_SAFE = /^[\x20-\x7e]*$/;

/** The params of a `tools/call`, checked here so that a malformed one is `-32602` naming the field, not a schema dump. */
function callParams(params: unknown): { name: string; args: JsonObject | undefined; meta: JsonObject | undefined } {
  const field = (name: string, expected: string) =>
    invalidParams(`Invalid tools/call: ${name} must be ${expected}.`, "invalid_request", { fields: [{ field: name, expected }] });
  if (!isObject(params)) throw field("params", "an object {name, arguments?, _meta?}");
  if (typeof params.name !== "string" || params.name === "") throw field("params.name", "the name of a tool (tools/list names them)");
  if (params.arguments !== undefined && !isObject(params.arguments)) throw field("params.arguments", "a JSON object");
  if (params._meta !== undefined && !isObject(params._meta)) throw field("params._meta", "a JSON object");
  // These strings become HTTP header values: a line break or a character past Latin-1 would make
  // the request unbuildable (an internal error) instead of a refusal naming the field.
  for (const key of [PAYMENT_META_KEY, SIGN_IN_META_KEY]) {
    const value = params._meta?.[key];
    if (typeof value === "string" && !HEADER_SAFE.test(value)) {
      throw field(`params._meta["${key}"]`, "printable ASCII (it is sent as an HTTP header)");
    }
  }
  return { name: params.name, args: params.arguments as JsonObject | undefined, meta: params._meta as JsonObject | undefined };
}

/**
 * `answer` itself, unless it is a 402 `settlement_failed` (the payment was verified but could not
 * be settled; nothing was charged): then the same answer with the route's challenge, from
 * `unpaid`, in its PAYMENT-REQUIRED, whose `error` is the settlement's reason. A
 * `settlement_unknown` keeps its answer: its remedy is the same payment again, not a new one.
 */
async function withChallengeIfUnsettled(answer: Response, unpaid: () => Promise<Response>): Promise<Response> {
  if (answer.status !== 402 || answer.headers.has("payment-required")) return answer;
  const body = parseJsonOrUndefined(await answer.clone().text());
  const error = isObject(body) ? body.error : undefined;
  if (!isObject(error) || error.code !== "settlement_failed") return answer;
  const challenge = await unpaid();
  const header = challenge.headers.get("payment-required");
  await challenge.body?.cancel();
  if (challenge.status !== 402 || !header) return answer;
  const details = isObject(error.details) ? error.details : {};
  const reason = typeof details.reason === "string" ? details.reason : "settlement_failed";
  const headers = new Headers(answer.headers);
  headers.set("PAYMENT-REQUIRED", encodePaymentRequiredHeader({ ...decodePaymentRequiredHeader(header), error: reason }));
  return new Response(answer.body, { status: 402, headers });
}

function createRemoteServer(origin: string, tools: readonly RouteTool[], dispatchRoute: RouteDispatch, limits?: CallLimits): Server {
  const capabilities = { tools: {}, extensions: { [PAYMENT_EXTENSION]: {} } };
  const info = { name: packageJson.name, version: packageJson.version };
  const server = new Server(info, { capabilities, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.tool) }));

  const callTool = async (params: unknown) => {
    const { name, args, meta } = callParams(params);
    const entry = toolNamed(tools, name);
    if (!entry) {
      throw invalidParams(`Unknown tool ${name}; tools/list names them all.`, "not_found", { fields: [{ field: "params.name" }] });
    }
    const payment = paymentHeader(meta?.[PAYMENT_META_KEY]);
    const binding = bindingOf(meta);
    // Counted before anything is read, as the HTTP request of the route is by the Express chain.
    const admission: Admission = limits ? await limits.admit({ route: entry.route, address: limits.address, payment }) : { done: () => {} };
    if ("refused" in admission) return toolResultOf(admission.refused, binding);
    try {
      // A prepaid balance pays when the call carries the wallet's sign-in, as over HTTP.
      const signIn = meta?.[SIGN_IN_META_KEY];
      const headers = {
        ...(payment === undefined ? {} : { "PAYMENT-SIGNATURE": payment }),
        ...(typeof signIn === "string" ? { "SIGN-IN-WITH-X": signIn } : {}),
      };
      const call = routeRequest(entry.route, args, origin, headers);
      const answer = await dispatchRoute(call, entry.route, admission.payment);
      // Over HTTP a failed settlement is a 402 without a challenge. The transport answers it, as any
      // refused payment, with the PaymentRequired to sign afresh: the route's current one, asked unpaid.
      const challenged = await withChallengeIfUnsettled(answer, () => dispatchRoute(routeRequest(entry.route, args, origin), entry.route));
      return await toolResultOf(challenged, binding);
    } finally {
      admission.done();
    }
  };

  // tools/call is answered here rather than by a schema-checked handler, whose schema failure is
  // an internal error (-32603) with the schema's dump instead of -32602; and `server/discover`
  // (MCP 2026-07-28), which this SDK does not know, advertises the payment extension.
  server.fallbackRequestHandler = async (request: JSONRPCRequest) => {
    if (request.method === "tools/call") return callTool(request.params);
    if (request.method === "server/discover") {
      return {
        resultType: "complete",
        supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        capabilities,
        _meta: { "io.modelcontextprotocol/serverInfo": info },
      };
    }
    throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
  };
  return server;
}

/** A JSON-RPC error answer to a message refused before the MCP server saw it. */
function errorAnswer(id: unknown, error: McpError): JsonObject {
  return { jsonrpc: "2.0", id: id ?? null, error: { code: error.code, message: error.message, data: error.data } };
}

const JSON_HEADERS = { "Content-Type": "application/json" };

/**
 * The free requests the messages of one `POST /mcp` body count besides the HTTP request itself
 * (which the Express chain counted): one for each message that is not a `tools/call` (which
 * `admit` counts as its route's request), a `tools/list` say, the first of them being the
 * request's own. 0 for a single message.
 */
function extraRequests(messages: readonly unknown[]): number {
  const besidesCalls = messages.filter((m) => !(isObject(m) && m.method === "tools/call")).length;
  return Math.max(0, besidesCalls - 1);
}

/**
 * Answer one `POST /mcp` request with the tools of `routes` (its site's): a fresh stateless
 * server and transport per request. Messages nested too deep are answered here, and the rest
 * handed to the SDK's transport, whose answers are joined with these.
 */
export async function answerMcp(
  request: Request,
  routes: readonly RouteDef[],
  dispatchRoute: RouteDispatch,
  limits?: CallLimits,
): Promise<Response> {
  const text = await request.text();
  const parsed = parseJsonOrUndefined(text);
  const refused: JsonObject[] = [];
  let passed: unknown = parsed;
  if (parsed !== undefined) {
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    const overBudget = limits && (await limits.admitFree(limits.address, extraRequests(messages)));
    if (overBudget) return overBudget;
    const kept = messages.filter((message) => {
      const error = tooDeep(message);
      if (error && isObject(message) && message.id !== undefined) refused.push(errorAnswer(message.id, error));
      return error === undefined;
    });
    if (refused.length > 0 && kept.length === 0) {
      return new Response(JSON.stringify(Array.isArray(parsed) ? refused : refused[0]), { status: 200, headers: JSON_HEADERS });
    }
    passed = Array.isArray(parsed) ? kept : kept[0];
  }
  const server = createRemoteServer(new URL(request.url).origin, routeTools(routes), dispatchRoute, limits);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    // The body is already read: handed on parsed, or, when it is not JSON, as it came for the SDK to refuse.
    const answer =
      passed === undefined
        ? await transport.handleRequest(new Request(request.url, { method: "POST", headers: request.headers, body: text }))
        : await transport.handleRequest(request, { parsedBody: passed });
    if (refused.length === 0) return answer;
    // Only notifications passed: the SDK accepts them with an empty 202 (no JSON body), but the
    // refused requests still need their answers, which the merge below gives alone.
    if (answer.status !== 200 && answer.status !== 202) return answer;
    const answered = answer.headers.get("content-type")?.startsWith("application/json") ? ((await answer.json()) as unknown) : undefined;
    const all = [...refused, ...(Array.isArray(answered) ? answered : answered === undefined ? [] : [answered])];
    return new Response(JSON.stringify(all), { status: 200, headers: JSON_HEADERS });
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
