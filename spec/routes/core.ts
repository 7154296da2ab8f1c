/** Core routes: health and payment verification. */
import { Type } from "@sinclair/typebox";
import { base } from "../../src/networks/base.ts";
import { defineRoute, type RouteDef } from "../route.ts";
import { Address, ClosedObject, FREE_DOCUMENT, FREE_GET, Literals, Nullable, TxHash } from "../schemas.ts";

/** `GET /api/health`: liveness and what chain the service settles on. */
export const health = defineRoute({
  method: "GET",
  path: "/api/health",
  operationId: "getHealth",
  summary: "Service health, network and latest block",
  description:
    "Free. Answers whether the service can reach its chain, which network and USDC contract it settles on, and where payments go.",
  tags: ["free"],
  ...FREE_GET,
  response: Type.Object({
    status: Literals(["ok", "degraded"]),
    mode: Literals(["local", "production"]),
    network: Type.String({ examples: [base.id] }),
    chain_id: Type.Integer(),
    block_number: Nullable(Type.Integer()),
    usdc: Address,
    pay_to: Address,
    version: Type.String(),
  }),
});

/** `GET /api/pricing`: what every route costs, for agents budgeting before they call. */
export const pricing = defineRoute({
  method: "GET",
  path: "/api/pricing",
  operationId: "getPricing",
  summary: "Price list of every route",
  description:
    "Free. Every route with its price in USD and in atomic USDC, plus the network, asset and receiving address that the x402 challenges quote, so an agent can budget before calling.",
  tags: ["free"],
  ...FREE_DOCUMENT,
  response: Type.Object({
    network: Type.String({ examples: [base.id] }),
    scheme: Type.Literal("exact"),
    asset: Address,
    pay_to: Address,
    routes: Type.Array(
      Type.Object({
        method: Type.String(),
        path: Type.String(),
        summary: Type.String(),
        free: Type.Boolean(),
        price_usd: Type.Number(),
        amount: Type.String({ description: "atomic USDC (6 decimals); 0 when free" }),
      }),
    ),
  }),
});

/** `POST /api/payment-verify`: proves a USDC payment on chain. */
export const paymentVerify = defineRoute({
  method: "POST",
  path: "/api/payment-verify",
  operationId: "verifyPayment",
  summary: "Verify a USDC settlement transaction on Base",
  description:
    "Reads the transaction receipt and its USDC Transfer logs and answers whether it paid the recipient (default: this service's receiving address) at least min_amount USDC, from the expected sender if given, with its confirmations. Unknown, pending, reverted, wrong-token, wrong-recipient and too-small transactions are answered with verified=false and a precise reason.",
  tags: ["payments"],
  price: 0.1,
  body: ClosedObject({
    tx_hash: TxHash,
    to: Type.Optional({ ...Address, description: "expected recipient; default: this service's receiving address" }),
    from: Type.Optional({ ...Address, description: "expected sender; default: any" }),
    min_amount: Type.Optional(Type.Number({ minimum: 0, maximum: 1e12, description: "minimum USDC amount (decimal USDC, not atomic)" })),
  }),
  response: Type.Object({
    tx_hash: TxHash,
    verified: Type.Boolean(),
    reason: Literals(
      ["verified", "tx_not_found", "tx_pending", "tx_reverted", "no_usdc_transfer", "wrong_recipient", "wrong_sender", "amount_too_small"],
      { description: "stable code: why the payment is or is not verified" },
    ),
    detail: Type.String({ description: "the reason in words" }),
    from: Nullable(Address),
    to: Nullable(Address),
    amount_usdc: Nullable(Type.String({ description: "decimal USDC, e.g. 0.1" })),
    confirmations: Type.Integer({ minimum: 0 }),
    transfer: Nullable(
      Type.Object({
        from: Address,
        to: Address,
        value_atomic: Type.Union([Type.Integer(), Type.String({ pattern: "^[0-9]+$" })], {
          description: "atomic USDC (6 decimals); a decimal string above 2^53",
        }),
        block: Type.Integer(),
        log_index: Type.Integer(),
      }),
    ),
  }),
  errors: ["invalid_request", "upstream_error", "unavailable", "upstream_timeout"],
  example: {
    input: { tx_hash: `0x${"ab".repeat(32)}`, min_amount: 0.1 },
  },
});

/** The core routes, in listing order. */
export const coreRoutes: readonly RouteDef[] = [health, pricing, paymentVerify];
