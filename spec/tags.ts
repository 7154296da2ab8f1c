/**
 * The OpenAPI tags of the route table, each with the description `/openapi.json` publishes.
 * A route can only name a tag declared here, so no tag is ever published without one.
 */
export const TAGS = {
  free: "Free routes: no payment, no key. Read these first to budget: prices, health, indexes and previews.",
  payments: "Proofs about USDC payments on Base: whether a settlement transaction paid whom, how much, from whom.",
  playbooks: "The playbook bundle: a free preview of every playbook, and the full bundle or one playbook for a fixed price.",
  "how-to": "How-to SOPs: step-by-step procedures with commands, pitfalls and checks; the index is free, each SOP is priced on its own.",
  "knowledge-base": "The x402 and Base knowledge base: list and search for free, or ask a question and get the best-matching entries.",
  "chain analytics": "Answers computed from public Base chain data: wallets, gas, tokens, large transfers and market sentiment.",
  "entity intelligence":
    "Who an address is, where money went, who uses a venue: flows by venue class, portfolios, counterparties, traces and venue users, from public Base chain data.",
  assistant: "The trading assistant: chat per message or from a prepaid balance that the paying wallet tops up and reads by signing in.",
  "token risk":
    "Token-risk tools on Base for traders deciding whether a token is safe to touch: simulated honeypot checks, new pairs and price equilibrium across venues.",
  "x402 intelligence":
    "The x402 market: conformance checks of any seller, directory search across catalogues, trust scores and the leaderboard.",
} as const satisfies Record<string, string>;

/** A tag a route may carry. */
export type Tag = keyof typeof TAGS;
