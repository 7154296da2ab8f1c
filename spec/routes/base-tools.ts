/**
 * The routes of the secondary site on Base (`/v1/`): token-risk tools for traders deciding in
 * seconds whether a token is safe to touch, the two analytics routes it shares with the
 * primary site (one function each, two route entries), and its free `/health`.
 */
import { Type } from "@sinclair/typebox";
import { defineRoute, type RouteDef } from "../route.ts";
import { NoInput } from "../schemas.ts";
import { defiSentiment, walletProfile } from "./analytics.ts";

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
export const baseToolsRoutes: readonly RouteDef[] = [baseToolsHealth, walletProfileV1, defiSentimentV1];
