/** How the chat writes numbers: exact decimals as the source gave them, with thousands separators. */

/** A decimal string or number with thousands separators and every fraction digit kept: "97250.12" → "97,250.12". */
export function grouped(value: string | number): string {
  const text = typeof value === "number" ? plain(value) : value;
  const negative = text.startsWith("-");
  const [int = "0", frac] = (negative ? text.slice(1) : text).split(".");
  const withCommas = int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${negative ? "-" : ""}${withCommas}${frac ? `.${frac}` : ""}`;
}

/** A number without exponent notation (gas costs are small): 1.2e-7 → "0.00000012". */
function plain(value: number): string {
  if (!/e/i.test(String(value))) return String(value);
  return value.toFixed(12).replace(/\.?0+$/, "");
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
