/**
 * kb/ask relevance on the 15 real entries: 30 questions worded the way a builder would ask,
 * not the way the titles read, each with the entry that answers it. The ranking (MiniSearch
 * BM25+, prefix and fuzzy, title x3 and tags x2) must put the expected entry first for at
 * least 25 of them and in the top 3 for all; `best_match` follows the documented confidence
 * rule (`KB_CONFIDENCE` in src/content/kb-index.ts), and off-topic or one-word questions never
 * get a confident answer. Expected values are exact, so a change to the ranking or to the
 * entries shows up here as a precise diff.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CompiledContent } from "../spec/content-schema.ts";
import { KB_CONFIDENCE, KbIndex } from "../src/content/kb-index.ts";

const root = path.resolve(import.meta.dirname, "..");
const compiled = JSON.parse(readFileSync(path.join(root, ".generated/content.json"), "utf8")) as CompiledContent;
const index = new KbIndex(compiled.kb.entries);

/** [question, the entry that answers it, its rank in `matches`, the `best_match` id (null: not confident)]. */
const QUESTIONS: [string, string, number, string | null][] = [
  ["where do crawlers find the list of my paid routes", "x402-discovery-documents", 1, "x402-discovery-documents"],
  ["what should I put in the well-known file so x402scan indexes me", "x402-discovery-documents", 1, "x402-discovery-documents"],
  ["can I use the x402.org facilitator for mainnet payments", "x402-facilitators-base", 1, "x402-facilitators-base"],
  ["which service settles payments for me on Base without running my own", "x402-facilitators-base", 1, "x402-facilitators-base"],
  ["the client sends X-PAYMENT but my express server ignores it", "x402-payment-headers", 1, "x402-payment-headers"],
  ["which header carries the signed payload on the retry", "x402-payment-headers", 1, "x402-payment-headers"],
  ["what is inside the accepts array and the amount field of a 402 response", "x402-v2-challenge-fields", 1, "x402-v2-challenge-fields"],
  [
    "how do I decode the PAYMENT-REQUIRED header and what does maxTimeoutSeconds mean",
    "x402-v2-challenge-fields",
    2,
    "x402-payment-headers",
  ],
  [
    "why is the nonce random bytes instead of a counter in the signed authorization",
    "eip-3009-transfer-with-authorization",
    1,
    "eip-3009-transfer-with-authorization",
  ],
  [
    "what stops someone from replaying my signed USDC authorization",
    "eip-3009-transfer-with-authorization",
    1,
    "eip-3009-transfer-with-authorization",
  ],
  ["my handler returned an error, was the buyer still charged?", "failed-calls-not-settled", 1, null],
  ["should a 500 from my API be billed to the customer", "failed-calls-not-settled", 3, null],
  ["does my agent wallet need ETH to pay for API calls", "who-pays-gas-x402", 2, "agent-spending-limits"],
  ["who covers transaction fees when the facilitator submits the transfer", "who-pays-gas-x402", 1, "who-pays-gas-x402"],
  ["how many seconds between blocks and how long until a reorg is impossible", "base-block-time-finality", 1, "base-block-time-finality"],
  ["how many confirmations should I wait before trusting a transfer", "base-block-time-finality", 2, "verify-usdc-payment-onchain"],
  ["eth_getLogs returns an error about too many results on mainnet.base.org", "base-getlogs-range-limits", 1, "base-getlogs-range-limits"],
  ["my log query over a million blocks keeps timing out on the public RPC", "base-getlogs-range-limits", 1, "base-getlogs-range-limits"],
  ["what is the USDC token address and how many decimals on Base", "base-usdc-contract", 1, "base-usdc-contract"],
  ["signature rejected on Base Sepolia because of the token name in the domain", "base-usdc-contract", 1, "base-usdc-contract"],
  ["stop my bot from spending too much money on paid APIs", "agent-spending-limits", 1, "agent-spending-limits"],
  ["cap how much an autonomous assistant can pay per call and per day", "agent-spending-limits", 2, "choosing-a-price"],
  ["I sent the same signature twice and got 409", "duplicate-payment-idempotency", 1, "duplicate-payment-idempotency"],
  ["is it safe to retry after a timeout or will I pay twice", "duplicate-payment-idempotency", 1, "duplicate-payment-idempotency"],
  ["how to decode the settlement receipt header and check the transaction", "read-payment-response", 1, "read-payment-response"],
  ["what fields come back in the receipt after a successful paid call", "read-payment-response", 1, "read-payment-response"],
  ["how do I decide what price to put on each paid route", "choosing-a-price", 1, "choosing-a-price"],
  ["is one tenth of a cent too cheap per call given facilitator fees", "choosing-a-price", 1, "choosing-a-price"],
  ["confirm a customer really paid me by looking at the Transfer event", "verify-usdc-payment-onchain", 1, "verify-usdc-payment-onchain"],
  ["check with viem that a transaction hash sent USDC to my address", "verify-usdc-payment-onchain", 1, "verify-usdc-payment-onchain"],
];

describe("kb/ask relevance on the real entries", () => {
  it("covers every entry with two questions", () => {
    expect(new Set(QUESTIONS.map((q) => q[1]))).toEqual(new Set(compiled.kb.entries.map((e) => e.id)));
    expect(QUESTIONS).toHaveLength(30);
  });

  it.each(QUESTIONS)("%s -> %s (rank %i, best %s)", (question, expected, rank, best) => {
    const answer = index.ask(question);
    expect(answer.matches.findIndex((m) => m.id === expected) + 1).toBe(rank);
    expect(answer.best?.id ?? null).toBe(best);
    if (answer.best) expect(answer.best).toEqual(compiled.kb.entries.find((e) => e.id === answer.best?.id));
  });

  it("ranks the expected entry first for at least 25 of the 30 questions and in the top 3 for all", () => {
    const ranks = QUESTIONS.map(([question, expected]) => index.ask(question).matches.findIndex((m) => m.id === expected) + 1);
    expect(ranks.filter((r) => r === 1).length).toBeGreaterThanOrEqual(25);
    expect(ranks.every((r) => r >= 1 && r <= 3)).toBe(true);
  });

  it.each(["what is the weather in Paris tomorrow", "recipe for chocolate cake", "payment", "x402", "how do I install docker on windows"])(
    "gives no confident answer to %j",
    (question) => {
      expect(index.ask(question).best).toBeNull();
    },
  );

  it("applies the confidence rule: top score >= minScore and top/second >= minLead", () => {
    for (const [question] of QUESTIONS) {
      const hits = index.search(question, 2);
      const [top, second] = hits;
      const confident = !!top && top.score >= KB_CONFIDENCE.minScore && (!second || top.score / second.score >= KB_CONFIDENCE.minLead);
      expect(index.ask(question).best?.id ?? null, question).toBe(confident ? (top?.id ?? null) : null);
    }
  });
});
