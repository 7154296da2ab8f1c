/**
 * Exact USD arithmetic on token amounts, on bignumber.js. Prices arrive as decimal strings
 * ("1.0001") and amounts as integers of the token's smallest unit, so thresholds are compared
 * exactly: a transfer of 99,990.01 USDC at 1.0001 is 99,999.999001 USD, below 100,000, with
 * no floating-point doubt about which side of the line it falls.
 */
import { BigNumber } from "bignumber.js";

// Sums, products and decimal shifts are exact; a division (a price derived from a pair's ratio) is cut after 40
// decimal places, never rounded there, so rounding it to significant figures afterwards rounds the true quotient.
const Exact = BigNumber.clone({ DECIMAL_PLACES: 40, ROUNDING_MODE: BigNumber.ROUND_DOWN });

/** A decimal number held exactly; `toFixed()` writes it without exponent and without trailing zeros. */
export type ExactDecimal = BigNumber;

/** Parse a decimal string or a JS number (plain or exponent notation) exactly. */
export function parseDecimal(value: string | number | bigint): ExactDecimal {
  const parsed = new Exact(typeof value === "string" ? value.trim() : value);
  if (!parsed.isFinite()) throw new Error(`not a decimal number: "${value}"`);
  return parsed;
}

/** `value` rounded half-up (away from zero) to `digits` decimals, as a number: the whole count of 10^-digits, divided once. */
export function rounded(value: ExactDecimal, digits: number): number {
  return Number(value.decimalPlaces(digits, BigNumber.ROUND_HALF_UP).shiftedBy(digits).toFixed()) / 10 ** digits;
}

/** The USD value of `amount` smallest units of a token with `decimals`, at `price` USD, exactly. */
export function usdOf(amount: bigint, decimals: number, price: ExactDecimal): ExactDecimal {
  return parseDecimal(amount).shiftedBy(-decimals).times(price);
}

/**
 * The fewest smallest units of a token with `decimals`, at `price` USD, worth at least `minUsd`
 * (null: no amount is, at a price of 0). A scan works it out once and compares each transfer's
 * integer amount with it, instead of pricing every transfer.
 */
export function smallestWorth(minUsd: number, decimals: number, price: ExactDecimal): bigint | null {
  const needed = parseDecimal(minUsd).shiftedBy(decimals);
  if (needed.lte(0)) return 0n;
  if (price.lte(0)) return null;
  // needed / price rounded up to a whole unit, both scaled to integers by the longer of their fractions.
  const scale = Math.max(needed.decimalPlaces() ?? 0, price.decimalPlaces() ?? 0);
  const n = BigInt(needed.shiftedBy(scale).toFixed());
  const p = BigInt(price.shiftedBy(scale).toFixed());
  return (n + p - 1n) / p;
}

/** The USD value of `amount` smallest units at `price`, rounded half-up to `digits` decimals, as a number. */
export function usdValue(amount: bigint, decimals: number, price: ExactDecimal, digits = 2): number {
  return rounded(usdOf(amount, decimals, price), digits);
}

/** `a / b` as a decimal string with `digits` significant figures (for prices derived from a pair's ratio). */
export function divideDecimals(a: ExactDecimal, b: ExactDecimal, digits = 12): string {
  if (b.isZero()) throw new Error("division by zero");
  return a.div(b).precision(digits, BigNumber.ROUND_HALF_UP).toFixed();
}

/** `decimal x multiplier x 10^shift`, exactly, as a decimal string. */
export function exactTimes(decimal: string, multiplier: bigint, shift: number): string {
  return parseDecimal(decimal).times(multiplier).shiftedBy(shift).toFixed();
}
