/**
 * The one text of how the chain analytics work and what they do not check. Every analytics
 * answer carries its endpoint's part of it (`methodology`, `not_checked`), and the free page
 * /methodology renders all of it, so what a buyer reads before paying is what the answer says.
 */
import type { Methodology } from "../../spec/routes/analytics.ts";
import { DEFAULT_CHUNK_SIZE, DEFAULT_SCAN_CONCURRENCY } from "../chain/log-scanner.ts";
import { base } from "../networks/base.ts";

/** Shared facts, named so an answer can carry the ones it relies on. */
export const METHOD_FACTS = {
  chain: `${base.id} (Base mainnet); the local development mode answers from its own seeded chain with the same chain id and contract addresses.`,
  transfers: `ERC-20 Transfer logs read with eth_getLogs through the configured public RPC in chunks of ${DEFAULT_CHUNK_SIZE} blocks aligned to multiples of ${DEFAULT_CHUNK_SIZE}, each chunk its own HTTP request, up to ${DEFAULT_SCAN_CONCURRENCY} at a time and fewer while the provider rate-limits or fails; a chunk the provider refuses, or whose answer would be too large, is split (to the limit it names, else in halves) and chunks at or below the finalized block are cached.`,
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

/** Entity intelligence: value segments of a venue's users by USD volume in the window (min inclusive, max exclusive). */
export const VENUE_SEGMENTS = [
  { name: "retail", min_usd: 0, max_usd: 1_000 },
  { name: "active", min_usd: 1_000, max_usd: 10_000 },
  { name: "high_value", min_usd: 10_000, max_usd: 100_000 },
  { name: "whale", min_usd: 100_000, max_usd: null },
] as const;
/** Entity intelligence: VIP candidates are the users with at least this volume, the largest first. */
export const VIP_MIN_USD = 10_000;
/** Entity intelligence: VIP candidates listed. */
export const VIP_LIST_LIMIT = 10;
/** Entity intelligence: a trace stops following a node that sends to more addresses than this in one hop. */
export const TRACE_FAN_OUT_LIMIT = 10;
/** Entity intelligence: the most nodes one hop of a trace expands (the frontier beyond is marked budget). */
export const TRACE_MAX_FRONTIER = 200;

const ENTITY_SCAN =
  "Transfer logs are read newest block first, filtered by the node on the indexed from/to topics (the address, or the list of venue addresses), never by reading every transfer of a token; each answer has a log budget and a time budget, and when one runs out it says truncated: true and from which block it covered the window.";
const ENTITY_WINDOW = "Window: `blocks` blocks ending at `to_block` (default: the latest block), so a past window can be asked for.";
const ENTITY_NOT_CHECKED = [
  "balances and transfers of native ETH between wallets (only ERC-20 Transfer logs are read; ETH balances are read where stated)",
  "historical USD prices: every amount is valued at the token's current price",
  "entities not in the curated label file: they are reported by address and class, never named",
  ...COMMON_NOT_CHECKED,
];

/** The method of each analytics endpoint, by route path without `/api/`. */
export const ENDPOINT_METHODS = {
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
      "Honeypot simulation (`simulation`), as POST /v1/honeypot-check answers it for a 100 USD buy: the token's pools on the curated factories; through the deepest one of any kind (v2-style or concentrated liquidity), a buy, a transfer between two fresh addresses and a sell simulated by eth_call with state overrides (never mined), with the taxes measured on the token side and each revert reason; the owner's mint, blacklist, pause and set-fee functions found in the bytecode (through a proxy's implementation); a verdict with every reason.",
    ],
    notChecked: [
      "holder concentration is not computed",
      "source verification and audits",
      "the honeypot simulation trades only through the deepest pool, and does not read Uniswap v4 pools",
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
  "entity-intel/use-cases": {
    title: "Entity intelligence: use cases",
    summary: "A role or a task matched to a curated use case, answered with its ordered plan across the entity routes.",
    facts: [],
    steps: [
      "The use cases are files in content/entity-intel/, compiled at build; each plan step names a route, says why, and carries an example body checked against the route's schema at build.",
      "role and task are matched with the knowledge base's search (BM25+ over title, roles, tags, summary and the steps' reasons, title weighted most); the best match is answered, the next three are alternatives.",
    ],
    notChecked: ["whether the example addresses fit your case: replace them with yours", "no chain data is read by this route"],
  },
  "entity-intel/exchange-flow": {
    title: "Entity intelligence: exchange flow",
    summary: "A token's inflow and outflow per venue class (cex, dex, bridge, mixer), with the top counterparties outside the venues.",
    facts: ["chain", "transfers", "prices", "classes", "labels"],
    steps: [
      ENTITY_WINDOW,
      "The venues are the curated venue addresses of the label file (exchange hot-wallet clusters, bridges, DEX pools and routers, mixers), each with its class.",
      `Two queries per window: transfers of the token from any venue address and to any venue address (topic OR-lists). ${ENTITY_SCAN}`,
      "A transfer between two addresses of one venue (an exchange sweeping its own wallets) is not a flow; between two venues it is an outflow of one class and an inflow of the other.",
      "Amounts are summed exactly in token units and valued once at the current price, rounded to the cent; net = inflow - outflow.",
      "Top counterparties: addresses outside the venues, by what they sent into venues plus what they got from them, each classified and labelled.",
    ],
    notChecked: ["venues missing from the curated file: their flows count as ordinary wallets' flows", ...ENTITY_NOT_CHECKED],
  },
  "entity-intel/portfolio": {
    title: "Entity intelligence: portfolio",
    summary: "A wallet's holdings at one block with USD values, and its transfer activity over a window.",
    facts: ["chain", "transfers", "prices", "classes", "labels"],
    steps: [
      ENTITY_WINDOW,
      `Transfer logs with the address as from and as to, every token. ${ENTITY_SCAN}`,
      "The tokens it moved in the window, plus USDC and WETH, are read with balanceOf at to_block in one Multicall3 batch, with their symbols and decimals; ETH with eth_getBalance at the same block.",
      "Prices in one batch: DexScreener's multi-token endpoint (30 tokens per call), DefiLlama's coins API for the ones without a pair; ETH at the WETH price. Tokens with no price are listed under unpriced and left out of the total.",
      "Activity counts the window's Transfer logs in and out, the tokens touched, and the first and last block seen.",
    ],
    notChecked: [
      "tokens it holds but did not move in the window (other than USDC and WETH)",
      "positions inside protocols (LP shares, lending deposits) beyond their token balances",
      ...ENTITY_NOT_CHECKED,
    ],
  },
  "entity-intel/counterparties": {
    title: "Entity intelligence: counterparties",
    summary: "Whom an address transacts with: class, labels, curated flags, first and last seen, transfers and USD volume each way.",
    facts: ["chain", "transfers", "prices", "classes", "labels"],
    steps: [
      ENTITY_WINDOW,
      `Transfer logs with the address as from and as to (one token, or every token). ${ENTITY_SCAN}`,
      "Grouped by the other side: transfers each way, first and last block with the block's time, and USD volume each way at current prices (tokens without a price are listed and left out of the volumes).",
      "Ranked by volume in + out (ties: address); each counterparty is classified, labelled and flagged only from the curated file.",
    ],
    notChecked: ENTITY_NOT_CHECKED,
  },
  "entity-intel/trace": {
    title: "Entity intelligence: trace",
    summary: "Where money went (or came from), hop by hop, with where and why each path stops.",
    facts: ["chain", "transfers", "prices", "classes", "labels"],
    steps: [
      ENTITY_WINDOW,
      "The start is an address, or a transaction: its Transfer logs are the first hop.",
      `Each hop is one query for the whole frontier (a topic OR-list of its addresses). Direction out follows a node's transfers at or after the block the money reached it; direction in, transfers into it at or before the block it sent the money on. An address the money reaches again, earlier (out) or later (in) than it was followed from, by another path or back in a loop (the start of a transaction trace too), is followed again over what was not read; its hop stays the first one. ${ENTITY_SCAN}`,
      "Only transfers worth at least min_usd at the current price are followed (tokens without a price are not).",
      `A path stops at a curated exchange (cex), bridge or DEX (dex, also a pair, pool or router by probes), where nothing at or above min_usd moves on (no_further_transfers), where nothing priced at or above min_usd moves on but some of what does is in tokens past the answer's price cap (tokens_not_priced, the tokens listed in tokens_not_looked_up), at a node sending to more than ${TRACE_FAN_OUT_LIMIT} addresses in one hop (fan_out_limit), when the budget runs out (budget) or at max_hops. At most ${TRACE_MAX_FRONTIER} nodes are expanded per hop.`,
    ],
    notChecked: [
      "money that leaves through a swap and comes back as another token is followed only as the transfers the swap emits",
      "which part of a mixed balance is the traced money: every qualifying transfer after it arrived is followed",
      ...ENTITY_NOT_CHECKED,
    ],
  },
  "entity-intel/venue-users": {
    title: "Entity intelligence: venue users",
    summary: "Who uses a venue: value segments, VIP candidates, users gone quiet and users funded by flagged addresses.",
    facts: ["chain", "transfers", "prices", "classes", "labels"],
    steps: [
      ENTITY_WINDOW,
      `The venue is a curated venue id (all addresses of its cluster) or one address. Two queries: transfers from and to the venue's addresses. ${ENTITY_SCAN}`,
      "A user is any other address that sent to or received from the venue; its volume is the USD value of both directions (transfers inside the cluster are not counted).",
      `Segments by volume (rounded to the cent): ${VENUE_SEGMENTS.map((s) => `${s.name} ${s.min_usd}-${s.max_usd ?? "and more"}`).join(", ")} USD. VIP candidates: users with at least ${VIP_MIN_USD} USD, largest first, at most ${VIP_LIST_LIMIT}.`,
      "Gone quiet: users with a transfer in the window's first half and none in its last quarter, with their last block and volume.",
      "Flagged funders: one query for the transfers sent by curated flagged addresses in the window; those received by a user are listed with the flags.",
    ],
    notChecked: ["the venue's internal books: deposits credited off-chain are not visible", ...ENTITY_NOT_CHECKED],
  },
} satisfies Record<string, EndpointMethod>;

/** The analytics endpoints, by route path without `/api/`. */
export type AnalyticsEndpoint = keyof typeof ENDPOINT_METHODS;

/** The entity-intelligence endpoints. */
export type EntityEndpoint = Extract<AnalyticsEndpoint, `entity-intel/${string}`>;

/** The methodology part of `endpoint`'s answer, from the same text the /methodology page shows. */
export function methodologyFor(endpoint: AnalyticsEndpoint): Methodology {
  const method = ENDPOINT_METHODS[endpoint];
  const answer: Methodology = { summary: method.summary, steps: [...method.steps], not_checked: [...method.notChecked] };
  for (const fact of method.facts) answer[fact] = METHOD_FACTS[fact];
  return answer;
}

/** An entity answer's `methodology` and, beside it, its `not_checked` list. */
export function explained(endpoint: EntityEndpoint): { methodology: Methodology; not_checked: string[] } {
  const methodology = methodologyFor(endpoint);
  return { methodology, not_checked: methodology.not_checked };
}
