/**
 * The defi-sentiment score: each input scaled to -1..1, weighted, summed and shown with its
 * weights, so a buyer can recompute the score and disagree with it. The text of the method
 * is in methodology.ts; the numbers are here.
 */
import type { Static } from "@sinclair/typebox";
import type { defiSentiment } from "../../spec/routes/analytics.ts";

/** Weight of each input when all are present. */
export const SENTIMENT_WEIGHTS = { price_change_24h: 0.4, funding_rate_8h: 0.3, tvl_change_24h: 0.3 } as const;
/** Per-8 h funding in percent that counts as neutral (Hyperliquid's baseline interest component). */
export const NEUTRAL_FUNDING_8H_PCT = 0.01;
/** Inputs at or beyond these magnitudes count fully (+1 or -1). */
export const FULL_SCALE = { price_change_24h_pct: 10, funding_rate_8h_pct: 0.05, tvl_change_24h_pct: 10 } as const;
/** Score at or above which the label is bullish (and at or below whose negative it is bearish). */
export const SENTIMENT_THRESHOLD = 20;

/** The score, its label and how it was made (each input with its value scaled to -1..1, the weight used and its share of the score). */
type DefiSentiment = Static<typeof defiSentiment.response>;
export type SentimentScore = Pick<DefiSentiment, "score" | "sentiment"> & { inputs: DefiSentiment["score_inputs"] };

const clip = (x: number) => Math.max(-1, Math.min(1, x));
const round = (x: number, digits: number) => Number(x.toFixed(digits));

/** Score the inputs that are present (null ones are left out and the other weights rescaled). */
export function scoreSentiment(values: {
  price_change_24h: number | null;
  funding_rate_8h: number | null;
  tvl_change_24h: number | null;
}): SentimentScore {
  const scaled: Record<keyof typeof SENTIMENT_WEIGHTS, (v: number) => number> = {
    price_change_24h: (v) => clip(v / FULL_SCALE.price_change_24h_pct),
    funding_rate_8h: (v) => clip((v - NEUTRAL_FUNDING_8H_PCT) / FULL_SCALE.funding_rate_8h_pct),
    tvl_change_24h: (v) => clip(v / FULL_SCALE.tvl_change_24h_pct),
  };
  const present = (Object.keys(SENTIMENT_WEIGHTS) as (keyof typeof SENTIMENT_WEIGHTS)[]).filter((k) => values[k] !== null);
  const totalWeight = present.reduce((sum, k) => sum + SENTIMENT_WEIGHTS[k], 0);
  if (present.length === 0 || totalWeight === 0) return { score: null, sentiment: "unknown", inputs: [] };
  let sum = 0;
  const inputs = present.map((name) => {
    const value = values[name] as number;
    const normalized = scaled[name](value);
    const weight = SENTIMENT_WEIGHTS[name] / totalWeight;
    sum += normalized * weight;
    return {
      name,
      value: round(value, 6),
      normalized: round(normalized, 6),
      weight: round(weight, 6),
      contribution: round(normalized * weight * 100, 4),
    };
  });
  const score = round(sum * 100, 2);
  const sentiment = score >= SENTIMENT_THRESHOLD ? "bullish" : score <= -SENTIMENT_THRESHOLD ? "bearish" : "neutral";
  return { score, sentiment, inputs };
}
