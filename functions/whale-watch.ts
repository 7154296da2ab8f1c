/**
 * `POST /api/whale-watch`: every USDC or WETH transfer worth at least `min_usd` in the last
 * `blocks` blocks, largest first, with where the money went.
 */
import { formatUnits } from "viem";
import { WHALE_DEFAULTS, type WhaleTransfer, whaleWatch } from "../spec/routes/analytics.ts";
import { methodologyFor, WHALE_LIST_LIMIT } from "../src/analytics/methodology.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { transferDirection } from "../src/analytics/transfer-direction.ts";
import { parseDecimal, smallestWorth, usdValue } from "../src/analytics/usd-value.ts";
import { WETH_ADDRESS } from "../src/chain/addresses.ts";
import { defineFunction } from "../src/context.ts";
import { DEFAULT_BUDGET, ScanBudget } from "../src/entity-intel/scan.ts";
import { ServiceError } from "../src/errors.ts";

export default defineFunction(whaleWatch, async (input, ctx) => {
  const { scanner, classifier, labels, prices } = analyticsOf(ctx);
  const symbol = input.token ?? WHALE_DEFAULTS.token;
  const token = symbol === "USDC" ? ctx.config.usdc : WETH_ADDRESS;
  const decimals = symbol === "USDC" ? 6 : 18;
  const blocks = input.blocks ?? WHALE_DEFAULTS.blocks;
  const minUsd = input.min_usd ?? WHALE_DEFAULTS.min_usd;

  const [{ latest, finalized }, price] = await Promise.all([scanner.head(), prices.price(token)]);
  const fromBlock = Math.max(0, latest - blocks + 1);
  const exactPrice = parseDecimal(price.price_usd);
  const least = smallestWorth(minUsd, decimals, exactPrice);
  // Only the large transfers are kept, chunk by chunk: a day of USDC is millions of transfers.
  const budget = new ScanBudget(ctx.analytics?.entityBudget ?? DEFAULT_BUDGET);
  const { logs: large, coveredFrom } = await scanner.transfers({ token, fromBlock, toBlock: latest }, finalized, {
    keep: (log) => least !== null && log.value >= least,
    allowance: budget,
  });
  if (coveredFrom > fromBlock) {
    // The answer has no way to say it covers part of the window, so a partial scan is no answer.
    const spent = budget.report();
    throw new ServiceError(
      "upstream_timeout",
      `Reading the ${symbol} transfers of ${latest - fromBlock + 1} blocks took more than one call may spend (${spent.max_logs} transfers or ${spent.max_ms} ms); ask for fewer blocks. You were not charged.`,
      { details: { upstream: "rpc", blocks: latest - fromBlock + 1, budget: spent } },
    );
  }
  large.sort((a, b) => (a.value > b.value ? -1 : a.value < b.value ? 1 : a.blockNumber - b.blockNumber || a.logIndex - b.logIndex));
  const listed = large.slice(0, WHALE_LIST_LIMIT);
  const classes = await classifier.classify(listed.flatMap((l) => [l.from, l.to]));

  const largest: WhaleTransfer[] = listed.map((log) => {
    const fromClass = classes.get(log.from) ?? "contract";
    const toClass = classes.get(log.to) ?? "contract";
    return {
      amount: formatUnits(log.value, decimals),
      amount_usd: usdValue(log.value, decimals, exactPrice),
      from: log.from,
      to: log.to,
      tx_hash: log.txHash,
      block: log.blockNumber,
      log_index: log.logIndex,
      direction: transferDirection({ address: log.from, cls: fromClass }, { address: log.to, cls: toClass }, labels),
      from_class: fromClass,
      to_class: toClass,
      from_labels: labels.names(log.from),
      to_labels: labels.names(log.to),
    };
  });

  return {
    token: symbol,
    token_address: token,
    chain_id: ctx.config.chainId,
    from_block: fromBlock,
    to_block: latest,
    blocks_scanned: latest - fromBlock + 1,
    threshold_usd: minUsd,
    price_usd: price.price_usd,
    price_source: price.source,
    // Every transfer of the window read, before the threshold chose the large ones (the scan is whole here).
    transfers_scanned: budget.logsRead,
    events_found: large.length,
    largest,
    mempool: "Pending-mempool transfers are not visible: only mined blocks are read (a node with txpool access would be needed).",
    methodology: methodologyFor("whale-watch"),
  };
});
