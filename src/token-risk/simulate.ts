/**
 * The honeypot simulation: a buy, a transfer between two fresh addresses and a sell of a token
 * through one pool, run by `eth_call` with state overrides and never mined. The simulator's code
 * (src/local/contracts/TokenRiskSimulator.sol) is placed at a random fresh address, which is funded with
 * the pool's quote token by overriding the quote token's balance slot (found once per token by
 * probing candidate slots in one call). A v2-style pool is paid first and then asked for the
 * output its formula (or, on Aerodrome, its own `getAmountOut`) gives; a concentrated-liquidity
 * pool (Uniswap v3, Slipstream) is called by `swap` and paid from `uniswapV3SwapCallback` exactly
 * what it asks, as a router pays it, and its swap's return values are its own statement of what
 * it sent. Taxes are measured on the token side: what the buyer received against what the pool
 * sent, what arrived at the pool or the fresh address against what was sent.
 */
import { randomBytes } from "node:crypto";
import {
  type Address,
  type DecodeFunctionResultReturnType,
  decodeErrorResult,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  keccak256,
  numberToHex,
  type PublicClient,
  parseAbi,
  toHex,
} from "viem";
import { readChain } from "../chain/rpc-error.ts";
import type { TokenPool } from "./pools.ts";
import { simulatorCode } from "./simulator-code.ts";

/** The simulator's entry point and its result (src/local/contracts/TokenRiskSimulator.sol). */
export const simulatorAbi = parseAbi([
  "struct Result { bool buyOk; bytes buyError; uint256 buyExpected; uint256 bought; bool transferOk; bytes transferError; uint256 transferSent; uint256 transferReceived; bool sellOk; bytes sellError; uint256 sellSent; uint256 sellArrived; uint256 sellExpected; uint256 sellReceived; }",
  "function simulate(address pool, address token, address quote, uint256 quoteIn, address fresh, uint256 feeBps, uint8 mode) returns (Result r)",
]);

/**
 * What one simulation found (amounts in smallest units): the simulator's result, its revert data
 * read as reasons, and the transfer and the sell unknown (null) when no buy reached the buyer.
 */
export type TradeSimulation = Omit<
  DecodeFunctionResultReturnType<typeof simulatorAbi, "simulate">,
  "buyError" | "transferError" | "sellError" | "transferOk" | "sellOk"
> & {
  buyRevertReason: string | null;
  transferOk: boolean | null;
  transferRevertReason: string | null;
  sellOk: boolean | null;
  sellRevertReason: string | null;
};

/** The simulator's own error (TokenRiskSimulator.ShortPaid): a concentrated-liquidity pool was paid less than it asked. */
const simulatorErrors = parseAbi(["error ShortPaid(uint256 owed, uint256 arrived)"]);

/** How the simulator trades through a pool (TokenRiskSimulator's MODE_ constants). */
export function simulationMode(pool: Pick<TokenPool, "v2Style" | "factory">): 0 | 1 | 2 {
  if (!pool.v2Style) return 2;
  return pool.factory.kind === "aerodrome_v2" ? 1 : 0;
}

/** The text of revert data: an `Error(string)` reason, a panic code, a custom error's selector, or none. */
export function revertReason(data: Hex): string {
  if (data === "0x" || data.length < 10) return "reverted without a reason";
  try {
    const short = decodeErrorResult({ abi: simulatorErrors, data });
    const [owed, arrived] = short.args;
    const kept = taxPct(owed, arrived);
    return `the pool received ${arrived} of the ${owed} it asked for (${kept}% kept by the token on the way in); a concentrated-liquidity pool refuses a short payment ("IIA"), so no router can sell it there`;
  } catch {
    // Not the simulator's own error.
  }
  try {
    const decoded = decodeErrorResult({ data });
    if (decoded.errorName === "Error") return String(decoded.args?.[0]);
    if (decoded.errorName === "Panic") return `panic 0x${BigInt((decoded.args?.[0] as bigint | undefined) ?? 0n).toString(16)}`;
  } catch {
    // Not a standard error: name its selector.
  }
  return `custom error ${data.slice(0, 10)}`;
}

/** A fresh address nobody has used: 20 random bytes. */
export function freshAddress(): Address {
  return getAddress(toHex(randomBytes(20)));
}

const SLOT_CANDIDATES = 32;
const slotCache = new Map<Address, { slot: number; layout: "solidity" | "vyper" } | null>();

/** The storage key of `holder`'s balance in mapping slot `slot`. */
function balanceKey(holder: Address, slot: number, layout: "solidity" | "vyper"): Hex {
  return layout === "solidity"
    ? keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [holder, BigInt(slot)]))
    : keccak256(encodeAbiParameters([{ type: "uint256" }, { type: "address" }], [BigInt(slot), holder]));
}

/**
 * Where `token` keeps balances: every candidate key of a probe address is overridden with a
 * distinct value in one call, and the balance the token reports names the slot. Null when none
 * of the candidates is it (the token keeps balances some other way).
 */
export async function findBalanceSlot(
  chain: PublicClient,
  token: Address,
  blockNumber: bigint,
): Promise<{ slot: number; layout: "solidity" | "vyper" } | null> {
  const cached = slotCache.get(token);
  if (cached !== undefined) return cached;
  const probe = freshAddress();
  const stateDiff: { slot: Hex; value: Hex }[] = [];
  for (let slot = 0; slot < SLOT_CANDIDATES; slot++) {
    for (const [k, layout] of (["solidity", "vyper"] as const).entries()) {
      stateDiff.push({ slot: balanceKey(probe, slot, layout), value: numberToHex(BigInt(slot * 2 + k + 1) << 64n, { size: 32 }) });
    }
  }
  const { data } = await readChain("probing the quote token's balance slot", () =>
    chain.call({
      to: token,
      data: encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [probe] }),
      blockNumber,
      stateOverride: [{ address: token, stateDiff }],
    }),
  );
  const value = data ? (decodeFunctionResult({ abi: erc20Abi, functionName: "balanceOf", data }) as bigint) : 0n;
  const index = Number(value >> 64n) - 1;
  const found =
    value > 0n && value % (1n << 64n) === 0n && index >= 0 && index < SLOT_CANDIDATES * 2
      ? { slot: Math.floor(index / 2), layout: index % 2 === 0 ? ("solidity" as const) : ("vyper" as const) }
      : null;
  slotCache.set(token, found);
  return found;
}

/**
 * Simulate buying with `quoteIn` of the pool's counter token, sending half of what was bought to
 * a fresh address and selling the rest, at `blockNumber`. Throws a 5xx `UpstreamError` only when
 * the node fails; a token that reverts is an answer.
 */
export async function simulateTrade(
  chain: PublicClient,
  pool: TokenPool,
  quoteIn: bigint,
  blockNumber: bigint,
): Promise<TradeSimulation | { unsupported: string }> {
  const slot = await findBalanceSlot(chain, pool.counter.address, blockNumber);
  if (!slot) return { unsupported: `the balance storage of ${pool.counter.symbol} could not be found, so no buyer could be funded` };
  const simulator = freshAddress();
  const fresh = freshAddress();
  const { data } = await readChain("simulating a buy and a sell", () =>
    chain.call({
      to: simulator,
      data: encodeFunctionData({
        abi: simulatorAbi,
        functionName: "simulate",
        // The fee feeds only the v2 formula; a concentrated pool's may be a fraction of a basis point.
        args: [pool.address, pool.token, pool.counter.address, quoteIn, fresh, BigInt(Math.round(pool.feeBps)), simulationMode(pool)],
      }),
      blockNumber,
      gas: 30_000_000n,
      stateOverride: [
        { address: simulator, code: simulatorCode() },
        {
          address: pool.counter.address,
          stateDiff: [{ slot: balanceKey(simulator, slot.slot, slot.layout), value: numberToHex(quoteIn, { size: 32 }) }],
        },
      ],
    }),
  );
  const r = decodeFunctionResult({ abi: simulatorAbi, functionName: "simulate", data: data ?? "0x" });
  const reached = r.buyOk && r.bought > 0n;
  const { buyError, transferError, sellError, ...amounts } = r;
  return {
    ...amounts,
    buyRevertReason: r.buyOk ? null : revertReason(buyError),
    transferOk: reached ? r.transferOk : null,
    transferRevertReason: reached && !r.transferOk ? revertReason(transferError) : null,
    sellOk: reached ? r.sellOk : null,
    sellRevertReason: reached && !r.sellOk ? revertReason(sellError) : null,
  };
}

/** `1 - got / sent` in percent, exactly to four decimals then rounded to two; null when nothing was sent. */
export function taxPct(sent: bigint, got: bigint): number | null {
  if (sent <= 0n) return null;
  const lost = sent > got ? sent - got : 0n;
  const pctE4 = (lost * 1_000_000n + sent / 2n) / sent; // the percentage times 10^4
  return Math.round(Number(pctE4) / 100) / 100;
}
