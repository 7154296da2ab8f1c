/** `POST /v1/defi-sentiment` on Solana: the Base route's method, SOL when no asset or protocol is named. */
import { solanaDefiSentiment } from "../spec/routes/solana.ts";
import { defineFunction } from "../src/context.ts";
import { sentimentOf } from "./defi-sentiment.ts";

export default defineFunction(solanaDefiSentiment, (input, ctx) => sentimentOf(input, ctx, "SOL"));
