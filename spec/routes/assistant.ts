/**
 * The trading-assistant chat and the prepaid balances that pay for it: per message through x402,
 * or from a balance topped up with one x402 payment and spent only by its own wallet
 * (Sign-In-With-X). Balances: src/payments/balances.ts; the engine: src/chat/.
 */
import { Type } from "@sinclair/typebox";
import { TOPUP_DEFAULT_USD, TOPUP_MAX_USD, TOPUP_MIN_USD } from "../../src/payments/balances.ts";
import { defineRoute, type RouteDef } from "../route.ts";
import { Address, ClosedObject, Literals, Nullable } from "../schemas.ts";

/** What a chat message costs, per call or from a balance. */
export const CHAT_PRICE_USD = 0.1;

const Usd = (description: string) => Type.Number({ minimum: 0, description });

const ChatSource = Type.Object(
  {
    kind: Type.String({ description: "price, change_24h, funding, open_interest, gas, kb, …" }),
    symbol: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    title: Type.Optional(Type.String()),
    value: Type.Optional(Type.Union([Type.Number(), Type.String()])),
    source: Type.String({ description: "where the figure came from" }),
    fetched_at: Type.Optional(Type.String({ description: "ISO time it was fetched" })),
  },
  { additionalProperties: true },
);

export const chat = defineRoute({
  method: "POST",
  path: "/api/chat",
  operationId: "chat",
  summary: "Ask the trading assistant (per message, or from a prepaid balance)",
  description:
    "Answers a question about crypto markets, gas or x402 with live figures fetched at request time (prices and 24 h moves, funding and open interest, gas now and the cost of a transfer, a protocol's TVL and its 24 h change from DefiLlama, the watched markets) and knowledge-base entries, and lists every figure and entry it used in sources. A message it cannot answer is a 400 invalid_request naming body.message that says what it can answer, and is not charged. Without user_id each message is an x402 payment of 0.10 USDC. With user_id (a wallet address) the wallet's prepaid balance pays, and the request must carry a SIGN-IN-WITH-X header signed by that wallet; when the balance is short the answer is 402 insufficient_balance with the per-call challenge. A message that fails is never charged. Not financial advice.",
  tags: ["assistant"],
  price: CHAT_PRICE_USD,
  body: ClosedObject({
    message: Type.String({ minLength: 1, maxLength: 2000, pattern: "\\S", description: "the question, 1 to 2,000 characters, not blank" }),
    user_id: Type.Optional({ ...Address, description: "the wallet whose prepaid balance pays (sign in with it)" }),
  }),
  response: Type.Object({
    reply: Type.String(),
    balance: Nullable(Usd("USD left on the balance that paid; null when the message was paid per call")),
    charged: Type.Boolean(),
    price_per_msg: Type.Number(),
    engine: Type.String({ description: "builtin, or llm when an LLM is configured and answered" }),
    credits_left: Nullable(Type.Integer({ minimum: 0, description: "whole messages the balance still pays for; null per call" })),
    sources: Type.Array(ChatSource),
  }),
  errors: [
    "invalid_request",
    "insufficient_balance",
    "signin_required",
    "signin_invalid",
    "upstream_error",
    "unavailable",
    "upstream_timeout",
  ],
  example: {
    input: { message: "What is ETH at and how did it move in 24 h?" },
    output: {
      reply: "ETH is at $3,120.50, up 2.1% in 24 hours (DexScreener). Not financial advice.",
      balance: null,
      charged: true,
      price_per_msg: 0.1,
      engine: "builtin",
      credits_left: null,
      sources: [{ kind: "price", symbol: "ETH", value: 3120.5, source: "dexscreener", fetched_at: "2026-11-23T09:00:00.000Z" }],
    },
  },
});

export const balanceTopup = defineRoute({
  method: "POST",
  path: "/api/balance/topup",
  operationId: "topUpBalance",
  summary: "Top up the paying wallet's prepaid chat balance",
  description: `Credits the wallet that pays with the amount paid, once the payment is settled. The price is the amount: ?amount=<USD>, ${TOPUP_MIN_USD} to ${TOPUP_MAX_USD}, default ${TOPUP_DEFAULT_USD}. The balance belongs to that wallet (user_id is its address) and only a Sign-In-With-X from it spends or reads it.`,
  tags: ["assistant"],
  price: TOPUP_DEFAULT_USD,
  dynamicPrice: "amount",
  query: ClosedObject({
    amount: Type.Optional(
      Type.Number({
        minimum: TOPUP_MIN_USD,
        maximum: TOPUP_MAX_USD,
        default: TOPUP_DEFAULT_USD,
        description: `USD to credit (and pay), ${TOPUP_MIN_USD} to ${TOPUP_MAX_USD}`,
      }),
    ),
  }),
  response: Type.Object({
    user_id: Address,
    credited: Usd("USD credited by this payment"),
    balance: Usd("USD on the balance now"),
    credits_left: Type.Integer({ minimum: 0, description: "whole chat messages the balance pays for" }),
  }),
  errors: ["invalid_request"],
  example: {
    input: { amount: 5 },
    output: { user_id: "0x1111111111111111111111111111111111111111", credited: 5, balance: 5, credits_left: 50 },
  },
});

export const balance = defineRoute({
  method: "GET",
  path: "/api/balance",
  operationId: "getBalance",
  summary: "Read your prepaid balance and its last 20 movements (sign in with the wallet)",
  description:
    "Free, but only for the wallet itself: send a SIGN-IN-WITH-X header signed by it (for this origin and path, at most 5 minutes old, each nonce once); without one the answer is a 402 declaring sign-in-with-x. Answers the balance, the chat messages it pays for, the last 20 top-ups and debits, and the debits totalled per route.",
  tags: ["assistant"],
  price: null,
  signIn: true,
  response: Type.Object({
    user_id: Address,
    balance: Usd("USD on the balance"),
    credits_left: Type.Integer({ minimum: 0 }),
    movements: Type.Array(
      Type.Object({
        at: Type.String(),
        kind: Literals(["topup", "debit"]),
        amount: Usd("USD moved"),
        route: Type.String(),
        request_id: Type.String(),
      }),
    ),
    debits_by_route: Type.Array(
      Type.Object({ route: Type.String(), debits: Type.Integer({ minimum: 0 }), amount: Usd("USD debited for this route") }),
      { description: "every debit of the balance, totalled per route, largest first" },
    ),
  }),
  errors: ["signin_required", "signin_invalid"],
});

export const assistantRoutes: readonly RouteDef[] = [chat, balanceTopup, balance];
