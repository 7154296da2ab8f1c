/**
 * The one text of how the chain analytics work and what they do not check. Every analytics
 * answer carries its endpoint's part of it (`methodology`, `not_checked`), and the free page
 * /methodology renders all of it, so what a buyer reads before paying is what the answer says.
 */
import { DEFAULT_CHUNK_SIZE } from "../chain/log-scanner.ts";

/** The analytics endpoints, by route path without `/api/`. */
export type AnalyticsEndpoint = "wallet-profile" | "gas-tracker" | "token-check" | "whale-watch" | "defi-sentiment" | "markets";

/** Shared facts, named so an answer can carry the ones it relies on. */
export const METHOD_FACTS = {
  chain:
    "eip155:8453 (Base mainnet); the local development mode answers from its own seeded chain with the same chain id and contract addresses.",
  transfers: `ERC-20 Transfer logs read with eth_getLogs through the configured public RPC in chunks of ${DEFAULT_CHUNK_SIZE} blocks aligned to multiples of ${DEFAULT_CHUNK_SIZE}, a few chunks at a time; a chunk the provider refuses is split (to the limit it names, else in halves) and chunks at or below the finalized block are cached.`,
  prices:
    "Token prices in USD from a public DEX price API (DexScreener): the deepest Base pair of the token by liquidity in USD (ties: 24 h volume), using a pair where the token is the base token when one exists; DefiLlama's coins API when DexScreener has no pair or fails. Prices are reused for up to 30 s (DefiLlama: 60 s).",
  classes:
    "Address classes from on-chain interface probes batched through Multicall3: getReserves() and token0() answer on a v2-style pair, slot0() and token0() on a v3-style pool, a router carries the exactInputSingle selector and answers factory(), a token answers decimals(); other code is a contract and an address without code (or with an EIP-7702 delegation) is a wallet. A class is remembered for an hour (a wallet's for a minute, since code can be deployed to it).",
  labels:
    "Entity names appear only when an address is in the curated label file (content/labels.json, each entry with its source); every other address is reported without a name.",
} as const;

/** Which shared facts an endpoint relies on. */
export type MethodFact = keyof typeof METHOD_FACTS;

/** What none of the chain analytics check. */
export const COMMON_NOT_CHECKED = [
  "off-chain identity or company ownership of any address",
  "centralized-exchange internal books (transfers inside an exchange never reach the chain)",
  "other chains than Base",
  "sanctions compliance: this is not a screening product",
] as const;

/** One endpoint's method: a summary, its steps and its limits. */
export interface EndpointMethod {
  title: string;
  summary: string;
  facts: readonly MethodFact[];
  steps: readonly string[];
  notChecked: readonly string[];
}

/** Wallet-profile's window of recent USDC activity: 43,200 blocks, one day of 2-second Base blocks. */
export const WALLET_ACTIVITY_WINDOW_BLOCKS = 43_200;
/** Gas tracker: blocks sampled by eth_feeHistory. */
export const GAS_SAMPLE_BLOCKS = 20;
/** Gas tracker: reward percentiles for the low, medium and high priority fee. */
export const GAS_PERCENTILES = { low: 10, medium: 50, high: 90 } as const;
/** Whale watch: the largest transfers listed. */
export const WHALE_LIST_LIMIT = 25;

/** The method of each analytics endpoint. */
export const ENDPOINT_METHODS: Record<AnalyticsEndpoint, EndpointMethod> = {
  "wallet-profile": {
    title: "Wallet profile",
    summary: "Balances, nonce, code and recent USDC activity of one address, read from the chain at one block.",
    facts: ["chain", "transfers", "classes", "labels"],
    steps: [
      "Read the latest block number, then the balances and the nonce at exactly that block, and the USDC transfers up to it, so the figures are consistent.",
      "ETH balance (eth_getBalance), nonce (eth_getTransactionCount: transactions sent by a wallet, contracts created by a contract) and code (eth_getCode) of the address.",
      "USDC balance from balanceOf on the USDC contract.",
      `Recent USDC activity: Transfer logs from and to the address over the last ${WALLET_ACTIVITY_WINDOW_BLOCKS} blocks (about one day), counted once each.`,
      "Class from the interface probes; labels only from the curated file.",
    ],
    notChecked: [
      "tokens other than ETH and USDC",
      "USD value of the balances",
      "activity older than the window, and internal (trace-level) ETH transfers",
      ...COMMON_NOT_CHECKED,
    ],
  },
  "gas-tracker": {
    title: "Gas tracker",
    summary: "Base fee and low/medium/high priority fees from recent blocks, with the USD cost of a plain and an ERC-20 transfer.",
    facts: ["chain", "prices"],
    steps: [
      `eth_feeHistory over the last ${GAS_SAMPLE_BLOCKS} blocks with reward percentiles ${GAS_PERCENTILES.low}, ${GAS_PERCENTILES.medium} and ${GAS_PERCENTILES.high} (each block's percentile is weighted by gas used, as the node computes it).`,
      "Blocks without transactions are left out; each level is the median of that percentile over the remaining blocks (the mean of the two middle values for an even count).",
      "The base fee is the one the node computes for the next block.",
      "USD cost = gas x (base fee + priority fee) x ETH price (the WETH price from the price source), for 21,000 gas (ETH transfer) and 65,000 gas (typical ERC-20 transfer), rounded to 8 decimals.",
    ],
    notChecked: [
      "the L1 data fee that Base (an OP-stack rollup) charges on top of the L2 fee, which depends on the transaction's size and often dominates its cost",
      "pending-mempool congestion and fee predictions beyond the sampled blocks",
      "gas used by a specific transaction: 21,000 and 65,000 are typical amounts, not estimates",
      ...COMMON_NOT_CHECKED,
    ],
  },
  "token-check": {
    title: "Token check",
    summary: "Whether an address is an ERC-20 token, its metadata, whether it is a proxy, and its deepest DEX pair.",
    facts: ["chain", "prices", "classes", "labels"],
    steps: [
      "Read the code of the address at the latest block; no code means it is not a contract and nothing else is read on chain.",
      "name, symbol, decimals and totalSupply in one Multicall3 batch (bytes32 names and symbols are decoded too).",
      "Proxy detection: the EIP-1967 implementation, beacon and admin storage slots, the older zeppelinos implementation slot (used by Circle's USDC) and EIP-1167 minimal-proxy code.",
      "DEX liquidity and 24 h volume of the deepest Base pair listed by DexScreener for the token (by liquidity in USD).",
      "Honeypot simulation (`simulation`), as POST /v1/honeypot-check answers it for a 100 USD buy: the token's pools on the curated factories; through the deepest v2-style one, a buy, a transfer between two fresh addresses and a sell simulated by eth_call with state overrides (never mined), with the taxes measured on the token side and each revert reason; the owner's mint, blacklist, pause and set-fee functions found in the bytecode (through a proxy's implementation); a verdict with every reason.",
    ],
    notChecked: [
      "holder concentration is not computed",
      "source verification and audits",
      "the honeypot simulation does not trade through concentrated-liquidity pools (Uniswap v3, Aerodrome Slipstream) or Uniswap v4",
      "proxy patterns other than EIP-1967, zeppelinos and EIP-1167 (for example EIP-2535 diamonds or custom slots)",
      ...COMMON_NOT_CHECKED,
    ],
  },
  "whale-watch": {
    title: "Whale watch",
    summary:
      "USDC or WETH transfers at or above a USD threshold in a recent block window, largest first, with direction and counterparties.",
    facts: ["chain", "transfers", "prices", "classes", "labels"],
    steps: [
      "Window: the last `blocks` blocks up to the latest block (default 1,800, about an hour; at most 43,200).",
      "Every Transfer log of the token in the window is read and valued at the token's current USD price (one price for the whole window, not the price at each block).",
      "A transfer counts when amount x price >= min_usd, compared exactly on the token's integer amount; it is listed largest first (ties: earlier block, then log index), at most 25.",
      "Each counterparty is classified and labelled; direction is, in this order: mint or burn (the zero address), to_exchange or from_exchange (a labelled exchange), to_bridge or from_bridge (a labelled bridge), into_dex or out_of_dex (a pair, pool or router), wallet_to_wallet, else other.",
    ],
    notChecked: [
      "pending-mempool transfers are not visible: that needs a node with txpool access",
      "the historical USD price at the time of each transfer",
      "tokens other than USDC and WETH, and native ETH transfers",
      ...COMMON_NOT_CHECKED,
    ],
  },
  "defi-sentiment": {
    title: "DeFi sentiment",
    summary: "Perpetual funding and open interest, 24 h price change and a protocol's TVL trend, combined into one stated score.",
    facts: [],
    steps: [
      "Funding rate and open interest of the asset's perpetual on Hyperliquid (metaAndAssetCtxs); Hyperliquid funding is hourly, so the 8 h rate is 8 x the hourly rate.",
      "24 h price change = mark price / previous-day price - 1 (Hyperliquid).",
      "Protocol TVL and its 24 h change from DefiLlama (/protocols; computed from /protocol/{slug}'s daily series when the list has no change).",
      "Each input is scaled to -1..1: price change / 10 %, (8 h funding - 0.01 %) / 0.05 % (0.01 % per 8 h is the neutral baseline), TVL change / 10 %; clipped at the ends.",
      "Score = 100 x the weighted sum of the inputs present (weights: price 0.4, funding 0.3, TVL 0.3, rescaled to sum to 1 when one is missing). Label: bullish at 20 or more, bearish at -20 or less, else neutral.",
    ],
    notChecked: [
      "spot order books, options and social sentiment",
      "funding on venues other than Hyperliquid",
      "whether TVL moved because of prices or because of deposits and withdrawals",
      "the score is a summary of the stated inputs, not a forecast or advice",
    ],
  },
  markets: {
    title: "Markets",
    summary: "The pairs the trading assistant watches, with price, 24 h change, their source and age.",
    facts: ["prices"],
    steps: [
      "One DexScreener call for the watched tokens; for each, the deepest Base pair where it is the base token.",
      "When DexScreener fails, prices and 24 h changes come from DefiLlama's coins API instead; each pair names its source.",
      "age_seconds is how long ago the data was fetched by this service (it reuses data for up to 30 s); the upstream's own delay is not known.",
    ],
    notChecked: ["third-party data, may be delayed", "prices on other chains and centralized exchanges"],
  },
};

/** The methodology object an answer carries. */
export interface MethodologyAnswer {
  summary: string;
  steps: string[];
  chain?: string;
  transfers?: string;
  prices?: string;
  classes?: string;
  labels?: string;
  not_checked: string[];
}

/** The methodology part of `endpoint`'s answer, from the same text the /methodology page shows. */
export function methodologyFor(endpoint: AnalyticsEndpoint): MethodologyAnswer {
  const method = ENDPOINT_METHODS[endpoint];
  const answer: MethodologyAnswer = { summary: method.summary, steps: [...method.steps], not_checked: [...method.notChecked] };
  for (const fact of method.facts) answer[fact] = METHOD_FACTS[fact];
  return answer;
}
