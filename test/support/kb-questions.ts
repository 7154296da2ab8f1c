/**
 * Questions a buyer asks the knowledge base, in their own words, written from the 15 entries'
 * titles and categories only (not their answers), each with the entry that answers it; the
 * first three are the ones a buyer's trial reported as answered by a list and no entry. Then
 * questions no entry answers. test/kb-answers.test.ts scores `kb/ask` on them and
 * scripts/bench-search.ts measures each candidate engine's accuracy with them.
 */

/** [question, the id of the entry that answers it]. */
export const ANSWERED: readonly (readonly [string, string])[] = [
  ["my agent got a 402 back, what do all the fields in accepts mean?", "x402-v2-challenge-fields"],
  ["how many confirmations should I wait before treating a base payment as done", "base-block-time-finality"],
  ["how do I stop my bot from overspending on paid APIs", "agent-spending-limits"],

  ["how can I put a daily budget on my AI agent's payments", "agent-spending-limits"],
  ["what's a safe maximum per request for an autonomous agent paying with x402", "agent-spending-limits"],

  ["what is the block time on Base", "base-block-time-finality"],
  ["can a Base transaction be reorged after it is included in a block", "base-block-time-finality"],

  ["eth_getLogs keeps failing on the public base rpc", "base-getlogs-range-limits"],
  ["what's the max block range for a logs query on base", "base-getlogs-range-limits"],
  ["I get an error fetching event logs from mainnet.base.org over too many blocks", "base-getlogs-range-limits"],

  ["what is the USDC contract address on base", "base-usdc-contract"],
  ["how many decimals does USDC have on Base", "base-usdc-contract"],
  ["what name and version go in the EIP-712 domain when signing for USDC", "base-usdc-contract"],

  ["how much should I charge per API call", "choosing-a-price"],
  ["what price should I set for my x402 endpoint", "choosing-a-price"],
  ["is a tenth of a cent per request too cheap for a paid API", "choosing-a-price"],

  ["can a buyer be charged twice for the same payment", "duplicate-payment-idempotency"],
  ["I got a 409 payment_in_progress, what does it mean", "duplicate-payment-idempotency"],
  ["is it safe to retry a paid request that timed out", "duplicate-payment-idempotency"],

  ["how does transferWithAuthorization work", "eip-3009-transfer-with-authorization"],
  ["what is the nonce for in an EIP-3009 authorization", "eip-3009-transfer-with-authorization"],
  ["how does the buyer sign a USDC payment without sending a transaction themselves", "eip-3009-transfer-with-authorization"],

  ["if the API errors out do I still pay", "failed-calls-not-settled"],
  ["will I be charged when the call fails", "failed-calls-not-settled"],
  ["how do I make sure I never bill a customer for a failed request", "failed-calls-not-settled"],

  ["how do I read the PAYMENT-RESPONSE header", "read-payment-response"],
  ["how can I check the receipt after paying for a call", "read-payment-response"],
  ["where do I find the transaction hash of my payment after a paid request", "read-payment-response"],

  ["how do I verify a USDC payment on chain", "verify-usdc-payment-onchain"],
  ["how can I prove a customer's payment really happened on Base", "verify-usdc-payment-onchain"],
  ["reconcile my x402 payments against the blockchain", "verify-usdc-payment-onchain"],

  ["does the buyer need ETH to pay", "who-pays-gas-x402"],
  ["who pays the gas fees in x402", "who-pays-gas-x402"],
  ["do I need to hold ETH in my agent's wallet", "who-pays-gas-x402"],

  ["what goes in /.well-known/x402", "x402-discovery-documents"],
  ["how do I get my API listed on x402scan", "x402-discovery-documents"],
  ["how do agents discover my paid endpoints", "x402-discovery-documents"],

  ["which facilitator should I use on base mainnet", "x402-facilitators-base"],
  ["does the x402.org facilitator work on mainnet", "x402-facilitators-base"],
  ["can I run my own facilitator instead of using a hosted one", "x402-facilitators-base"],

  ["what is the difference between X-PAYMENT and PAYMENT-SIGNATURE", "x402-payment-headers"],
  ["which header do I send the signed payment in", "x402-payment-headers"],

  ["what's in a 402 payment required response", "x402-v2-challenge-fields"],
  ["what does maxTimeoutSeconds mean in the challenge", "x402-v2-challenge-fields"],
];

/** Questions no entry answers: `best_match` must be null. */
export const UNANSWERED: readonly string[] = [
  "what is the weather in Paris tomorrow",
  "how do I install docker on windows",
  "recipe for chocolate cake",
  "how do I bridge ETH from Ethereum to Solana",
  "how do I stake ETH with Lido",
  "how do I deploy an NFT collection",
  "what are the tax rules for crypto in Germany",
  "how do I reset my Coinbase password",
  "which python library draws candlestick charts",
  "how do I set up a Stripe subscription for my SaaS",
];

/** Paraphrases on `kb/search` of the three topics it missed (choosing a price, failed calls not charged, discovery documents): the entry that must come first. */
export const SEARCH_PARAPHRASES: readonly (readonly [string, string])[] = [
  ["pricing my paid route", "choosing-a-price"],
  ["how much to charge agents per request", "choosing-a-price"],
  ["refund when the endpoint crashes", "failed-calls-not-settled"],
  ["not charged for errors", "failed-calls-not-settled"],
  ["make my service findable by agent directories", "x402-discovery-documents"],
  ["catalogue listing of paid routes", "x402-discovery-documents"],
];

/**
 * Questions an agent asked `kb/ask` on the running service, worded as agents word them, with the
 * entry that answers each. Before the entries carried these words (and answered Solana, getting
 * USDC and the payment-identifier extension), the last nine got another entry's answer or none;
 * every one must now get its entry.
 */
export const AGENT_TRIAL: readonly (readonly [string, string])[] = [
  ["what's the usdc contract address on base?", "base-usdc-contract"],
  ["do I need ETH in my wallet to pay for an x402 API?", "who-pays-gas-x402"],
  ["my eth_getLogs call keeps failing with block range too large, what's the max range on base?", "base-getlogs-range-limits"],
  ["how long until a base transaction can't be reorged?", "base-block-time-finality"],
  ["I got 409 payment_in_progress, was I charged twice?", "duplicate-payment-idempotency"],
  ["how do I stop my agent from overspending on paid APIs?", "agent-spending-limits"],
  ["which header do I put the signed payment in?", "x402-payment-headers"],
  ["what should I serve at /.well-known/x402?", "x402-discovery-documents"],
  ["does the coinbase facilitator need an API key for mainnet?", "x402-facilitators-base"],
  ["what is the nonce in transferWithAuthorization for?", "eip-3009-transfer-with-authorization"],
  ["what does the accepts array in a 402 response mean?", "x402-v2-challenge-fields"],
  ["how much should I charge per request for my API?", "choosing-a-price"],
  ["the API returned a 500 error, did it still take my money?", "failed-calls-not-settled"],
  ["how do I decode the payment-response header?", "read-payment-response"],
  ["how do I get the transaction hash after paying?", "read-payment-response"],
  ["is X-PAYMENT still used in x402 v2?", "x402-payment-headers"],
  ["how can I prove the seller actually received my USDC?", "verify-usdc-payment-onchain"],
  ["what are validAfter and validBefore in an x402 payment?", "eip-3009-transfer-with-authorization"],
  ["where is maxAmountRequired in a v2 payment requirement?", "x402-v2-challenge-fields"],
  ["does x402 work on solana", "x402-v2-challenge-fields"],
  ["do I need SOL to pay on solana", "x402-v2-challenge-fields"],
  ["my payment failed with invalid_exact_evm_signature on base sepolia", "base-usdc-contract"],
  ["how to get USDC on base", "base-usdc-contract"],
  ["what is the payment-identifier extension", "duplicate-payment-idempotency"],
];
