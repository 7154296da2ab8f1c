/**
 * The pools of a token on the curated factories (content/token-risk.json): found by asking each
 * factory for its pair or pool against each counter token (v2 `getPair`, v3 `getPool` per fee
 * tier, Aerodrome `getPool` per stability or tick spacing), then read in one Multicall3 batch:
 * reserves or `slot0` and in-range `liquidity`, and both tokens' balances held by the pool. Every
 * read is pinned to one block.
 */
import { type Address, erc20Abi, getAddress, type PublicClient, parseAbi, zeroAddress } from "viem";
import { readMulticall } from "../chain/rpc-error.ts";
import type { Factory, FactoryKind, KnownToken } from "./venues.ts";

/** Uniswap v3's fee tiers (hundredths of a basis point). */
const V3_FEES = [100, 500, 3000, 10_000] as const;
/** Aerodrome Slipstream's tick spacings. */
const CL_TICK_SPACINGS = [1, 50, 100, 200, 2000] as const;

/** Each factory kind's lookup: its `getPool` overloads the others', so each kind gets an ABI of its own. */
const LOOKUP = {
  uniswap_v2: parseAbi(["function getPair(address, address) view returns (address)"]),
  uniswap_v3: parseAbi(["function getPool(address, address, uint24) view returns (address)"]),
  aerodrome_v2: parseAbi(["function getPool(address, address, bool) view returns (address)"]),
  aerodrome_cl: parseAbi(["function getPool(address, address, int24) view returns (address)"]),
} as const;

const factoryAbi = parseAbi(["function getFee(address, bool) view returns (uint256)"]);

/** The parts of pool interfaces read here (a v3 `slot0` is decoded up to its first word only). */
export const poolAbi = parseAbi([
  "function token0() view returns (address)",
  "function getReserves() view returns (uint112, uint112, uint32)",
  "function slot0() view returns (uint160)",
  "function fee() view returns (uint24)",
  "function liquidity() view returns (uint128)",
]);

/** One pool of the token against a counter token. */
export interface TokenPool {
  address: Address;
  factory: Factory;
  token: Address;
  counter: KnownToken;
  /** The swap fee in basis points (v3: the fee tier; Aerodrome: the factory's fee for the pool). */
  feeBps: number;
  /** v2-style pools: whether swaps go through `swap(amount0Out, amount1Out, to, data)` priced by reserves. */
  v2Style: boolean;
  /** Aerodrome's stable pools price on another curve: only their own `getAmountOut` prices them. */
  stable: boolean;
  /** v2-style reserves (smallest units), or null for a concentrated-liquidity pool. */
  reserves: { token: bigint; counter: bigint } | null;
  /** Concentrated-liquidity pools: the price. */
  sqrtPriceX96: bigint | null;
  /** Concentrated-liquidity pools: the liquidity L in range at the price (`liquidity()`); null when unread. */
  liquidity: bigint | null;
  /** The pool's balances of both tokens (smallest units). */
  balances: { token: bigint; counter: bigint };
  /** Whether `token` is the pool's token0. */
  tokenIs0: boolean;
}

/** The pools a factory may hold for one pair of tokens: the lookup's extra argument, and the fee and stability it fixes. */
const VARIANTS: Record<FactoryKind, (factory: Factory) => { args: readonly unknown[]; feeBps: number | null; stable: boolean }[]> = {
  uniswap_v2: (factory) => [{ args: [], feeBps: factory.fee_bps ?? null, stable: false }],
  uniswap_v3: () => V3_FEES.map((fee) => ({ args: [fee], feeBps: fee / 100, stable: false })),
  aerodrome_v2: () => [false, true].map((stable) => ({ args: [stable], feeBps: null, stable })),
  aerodrome_cl: () => CL_TICK_SPACINGS.map((spacing) => ({ args: [spacing], feeBps: null, stable: false })),
};

/** A pool a factory may hold, before it is asked: the lookup call that names it. */
interface Candidate extends Omit<KnownPool, "address"> {
  call: { address: Address; abi: (typeof LOOKUP)[FactoryKind]; functionName: "getPair" | "getPool"; args: readonly unknown[] };
}

function candidates(token: Address, factories: readonly Factory[], counters: readonly KnownToken[]): Candidate[] {
  const out: Candidate[] = [];
  for (const factory of factories) {
    for (const counter of counters) {
      if (counter.address === token) continue;
      const call = (extra: readonly unknown[]) => ({
        address: factory.address,
        abi: LOOKUP[factory.kind],
        functionName: factory.kind === "uniswap_v2" ? ("getPair" as const) : ("getPool" as const),
        args: [token, counter.address, ...extra],
      });
      for (const v of VARIANTS[factory.kind](factory))
        out.push({ factory, counter, call: call(v.args), feeBps: v.feeBps, stable: v.stable });
    }
  }
  return out;
}

/** Every pool of `token` against `counters` on `factories`, read at `blockNumber`. */
export async function findPools(
  chain: PublicClient,
  token: Address,
  factories: readonly Factory[],
  counters: readonly KnownToken[],
  blockNumber: bigint,
): Promise<TokenPool[]> {
  const found = candidates(getAddress(token), factories, counters);
  if (found.length === 0) return [];
  const addresses = await readMulticall("looking up the token's pools", () =>
    chain.multicall({ contracts: found.map((c) => c.call) as never[], allowFailure: true, blockNumber }),
  );
  const pools = found
    .map((c, i) => {
      const r = addresses[i] as { status: string; result?: unknown };
      return r.status === "success" && typeof r.result === "string" && r.result !== zeroAddress
        ? { address: getAddress(r.result), factory: c.factory, counter: c.counter, feeBps: c.feeBps, stable: c.stable }
        : null;
    })
    .filter((p): p is KnownPool => p !== null);
  return readPools(chain, getAddress(token), pools, blockNumber);
}

/** A pool whose address, factory and counter token are known (from a factory lookup or its creation log). */
export interface KnownPool {
  address: Address;
  factory: Factory;
  counter: KnownToken;
  /** The fee when the factory kind fixes it (v2: the factory's; v3: the tier); null: read from the pool. */
  feeBps: number | null;
  /** Aerodrome v2: a stable pool. */
  stable: boolean;
}

const READS_PER_POOL = 6;

/** One answer of a Multicall3 batch with failures allowed. */
type Answer = { status: string; result?: unknown };
type PoolAnswers = [Answer, Answer, Answer, Answer, Answer, Answer];

/** Read the state of `pools` of `token` at `blockNumber` in one Multicall3 batch; pools that do not answer are left out. */
export async function readPools(
  chain: PublicClient,
  token: Address,
  pools: readonly KnownPool[],
  blockNumber: bigint,
): Promise<TokenPool[]> {
  if (pools.length === 0) return [];
  const v2Style = (kind: FactoryKind) => kind === "uniswap_v2" || kind === "aerodrome_v2";
  const readsPoolFee = (p: KnownPool) => p.factory.kind === "aerodrome_cl" || (p.factory.kind === "uniswap_v3" && p.feeBps === null);
  const reads = pools.flatMap((p) => [
    { address: p.address, abi: poolAbi, functionName: "token0" },
    v2Style(p.factory.kind)
      ? { address: p.address, abi: poolAbi, functionName: "getReserves" }
      : { address: p.address, abi: poolAbi, functionName: "slot0" },
    p.factory.kind === "aerodrome_v2"
      ? { address: p.factory.address, abi: factoryAbi, functionName: "getFee", args: [p.address, p.stable] }
      : readsPoolFee(p)
        ? { address: p.address, abi: poolAbi, functionName: "fee" }
        : { address: p.address, abi: poolAbi, functionName: "token0" },
    { address: token, abi: erc20Abi, functionName: "balanceOf", args: [p.address] },
    { address: p.counter.address, abi: erc20Abi, functionName: "balanceOf", args: [p.address] },
    v2Style(p.factory.kind)
      ? { address: p.address, abi: poolAbi, functionName: "token0" }
      : { address: p.address, abi: poolAbi, functionName: "liquidity" },
  ]);
  const results = await readMulticall("reading the token's pools", () =>
    chain.multicall({ contracts: reads as never[], allowFailure: true, blockNumber }),
  );
  const out: TokenPool[] = [];
  pools.forEach((p, i) => {
    const answers = results.slice(i * READS_PER_POOL, (i + 1) * READS_PER_POOL) as unknown as PoolAnswers;
    const [token0, state, fee, tokenBalance, counterBalance, inRange] = answers;
    if (token0.status !== "success" || state.status !== "success") return;
    const tokenIs0 = getAddress(token0.result as string) === getAddress(token);
    const isV2 = v2Style(p.factory.kind);
    const reserves = isV2 ? (state.result as readonly [bigint, bigint, number]) : null;
    let feeBps = p.feeBps;
    // Aerodrome's getFee answers basis points; Slipstream's fee() hundredths of one, as Uniswap v3's.
    if (p.factory.kind === "aerodrome_v2" && fee.status === "success") feeBps = Number(fee.result as bigint);
    if (readsPoolFee(p) && fee.status === "success") feeBps = Number(fee.result as number) / 100;
    out.push({
      address: p.address,
      factory: p.factory,
      token: getAddress(token),
      counter: p.counter,
      feeBps: feeBps ?? 30,
      v2Style: isV2,
      stable: p.stable,
      reserves: reserves ? { token: tokenIs0 ? reserves[0] : reserves[1], counter: tokenIs0 ? reserves[1] : reserves[0] } : null,
      sqrtPriceX96: isV2 ? null : (state.result as bigint),
      liquidity: !isV2 && inRange.status === "success" ? (inRange.result as bigint) : null,
      balances: {
        token: tokenBalance.status === "success" ? (tokenBalance.result as bigint) : 0n,
        counter: counterBalance.status === "success" ? (counterBalance.result as bigint) : 0n,
      },
      tokenIs0,
    });
  });
  return out;
}

/**
 * The price of one whole `token` in whole counter tokens implied by `pool`: from the reserves of a
 * v2-style pool, from `sqrtPriceX96` of a concentrated-liquidity one (token1 per token0, raw).
 */
export function impliedPrice(pool: TokenPool, tokenDecimals: number): number | null {
  const scale = 10 ** (tokenDecimals - pool.counter.decimals);
  if (pool.reserves) {
    if (pool.reserves.token === 0n) return null;
    return (Number(pool.reserves.counter) / Number(pool.reserves.token)) * scale;
  }
  if (pool.sqrtPriceX96 === null || pool.sqrtPriceX96 === 0n) return null;
  // (sqrtPriceX96 / 2^96)^2 in 96-bit fixed point keeps the precision a float would lose.
  const priceX96 = (pool.sqrtPriceX96 * pool.sqrtPriceX96) >> 96n;
  const raw1per0 = Number(priceX96) / 2 ** 96;
  const rawCounterPerToken = pool.tokenIs0 ? raw1per0 : 1 / raw1per0;
  return rawCounterPerToken * scale;
}

/**
 * The counter-token depth of `pool` in smallest units, the side its liquidity in USD is twice of.
 * v2-style: the counter reserve. Concentrated liquidity: the smaller of the pool's counter balance
 * and the virtual counter reserve of its in-range liquidity (L x sqrtP for token1, L / sqrtP for
 * token0), i.e. the reserve a v2 pair would need to quote the same price impact for a small trade,
 * never more than the pool holds. Tokens parked in positions out of range count for nothing, so a
 * v3 pool ranks against a v2 pair by the depth a trade at the current price meets; for one
 * full-range position the two measures coincide.
 */
export function counterDepth(pool: TokenPool): bigint {
  if (pool.reserves) return pool.reserves.counter;
  if (pool.liquidity === null || pool.sqrtPriceX96 === null || pool.sqrtPriceX96 === 0n) return pool.balances.counter;
  const virtual = pool.tokenIs0 ? (pool.liquidity * pool.sqrtPriceX96) >> 96n : (pool.liquidity << 96n) / pool.sqrtPriceX96;
  return virtual < pool.balances.counter ? virtual : pool.balances.counter;
}
