/**
 * kb/ask on the 15 real entries, with questions in buyers' words (test/support/kb-questions.ts,
 * written from the titles and categories without reading the answers): `best_match` is the
 * entry that answers whenever one does, for at least 95% of them (the brief: 38 of 40), and
 * null for every question no entry answers. The paraphrases the first releases were tuned on
 * must still rank their entry first and never get a wrong `best_match`; kb/search must put the
 * entry first for the paraphrases of the three topics it used to miss.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CompiledContent } from "../spec/content-schema.ts";
import { KB_CONFIDENCE, KbIndex, searchTerms } from "../src/content/kb-index.ts";
import { AGENT_TRIAL, ANSWERED, SEARCH_PARAPHRASES, UNANSWERED } from "./support/kb-questions.ts";

const root = path.resolve(import.meta.dirname, "..");
const compiled = JSON.parse(readFileSync(path.join(root, ".generated/content.json"), "utf8")) as CompiledContent;
const index = new KbIndex(compiled.kb.entries);

/** Paraphrases of the first releases' relevance test: [question, the entry that answers it]. */
const PARAPHRASES: [string, string][] = [
  ["where do crawlers find the list of my paid routes", "x402-discovery-documents"],
  ["what should I put in the well-known file so x402scan indexes me", "x402-discovery-documents"],
  ["can I use the x402.org facilitator for mainnet payments", "x402-facilitators-base"],
  ["which service settles payments for me on Base without running my own", "x402-facilitators-base"],
  ["the client sends X-PAYMENT but my express server ignores it", "x402-payment-headers"],
  ["which header carries the signed payload on the retry", "x402-payment-headers"],
  ["what is inside the accepts array and the amount field of a 402 response", "x402-v2-challenge-fields"],
  ["how do I decode the PAYMENT-REQUIRED header and what does maxTimeoutSeconds mean", "x402-v2-challenge-fields"],
  ["why is the nonce random bytes instead of a counter in the signed authorization", "eip-3009-transfer-with-authorization"],
  ["what stops someone from replaying my signed USDC authorization", "eip-3009-transfer-with-authorization"],
  ["my handler returned an error, was the buyer still charged?", "failed-calls-not-settled"],
  ["should a 500 from my API be billed to the customer", "failed-calls-not-settled"],
  ["does my agent wallet need ETH to pay for API calls", "who-pays-gas-x402"],
  ["who covers transaction fees when the facilitator submits the transfer", "who-pays-gas-x402"],
  ["how many seconds between blocks and how long until a reorg is impossible", "base-block-time-finality"],
  ["how many confirmations should I wait before trusting a transfer", "base-block-time-finality"],
  ["eth_getLogs returns an error about too many results on mainnet.base.org", "base-getlogs-range-limits"],
  ["my log query over a million blocks keeps timing out on the public RPC", "base-getlogs-range-limits"],
  ["what is the USDC token address and how many decimals on Base", "base-usdc-contract"],
  ["signature rejected on Base Sepolia because of the token name in the domain", "base-usdc-contract"],
  ["stop my bot from spending too much money on paid APIs", "agent-spending-limits"],
  ["cap how much an autonomous assistant can pay per call and per day", "agent-spending-limits"],
  ["I sent the same signature twice and got 409", "duplicate-payment-idempotency"],
  ["is it safe to retry after a timeout or will I pay twice", "duplicate-payment-idempotency"],
  ["how to decode the settlement receipt header and check the transaction", "read-payment-response"],
  ["what fields come back in the receipt after a successful paid call", "read-payment-response"],
  ["how do I decide what price to put on each paid route", "choosing-a-price"],
  ["is one tenth of a cent too cheap per call given facilitator fees", "choosing-a-price"],
  ["confirm a customer really paid me by looking at the Transfer event", "verify-usdc-payment-onchain"],
  ["check with viem that a transaction hash sent USDC to my address", "verify-usdc-payment-onchain"],
];

describe("kb/ask answers buyers' questions", () => {
  it("has at least 40 answered questions over every entry and 10 unanswered ones", () => {
    expect(ANSWERED.length).toBeGreaterThanOrEqual(40);
    expect(new Set(ANSWERED.map(([, id]) => id))).toEqual(new Set(compiled.kb.entries.map((e) => e.id)));
    expect(UNANSWERED).toHaveLength(10);
  });

  it("gives the entry that answers as best_match for at least 95% of the questions, and never another entry", () => {
    const results = ANSWERED.map(([question, id]) => ({ question, id, best: index.ask(question).best?.id ?? null }));
    const wrong = results.filter((r) => r.best !== null && r.best !== r.id);
    const right = results.filter((r) => r.best === r.id);
    expect(wrong).toEqual([]);
    expect(right.length / ANSWERED.length).toBeGreaterThanOrEqual(0.95);
  });

  it.each(ANSWERED.slice(0, 3))("answers the question a buyer's trial got a list for: %j -> %s", (question, id) => {
    const answer = index.ask(question);
    expect(answer.best).toEqual(compiled.kb.entries.find((e) => e.id === id));
    expect(answer.matches[0]?.id).toBe(id);
  });

  it.each(AGENT_TRIAL)("answers an agent's question with its entry: %j -> %s", (question, id) => {
    expect(index.ask(question).best?.id ?? null).toBe(id);
  });

  it.each(UNANSWERED)("gives no best_match to %j", (question) => {
    expect(index.ask(question).best).toBeNull();
  });

  // "eth" and "facilitator" score above minScore on the entry whose title has the word, which answers neither.
  it.each(["payment", "x402", "eth", "ETH?", "facilitator"])("gives no best_match to the one word %j", (question) => {
    expect(index.ask(question).best).toBeNull();
  });

  it("ranks the right entry first for at least 28 of the 30 earlier paraphrases, in the top 2 for all, and never answers with another", () => {
    const ranks = PARAPHRASES.map(([q, id]) => index.ask(q).matches.findIndex((m) => m.id === id) + 1);
    expect(ranks.filter((r) => r === 1).length).toBeGreaterThanOrEqual(28);
    expect(ranks.every((r) => r === 1 || r === 2)).toBe(true);
    const bests = PARAPHRASES.map(([q, id]) => ({ q, id, best: index.ask(q).best?.id ?? null }));
    expect(bests.filter((b) => b.best !== null && b.best !== b.id)).toEqual([]);
    expect(bests.filter((b) => b.best === b.id).length).toBeGreaterThanOrEqual(27);
  });

  it.each(SEARCH_PARAPHRASES)("kb/search puts the entry first for %j -> %s", (query, id) => {
    expect(index.search(query)[0]?.id).toBe(id);
  });

  it("applies the confidence rule: top score, lead over the second and share of the question's words", () => {
    const questions = [...ANSWERED.map(([q]) => q), ...PARAPHRASES.map(([q]) => q), ...UNANSWERED];
    for (const question of questions) {
      const [top, second] = index.search(question, 2);
      const coverage = top ? top.matchedTerms / searchTerms(question).size : 0;
      const confident =
        !!top &&
        top.score >= KB_CONFIDENCE.minScore &&
        coverage >= KB_CONFIDENCE.minCoverage &&
        top.matchedTerms >= KB_CONFIDENCE.minShared &&
        (!second || top.score / second.score >= KB_CONFIDENCE.minLead);
      expect(index.ask(question).best?.id ?? null, question).toBe(confident ? (top?.id ?? null) : null);
    }
  });
});
