/**
 * How the token-risk answers are made and what they do not check: the `methodology` every
 * answer of the secondary site's token-risk routes carries, in the shape of the chain
 * analytics' (src/analytics/methodology.ts).
 */
import type { Methodology } from "../../spec/routes/analytics.ts";
import { RISK_THRESHOLDS } from "../../spec/token-risk-schemas.ts";
import { COMMON_NOT_CHECKED } from "../analytics/methodology.ts";

/** The token-risk routes, by path without `/v1/`. */
export type TokenRiskEndpoint = "honeypot-check" | "meme-hunter" | "dinalibrium";

const T = RISK_THRESHOLDS;

/** The simulation's steps, shared by the honeypot check, the token check and the new-pair hunter. */
export const SIMULATION_STEPS: readonly string[] = [
  "Pools: every factory of the curated list (content/token-risk.json: Uniswap v2 and v3, Aerodrome and Aerodrome Slipstream on Base) is asked for the token's pool against each quote token (WETH, USDC, USDbC, DAI, cbBTC), in one Multicall3 batch at one block; each pool's liquidity is twice its quote side at the quote token's USD price (a concentrated-liquidity pool's quote side is the virtual reserve of its liquidity in range at the current price, at most what it holds, so positions out of range do not count).",
  `Simulation: through the deepest pool of any kind (Uniswap v2, Aerodrome, Uniswap v3, Aerodrome Slipstream), by eth_call with state overrides at the same block, never mined: a simulator's code is placed at a random fresh address and funded with the quote token (its balance slot found by probing); it buys amount_usd of the token (at most ${T.maxShareOfReserve * 100}% of the pool's quote side), sends half to a second fresh address and sells the rest back to the pool. A v2-style pool is paid first and asked for its formula's output; a concentrated-liquidity pool is called by swap and paid from uniswapV3SwapCallback exactly what it asks, as routers pay it, its swap's own deltas being what it sent.`,
  "Taxes, measured on the token side: buy = 1 - tokens received / tokens the pool sent; transfer = 1 - tokens received / tokens sent; sell = 1 - tokens that reached the pool / tokens sold. A reverted step is reported with its revert reason.",
  "Owner privileges: the selectors of known mint, blacklist, pause and set-fee functions found in the token's bytecode and, for an EIP-1967 or older proxy, its implementation's; the owner from owner() or getOwner(); declared maximum transaction and wallet sizes from their usual getters.",
  `Verdict, worst first: honeypot (a sell or a transfer reverts, or a sell keeps ${T.honeypotSellTaxPct}% or more), high_tax (a tax of ${T.highTaxPct}% or more), caution (a tax above ${T.cautionTaxPct}%, privileges of an owner that has not renounced, a proxy, a limit hit, a failed buy, liquidity under ${T.minLiquidityUsd} USD, or no pool to simulate through), else ok; reasons lists every finding.`,
];

const SIMULATION_NOT_CHECKED: readonly string[] = [
  "pools other than the deepest one (only it is traded through), and Uniswap v4 pools",
  "conditions that change later: a tax or blacklist the owner sets after the check, trading that is enabled or disabled by time or block",
  "behaviour that depends on who trades (a fresh address may be treated differently from an old holder) or on the size of a trade beyond the simulated one",
  "source verification and audits",
];

const METHODS: Record<TokenRiskEndpoint, { summary: string; steps: readonly string[]; notChecked: readonly string[] }> = {
  "honeypot-check": {
    summary: "Whether a token can be bought, moved and sold, at what taxes, and what its owner can do: simulated on the chain itself.",
    steps: SIMULATION_STEPS,
    notChecked: [...SIMULATION_NOT_CHECKED, ...COMMON_NOT_CHECKED],
  },
  "meme-hunter": {
    summary:
      "The pairs and pools created in a recent block window on the curated factories, each with its activity, concentration, honeypot verdict and a stated risk score.",
    steps: [
      "Window: the last `blocks` blocks up to the latest block (default 1,800, about an hour; at most 43,200); PairCreated and PoolCreated logs of the curated factories in it, read in chunks like every log scan.",
      "A new pair is one of a token outside the curated list against a quote token of it; pairs of two known tokens are left out.",
      "Per pair: liquidity (twice its quote side in USD), Swap logs in the window (a buy takes the token out of the pair; buyers are the swaps' recipients), the token's Transfer logs in the window (top10_share_pct: the share of all the token received by addresses other than its pools that went to the 10 largest receivers), Burn logs after creation (liquidity_removed when at least half of the liquidity added was withdrawn) and the honeypot check of the token.",
      "risk_score from 0 (least risky) to 100: each input is scaled to 0-100 and weighted as the answer states; pairs are ranked by risk_score, then by liquidity.",
    ],
    notChecked: ["pools of Uniswap v4 (no factory event)", ...SIMULATION_NOT_CHECKED, ...COMMON_NOT_CHECKED],
  },
  dinalibrium: {
    summary:
      "A token's price equilibrium across Base venues: each pool's implied price, its deviation from the reference price and the gaps between pools after fees.",
    steps: [
      "Pools: the token's pools against every curated token on every curated factory, read at one block.",
      "Implied USD price in each pool: the counter token's amount per token, from a v2-style pool's reserves or a concentrated pool's sqrtPriceX96, times the counter token's USD price (a stablecoin without a market price counts at its peg).",
      "Reference price: a stablecoin's peg; any other token's USD price from the price source. deviation_bps = (implied / reference - 1) x 10,000; gap_after_fee_bps is what is left of |deviation_bps| after the pool's fee.",
      "Peg, for stablecoins: on_peg under 10 bps, drifting under 100 bps, else depegged; per pool, and for the token from its liquidity-weighted mean deviation. max_gap_bps: the largest difference between two pools' implied prices, with the gap left after both pools' fees.",
    ],
    notChecked: [
      "price impact of a trade of any size: implied prices are marginal",
      "centralized exchanges and other chains",
      "Uniswap v4 pools",
      ...COMMON_NOT_CHECKED,
    ],
  },
};

/** The methodology part of a token-risk answer. */
export function tokenRiskMethodology(endpoint: TokenRiskEndpoint): Methodology {
  const m = METHODS[endpoint];
  return { summary: m.summary, steps: [...m.steps], not_checked: [...m.notChecked] };
}
