/** How the chat writes numbers: exact decimals as the source gave them, with thousands separators. */
import { parseDecimal } from "../analytics/usd-value.ts";

/** A decimal string or number with thousands separators and every fraction digit kept, never an exponent: "97250.12" → "97,250.12". */
export function grouped(value: string | number): string {
  return parseDecimal(value).toFormat();
}

/** A USD amount: "$3,120.45". */
export function usd(value: string | number): string {
  const text = grouped(value);
  return text.startsWith("-") ? `-$${text.slice(1)}` : `$${text}`;
}

/** A percent change with its sign and two decimals: "+1.84%", "-5.15%". */
export function signedPct(value: number): string {
  const fixed = Math.abs(value).toFixed(2);
  return `${value < 0 && Number(fixed) !== 0 ? "-" : "+"}${fixed}%`;
}

/** A percent rate as the exact decimal given, signed: "+0.00125%". */
export function signedRate(value: string): string {
  return value.startsWith("-") ? `${value}%` : `+${value}%`;
}
