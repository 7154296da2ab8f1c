/**
 * `POST /api/entity-intel/portfolio`: a wallet's holdings at `to_block` with USD values, found
 * from the tokens it moved in the window (plus USDC and WETH), and its activity in the window.
 */
import { erc20Abi, formatUnits, getAddress } from "viem";
import { ENTITY_LIMITS, portfolio } from "../spec/routes/entity-intel.ts";
import { explained } from "../src/analytics/methodology.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { usdValue } from "../src/analytics/usd-value.ts";
import { WETH_ADDRESS } from "../src/chain/addresses.ts";
import { readChain, readMulticall } from "../src/chain/rpc-error.ts";
import { defineFunction, type RouteOutput } from "../src/context.ts";
import { describe, factsOf, tokenInfos, UsdSum } from "../src/entity-intel/entities.ts";
import { cappedPrices } from "../src/entity-intel/pricing.ts";
import { bothWays, coverage, DEFAULT_BUDGET, resolveWindow, ScanBudget, scanBudgeted } from "../src/entity-intel/scan.ts";

export default defineFunction(portfolio, async (input, ctx) => {
  const { scanner, classifier, labels, prices } = analyticsOf(ctx);
  const budget = new ScanBudget(ctx.analytics?.entityBudget ?? DEFAULT_BUDGET);
  const address = getAddress(input.address);
  const window = await resolveWindow(scanner, input.blocks ?? ENTITY_LIMITS.portfolioBlocks, input.to_block);
  const result = await scanBudgeted(scanner, bothWays(undefined, address), window, budget);

  const usdc = getAddress(ctx.config.usdc);
  const tokens = [...new Set([usdc, WETH_ADDRESS, ...result.logs.map((l) => l.token)])];
  const blockNumber = BigInt(window.toBlock);
  const [infos, facts, eth, balances, { priced, notLookedUp }] = await Promise.all([
    tokenInfos(ctx.chain, tokens),
    describe([address], labels, classifier),
    readChain("reading the ETH balance", () => ctx.chain.getBalance({ address, blockNumber })),
    readMulticall("reading token balances", () =>
      ctx.chain.multicall({
        allowFailure: true,
        blockNumber,
        batchSize: 8_192,
        contracts: tokens.map((token) => ({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [address] }) as const),
      }),
    ),
    cappedPrices(prices, result.logs, { first: [usdc, WETH_ADDRESS] }),
  ]);

  type Answer = RouteOutput<typeof portfolio>;
  const total = new UsdSum();
  const holdings: Answer["holdings"] = [];
  const unpriced: Answer["unpriced"] = [];
  const ethPrice = priced.get(WETH_ADDRESS);
  if (eth > 0n) {
    if (ethPrice) total.add(eth, 18, ethPrice.exact);
    holdings.push({
      token: "ETH",
      symbol: "ETH",
      decimals: 18,
      balance: formatUnits(eth, 18),
      price_usd: ethPrice?.price_usd ?? null,
      value_usd: ethPrice ? usdValue(eth, 18, ethPrice.exact) : null,
      price_source: ethPrice?.source ?? null,
    });
  }
  tokens.forEach((token, i) => {
    const answer = balances[i];
    const info = infos.get(token);
    if (!info || answer?.status !== "success" || answer.result === 0n) return;
    const balance = answer.result;
    const price = priced.get(token);
    if (price) total.add(balance, info.decimals, price.exact);
    else {
      const reason = notLookedUp.includes(token) ? "not_looked_up" : "no_price";
      unpriced.push({ token, symbol: info.symbol, balance: formatUnits(balance, info.decimals), reason });
    }
    holdings.push({
      token,
      symbol: info.symbol,
      decimals: info.decimals,
      balance: formatUnits(balance, info.decimals),
      price_usd: price?.price_usd ?? null,
      value_usd: price ? usdValue(balance, info.decimals, price.exact) : null,
      price_source: price?.source ?? null,
    });
  });
  holdings.sort(
    (a, b) => (b.value_usd ?? -1) - (a.value_usd ?? -1) || String(a.symbol ?? a.token).localeCompare(String(b.symbol ?? b.token)),
  );

  const received = result.logs.filter((l) => l.to === address);
  const sent = result.logs.filter((l) => l.from === address);
  return {
    address,
    ...factsOf(facts, address, "wallet"),
    block_number: window.toBlock,
    holdings,
    total_value_usd: total.usd(),
    unpriced,
    activity: {
      window_blocks: window.toBlock - window.fromBlock + 1,
      transfers_in: received.length,
      transfers_out: sent.length,
      tokens_touched: new Set(result.logs.map((l) => l.token)).size,
      first_seen_block: result.logs[0]?.blockNumber ?? null,
      last_seen_block: result.logs.at(-1)?.blockNumber ?? null,
    },
    ...coverage(window, result, budget),
    ...explained("entity-intel/portfolio"),
  };
});
