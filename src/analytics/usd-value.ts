/**
 * Exact USD arithmetic on token amounts. Prices arrive as decimal strings ("1.0001") and
 * amounts as integers of the token's smallest unit, so thresholds are compared exactly in
 * integers: a transfer of 99,990.01 USDC at 1.0001 is 99,999.999001 USD, below 100,000, with
 * no floating-point doubt about which side of the line it falls.
 */

/** A decimal as an integer and a power-of-ten scale: value = units / 10^scale. */
export interface ExactDecimal {
  units: bigint;
  scale: number;
}

/** Parse a decimal string or a JS number (plain or exponent notation) exactly. */
export function parseDecimal(value: string | number): ExactDecimal {
  const text = typeof value === "number" ? String(value) : value.trim();
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!match || (match[2] === "" && (match[3] ?? "") === "")) throw new Error(`not a decimal number: "${text}"`);
  const [, sign, int = "", frac = "", exp = "0"] = match;
  let units = BigInt(`${sign}${int || "0"}${frac}`);
  let scale = frac.length - Number(exp);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units, scale };
}

/** True when `amount` smallest units of a token with `decimals`, at `price` USD, are worth at least `minUsd`. */
export function usdAtLeast(amount: bigint, decimals: number, price: ExactDecimal, minUsd: number): boolean {
  const min = parseDecimal(minUsd);
  // amount * price / 10^(decimals + price.scale) >= min.units / 10^min.scale, cross-multiplied.
  return amount * price.units * 10n ** BigInt(min.scale) >= min.units * 10n ** BigInt(decimals + price.scale);
}

/** The USD value of `amount` smallest units at `price`, rounded half-up to `digits` decimals, as a number. */
export function usdValue(amount: bigint, decimals: number, price: ExactDecimal, digits = 2): number {
  const denominator = 10n ** BigInt(decimals + price.scale);
  const scaled = amount * price.units * 10n ** BigInt(digits);
  const rounded = (scaled * 2n + denominator) / (denominator * 2n);
  return Number(rounded) / 10 ** digits;
}

/** `a / b` as a decimal string with `digits` significant figures (for prices derived from a pair's ratio). */
export function divideDecimals(a: ExactDecimal, b: ExactDecimal, digits = 12): string {
  if (b.units === 0n) throw new Error("division by zero");
  // a/b = (a.units / b.units) * 10^(b.scale - a.scale); compute with enough extra precision.
  const extra = 40;
  const quotient = (a.units * 10n ** BigInt(extra)) / b.units;
  const scale = extra + a.scale - b.scale;
  const text = formatExact({ units: quotient, scale });
  return toSignificant(text, digits);
}

/** `decimal x multiplier x 10^shift`, exactly, as a decimal string. */
export function exactTimes(decimal: string, multiplier: bigint, shift: number): string {
  const { units, scale } = parseDecimal(decimal);
  return formatExact({ units: units * multiplier, scale: scale - shift });
}

/** Format an exact decimal without exponent and without trailing zeros. */
export function formatExact({ units, scale }: ExactDecimal): string {
  const negative = units < 0n;
  let digits = (negative ? -units : units).toString();
  if (scale <= 0) return `${negative ? "-" : ""}${digits}${"0".repeat(-scale)}`;
  digits = digits.padStart(scale + 1, "0");
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, "");
  return `${negative ? "-" : ""}${int}${frac ? `.${frac}` : ""}`;
}

function toSignificant(text: string, digits: number): string {
  const negative = text.startsWith("-");
  const body = negative ? text.slice(1) : text;
  const [int = "0", frac = ""] = body.split(".");
  const all = int + frac;
  const firstNonZero = all.search(/[1-9]/);
  if (firstNonZero < 0) return "0";
  const keep = firstNonZero + digits;
  if (all.length <= keep) return text;
  // Round half-up at the cut, then put the decimal point back.
  const cut = BigInt(all.slice(0, keep)) + (Number(all[keep]) >= 5 ? 1n : 0n);
  const scale = all.length - int.length;
  const dropped = all.length - keep;
  return `${negative ? "-" : ""}${formatExact({ units: cut * 10n ** BigInt(Math.max(0, dropped - scale)), scale: Math.max(0, scale - dropped) })}`;
}
