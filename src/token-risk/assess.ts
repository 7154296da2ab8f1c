/**
 * The honeypot check of one token: find its pools on the curated factories, price them, simulate
 * a buy, a transfer and a sell through the deepest one of any kind (v2-style or concentrated
 * liquidity), read the owner's privileges and
 * the declared limits, and decide a verdict from all of it with every reason stated.
 */
import { type Address, erc20Abi, formatUnits, getAddress, type Hex, type PublicClient, parseUnits } from "viem";
import { type HoneypotSimulation, RISK_THRESHOLDS, type RiskVerdict } from "../../spec/token-risk-schemas.ts";
import type { PriceSource } from "../analytics/price-source.ts";
import { analyticsOf } from "../analytics/services.ts";
import { readChain, readOrNull } from "../chain/rpc-error.ts";
import type { FunctionContext } from "../context.ts";
import { counterDepth, findPools, type TokenPool } from "./pools.ts";
import { readLimits, readOwnerPrivileges } from "./privileges.ts";
import { simulateTrade, type TradeSimulation, taxPct } from "./simulate.ts";
import { type KnownToken, type Venues, venuesFor } from "./venues.ts";

/** What the check reads with. */
export interface AssessDeps {
  chain: PublicClient;
  venues: Venues;
  prices: Pick<PriceSource, "price">;
}

/** What the token-risk routes read with: the call's chain, the venues of its mode and the shared price source. */
export function riskDeps(ctx: FunctionContext): AssessDeps {
  return { chain: ctx.chain, venues: venuesFor(ctx.config.mode === "local" ? "local" : "base"), prices: analyticsOf(ctx).prices };
}

/** A pool with the USD value of its quote side. */
export interface PricedPool extends TokenPool {
  /** Twice the counter token's depth ({@link counterDepth}) in USD; null when the counter token has no USD price. */
  liquidityUsd: number | null;
  counterPriceUsd: number | null;
}

/** USD prices of the counter tokens of `pools` (a stablecoin without a market price counts at its peg). */
export async function pricePools(pools: readonly TokenPool[], prices: AssessDeps["prices"]): Promise<PricedPool[]> {
  const counters = new Map<Address, KnownToken>(pools.map((p) => [p.counter.address, p.counter]));
  const priced = new Map<Address, number | null>();
  await Promise.all(
    [...counters.values()].map(async (counter) => {
      if (!counter.quote) {
        priced.set(counter.address, counter.peg_usd);
        return;
      }
      priced.set(counter.address, Number((await prices.price(counter.address)).price_usd));
    }),
  );
  return pools.map((p) => {
    const price = priced.get(p.counter.address) ?? null;
    const side = counterDepth(p);
    return {
      ...p,
      counterPriceUsd: price,
      liquidityUsd: price === null ? null : Number(((Number(side) / 10 ** p.counter.decimals) * price * 2).toFixed(2)),
    };
  });
}

/**
 * The deepest pool a buy and a sell can be simulated through, whatever its kind: quoted in a
 * priced token and holding some of the token (v2-style: a token reserve; concentrated liquidity:
 * a price and liquidity in range), ranked by `liquidityUsd`, which measures both kinds by the
 * depth a trade at the current price meets ({@link counterDepth}). A tie keeps the order found.
 */
export function deepestSimulable(pools: readonly PricedPool[]): PricedPool | null {
  const simulable = pools.filter(
    (p) =>
      p.counter.quote &&
      p.liquidityUsd !== null &&
      (p.reserves
        ? p.reserves.token > 0n
        : p.sqrtPriceX96 !== null && p.sqrtPriceX96 > 0n && p.liquidity !== null && p.liquidity > 0n && p.balances.token > 0n),
  );
  simulable.sort((a, b) => (b.liquidityUsd ?? 0) - (a.liquidityUsd ?? 0));
  return simulable[0] ?? null;
}

/** The caution when the token has no pool to trade through. */
export const NO_POOL_REASON = "no pool of the token with liquidity on the curated factories to simulate a buy and a sell through";

/** The verdict and its reasons, from every finding; the worst finding decides. */
export function decideVerdict(a: Omit<HoneypotSimulation, "verdict" | "reasons">): { verdict: RiskVerdict; reasons: string[] } {
  const honeypot: string[] = [];
  const highTax: string[] = [];
  const caution: string[] = [];
  const T = RISK_THRESHOLDS;
  if (!a.pool) caution.push(NO_POOL_REASON);
  if (a.can_buy === false) caution.push(`a buy reverts: ${a.buy_revert_reason}`);
  if (a.can_sell === false) honeypot.push(`a sell reverts: ${a.sell_revert_reason}`);
  if (a.can_transfer === false) honeypot.push(`a transfer between two fresh addresses reverts: ${a.transfer_revert_reason}`);
  const taxes: [string, number | null][] = [
    ["buy", a.buy_tax_pct],
    ["sell", a.sell_tax_pct],
    ["transfer", a.transfer_tax_pct],
  ];
  for (const [what, tax] of taxes) {
    if (tax === null) continue;
    if (what === "sell" && tax >= T.honeypotSellTaxPct) honeypot.push(`the sell tax is ${tax}%: a sale keeps at least half`);
    else if (tax >= T.highTaxPct) highTax.push(`the ${what} tax is ${tax}%`);
    else if (tax > T.cautionTaxPct) caution.push(`the ${what} tax is ${tax}%`);
  }
  const p = a.owner_privileges;
  if (p.privileges.length > 0 && !p.renounced) {
    const kinds = [...new Set(p.privileges.map((x) => x.privilege.replace("_", " ")))].join(", ");
    const who = p.owner ? `the owner ${p.owner}` : "an account the token does not name (no owner() or getOwner())";
    caution.push(`${who} can ${kinds} (${p.privileges.map((x) => x.signature).join(", ")})`);
  }
  if (p.proxy) caution.push(`the token is an upgradeable proxy (${p.proxy.standard}): its code can be replaced`);
  if (a.limits.hit) caution.push("the simulated buy is above a declared transaction or wallet limit");
  if (a.pool && a.pool.liquidity_usd < T.minLiquidityUsd) caution.push(`the deepest pool holds only ${a.pool.liquidity_usd} USD`);
  const verdict: RiskVerdict = honeypot.length > 0 ? "honeypot" : highTax.length > 0 ? "high_tax" : caution.length > 0 ? "caution" : "ok";
  const reasons = [...honeypot, ...highTax, ...caution];
  if (reasons.length === 0) {
    reasons.push("bought, moved between two fresh addresses and sold with no tax beyond the pool fee; no owner privileges found");
  }
  return { verdict, reasons };
}

/** Check `token` at `blockNumber` with a simulated buy worth `amountUsd`. */
export async function assessToken(
  deps: AssessDeps,
  token: Address,
  amountUsd: number,
  blockNumber: bigint,
  options: { code?: Hex } = {},
): Promise<HoneypotSimulation> {
  const address = getAddress(token);
  const code = options.code ?? (await readChain("reading the token's code", () => deps.chain.getCode({ address, blockNumber }))) ?? "0x";
  const quotes = deps.venues.tokens.filter((t) => t.quote);
  const pools = await pricePools(await findPools(deps.chain, address, deps.venues.factories, quotes, blockNumber), deps.prices);
  const pool = deepestSimulable(pools);
  const [privileges, limits, decimals] = await Promise.all([
    readOwnerPrivileges(deps.chain, address, code, blockNumber),
    readLimits(deps.chain, address, blockNumber),
    // A token that does not answer decimals() gets no limits in tokens (its amounts cannot be written).
    readOrNull("reading the token's decimals", () =>
      deps.chain.readContract({ address, abi: erc20Abi, functionName: "decimals", blockNumber }).then(Number),
    ),
  ]);

  let sim: TradeSimulation | null = null;
  let unsupported: string | null = null;
  let amountIn: HoneypotSimulation["amount_in"] = null;
  if (pool?.counterPriceUsd) {
    const wanted = parseUnits((amountUsd / pool.counterPriceUsd).toFixed(pool.counter.decimals), pool.counter.decimals);
    const cap = (counterDepth(pool) * BigInt(Math.round(RISK_THRESHOLDS.maxShareOfReserve * 10_000))) / 10_000n;
    const quoteIn = wanted > cap ? cap : wanted;
    amountIn = {
      quote_symbol: pool.counter.symbol,
      amount: formatUnits(quoteIn, pool.counter.decimals),
      usd: Number((Number(formatUnits(quoteIn, pool.counter.decimals)) * pool.counterPriceUsd).toFixed(2)),
      capped: wanted > cap,
    };
    if (quoteIn > 0n) {
      const result = await simulateTrade(deps.chain, pool, quoteIn, blockNumber);
      if ("unsupported" in result) unsupported = result.unsupported;
      else sim = result;
    }
  }
  const format = (v: bigint | null) => (v === null || decimals === null ? null : formatUnits(v, decimals));
  const partial: Omit<HoneypotSimulation, "verdict" | "reasons"> = {
    token: address,
    pool: pool
      ? {
          address: pool.address,
          dex: pool.factory.name,
          kind: pool.factory.kind,
          quote_symbol: pool.counter.symbol,
          quote: pool.counter.address,
          fee_bps: pool.feeBps,
          liquidity_usd: pool.liquidityUsd ?? 0,
        }
      : null,
    pools_found: pools.length,
    amount_in: amountIn,
    can_buy: sim ? sim.buyOk : null,
    can_sell: sim ? sim.sellOk : null,
    can_transfer: sim ? sim.transferOk : null,
    buy_tax_pct: sim?.buyOk ? taxPct(sim.buyExpected, sim.bought) : null,
    sell_tax_pct: sim?.sellOk ? taxPct(sim.sellSent, sim.sellArrived) : null,
    transfer_tax_pct: sim?.transferOk ? taxPct(sim.transferSent, sim.transferReceived) : null,
    buy_revert_reason: sim?.buyRevertReason ?? null,
    sell_revert_reason: sim?.sellRevertReason ?? null,
    transfer_revert_reason: sim?.transferRevertReason ?? null,
    limits: {
      max_transaction: format(limits.maxTransaction),
      max_wallet: format(limits.maxWallet),
      hit:
        sim !== null &&
        ((limits.maxTransaction !== null && sim.buyExpected > limits.maxTransaction) ||
          (limits.maxWallet !== null && sim.buyExpected > limits.maxWallet)),
    },
    owner_privileges: privileges,
    simulated_at_block: Number(blockNumber),
  };
  const decided = decideVerdict(partial);
  if (unsupported) {
    // Nothing was traded, so "no tax found" would be a claim the check did not make.
    const reasons = decided.verdict === "ok" ? [] : decided.reasons;
    return {
      ...partial,
      verdict: decided.verdict === "ok" ? "caution" : decided.verdict,
      reasons: [...reasons, `not simulated: ${unsupported}`],
    };
  }
  return { ...partial, ...decided };
}
