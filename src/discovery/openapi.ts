/**
 * `/openapi.json` (OpenAPI 3.1.0) from the route table: every route with its schemas, price
 * and error responses, in the profile agent directories read (x402scan through
 * `@agentcash/discovery`): each paid operation declares its price in the structured
 * `x-payment-info` and `security: []`, because the payment is not a credential: an operation
 * whose security names an API-key scheme is listed as needing a key ("apiKey+paid"). The
 * contract's `X-Payment` API-key scheme stays declared, describing the payment header, as the
 * document-level default that every operation overrides. `info` carries the contact, the licence and
 * `x-guidance` (which route answers which question, budgets, retries); ownership proofs of
 * the `payTo` address go in `x-agentcash-provenance` and `x-discovery`.
 */
import type { TSchema } from "@sinclair/typebox";
import type { RouteDef } from "../../spec/route.ts";
import { Address, TxHash } from "../../spec/schemas.ts";
import { primarySite, type SiteDef } from "../../spec/sites.ts";
import { TAGS } from "../../spec/tags.ts";
import { DecimalString } from "../../spec/token-risk-schemas.ts";
import { ERROR_DOCS, ErrorBody, type ErrorCode, statusOf } from "../error-docs.ts";
import { base } from "../networks/base.ts";
import { enumOf } from "./output-example.ts";
import { shareRepeatedSchemas } from "./shared-schemas.ts";

/** What the document says beyond the route table. */
export interface OpenApiOptions {
  /** The service build, named in the description. */
  version: string;
  /** The origin the document is served from (`https://host[:port]`), for the absolute contact and licence links. */
  origin: string;
  /** Signatures of the origin by the `payTo` key (see src/discovery/ownership-proof.ts); none: not published. */
  ownershipProofs?: readonly string[];
  /** The site the document describes: its title, description, network and budgeting hint (default: the primary site). */
  site?: Pick<SiteDef, "title" | "description" | "networks" | "budgetHint" | "howToPay" | "tagNotes">;
}

/**
 * A TypeBox schema as plain JSON Schema (TypeBox's symbol keys are not JSON), a union of string
 * literals written as the equivalent, shorter `enum`.
 */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema), (_key, value: unknown) => {
    const anyOf = (value as { anyOf?: unknown } | null)?.anyOf;
    const literals = Array.isArray(anyOf) ? enumOf(anyOf) : undefined;
    if (!literals) return value;
    const { anyOf: _literals, ...rest } = value as Json;
    return { ...rest, ...literals };
  }) as Record<string, unknown>;
}

type Json = Record<string, unknown>;

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

/** The codes an operation can answer with: its route's own, and the ones every route of its kind has. */
function errorCodesOf(route: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors ?? []);
  if (route.method === "POST") codes.add("invalid_request");
  if (route.price !== null) {
    codes.add("payment_required");
    codes.add("payment_in_progress");
  }
  codes.add("payload_too_large");
  codes.add("internal_error");
  return [...codes];
}

/** `components.responses`: one response per error code, its description from the error table. */
function errorResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  return Object.fromEntries(
    codes.map((code) => {
      const doc = ERROR_DOCS[code];
      const description = `${doc.title} (${code}). ${doc.when} Not charged.`;
      if (code === "payment_required") {
        return [
          code,
          {
            description: `${description} The challenge is in the PAYMENT-REQUIRED header (base64 JSON) and is this body.`,
            headers: { "PAYMENT-REQUIRED": { description: "base64-encoded JSON challenge", schema: { type: "string" } } },
            content: { "application/json": { schema: { $ref: "#/components/schemas/PaymentRequired" } } },
          },
        ];
      }
      return [code, { description, content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } } }];
    }),
  );
}

function operation(route: RouteDef): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    "200": { description: "The answer.", content: { "application/json": { schema: plain(route.response) } } },
  };
  // One response per status: a status several codes share lists them all.
  const byStatus = Map.groupBy(errorCodesOf(route), statusOf);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] =
      codes.length === 1
        ? { $ref: `#/components/responses/${codes[0]}` }
        : {
            description: `${codes.map((c) => `${ERROR_DOCS[c].title} (${c})`).join(" or ")}: see /errors. Not charged.`,
            content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } },
          };
  }

  const op: Record<string, unknown> = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: [...route.tags],
    responses,
    // A route only a signed-in wallet may read names the SIWX scheme; any other operation asks for no credential.
    security: route.signIn ? [{ siwx: [] }] : [],
    "x-price-usd": route.price ?? 0,
  };
  const params = queryParameters(route);
  if (params.length > 0) op.parameters = params;
  if (route.body) {
    const required = ((route.body.required as string[] | undefined) ?? []).length > 0;
    op.requestBody = { required, content: { "application/json": { schema: plain(route.body) } } };
  }
  if (route.price !== null) {
    op["x-payment-info"] = { price: priceInfo(route), protocols: [{ x402: {} }] };
  }
  return op;
}

/** A USD price as the decimal string `x-payment-info` quotes: at least two decimals, at most six (USDC's). */
function usdAmount(price: number): string {
  return price.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6, useGrouping: false });
}

/** The bounds of a dynamic price: its query parameter's minimum and maximum. */
function priceBounds(route: RouteDef): { min?: number; max?: number } {
  const param = route.dynamicPrice
    ? (route.query?.properties[route.dynamicPrice] as { minimum?: number; maximum?: number } | undefined)
    : undefined;
  return {
    ...(param?.minimum !== undefined ? { min: param.minimum } : {}),
    ...(param?.maximum !== undefined ? { max: param.maximum } : {}),
  };
}

/** `x-payment-info.price`: a fixed amount, or a dynamic one with the bounds an agent can pre-authorise. */
function priceInfo(route: RouteDef): Record<string, string> {
  if (!route.dynamicPrice) return { mode: "fixed", currency: "USD", amount: usdAmount(route.price as number) };
  const bounds = Object.entries(priceBounds(route)).map(([bound, usd]) => [bound, usdAmount(usd)]);
  return { mode: "dynamic", currency: "USD", ...Object.fromEntries(bounds) };
}

function priceText(route: RouteDef): string {
  if (route.price === null) return route.signIn ? "free, Sign-In-With-X" : "free";
  const { min, max } = priceBounds(route);
  if (route.dynamicPrice && min !== undefined && max !== undefined) return `$${usdAmount(min)}-$${usdAmount(max)}, ?${route.dynamicPrice}`;
  return `$${usdAmount(route.price)}`;
}

/** `info.x-guidance`: how an agent should use this API, generated from the route table (kept under 4000 characters). */
function guidanceOf(routes: readonly RouteDef[], site: Pick<SiteDef, "description" | "networks" | "budgetHint" | "howToPay">): string {
  // One line per path and price: a path offered with GET and POST at one price answers one question.
  const byPath = Map.groupBy(routes, (route) => `${route.path} ${route.price}`);
  // Routes under a parent path with four or more children (the entity-intelligence and how-to families) share
  // one heading, then one short line each: the guidance must stay short enough to inline.
  const parentOf = (path: string) => path.slice(0, path.lastIndexOf("/"));
  const children = Map.groupBy(
    routes.filter((route) => parentOf(route.path) !== "/api"),
    (route) => parentOf(route.path),
  );
  const familyOf = (path: string) => {
    if ((children.get(parentOf(path))?.length ?? 0) >= 4) return parentOf(path);
    return (children.get(path)?.length ?? 0) >= 4 ? path : undefined;
  };
  const headed = new Set<string>();
  const lines: string[] = [];
  for (const same of byPath.values()) {
    const first = same[0] as RouteDef;
    const family = familyOf(first.path);
    const call = `${same.map((r) => r.method).join("/")} ${first.path} (${priceText(first)})`;
    if (!family) {
      lines.push(`- ${first.summary}: ${call}`);
      continue;
    }
    if (!headed.has(family)) {
      headed.add(family);
      lines.push(`- ${first.tags.find((t) => t !== "free") ?? family}:`);
    }
    lines.push(`  ${call}`);
  }
  return [
    site === primarySite
      ? `Chain data, x402 intelligence and playbooks, paid per call in USDC on Base (${base.id}) with x402 v2, scheme exact. No account or key.`
      : `${site.description} Scheme exact. No account or key.`,
    "",
    `Pay: call without payment; the 402 has the challenge in PAYMENT-REQUIRED (base64 JSON) and the body. ${site.howToPay ? `For accepts[0].amount, ${site.howToPay}` : "Sign an EIP-3009 TransferWithAuthorization for accepts[0].amount to accepts[0].payTo"}; repeat the request with it in PAYMENT-SIGNATURE (or X-Payment). PAYMENT-RESPONSE names the settlement.`,
    "",
    `Budget: ${site.budgetHint} A status >= 400 is never charged.`,
    "",
    "Retries: on 409 payment_in_progress, 429 or 503 wait Retry-After and repeat with the same payment. Lost answer: repeat with the same payment (300 s), or with its payment-identifier id or a Sign-In-With-X of the payer (24 h); never charged twice. Codes: /errors.",
    "",
    "Which route answers which question:",
    ...lines,
  ].join("\n");
}

/** The OpenAPI 3.1.0 document of `routes`. */
export function buildOpenApi(
  routes: readonly RouteDef[],
  { version, origin, ownershipProofs = [], site = primarySite }: OpenApiOptions,
): Record<string, unknown> {
  const network = site.networks[0];
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const item = paths[route.path] ?? {};
    item[route.method.toLowerCase()] = operation(route);
    paths[route.path] = item;
  }
  // Only the codes some operation refers to get a component (an unused one is a lint finding).
  const referenced = JSON.stringify(paths);
  const codes = [...new Set(routes.flatMap(errorCodesOf))]
    .filter((code) => referenced.includes(`"#/components/responses/${code}"`))
    .sort((a, b) => statusOf(a) - statusOf(b));
  const doc = {
    openapi: "3.1.0",
    info: {
      title: site.title,
      version: "1.0.0",
      description: `${site.description} Call without payment to get the 402 challenge, ${site.howToPay ?? "sign an EIP-3009 authorisation"}, and repeat the call with it in X-Payment (or PAYMENT-SIGNATURE). A call that fails is never charged. Service build ${version}.`,
      contact: { name: "Service pages and error codes", url: `${origin}/` },
      license: { name: "Proprietary: answers are for the paying caller's own use", url: `${origin}/#terms` },
      "x-guidance": guidanceOf(routes, site),
    },
    servers: [{ url: "/" }],
    // The contract's X-Payment scheme, as the document's default; every operation overrides it
    // with `security: []` (see the top of this file), so no operation asks for a key.
    security: [{ x402: [] }],
    tags: [...new Set(routes.flatMap((r) => r.tags))].map((name) => ({ name, description: site.tagNotes?.[name] ?? TAGS[name] })),
    ...(ownershipProofs.length > 0
      ? { "x-agentcash-provenance": { ownershipProofs: [...ownershipProofs] }, "x-discovery": { ownershipProofs: [...ownershipProofs] } }
      : {}),
    paths,
    components: {
      responses: errorResponses(codes),
      securitySchemes: {
        ...(routes.some((r) => r.signIn)
          ? {
              siwx: {
                type: "apiKey",
                in: "header",
                name: "SIGN-IN-WITH-X",
                "x-agentcash-auth-kind": "siwx",
                description:
                  "Sign-In-With-X (CAIP-122): a wallet signature for this origin, at most 5 minutes old, each nonce once. Without it, such a route answers 402 whose PAYMENT-REQUIRED declares sign-in-with-x (what wrapFetchWithSIWx signs).",
              },
            }
          : {}),
        x402: {
          type: "apiKey",
          in: "header",
          name: "X-Payment",
          description: `The x402 v2 payment header: base64 JSON with ${site.howToPay ? "a signed USDC transfer (TransferChecked) of" : "a signed EIP-3009 authorisation for"} the quoted amount (PAYMENT-SIGNATURE is accepted too). It is a payment, not an account key: paid operations declare their price in x-payment-info and need no other credential.`,
        },
      },
      schemas: {
        ErrorBody: plain(ErrorBody),
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
  return shareRepeatedSchemas(doc, { Address, TxHash, DecimalString });
}
