/**
 * `/openapi.json` (OpenAPI 3.1.0) from the route table: every route with its schemas, price
 * and error responses; paid routes carry the `X-Payment` API-key security scheme.
 */
import type { TSchema } from "@sinclair/typebox";
import { atomicUsdc, type RouteDef } from "../../spec/route.ts";
import { NETWORKS } from "../config.ts";
import { ERROR_DOCS } from "../error-docs.ts";

const network = "eip155:8453" as const;
const usdc = NETWORKS[network].usdc;

const ERROR_TEXT: Record<string, string> = {
  invalid_request: "Bad input: details.fields names each field and what was expected. Not charged.",
  not_found: "Unknown path, slug, topic or transaction. Not charged.",
  upstream_error: "A chain node or third-party API failed. Not charged.",
  unavailable: "A chain node or third-party API is unavailable or rate-limiting. Not charged.",
  upstream_timeout: "A chain node or third-party API timed out. Not charged.",
  target_not_allowed: "The target URL is private, loopback or otherwise not allowed. Not charged.",
};
const STATUS_OF: Record<string, string> = {
  invalid_request: "400",
  not_found: "404",
  upstream_error: "502",
  unavailable: "503",
  upstream_timeout: "504",
  target_not_allowed: "400",
};

/** A TypeBox schema as plain JSON Schema (TypeBox's symbol keys are not JSON). */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

function queryParameters(route: RouteDef): Record<string, unknown>[] {
  const props = (route.query?.properties ?? {}) as Record<string, TSchema>;
  const required = new Set((route.query?.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, schema]) => ({
    name,
    in: "query",
    required: required.has(name),
    ...(schema.description ? { description: schema.description } : {}),
    schema: plain(schema),
  }));
}

function errorResponse(description: string) {
  return { description, content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } } };
}

function operation(route: RouteDef): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    "200": { description: "The answer.", content: { "application/json": { schema: plain(route.response) } } },
  };
  for (const code of route.errors) {
    const status = STATUS_OF[code];
    if (status && !responses[status]) responses[status] = errorResponse(ERROR_TEXT[code] ?? code);
  }
  if (route.method === "POST" && !responses["400"]) responses["400"] = errorResponse(ERROR_TEXT.invalid_request as string);
  if (route.price !== null) {
    responses["402"] = {
      description: "Payment required: the x402 v2 challenge, in the PAYMENT-REQUIRED header (base64 JSON) and as this body.",
      headers: { "PAYMENT-REQUIRED": { description: "base64-encoded JSON challenge", schema: { type: "string" } } },
      content: { "application/json": { schema: { $ref: "#/components/schemas/PaymentRequired" } } },
    };
    responses["409"] = errorResponse("The same payment is already in use by a request in flight. Not charged.");
  }
  responses["413"] = errorResponse("Body over 64 KiB. Not charged.");
  responses["500"] = errorResponse("The service failed. Not charged.");

  const op: Record<string, unknown> = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: [...route.tags],
    responses,
    security: route.price === null ? [] : [{ x402: [] }],
    "x-price-usd": route.price ?? 0,
  };
  const params = queryParameters(route);
  if (params.length > 0) op.parameters = params;
  if (route.body) {
    const required = ((route.body.required as string[] | undefined) ?? []).length > 0;
    op.requestBody = { required, content: { "application/json": { schema: plain(route.body) } } };
  }
  if (route.price !== null) {
    op["x-payment-info"] = {
      // Both spellings crawlers are known to read: `protocols`/`pricingMode`/`price` and ours.
      protocols: ["x402"],
      pricingMode: "fixed",
      price: route.price.toFixed(2),
      protocol: "x402",
      x402Version: 2,
      scheme: "exact",
      network,
      asset: usdc,
      amount: atomicUsdc(route.price),
      price_usd: route.price,
    };
  }
  return op;
}

/** The OpenAPI 3.1.0 document of `routes`. */
export function buildOpenApi(routes: readonly RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const item = paths[route.path] ?? {};
    item[route.method.toLowerCase()] = operation(route);
    paths[route.path] = item;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Pay-per-call chain data and playbooks",
      version: "1.0.0",
      description: `Chain data, x402 intelligence and paid playbooks for agents. Paid routes are settled per call in USDC on Base (${network}) with x402 v2: call without payment to get the 402 challenge, sign an EIP-3009 authorisation, and repeat the call with it in X-Payment (or PAYMENT-SIGNATURE). A call that fails is never charged. Service build ${version}.`,
    },
    servers: [{ url: "/" }],
    tags: [...new Set(routes.flatMap((r) => r.tags))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        x402: {
          type: "apiKey",
          in: "header",
          name: "X-Payment",
          description: "x402 v2 payment payload (base64 JSON with a signed EIP-3009 authorisation). PAYMENT-SIGNATURE is accepted too.",
        },
      },
      schemas: {
        ErrorBody: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message", "docs"],
              properties: {
                code: { type: "string", enum: Object.keys(ERROR_DOCS) },
                message: { type: "string" },
                details: { type: "object" },
                docs: { type: "string", description: "the code's entry on the free /errors page" },
              },
            },
          },
        },
        PaymentRequired: {
          type: "object",
          required: ["x402Version", "accepts"],
          properties: {
            x402Version: { type: "integer", const: 2 },
            error: { type: "string" },
            resource: {
              type: "object",
              properties: { url: { type: "string" }, description: { type: "string" }, mimeType: { type: "string" } },
            },
            accepts: {
              type: "array",
              items: {
                type: "object",
                required: ["scheme", "network", "asset", "amount", "payTo", "maxTimeoutSeconds"],
                properties: {
                  scheme: { type: "string", const: "exact" },
                  network: { type: "string", const: network },
                  asset: { type: "string" },
                  amount: { type: "string", description: "atomic USDC (6 decimals)" },
                  payTo: { type: "string" },
                  maxTimeoutSeconds: { type: "integer" },
                  extra: { type: "object" },
                },
              },
            },
            extensions: { type: "object" },
          },
        },
      },
    },
  };
}
