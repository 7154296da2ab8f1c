/** Live chain analytics routes: wallet profiles, gas, token checks, whale watch, sentiment, markets. */
import { type Static, Type } from "@sinclair/typebox";
import { base } from "../../src/networks/base.ts";
import { defineRoute, type RouteDef } from "../route.ts";
import { Address, ClosedObject, FREE_GET, Literals, Nullable, TxHash } from "../schemas.ts";
import { DecimalString, HoneypotSimulation } from "../token-risk-schemas.ts";

/** The errors of a route that reads a chain or a market API: a bad input, or an upstream that failed (never charged). */
export const UPSTREAM_ERRORS = ["invalid_request", "upstream_error", "unavailable", "upstream_timeout"] as const;

/** The chain id a caller may ask for: only the chain this service reads is configured. */
const ChainIdInput = Type.Optional(
  Type.Integer({ minimum: 1, default: base.chainId, description: `chain id; default and only configured value: ${base.chainId} (Base)` }),
);

/** How an analytics answer was made and what it did not check (the text of /methodology). */
export const Methodology = Type.Object({
  summary: Type.String(),
  steps: Type.Array(Type.String()),
  chain: Type.Optional(Type.String()),
  transfers: Type.Optional(Type.String()),
  prices: Type.Optional(Type.String()),
  classes: Type.Optional(Type.String()),
  labels: Type.Optional(Type.String()),
  not_checked: Type.Array(Type.String(), { description: "what this answer does not check" }),
});
export type Methodology = Static<typeof Methodology>;

/** The class of an address from interface probes. */
export const AddressClass = Literals(["wallet", "token", "v2_pair", "v3_pool", "router", "contract", "zero_address"], {
  description: "wallet (no code), token, v2_pair, v3_pool, router, contract or zero_address",
});
export type AddressClass = Static<typeof AddressClass>;

/** Curated entity names of an address (empty when it is not labelled). */
export const Labels = Type.Array(Type.String(), { description: "names from the curated label file; empty when not labelled" });

/** `POST /api/wallet-profile`. */
export const walletProfile = defineRoute({
  method: "POST",
  path: "/api/wallet-profile",
  operationId: "walletProfile",
  summary: "Wallet profile: balances, nonce, code and recent USDC activity of an address on Base",
  description:
    "Reads one address at the latest block: whether it has code (and its class from interface probes), ETH and USDC balances, nonce, the number of USDC transfers from or to it in the last 43,200 blocks (about a day), and curated labels. Names appear only for labelled addresses. The answer's methodology lists what is not checked.",
  tags: ["chain analytics"],
  price: 0.1,
  body: ClosedObject({ address: Address, chain_id: ChainIdInput }),
  response: Type.Object({
    address: Address,
    chain_id: Type.Integer(),
    block_number: Type.Integer({ description: "every figure was read at this block" }),
    is_contract: Type.Boolean(),
    class: AddressClass,
    balance_eth: DecimalString,
    balance_wei: Type.String({ pattern: "^[0-9]+$" }),
    balance_usdc: DecimalString,
    nonce: Type.Integer({ minimum: 0 }),
    recent_usdc_activity: Type.Object({
      window_blocks: Type.Integer({ description: "blocks scanned (fewer than 43,200 only on a younger chain)" }),
      from_block: Type.Integer(),
      to_block: Type.Integer(),
      transfers_found: Type.Integer({ description: "USDC transfers from or to the address in the window" }),
      sent: Type.Integer(),
      received: Type.Integer(),
    }),
    labels: Labels,
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { address: "0x4200000000000000000000000000000000000006" } },
});

/** A figure at each of the three levels: the fees, and the reward percentiles behind them. */
const FeeLevels = Type.Object({ low: Type.Number(), medium: Type.Number(), high: Type.Number() });

/** `POST /api/gas-tracker`. */
export const gasTracker = defineRoute({
  method: "POST",
  path: "/api/gas-tracker",
  operationId: "gasTracker",
  summary: "Base gas: base fee, low/medium/high priority fees and the USD cost of a transfer",
  description:
    "eth_feeHistory over the last 20 blocks with the 10th, 50th and 90th reward percentiles (median over blocks with transactions), the next block's base fee, the ETH price from the deepest Base pair, and the USD cost of a 21,000-gas ETH transfer and a 65,000-gas ERC-20 transfer at each level. Base's L1 data fee is not included (stated in not_checked).",
  tags: ["chain analytics"],
  price: 0.1,
  body: ClosedObject({ chain_id: ChainIdInput }),
  response: Type.Object({
    chain_id: Type.Integer(),
    block_number: Type.Integer({ description: "the newest block sampled" }),
    base_fee_gwei: Type.Number({ description: "base fee of the next block" }),
    priority_fee_gwei: FeeLevels,
    percentiles: FeeLevels,
    blocks_sampled: Type.Integer(),
    blocks_with_transactions: Type.Integer(),
    eth_price_usd: Type.Number(),
    price_source: Literals(["dexscreener", "defillama"]),
    usd_estimate: Type.Object({
      transfer_21000: Type.Number({ description: "ETH transfer at the medium level" }),
      transfer_21000_low: Type.Number(),
      transfer_21000_medium: Type.Number(),
      transfer_21000_high: Type.Number(),
      erc20_transfer_65000: Type.Number({ description: "ERC-20 transfer at the medium level" }),
      erc20_transfer_65000_low: Type.Number(),
      erc20_transfer_65000_medium: Type.Number(),
      erc20_transfer_65000_high: Type.Number(),
    }),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: {} },
});

/** The proxy facts of a contract. */
const ProxyFacts = Type.Object({
  standard: Literals(["eip1967", "eip1967_beacon", "zeppelinos", "eip1167_minimal"]),
  implementation: Nullable(Address),
  admin: Nullable(Address),
  beacon: Nullable(Address),
});

/** `POST /api/token-check`. */
export const tokenCheck = defineRoute({
  method: "POST",
  path: "/api/token-check",
  operationId: "tokenCheck",
  summary: "ERC-20 token check: metadata, proxy detection, DEX liquidity and a honeypot simulation on Base",
  description:
    "Whether the address is a contract and an ERC-20 token, its name, symbol, decimals and supply, whether it is a proxy (EIP-1967 implementation/beacon/admin slots, the older zeppelinos slot, EIP-1167 clones), the liquidity and 24 h volume of its deepest Base pair on DexScreener, and the honeypot simulation of POST /v1/honeypot-check with 100 USD (a buy, a transfer and a sell by eth_call with state overrides: taxes, revert reasons, owner privileges, verdict). Holder concentration is not computed (see not_checked).",
  tags: ["chain analytics"],
  price: 0.1,
  body: ClosedObject({ token: Address, chain_id: ChainIdInput }),
  response: Type.Object({
    token: Address,
    chain_id: Type.Integer(),
    block_number: Type.Integer(),
    is_contract: Type.Boolean(),
    class: AddressClass,
    is_token: Type.Boolean({ description: "answers decimals() like an ERC-20" }),
    name: Nullable(Type.String()),
    symbol: Nullable(Type.String()),
    decimals: Nullable(Type.Integer()),
    total_supply: Nullable(DecimalString),
    is_proxy: Type.Boolean(),
    proxy: Nullable(ProxyFacts),
    dex: Nullable(
      Type.Object({
        liquidity_usd: Type.Number(),
        volume_24h_usd: Type.Number(),
        price_usd: Nullable(DecimalString),
        pair_address: Type.String(),
        dex_id: Type.String(),
        pair: Type.String({ description: "BASE/QUOTE symbols" }),
        pairs_found: Type.Integer(),
        source: Type.Literal("dexscreener"),
      }),
      { description: "the deepest Base pair; null when DexScreener lists none" },
    ),
    labels: Labels,
    simulation: Nullable(HoneypotSimulation, {
      description: "the honeypot simulation with a 100 USD buy; null when the address is not an ERC-20 token",
    }),
    not_checked: Type.Array(Type.String()),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { token: base.usdc.address } },
});

/** Whale-watch defaults and limits. */
export const WHALE_DEFAULTS = { token: "USDC", min_usd: 100_000, blocks: 1_800, max_blocks: 43_200 } as const;

/** One large transfer. */
export const WhaleTransfer = Type.Object({
  amount: DecimalString,
  amount_usd: Type.Number(),
  from: Address,
  to: Address,
  tx_hash: TxHash,
  block: Type.Integer(),
  log_index: Type.Integer(),
  direction: Literals(
    ["mint", "burn", "to_exchange", "from_exchange", "to_bridge", "from_bridge", "into_dex", "out_of_dex", "wallet_to_wallet", "other"],
    { description: "first that applies: mint/burn, exchange, bridge, dex, wallet_to_wallet, other" },
  ),
  from_class: AddressClass,
  to_class: AddressClass,
  from_labels: Labels,
  to_labels: Labels,
});
export type WhaleTransfer = Static<typeof WhaleTransfer>;

/** The window of a scan back from the latest block (about an hour by default, at most a day). */
export const RecentBlocks = Type.Optional(
  Type.Integer({ minimum: 1, maximum: WHALE_DEFAULTS.max_blocks, default: 1800, description: "blocks back from the latest, default 1800" }),
);

/** `POST /api/whale-watch`. */
export const whaleWatch = defineRoute({
  method: "POST",
  path: "/api/whale-watch",
  operationId: "whaleWatch",
  summary: "Whale watch: USDC or WETH transfers above a USD threshold in recent Base blocks",
  description:
    "Scans every Transfer of USDC or WETH in the last `blocks` blocks (default 1,800, about an hour; at most 43,200) and lists those worth at least min_usd (default 100,000) at the current price, largest first (at most 25), with direction, counterparty classes and curated labels. Pending-mempool transfers are not visible (stated in the answer). A window with more transfers than one call may read (a day of Base USDC can be) answers 504 upstream_timeout, not charged.",
  tags: ["chain analytics"],
  price: 0.1,
  body: ClosedObject({
    min_usd: Type.Optional(Type.Number({ minimum: 0, maximum: 1e12, default: 100000, description: "USD threshold, default 100000" })),
    blocks: RecentBlocks,
    token: Type.Optional(Literals(["USDC", "WETH"], { default: "USDC", description: '"USDC" (default) or "WETH"' })),
  }),
  response: Type.Object({
    token: Literals(["USDC", "WETH"]),
    token_address: Address,
    chain_id: Type.Integer(),
    from_block: Type.Integer(),
    to_block: Type.Integer(),
    blocks_scanned: Type.Integer(),
    threshold_usd: Type.Number(),
    price_usd: DecimalString,
    price_source: Literals(["dexscreener", "defillama"]),
    transfers_scanned: Type.Integer(),
    events_found: Type.Integer({ description: "transfers at or above the threshold" }),
    largest: Type.Array(WhaleTransfer),
    mempool: Type.String(),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { token: "USDC", min_usd: 100000, blocks: 1800 } },
});

/** `POST /api/defi-sentiment`. */
export const defiSentiment = defineRoute({
  method: "POST",
  path: "/api/defi-sentiment",
  operationId: "defiSentiment",
  summary: "DeFi sentiment: funding, open interest, price change and protocol TVL, with a stated score",
  description:
    "For an asset ticker (Hyperliquid perpetual; default ETH when neither asset nor protocol is given): funding rate per 8 h, open interest, 24 h price change; for a DefiLlama protocol slug: TVL and its 24 h change (a parent slug such as aave or uniswap answers the aggregate of its versions). A score from -100 to 100 and a label combine them; every input, its scaling and its weight is in the answer.",
  tags: ["chain analytics"],
  price: 0.1,
  body: ClosedObject({
    asset: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9]{1,20}$", description: "asset ticker, e.g. ETH or BTC" })),
    protocol: Type.Optional(
      Type.String({
        pattern: "^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$",
        description: "DefiLlama protocol slug, e.g. aave-v3, or a parent such as aave (its versions' aggregate)",
      }),
    ),
  }),
  response: Type.Object({
    asset: Nullable(Type.String()),
    protocol: Nullable(Type.String()),
    sentiment: Literals(["bullish", "neutral", "bearish", "unknown"]),
    score: Nullable(Type.Number()),
    funding_rate_1h_pct: Nullable(Type.Number()),
    funding_rate_8h_pct: Nullable(Type.Number()),
    open_interest_contracts: Nullable(Type.Number()),
    open_interest_usd: Nullable(Type.Number()),
    mark_price_usd: Nullable(Type.Number()),
    price_change: Type.Object({ "24h_pct": Nullable(Type.Number()) }),
    protocol_tvl: Nullable(
      Type.Object({
        slug: Type.String(),
        name: Type.String(),
        tvl_usd: Type.Number(),
        change_24h_pct: Nullable(Type.Number()),
        change_source: Literals(["protocols_list", "tvl_series", "unavailable"]),
        members: Type.Optional(
          Type.Array(Type.String(), { description: "for a parent protocol (aave): the slugs of the versions its aggregate covers" }),
        ),
      }),
    ),
    score_inputs: Type.Array(
      Type.Object({
        name: Type.String(),
        value: Type.Number(),
        normalized: Type.Number({ description: "value scaled to -1..1" }),
        weight: Type.Number(),
        contribution: Type.Number({ description: "normalized x weight x 100" }),
      }),
    ),
    scoring: Type.Object({
      weights: Type.Record(Type.String(), Type.Number()),
      full_scale: Type.Record(Type.String(), Type.Number()),
      neutral_funding_8h_pct: Type.Number(),
      thresholds: Type.Object({ bullish: Type.Number(), bearish: Type.Number() }),
    }),
    sources: Type.Object({
      hyperliquid: Nullable(Type.Object({ fetched_at: Type.String() })),
      defillama: Nullable(Type.Object({ fetched_at: Type.String() })),
    }),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS, "not_found"],
  example: { input: { asset: "ETH", protocol: "aave-v3" } },
});

/** One watched pair. */
export const MarketPair = Type.Object({
  symbol: Type.String(),
  token_address: Address,
  pair: Nullable(Type.String({ description: "BASE/QUOTE of the pair priced from" })),
  price_usd: DecimalString,
  change_24h_pct: Nullable(Type.Number()),
  liquidity_usd: Nullable(Type.Number()),
  volume_24h_usd: Nullable(Type.Number()),
  dex_id: Nullable(Type.String()),
  pair_address: Nullable(Type.String()),
  source: Literals(["dexscreener", "defillama"]),
  fetched_at: Type.String({ description: "when this service fetched the data (ISO 8601)" }),
  age_seconds: Type.Integer({ minimum: 0 }),
});
export type MarketPair = Static<typeof MarketPair>;

/** `GET /api/markets` (free). */
export const markets = defineRoute({
  method: "GET",
  path: "/api/markets",
  operationId: "getMarkets",
  summary: "Markets snapshot: the pairs the trading assistant watches, with price and 24 h change",
  description:
    "Free. WETH, cbBTC, cbETH, AERO and USDC priced through their deepest Base pair on DexScreener (DefiLlama coins when DexScreener fails), each with its 24 h change, source and age. Third-party data, may be delayed.",
  tags: ["free"],
  ...FREE_GET,
  response: Type.Object({
    pairs: Type.Array(MarketPair),
    generated_at: Type.String(),
    note: Type.String(),
    methodology: Methodology,
  }),
  errors: ["upstream_error", "unavailable", "upstream_timeout"],
});

/** The analytics routes, in listing order. */
export const analyticsRoutes: readonly RouteDef[] = [walletProfile, gasTracker, tokenCheck, whaleWatch, defiSentiment, markets];
