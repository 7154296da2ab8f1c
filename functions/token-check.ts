/**
 * `POST /api/token-check`: is this address an ERC-20 token, what does it call itself, is it a
 * proxy, and how deep is its best DEX pair on Base.
 */
import { formatUnits, getAddress } from "viem";
import { tokenCheck } from "../spec/routes/analytics.ts";
import { methodologyFor } from "../src/analytics/methodology.ts";
import { priceFromPairs } from "../src/analytics/price-source.ts";
import { servedChainId } from "../src/analytics/served-chain.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { readChain } from "../src/chain/rpc-error.ts";
import { readProxyInfo, readTokenMetadata } from "../src/chain/token-reads.ts";
import { defineFunction } from "../src/context.ts";
import { assessToken, riskDeps } from "../src/token-risk/assess.ts";
import { pairLiquidityUsd, pairVolume24hUsd } from "../src/upstreams/dexscreener.ts";

export default defineFunction(tokenCheck, async (input, ctx) => {
  const chainId = servedChainId(input.chain_id, ctx);
  const { classifier, labels, prices } = analyticsOf(ctx);
  const token = getAddress(input.token);
  const methodology = methodologyFor("token-check");

  const blockNumber = await readChain("reading the latest block number", () => ctx.chain.getBlockNumber({ cacheTime: 0 }));
  const [code, classes] = await Promise.all([
    readChain("reading the token's code", () => ctx.chain.getCode({ address: token, blockNumber })),
    classifier.classify([token]),
  ]);
  const cls = classes.get(token) ?? "wallet";
  const base = {
    token,
    chain_id: chainId,
    block_number: Number(blockNumber),
    class: cls,
    labels: labels.names(token),
    not_checked: methodology.not_checked,
    methodology,
  };
  if (!code || code === "0x" || cls === "wallet" || cls === "zero_address") {
    return {
      ...base,
      is_contract: false,
      is_token: false,
      name: null,
      symbol: null,
      decimals: null,
      total_supply: null,
      is_proxy: false,
      proxy: null,
      dex: null,
      simulation: null,
    };
  }

  const [metadata, proxy] = await Promise.all([
    readTokenMetadata(ctx.chain, token, blockNumber),
    readProxyInfo(ctx.chain, token, code, blockNumber),
  ]);
  const isToken = metadata.decimals !== null;
  // Only tokens have DEX pairs; a failing DexScreener fails the call (502/503/504, not charged).
  const [deepest, simulation] = await Promise.all([
    isToken ? prices.deepestPair(token) : null,
    isToken ? assessToken(riskDeps(ctx), token, 100, blockNumber, { code }) : null,
  ]);
  const pair = deepest?.pair ?? null;
  const pairPrice = pair && deepest ? priceFromPairs(token, [pair], deepest.fetchedAt) : undefined;

  return {
    ...base,
    is_contract: true,
    is_token: isToken,
    name: metadata.name,
    symbol: metadata.symbol,
    decimals: metadata.decimals,
    total_supply: metadata.totalSupply === null ? null : formatUnits(metadata.totalSupply, metadata.decimals ?? 0),
    is_proxy: proxy.standard !== null,
    proxy:
      proxy.standard === null
        ? null
        : { standard: proxy.standard, implementation: proxy.implementation, admin: proxy.admin, beacon: proxy.beacon },
    dex:
      pair && deepest
        ? {
            liquidity_usd: pairLiquidityUsd(pair),
            volume_24h_usd: pairVolume24hUsd(pair),
            price_usd: pairPrice?.price_usd ?? null,
            pair_address: getAddress(pair.pairAddress),
            dex_id: pair.dexId,
            pair: `${pair.baseToken.symbol}/${pair.quoteToken.symbol}`,
            pairs_found: deepest.pairsFound,
            source: "dexscreener" as const,
          }
        : null,
    simulation,
  };
});
