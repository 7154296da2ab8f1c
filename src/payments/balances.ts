/**
 * Prepaid balances. A wallet tops one up with an ordinary x402 payment (`POST /api/balance/topup`)
 * and spends it on any paid route at the route's price, without a settlement per call
 * (src/payments/from-balance.ts); only that wallet, signed in (src/payments/sign-in.ts).
 *
 * - Crediting is done by the database: a trigger on the payment ledger (src/store/migrations.ts)
 *   credits a top-up when its ledger row becomes `settled`, on whichever path that happens (the
 *   gate, a paid retry, the upkeep reconciling a crash from the chain), once per authorisation.
 * - A debit is one statement that cannot overdraw (src/store/balances.ts): concurrent messages
 *   against one balance are debited only while it lasts, and a message that fails is never
 *   debited (the function debits once it answered, src/payments/from-balance.ts).
 * - Every credit and debit is a row of `balance_movements`, shown by `npm run ledger`.
 */
import type { RouteDef } from "../../spec/route.ts";

/** Top-up amounts in USD, inclusive. */
export const TOPUP_MIN_USD = 1;
export const TOPUP_MAX_USD = 100;
export const TOPUP_DEFAULT_USD = 5;

/** Whether a balance pays `route`: any paid route with a price of its own (not one the buyer chooses, such as a top-up). */
export function payableFromBalance(route: RouteDef): boolean {
  return route.price !== null && !route.dynamicPrice;
}

/** What a function paid from a balance calls as its last step. */
export interface BalanceDebit {
  /** The wallet whose balance pays. */
  wallet: `0x${string}`;
  /** Debit the price; the balance left (atomic USDC), or null when it no longer covers it (nothing debited). */
  debit(): Promise<bigint | null>;
}
