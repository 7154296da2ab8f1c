/**
 * The routes of the secondary site on Base (`/v1/`): token-risk tools for traders deciding in
 * seconds whether a token is safe to touch, the two analytics routes it shares with the
 * primary site (one function each, two route entries), and its free `/health`.
 */
import { Type } from "@sinclair/typebox";
import { defineRoute, type RouteDef } from "../route.ts";
import { Address, NoInput } from "../schemas.ts";
import { HoneypotSimulation } from "../token-risk-schemas.ts";
import { defiSentiment, Methodology, walletProfile } from "./analytics.ts";

const UPSTREAM_ERRORS = ["invalid_request", "upstream_error", "unavailable", "upstream_timeout"] as const;

/** `GET /health` (free): whether the site reads a live chain, and how fresh its head is. */
export const baseToolsHealth = defineRoute({
  method: "GET",
  path: "/health",
  operationId: "getBaseToolsHealth",
  summary: "Health of the Base token-risk tools: network, chain head and its age",
  description:
    "Free. Whether this site can read its chain: the network it reads and settles on, the latest block number and how many seconds ago that block was produced (a stalled node shows a growing age), and the service build.",
  tags: ["free"],
  price: null,
  query: NoInput,
  response: Type.Object({
    status: Type.Union([Type.Literal("ok"), Type.Literal("degraded")], {
      description: "degraded when the chain cannot be read, or (in production) its head is older than 60 seconds",
    }),
    network: Type.String({ examples: ["eip155:8453"] }),
    chain_head: Type.Union([Type.Integer(), Type.Null()], { description: "the latest block number; null when the chain cannot be read" }),
    head_age_seconds: Type.Union([Type.Integer(), Type.Null()], { description: "seconds since the latest block's timestamp" }),
    version: Type.String(),
  }),
  errors: [],
});

/** `POST /v1/honeypot-check`: a buy, a transfer and a sell simulated on the chain, with the owner's powers. */
export const honeypotCheck = defineRoute({
  method: "POST",
  path: "/v1/honeypot-check",
  operationId: "v1HoneypotCheck",
  summary: "Honeypot check: simulate a buy, a transfer and a sell of a Base token, with its taxes and owner privileges",
  description:
    "Simulates on Base itself, by eth_call with state overrides (nothing is mined): a buy of amount_usd (default 100) of the token through its deepest v2-style pool on the curated factories, a transfer between two fresh addresses and a sell back. Answers whether each step works, the buy, sell and transfer taxes, revert reasons, declared limits, the owner's privileged functions found in the bytecode (through a proxy's implementation) and a verdict (honeypot, high_tax, caution, ok) with every reason.",
  tags: ["token risk"],
  price: 0.05,
  body: Type.Object(
    {
      token: Address,
      amount_usd: Type.Optional(
        Type.Number({ minimum: 1, maximum: 100_000, default: 100, description: "USD value of the simulated buy, default 100" }),
      ),
    },
    { additionalProperties: false },
  ),
  response: Type.Object({ ...HoneypotSimulation.properties, methodology: Methodology }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { token: "0x940181a94A35A4569E4529A3CDfB74e38FD98631", amount_usd: 100 } },
});

/** `POST /v1/wallet-profile`: the primary site's wallet profile, answered by the same function. */
export const walletProfileV1 = defineRoute({
  ...walletProfile,
  path: "/v1/wallet-profile",
  operationId: "v1WalletProfile",
});

/** `POST /v1/defi-sentiment`: the primary site's sentiment, answered by the same function. */
export const defiSentimentV1 = defineRoute({
  ...defiSentiment,
  path: "/v1/defi-sentiment",
  operationId: "v1DefiSentiment",
  example: { input: { asset: "ETH", protocol: "aave" } },
});

/** The secondary site's routes, in listing order. */
export const baseToolsRoutes: readonly RouteDef[] = [baseToolsHealth, honeypotCheck, walletProfileV1, defiSentimentV1];
