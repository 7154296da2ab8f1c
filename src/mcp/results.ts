/**
 * Turning the HTTP answer of a route into an MCP tool result, the same way for both MCP servers,
 * in the shapes of the x402 MCP transport (x402 `specs/transports-v2/mcp.md`):
 *
 *   2xx                        → the body as text (and as `structuredContent` when it is a JSON object);
 *                                a settlement goes in `_meta["x402/payment-response"]`
 *   402 with PAYMENT-REQUIRED  → `isError`, the `PaymentRequired` as `structuredContent` and, as JSON,
 *                                in `content[0].text`; the service's explanation, if any, in `content[1]`
 *   any other status           → `isError` with the service's error body (such calls are never charged)
 *
 * For a client that advertises the `org.x402/payment` extension in its request's capabilities
 * (the transport's extension binding), a 402 is instead `resultType: "payment_required"` with
 * the `PaymentRequired` in `paymentRequired`, and every other result says `resultType: "complete"`.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { isObject, type JsonObject, parseJsonOrUndefined } from "../json.ts";

/** Where a client puts its `PaymentPayload` in `tools/call` params. */
export const PAYMENT_META_KEY = "x402/payment";
/** Where the result carries the `SettleResponse`. */
export const PAYMENT_RESPONSE_META_KEY = "x402/payment-response";

/** The decoded header `name` (PAYMENT-RESPONSE, PAYMENT-REQUIRED), if the answer carries a readable one. */
function decodedHeader<T>(headers: Headers, name: string, decode: (header: string) => T): T | undefined {
  const header = headers.get(name);
  if (!header) return undefined;
  try {
    return decode(header);
  } catch {
    return undefined;
  }
}

/** `error.message` of the service's error body, when the body is one. */
function errorMessageOf(body: unknown): string | undefined {
  const error = isObject(body) ? body.error : undefined;
  return isObject(error) && typeof error.message === "string" ? error.message : undefined;
}

/** Which binding of the x402 MCP transport a result is given in. */
export interface ResultBinding {
  /** The request advertised `org.x402/payment`: a 402 is a `payment_required` result. */
  extension?: boolean;
  /** The request speaks an MCP revision whose results carry `resultType` (2026-07-28 and later). */
  resultType?: boolean;
}

/** The tool result of a route's HTTP answer (its body is read). */
export async function toolResultOf(response: Response, binding: ResultBinding = {}): Promise<CallToolResult> {
  const result = await toolResultIn(response, binding);
  return binding.resultType || binding.extension ? { resultType: "complete", ...result } : result;
}

async function toolResultIn(response: Response, binding: ResultBinding): Promise<CallToolResult> {
  const text = await response.text();
  const body = parseJsonOrUndefined(text);
  const settlement = decodedHeader(response.headers, "payment-response", decodePaymentResponseHeader);
  const meta = settlement ? { _meta: { [PAYMENT_RESPONSE_META_KEY]: settlement } } : {};
  if (response.ok) {
    return { content: [{ type: "text", text }], ...(isObject(body) ? { structuredContent: body } : {}), ...meta };
  }
  const challenge = response.status === 402 ? decodedHeader(response.headers, "payment-required", decodePaymentRequiredHeader) : undefined;
  if (challenge && binding.extension) {
    // Not a completed call and not an error: the operation did not run. No `content`, as the binding defines it.
    return { resultType: "payment_required", paymentRequired: challenge, ...meta } as unknown as CallToolResult;
  }
  if (challenge) {
    const message = errorMessageOf(body);
    return {
      isError: true,
      structuredContent: challenge as unknown as JsonObject,
      content: [{ type: "text", text: JSON.stringify(challenge) }, ...(message ? [{ type: "text" as const, text: message }] : [])],
      ...meta,
    };
  }
  return {
    isError: true,
    content: [{ type: "text", text: text || `HTTP ${response.status}` }],
    ...(isObject(body) ? { structuredContent: body } : {}),
    ...meta,
  };
}
