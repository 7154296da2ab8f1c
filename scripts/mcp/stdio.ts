/**
 * The stdio MCP server of `npm run mcp` (scripts/mcp.ts): the routes of both sites (spec/sites.ts)
 * as tools (src/mcp/tools.ts), each call made over HTTP to the origin of its route's site on a
 * running instance of this service and paid with the buyer's key through @x402/fetch, within a
 * per-call and a per-session cap (./spend-caps.ts) shared by all tools. A call over a cap is
 * refused before anything is signed: first on the route table's price, then on the amount of the
 * 402 challenge itself. The challenge must also ask no more than the price tools/list showed (for
 * the top-up, exactly the amount chosen) and, when the payee is known, name that payee: an origin
 * that is stale, compromised or tampered with in transit cannot make this server sign for more or
 * for someone else. A payment whose outcome is not known (settlement_unknown, or a lost answer)
 * is sent again, as it was, by the same call made again, so an answer is never paid twice. A free
 * tool that answers only a signed-in wallet (getBalance) gets the buyer's sign-in, which pays nothing.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import bs58 from "bs58";
import { getAddress, isAddress, isHex, parseUnits } from "viem";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import packageJson from "../../package.json" with { type: "json" };
import type { RouteDef } from "../../spec/route.ts";
import { atomicUsdc } from "../../spec/route.ts";
import type { JsonObject } from "../../src/json.ts";
import { toolResultOf } from "../../src/mcp/results.ts";
import { type RouteTool, routeRequest, routeTools, toolNamed, usd } from "../../src/mcp/tools.ts";
import { networkById } from "../../src/networks/index.ts";
import { quotedUsd } from "../../src/payments/requirements.ts";
import { type Reservation, SpendCaps } from "./spend-caps.ts";

/** Default cap on what one session may spend, in USD. */
export const DEFAULT_MAX_SPEND_USD = "1.00";
/** Default cap on the price of one call, in USD: the same as @x402/core's default per-payment cap. */
export const DEFAULT_MAX_PRICE_USD = "1.00";

/** A tool and the origin its route is served on. */
interface SiteTool extends RouteTool {
  baseUrl: string;
  /** Paid in USDC on Solana, with the Solana buyer. */
  solana?: boolean;
}

/** What the stdio server needs. */
export interface StdioServerOptions {
  routes: readonly RouteDef[];
  /** The service the tools call, e.g. `http://127.0.0.1:4021`. */
  baseUrl: string;
  /**
   * The secondary site's routes (the `/v1/` token-risk tools) and its origin, e.g.
   * `http://127.0.0.1:4022`; their operationIds must not clash with the primary's.
   */
  secondary?: { routes: readonly RouteDef[]; baseUrl: string };
  /**
   * The Solana site's routes and origin (e.g. `http://127.0.0.1:4023`), and the Solana wallet
   * that pays them (a 64-byte secret key in base58, and the RPC its client reads); without a
   * wallet its paid tools answer a tool error.
   */
  solana?: { routes: readonly RouteDef[]; baseUrl: string; buyer: SolanaBuyer | undefined };
  /** The wallet that pays; without one, paid tools answer a tool error and only free ones work. */
  buyer: PrivateKeyAccount | undefined;
  caps: SpendCaps;
  /** The fetch that reaches the service (tests may wrap it); default: the global one. */
  fetch?: typeof fetch;
  /**
   * The address the primary and secondary sites are paid to (their PAY_TO); a challenge naming
   * another is refused. Undefined: not checked.
   */
  expectedPayTo?: string | undefined;
  /** The Solana wallet the Solana site is paid to (its SOLANA_PAY_TO); undefined: not checked. */
  expectedSolanaPayTo?: string | undefined;
}

/** A Solana buyer of `npm run mcp`: its secret key (base58 or JSON array) and the RPC its client reads. */
export interface SolanaBuyer {
  secretKey: string;
  rpcUrl: string;
}

/** Settings of `npm run mcp`, from the environment. */
export interface StdioSettings {
  baseUrl: string;
  /** The secondary site's origin. */
  secondaryBaseUrl: string;
  /** The Solana site's origin (SOLANA_BASE_URL) and its buyer (SOLANA_BUYER_KEY, SOLANA_RPC_URL). */
  solanaBaseUrl: string;
  solanaBuyer: SolanaBuyer | undefined;
  buyer: PrivateKeyAccount | undefined;
  caps: SpendCaps;
  /** MCP_EXPECTED_PAY_TO: the payee of the Base sites, checksummed. */
  expectedPayTo: string | undefined;
  /** MCP_EXPECTED_SOLANA_PAY_TO: the payee of the Solana site. */
  expectedSolanaPayTo: string | undefined;
}

/** A setting of `npm run mcp` that cannot be used; the message names every problem. */
export class McpSettingsError extends Error {
  override readonly name = "McpSettingsError";
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join("; "));
    this.problems = problems;
  }
}

function usdSetting(name: string, value: string | undefined, fallback: string, problems: string[]): bigint {
  const text = value?.trim() || fallback;
  if (!/^[0-9]+(\.[0-9]{1,6})?$/.test(text)) {
    problems.push(`${name} must be a USD amount like 1.00 (at most 6 decimals); found "${text}"`);
    return 0n;
  }
  return parseUnits(text, 6);
}

/**
 * Read BASE_URL, SECONDARY_BASE_URL, BUYER_PRIVATE_KEY, MCP_MAX_SPEND_USD, MCP_MAX_PRICE_USD,
 * MCP_EXPECTED_PAY_TO and MCP_EXPECTED_SOLANA_PAY_TO;
 * throws McpSettingsError. The origins default as the service's local mode listens: the primary on
 * PORT (4021), the secondary on SECONDARY_PORT (4022).
 */
export function stdioSettingsFromEnv(env: Record<string, string | undefined> = process.env): StdioSettings {
  const problems: string[] = [];
  const origin = (name: string, fallback: string) => {
    const url = env[name]?.trim() || fallback;
    if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url)) problems.push(`${name} must be an http(s) URL; found "${url}"`);
    return url;
  };
  const baseUrl = origin("BASE_URL", `http://127.0.0.1:${env.PORT?.trim() || 4021}`);
  const secondaryBaseUrl = origin("SECONDARY_BASE_URL", `http://127.0.0.1:${env.SECONDARY_PORT?.trim() || 4022}`);
  let buyer: PrivateKeyAccount | undefined;
  const key = env.BUYER_PRIVATE_KEY?.trim();
  if (key) {
    const hex = (key.startsWith("0x") ? key : `0x${key}`) as `0x${string}`;
    if (isHex(hex) && hex.length === 66) buyer = privateKeyToAccount(hex);
    else problems.push("BUYER_PRIVATE_KEY must be a 32-byte hex private key (its value is not shown)");
  }
  const solanaBaseUrl = origin("SOLANA_BASE_URL", `http://127.0.0.1:${env.SOLANA_PORT?.trim() || 4023}`);
  const solanaKey = env.SOLANA_BUYER_KEY?.trim();
  const solanaRpc = env.SOLANA_RPC_URL?.trim();
  let solanaBuyer: SolanaBuyer | undefined;
  if (solanaKey) {
    if (!solanaRpc)
      problems.push("SOLANA_BUYER_KEY needs SOLANA_RPC_URL: the Solana RPC the buyer's client reads the mint and blockhash from");
    else if (!/^https?:\/\/[^/]/.test(solanaRpc) || !URL.canParse(solanaRpc))
      problems.push(`SOLANA_RPC_URL must be an http(s) URL; found "${solanaRpc}"`);
    else solanaBuyer = { secretKey: solanaKey, rpcUrl: solanaRpc };
  }
  const maxSession = usdSetting("MCP_MAX_SPEND_USD", env.MCP_MAX_SPEND_USD, DEFAULT_MAX_SPEND_USD, problems);
  const maxPerCall = usdSetting("MCP_MAX_PRICE_USD", env.MCP_MAX_PRICE_USD, DEFAULT_MAX_PRICE_USD, problems);
  let expectedPayTo: string | undefined;
  const payTo = env.MCP_EXPECTED_PAY_TO?.trim();
  if (payTo) {
    if (isAddress(payTo, { strict: false })) expectedPayTo = getAddress(payTo);
    else problems.push(`MCP_EXPECTED_PAY_TO must be an EVM address (0x + 40 hex digits); found "${payTo}"`);
  }
  let expectedSolanaPayTo: string | undefined;
  const solanaPayTo = env.MCP_EXPECTED_SOLANA_PAY_TO?.trim();
  if (solanaPayTo) {
    if (bs58.decodeUnsafe(solanaPayTo)?.length === 32) expectedSolanaPayTo = solanaPayTo;
    else problems.push(`MCP_EXPECTED_SOLANA_PAY_TO must be a Solana address (base58 of 32 bytes); found "${solanaPayTo}"`);
  }
  if (problems.length > 0) throw new McpSettingsError(problems);
  return {
    baseUrl,
    secondaryBaseUrl,
    solanaBaseUrl,
    solanaBuyer,
    buyer,
    caps: new SpendCaps({ maxPerCall, maxSession }),
    expectedPayTo,
    expectedSolanaPayTo,
  };
}

/** Tools of several sites in one server: a name two of them share. */
export class ToolNameClashError extends Error {
  override readonly name = "ToolNameClashError";
  readonly toolName: string;
  constructor(toolName: string) {
    super(`Two routes give the MCP tool name ${toolName}: operationIds must be unique across the sites one MCP server offers.`);
    this.toolName = toolName;
  }
}

/** `tools` unchanged, after checking that no two share a name (tools/call finds a tool by name). */
export function uniqueTools<T extends RouteTool>(tools: readonly T[]): T[] {
  const seen = new Set<string>();
  for (const t of tools) {
    if (seen.has(t.tool.name)) throw new ToolNameClashError(t.tool.name);
    seen.add(t.tool.name);
  }
  return [...tools];
}

/** Why the stdio server refused or could not make a call; stable, like the service's error codes. */
export type ToolErrorCode =
  /** The price is over the per-call cap, or would take the session past its cap. */
  | "spend_cap_exceeded"
  /** A paid tool, and no BUYER_PRIVATE_KEY to pay with. */
  | "buyer_key_missing"
  /** The challenge asks more than the tool's listed price, or another amount than the one chosen. */
  | "price_mismatch"
  /** The challenge names another payee than the service's. */
  | "pay_to_mismatch"
  /** The service did not answer (network error, or the payment could not be made). */
  | "call_failed";

/** A tool error made by the MCP server itself, in the service's error shape `{error: {code, message, details?}}`. */
export function toolError(code: ToolErrorCode, message: string, details?: JsonObject): CallToolResult {
  const body = { error: { code, message, ...(details ? { details } : {}) } };
  return { isError: true, content: [{ type: "text", text: message }], structuredContent: body };
}

/** Only USDC on a network the service settles on: the caps are counted in USDC. */
function isUsdc(requirements: PaymentRequirements): boolean {
  const network = networkById(requirements.network);
  return network !== undefined && requirements.asset.toLowerCase() === network.usdc.address.toLowerCase();
}

/** What one paid call holds: its reservation and payment once signed, or why its challenge was refused. */
interface Held {
  reservation?: Reservation;
  /** The PAYMENT-SIGNATURE header sent with the paid request. */
  header?: string;
  refused?: { code: ToolErrorCode; message: string; details: JsonObject };
}

/**
 * A payment sent whose outcome is not known (its settlement's outcome is unknown, or its answer
 * was lost): its reservation stays held, and the same call sends the same payment again, which
 * the service answers without a second charge, instead of signing a new one that could be
 * charged besides it.
 */
interface Unsettled {
  header: string;
  reservation: Reservation;
}

/** The payments of this session whose outcome is not known, by the request they paid for. */
type UnsettledPayments = Map<string, Unsettled>;

/** What makes two calls the same request to the service: method, URL and body. */
async function requestKey(request: Request): Promise<string> {
  return `${request.method} ${request.url} ${await request.clone().text()}`;
}

const RESEND_NOTE =
  "Call this tool again with the same arguments: this MCP server then sends the same payment again, which the service never charges twice.";

/** What the challenge of one paid call may ask. */
interface Expected {
  tool: string;
  /** The price tools/list shows, or the amount the caller chose. */
  amount: bigint;
  /** The caller chose the amount (the top-up): the challenge must ask exactly it. */
  chosen: boolean;
  /** The payee; undefined: not known, not checked. */
  payTo: string | undefined;
  /** The setting that names the payee, for the refusal. */
  payToSetting: string;
}

/** Why a challenge's `amount` and `payTo` are not what this call agreed to pay, or undefined. */
function mismatch(expected: Expected, amount: bigint, payTo: string): Held["refused"] {
  const asked = usd(amount);
  const listed = usd(expected.amount);
  if (expected.chosen ? amount !== expected.amount : amount > expected.amount) {
    const message = expected.chosen
      ? `The service asks ${asked} for ${expected.tool}, not the ${listed} chosen. Nothing was paid.`
      : `The service asks ${asked} for ${expected.tool}, more than its listed price of ${listed}. Nothing was paid.`;
    return { code: "price_mismatch", message, details: { price_usd: listed, asked_usd: asked } };
  }
  // EVM addresses compare case-insensitively (checksum case); Solana's base58 is case-sensitive.
  const same = (a: string, b: string) => (a.startsWith("0x") ? a.toLowerCase() === b.toLowerCase() : a === b);
  if (expected.payTo !== undefined && !same(expected.payTo, payTo)) {
    const message = `The service asks to be paid to ${payTo}, not to ${expected.payTo} (${expected.payToSetting}). Nothing was paid.`;
    return { code: "pay_to_mismatch", message, details: { pay_to: payTo, expected_pay_to: expected.payTo } };
  }
  return undefined;
}

/** The numbers behind a spend-cap refusal. */
function capDetails(caps: SpendCaps, price: bigint): Record<string, string> {
  return { price_usd: usd(price), max_price_usd: usd(caps.maxPerCall), max_spend_usd: usd(caps.maxSession), spent_usd: usd(caps.spent) };
}

/** The Solana buyer's x402 client, built once (its key is checked at the first paid call). */
const solanaClients = new WeakMap<SolanaBuyer, Promise<x402Client>>();

function solanaClient(buyer: SolanaBuyer): Promise<x402Client> {
  let client = solanaClients.get(buyer);
  if (!client) {
    client = (async () => {
      const [{ signerFromSecret }, { svmClient }, { solana }] = await Promise.all([
        import("../../src/solana/keys.ts"),
        import("../../src/solana/x402.ts"),
        import("../../src/networks/solana.ts"),
      ]);
      return svmClient(await signerFromSecret(buyer.secretKey), buyer.rpcUrl, solana.id);
    })();
    client.catch(() => solanaClients.delete(buyer));
    solanaClients.set(buyer, client);
  }
  return client;
}

/**
 * The buyer's client for one call: before signing, it checks the challenge against the caps and
 * against what the call expects to pay, then reserves its amount.
 */
function payingFetch(options: StdioServerOptions, buyer: PrivateKeyAccount | x402Client, held: Held, expected: Expected) {
  const client = buyer instanceof x402Client ? buyer : new x402Client();
  if (!(buyer instanceof x402Client)) registerExactEvmScheme(client, { signer: buyer });
  // The hook below is the one limit on amounts, so a refusal names the setting to change;
  // x402's default restriction to known assets stays on.
  client.setSpendControls({ maxAmountPerPayment: false });
  client.registerPolicy((_version, requirements) => requirements.filter(isUsdc));
  client.onBeforePaymentCreation(async ({ selectedRequirements }) => {
    if (!/^[0-9]+$/.test(selectedRequirements.amount)) {
      return { abort: true, reason: `the challenge's amount "${selectedRequirements.amount}" is not an integer` };
    }
    const amount = BigInt(selectedRequirements.amount);
    const overCap = options.caps.refusal(amount);
    const refused = overCap
      ? { code: "spend_cap_exceeded" as const, message: overCap, details: capDetails(options.caps, amount) }
      : mismatch(expected, amount, selectedRequirements.payTo);
    if (refused) {
      held.refused = refused;
      return { abort: true, reason: refused.message };
    }
    // No await since the cap check above, so the reservation cannot be refused now.
    held.reservation = options.caps.reserve(amount);
  });
  const send = options.fetch ?? fetch;
  const recording: typeof fetch = (input, init) => {
    const request = new Request(input, init);
    held.header = request.headers.get("payment-signature") ?? held.header;
    return send(request);
  };
  return wrapFetchWithPayment(recording, client);
}

/**
 * Why a request got no answer. fetch says only "fetch failed" and keeps the reason (a refused
 * connection, an unknown host) in its cause, which is what tells a user the service is not running.
 */
function whyFailed(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}

/** The service's error code of an answer, if it has one. */
async function errorCodeOf(response: Response): Promise<unknown> {
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: { code?: unknown } } | undefined;
  return body?.error?.code;
}

/** Whether a paid answer is a settlement whose outcome is unknown: the payment may still be charged, for this request. */
async function settlementUnknown(response: Response): Promise<boolean> {
  return response.status === 402 && (await errorCodeOf(response)) === "settlement_unknown";
}

/** The tool result of an answer that leaves a payment open, with how to get the answer without paying twice. */
async function openResult(response: Response): Promise<CallToolResult> {
  const result = await toolResultOf(response);
  return { ...result, content: [...result.content, { type: "text", text: RESEND_NOTE }] };
}

/**
 * Send an open payment again with its call: undefined when the service refused it (it was never
 * used: its reservation is given back and the call pays afresh), else the call's result.
 */
async function resend(
  options: StdioServerOptions,
  entry: SiteTool,
  args: Record<string, unknown> | undefined,
  key: string,
  open: Unsettled,
  unsettled: UnsettledPayments,
): Promise<CallToolResult | undefined> {
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(routeRequest(entry.route, args, entry.baseUrl, { "PAYMENT-SIGNATURE": open.header }));
  } catch (error) {
    return toolError("call_failed", `The call to ${entry.baseUrl} failed: ${whyFailed(error)}. ${RESEND_NOTE}`);
  }
  if (response.ok) {
    unsettled.delete(key);
    open.reservation.commit();
    return toolResultOf(response);
  }
  const code = response.status === 402 ? await errorCodeOf(response) : undefined;
  if (code === "payment_already_used") {
    // Used, though not for an answer this call can get back now: it was charged.
    unsettled.delete(key);
    open.reservation.commit();
    return toolResultOf(response);
  }
  if (response.status === 402 && code !== "settlement_unknown") {
    // Refused (expired, or settled now and failed): that authorisation moved nothing.
    unsettled.delete(key);
    open.reservation.release();
    return undefined;
  }
  // Still unknown, in progress, or not looked at (a rate limit, an outage): the payment stays open.
  return openResult(response);
}

async function callPaidTool(
  options: StdioServerOptions,
  entry: SiteTool,
  args: Record<string, unknown> | undefined,
  unsettled: UnsettledPayments,
): Promise<CallToolResult> {
  const { route } = entry;
  const request = routeRequest(route, args, entry.baseUrl);
  const key = await requestKey(request);
  const open = unsettled.get(key);
  if (open) {
    const result = await resend(options, entry, args, key, open, unsettled);
    if (result) return result;
  }
  // A price chosen by the caller (a top-up's amount) is checked at that amount; the challenge is checked again.
  // It is read from the query string the service receives, parsed as the service's gate parses it,
  // so the exact check below cannot disagree with the amount the service asks.
  const chosen = route.dynamicPrice ? new URL(request.url).searchParams.get(route.dynamicPrice) : null;
  const price = BigInt(atomicUsdc(quotedUsd(route, chosen)));
  const expected: Expected = {
    tool: entry.tool.name,
    amount: price,
    // Without an amount the top-up asks its default, which is the price above: exact either way.
    chosen: route.dynamicPrice !== undefined,
    payTo: entry.solana ? options.expectedSolanaPayTo : options.expectedPayTo,
    payToSetting: entry.solana ? "MCP_EXPECTED_SOLANA_PAY_TO" : "MCP_EXPECTED_PAY_TO",
  };
  const onSolana = entry.solana === true;
  const solanaBuyer = options.solana?.buyer;
  if (onSolana ? !solanaBuyer : !options.buyer) {
    const setting = onSolana ? "SOLANA_BUYER_KEY and SOLANA_RPC_URL" : "BUYER_PRIVATE_KEY";
    return toolError(
      "buyer_key_missing",
      `${entry.tool.name} costs ${usd(price)} per call; set ${setting} to let this MCP server pay. Nothing was paid.`,
    );
  }
  // The route table's price first: an over-cap call makes no request at all.
  const refused = options.caps.refusal(price);
  if (refused) return toolError("spend_cap_exceeded", refused, capDetails(options.caps, price));

  const held: Held = {};
  let payer: PrivateKeyAccount | x402Client;
  try {
    payer = onSolana ? await solanaClient(solanaBuyer as SolanaBuyer) : (options.buyer as PrivateKeyAccount);
  } catch (error) {
    return toolError(
      "buyer_key_missing",
      `SOLANA_BUYER_KEY cannot sign: ${error instanceof Error ? error.message : String(error)}. Nothing was paid.`,
    );
  }
  const pay = payingFetch(options, payer, held, expected);
  let response: Response;
  try {
    response = await pay(request);
  } catch (error) {
    if (held.refused) return toolError(held.refused.code, held.refused.message, held.refused.details);
    // Signed and sent but no answer: it may have been used, so it stays counted until resent.
    if (held.reservation && held.header) {
      unsettled.set(key, { header: held.header, reservation: held.reservation });
      const message = `The call to ${entry.baseUrl} failed: ${whyFailed(error)}. A payment was signed and may have been used; it counts against this session's cap. ${RESEND_NOTE}`;
      return toolError("call_failed", message);
    }
    held.reservation?.commit();
    const paid = held.reservation
      ? " A payment was signed and may have been used; it counts against this session's cap."
      : " Nothing was paid.";
    return toolError("call_failed", `The call to ${entry.baseUrl} failed: ${whyFailed(error)}.${paid}`);
  }
  if (held.reservation) {
    if (held.header && (await settlementUnknown(response))) {
      unsettled.set(key, { header: held.header, reservation: held.reservation });
      return openResult(response);
    }
    if (response.ok) held.reservation.commit();
    else held.reservation.release();
  }
  return toolResultOf(response);
}

/** The stdio MCP server: lists every route of both sites as a tool and calls the service, paying within the caps. */
export function createStdioServer(options: StdioServerOptions): Server {
  const siteTools = (routes: readonly RouteDef[], baseUrl: string, solana = false): SiteTool[] =>
    routeTools(routes).map((t) => ({ ...t, baseUrl, ...(solana ? { solana } : {}) }));
  const tools = uniqueTools([
    ...siteTools(options.routes, options.baseUrl),
    ...(options.secondary ? siteTools(options.secondary.routes, options.secondary.baseUrl) : []),
    ...(options.solana ? siteTools(options.solana.routes, options.solana.baseUrl, true) : []),
  ]);
  const { caps } = options;
  const unsettled: UnsettledPayments = new Map();
  const origins = [
    options.secondary ? `${options.baseUrl} (/api/) and ${options.secondary.baseUrl} (/v1/)` : options.baseUrl,
    ...(options.solana ? [` and ${options.solana.baseUrl} (/v1/ on Solana, paid in USDC on Solana)`] : []),
  ].join("");
  const server = new Server(
    { name: packageJson.name, version: packageJson.version },
    {
      capabilities: { tools: {} },
      instructions: `Each tool is one route of ${origins}. Paid tools pay in USDC automatically, on the chain each site names (Base, or Solana for the Solana site's tools), at most ${usd(caps.maxPerCall)} per call and ${usd(caps.maxSession)} for this session; a call over a cap returns an error and pays nothing, as does one whose payment request asks more than the tool's listed price (for topUpBalance, another amount than the one chosen) or names another payee. A call that fails is never charged.`,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const entry = toolNamed(tools, request.params.name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}; tools/list names them all.`);
    const args = request.params.arguments;
    if (entry.route.price === null) {
      // A free tool that answers only a signed-in wallet (getBalance) is answered for the buyer:
      // it signs in when the challenge asks, which pays nothing.
      const plain = options.fetch ?? fetch;
      const free = options.buyer && !entry.solana ? wrapFetchWithSIWx(plain, options.buyer) : plain;
      try {
        return await toolResultOf(await free(routeRequest(entry.route, args, entry.baseUrl)));
      } catch (error) {
        return toolError("call_failed", `The call to ${entry.baseUrl} failed: ${whyFailed(error)}.`);
      }
    }
    return callPaidTool(options, entry, args, unsettled);
  });
  return server;
}
