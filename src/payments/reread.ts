/**
 * Reading again by signing in: a wallet gets the answer it paid for (the same request, within
 * the redemption hours) or, on a route that allows it (`RouteDef.signInRereadDays`), content it
 * bought by GET or POST (per call or from its balance), without paying again. The answer comes
 * from the payment made then (per-call.ts `redeem`): its kept answer, or the function run again.
 */
import { lastDebitFor } from "../store/balances.ts";
import type { AttemptRow } from "../store/ledger.ts";
import { lastSettledFor } from "../store/ledger.ts";
import type { Queryable } from "../store/store.ts";
import type { Attempt } from "./call.ts";

/** The settled payment of `payer` that serves `attempt` again, or undefined. */
export async function boughtBy(
  store: Queryable,
  attempt: Attempt,
  payer: string,
  redeemHours: number,
): Promise<{ paid: AttemptRow; reason?: "signed_in_reread" } | undefined> {
  const same = await lastSettledFor(store, payer, { requestHash: attempt.requestHash }, redeemHours);
  if (same) return { paid: same };
  const days = attempt.route.signInRereadDays;
  if (!days) return undefined;
  const routes = [`GET ${attempt.route.path}`, `POST ${attempt.route.path}`];
  // Bought by a payment, or from the wallet's prepaid balance (a debit, with no ledger row): both asked at once, the payment first.
  const bought = (
    await Promise.all([lastSettledFor(store, payer, { routes }, days * 24), lastDebitFor(store, payer, routes, days * 24)])
  ).find((row) => row !== undefined);
  return bought ? { paid: bought, reason: "signed_in_reread" } : undefined;
}
