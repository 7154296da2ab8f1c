/**
 * `POST /api/gas-tracker`: priority-fee levels from eth_feeHistory percentiles over recent
 * blocks, the next block's base fee, and what a plain and an ERC-20 transfer cost in USD.
 */
import { formatUnits } from "viem";
import { gasTracker } from "../spec/routes/analytics.ts";
import { GAS_PERCENTILES, GAS_SAMPLE_BLOCKS, methodologyFor } from "../src/analytics/methodology.ts";
import { servedChainId } from "../src/analytics/served-chain.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { parseDecimal, usdValue } from "../src/analytics/usd-value.ts";
import { WETH_ADDRESS } from "../src/chain/addresses.ts";
import { readChain } from "../src/chain/rpc-error.ts";
import { defineFunction } from "../src/context.ts";

/** Twice the median, so that the mean of two middle values stays an exact integer of wei. */
function doubledMedian(values: readonly bigint[]): bigint {
  if (values.length === 0) return 0n;
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? 2n * (sorted[mid] as bigint) : (sorted[mid - 1] as bigint) + (sorted[mid] as bigint);
}

/** gwei of `doubledWei / 2`, as a number. */
function gweiOfDoubled(doubledWei: bigint): number {
  return Number(formatUnits(doubledWei * 5n, 10));
}

export default defineFunction(gasTracker, async (input, ctx) => {
  const chainId = servedChainId(input.chain_id, ctx);
  const { prices } = analyticsOf(ctx);
  const levels = ["low", "medium", "high"] as const;

  const [history, ethPrice] = await Promise.all([
    readChain("reading the fee history", () =>
      ctx.chain.getFeeHistory({
        blockCount: GAS_SAMPLE_BLOCKS,
        blockTag: "latest",
        rewardPercentiles: levels.map((l) => GAS_PERCENTILES[l]),
      }),
    ),
    prices.price(WETH_ADDRESS),
  ]);

  const rewards = history.reward ?? [];
  // gasUsedRatio 0: a block without transactions, whose "percentiles" are zeros, not prices anyone paid.
  const used = rewards.filter((_, i) => (history.gasUsedRatio[i] ?? 0) > 0);
  const doubled = Object.fromEntries(levels.map((level, j) => [level, doubledMedian(used.map((r) => r[j] ?? 0n))])) as Record<
    (typeof levels)[number],
    bigint
  >;
  const nextBaseFee = history.baseFeePerGas.at(-1) ?? 0n;
  const price = parseDecimal(ethPrice.price_usd);
  // Halving the price keeps the doubled fee exact: cost = gas x (2 base + 2 tip) x price / 2.
  const halfPrice = price.div(2);
  const cost = (gas: bigint, level: (typeof levels)[number]) => usdValue(gas * (2n * nextBaseFee + doubled[level]), 18, halfPrice, 8);

  return {
    chain_id: chainId,
    block_number: Number(history.oldestBlock) + history.gasUsedRatio.length - 1,
    base_fee_gwei: Number(formatUnits(nextBaseFee, 9)),
    priority_fee_gwei: { low: gweiOfDoubled(doubled.low), medium: gweiOfDoubled(doubled.medium), high: gweiOfDoubled(doubled.high) },
    percentiles: { ...GAS_PERCENTILES },
    blocks_sampled: history.gasUsedRatio.length,
    blocks_with_transactions: used.length,
    eth_price_usd: Number(ethPrice.price_usd),
    price_source: ethPrice.source,
    usd_estimate: {
      transfer_21000: cost(21_000n, "medium"),
      transfer_21000_low: cost(21_000n, "low"),
      transfer_21000_medium: cost(21_000n, "medium"),
      transfer_21000_high: cost(21_000n, "high"),
      erc20_transfer_65000: cost(65_000n, "medium"),
      erc20_transfer_65000_low: cost(65_000n, "low"),
      erc20_transfer_65000_medium: cost(65_000n, "medium"),
      erc20_transfer_65000_high: cost(65_000n, "high"),
    },
    methodology: methodologyFor("gas-tracker"),
  };
});
