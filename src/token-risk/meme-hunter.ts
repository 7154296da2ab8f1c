/**
 * The new-pair hunter: the pairs and pools the curated factories created in a block window, for
 * tokens outside the curated list, each with its liquidity, trading, holder concentration, pulled
 * liquidity, honeypot verdict and a risk score whose inputs and weights are stated.
 */

import type { Static } from "@sinclair/typebox";
import pLimit from "p-limit";
import { type Address, erc20Abi, getAddress, type Hex, parseAbi, parseEventLogs, toEventSelector } from "viem";
import type { memeHunter } from "../../spec/routes/base-tools.ts";
import type { RiskVerdict } from "../../spec/token-risk-schemas.ts";
import type { TransferScanner } from "../chain/log-scanner.ts";
import { readChain, readOrNull } from "../chain/rpc-error.ts";
import { type AssessDeps, assessToken, type PricedPool, pricePools } from "./assess.ts";
import { type KnownPool, readPools } from "./pools.ts";
import type { FactoryKind } from "./venues.ts";

// The factories' creation events and the pools' trading and liquidity events, as Uniswap v2 and v3,
// Aerodrome and Slipstream declare them (Aerodrome's Mint is v2's; Slipstream's pool events are v3's).
const CREATION_EVENTS = parseAbi([
  "event PairCreated(address indexed token0, address indexed token1, address pair, uint256 index)",
  "event PoolCreated(address indexed token0, address indexed token1, uint24 indexed fee, int24 tickSpacing, address pool)",
  "event PoolCreated(address indexed token0, address indexed token1, bool indexed stable, address pool, uint256 index)",
  "event PoolCreated(address indexed token0, address indexed token1, int24 indexed tickSpacing, address pool)",
]);
const POOL_EVENTS = parseAbi([
  "event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)",
  "event Swap(address indexed sender, address indexed to, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out)",
  "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)",
  "event Mint(address indexed sender, uint256 amount0, uint256 amount1)",
  "event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)",
  "event Burn(address indexed sender, uint256 amount0, uint256 amount1, address indexed to)",
  "event Burn(address indexed sender, address indexed to, uint256 amount0, uint256 amount1)",
  "event Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)",
]);
/** Their topics, as the log scanner asks for them (two Swap layouts share a selector). */
const POOL_SELECTORS = [...new Set(POOL_EVENTS.map((e) => toEventSelector(e)))];
/** The creation event each kind of factory emits. */
const CREATED_BY: Record<FactoryKind, Hex> = {
  uniswap_v2: toEventSelector(CREATION_EVENTS[0]),
  uniswap_v3: toEventSelector(CREATION_EVENTS[1]),
  aerodrome_v2: toEventSelector(CREATION_EVENTS[2]),
  aerodrome_cl: toEventSelector(CREATION_EVENTS[3]),
};

/** Points of each verdict in the risk score. */
export const VERDICT_POINTS: Record<RiskVerdict, number> = { honeypot: 100, high_tax: 75, caution: 40, ok: 0 };
/** Weights of the risk score's inputs (they sum to 1). */
export const RISK_WEIGHTS = { verdict: 0.4, thin_liquidity: 0.2, top10_share: 0.2, liquidity_removed: 0.2 } as const;
/** Liquidity at or above this scores 0 on thin_liquidity; 1 USD scores 100 (log scale between). */
export const DEEP_LIQUIDITY_USD = 1_000_000;
/** A pair whose withdrawn quote side is at least this share of what was added has had its liquidity pulled. */
export const REMOVED_THRESHOLD_PCT = 50;

/** The hunt's answer, without the scoring and the methodology. */
export type HuntResult = Omit<Static<typeof memeHunter.response>, "scoring" | "methodology">;
type HuntedPair = HuntResult["pairs"][number];

interface Created {
  pool: KnownPool;
  token: Address;
  block: number;
}

/** Hunt the new pairs of the last `blocks` blocks. */
export async function huntNewPairs(
  deps: AssessDeps & { scanner: TransferScanner },
  input: { blocks: number; minLiquidityUsd: number; limit: number },
): Promise<HuntResult> {
  const { chain, venues } = deps;
  // Per-pair reads, a few at a time: each is a batch of calls to the node.
  const limit = pLimit(4);
  const head = await readChain("reading the latest block", () => chain.getBlock({ blockTag: "latest" }));
  const toBlock = Number(head.number);
  const fromBlock = Math.max(0, toBlock - input.blocks + 1);
  const blockNumber = BigInt(toBlock);

  const factoryByAddress = new Map(venues.factories.map((f) => [f.address, f]));
  const creations = await deps.scanner.logs({
    addresses: venues.factories.map((f) => f.address),
    events: Object.values(CREATED_BY),
    fromBlock,
    toBlock,
  });
  const created: Created[] = [];
  for (const log of parseEventLogs({ abi: CREATION_EVENTS, logs: creations as never[] })) {
    const factory = factoryByAddress.get(getAddress(log.address));
    if (!factory || log.topics[0] !== CREATED_BY[factory.kind]) continue;
    const { token0, token1 } = log.args;
    const known0 = venues.token(token0);
    const known1 = venues.token(token1);
    // A new-token pair: exactly one side is a curated quote token and the other is not curated at all.
    const counter = known0?.quote && !known1 ? known0 : known1?.quote && !known0 ? known1 : null;
    if (!counter) continue;
    created.push({
      pool: {
        address: "pair" in log.args ? log.args.pair : log.args.pool,
        factory,
        counter,
        feeBps: factory.kind === "uniswap_v2" ? (factory.fee_bps ?? null) : null,
        stable: "stable" in log.args && log.args.stable,
      },
      token: counter === known0 ? token1 : token0,
      block: Number(log.blockNumber),
    });
  }

  // State and liquidity of each new pair at the head.
  const states = (await limit.map(created, (c) => readPools(chain, c.token, [c.pool], blockNumber))).flat();
  const priced = await pricePools(states, deps.prices);
  const byPool = new Map<Address, PricedPool>(priced.map((p) => [p.address, p]));
  const liquid = created.filter(
    (c) => (byPool.get(c.pool.address)?.liquidityUsd ?? 0) >= input.minLiquidityUsd && byPool.has(c.pool.address),
  );

  // Swaps, mints and burns of the liquid pairs in the window.
  const poolLogs = await deps.scanner.logs({
    addresses: liquid.map((c) => c.pool.address),
    events: POOL_SELECTORS,
    fromBlock,
    toBlock,
  });
  const activity = new Map<Address, { buys: number; sells: number; buyers: Set<Address>; addedQuote: bigint; removedQuote: bigint }>();
  for (const c of liquid) activity.set(c.pool.address, { buys: 0, sells: 0, buyers: new Set(), addedQuote: 0n, removedQuote: 0n });
  for (const log of parseEventLogs({ abi: POOL_EVENTS, logs: poolLogs as never[] })) {
    const address = getAddress(log.address);
    const pool = byPool.get(address);
    const a = activity.get(address);
    if (!pool || !a) continue;
    const tokenIs0 = pool.tokenIs0;
    const pick = (v0: bigint, v1: bigint) => ({ token: tokenIs0 ? v0 : v1, quote: tokenIs0 ? v1 : v0 });
    const swap = (bought: boolean, buyer: Address) => {
      if (bought) {
        a.buys++;
        a.buyers.add(buyer);
      } else a.sells++;
    };
    const { args } = log;
    // v2 and Aerodrome: a buy takes the token out of the pair; v3 and Slipstream: the pool's token delta is negative.
    if ("amount0Out" in args) swap(pick(args.amount0Out, args.amount1Out).token > 0n, args.to);
    else if ("recipient" in args) swap(pick(args.amount0, args.amount1).token < 0n, args.recipient);
    else if (log.eventName === "Mint") a.addedQuote += pick(args.amount0, args.amount1).quote;
    else a.removedQuote += pick(args.amount0, args.amount1).quote;
  }

  // Block times of the creation blocks, for the ages.
  const times = new Map<number, number>();
  await limit.map(new Set(liquid.map((c) => c.block)), async (block) => {
    const b = await readChain("reading a creation block", () => chain.getBlock({ blockNumber: BigInt(block) }));
    times.set(block, Number(b.timestamp));
  });

  const pairs = await limit.map(liquid, async (c): Promise<HuntedPair> => {
    const pool = byPool.get(c.pool.address) as PricedPool;
    const a = activity.get(c.pool.address) as NonNullable<ReturnType<typeof activity.get>>;
    const [transfers, check, symbol] = await Promise.all([
      deps.scanner.transfers({ token: c.token, fromBlock, toBlock }, 0),
      assessToken(deps, c.token, 100, blockNumber),
      readOrNull("reading a token's symbol", () =>
        chain.readContract({ address: c.token, abi: erc20Abi, functionName: "symbol", blockNumber }),
      ),
    ]);
    const pools = new Set(created.filter((x) => x.token === c.token).map((x) => x.pool.address));
    const received = new Map<Address, bigint>();
    let total = 0n;
    for (const t of transfers.logs) {
      if (pools.has(t.to) || t.to === "0x0000000000000000000000000000000000000000") continue;
      received.set(t.to, (received.get(t.to) ?? 0n) + t.value);
      total += t.value;
    }
    const top10 = [...received.values()]
      .sort((x, y) => (x > y ? -1 : x < y ? 1 : 0))
      .slice(0, 10)
      .reduce((sum, v) => sum + v, 0n);
    const top10Share = total > 0n ? Number((top10 * 10_000n) / total) / 100 : null;
    const removedPct = a.addedQuote > 0n ? Math.min(100, Number((a.removedQuote * 10_000n) / a.addedQuote) / 100) : 0;
    const liquidity = pool.liquidityUsd ?? 0;
    const thin = liquidity <= 1 ? 100 : Math.max(0, Math.min(100, 100 * (1 - Math.log10(liquidity) / Math.log10(DEEP_LIQUIDITY_USD))));
    const scaled = {
      verdict: VERDICT_POINTS[check.verdict],
      thin_liquidity: Number(thin.toFixed(2)),
      top10_share: top10Share ?? 100,
      liquidity_removed: removedPct,
    };
    const values = { verdict: check.verdict, thin_liquidity: liquidity, top10_share: top10Share ?? 100, liquidity_removed: removedPct };
    const inputs: HuntedPair["risk_inputs"] = (Object.keys(RISK_WEIGHTS) as (keyof typeof RISK_WEIGHTS)[]).map((name) => ({
      name,
      value: values[name],
      scaled: scaled[name],
      weight: RISK_WEIGHTS[name],
      contribution: Number((scaled[name] * RISK_WEIGHTS[name]).toFixed(2)),
    }));
    return {
      pair: c.pool.address,
      token: c.token,
      symbol,
      dex: c.pool.factory.name,
      quote_symbol: c.pool.counter.symbol,
      created_block: c.block,
      age_minutes: Math.max(0, Math.floor((Number(head.timestamp) - (times.get(c.block) ?? Number(head.timestamp))) / 60)),
      liquidity_usd: liquidity,
      buys: a.buys,
      sells: a.sells,
      unique_buyers: a.buyers.size,
      top10_share_pct: top10Share,
      liquidity_removed: removedPct >= REMOVED_THRESHOLD_PCT,
      liquidity_removed_pct: removedPct,
      verdict: check.verdict,
      verdict_reasons: check.reasons,
      risk_score: Number(inputs.reduce((sum, i) => sum + i.contribution, 0).toFixed(1)),
      risk_inputs: inputs,
    };
  });
  pairs.sort((x, y) => x.risk_score - y.risk_score || y.liquidity_usd - x.liquidity_usd || x.created_block - y.created_block);
  return {
    from_block: fromBlock,
    to_block: toBlock,
    blocks_scanned: toBlock - fromBlock + 1,
    factories_scanned: venues.factories.length,
    pairs_created: creations.length,
    new_token_pairs: created.length,
    above_min_liquidity: liquid.length,
    pairs: pairs.slice(0, input.limit),
  };
}
