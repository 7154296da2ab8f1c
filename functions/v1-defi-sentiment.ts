/** `POST /v1/defi-sentiment`: the secondary site's entry of DeFi sentiment, answered by the primary's function. */
import { defiSentimentV1 } from "../spec/routes/base-tools.ts";
import { defineFunction } from "../src/context.ts";
import defiSentiment from "./defi-sentiment.ts";

export default defineFunction(defiSentimentV1, (input, ctx) => defiSentiment.run(input, ctx));
