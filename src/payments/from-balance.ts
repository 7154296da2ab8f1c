/**
 * Paying from a prepaid balance (src/payments/balances.ts): the wallet that signed in pays the
 * route's own price from what it topped up, without a transfer. The debit is one statement that
 * cannot overdraw, made once, after the function answered: a function may make it as its last
 * step to report what is left (the chat does), else the gate makes it; a call that fails is
 * never debited. A balance that does not cover the price is a 402 with the per-call challenge.
 */
import { atomicUsdc, routeKey } from "../../spec/route.ts";
import { balanceOf, debitBalance, usdOf } from "../store/balances.ts";
import { type Attempt, withHeaders } from "./call.ts";
import type { PaymentGate } from "./gate.ts";
import type { SignedIn } from "./sign-in.ts";

/** Response headers of a call paid from a balance: what it took and what is left, in USD. */
export const BALANCE_DEBITED = "Balance-Debited";
export const BALANCE_LEFT = "Balance-Remaining";

/**
 * Pay `attempt` from the balance of the signed-in wallet, which holds `held` (atomic USDC) as
 * last read; its sign-in is used only when that covers the price.
 */
export async function payFromBalance(core: PaymentGate, attempt: Attempt, signedIn: SignedIn, held: bigint): Promise<Response> {
  const { store, log } = core.options;
  const wallet = signedIn.payer;
  const price = BigInt(atomicUsdc(attempt.route.price ?? 0));
  if (held < price) return insufficient(core, attempt, wallet, price);
  const used = await core.used(attempt, signedIn);
  if (used) return used;
  let left: bigint | null | undefined;
  const debit = async () => {
    if (left === undefined) left = await debitBalance(store, wallet, price, routeKey(attempt.route), attempt.requestId);
    return left;
  };
  const payment = {
    ...core.verifiedPayment(attempt.route, wallet, "0x", price.toString()),
    balance: { wallet: wallet as `0x${string}`, debit },
  };
  const response = await core.runFunction(attempt, payment);
  if (left === null) return insufficient(core, attempt, wallet, price);
  if (response.status >= 400) return response;
  // A client gone before the debit is not debited.
  if (left === undefined && attempt.request.signal.aborted) return new Response(null, { status: 499 });
  if ((await debit()) === null) return insufficient(core, attempt, wallet, price);
  attempt.record.outcome = "balance";
  log.info("balance call", {
    request_id: attempt.requestId,
    route: routeKey(attempt.route),
    payer: wallet,
    amount: price.toString(),
    fn: attempt.timings.fn,
  });
  const headers = withHeaders(response.headers, { [BALANCE_DEBITED]: String(usdOf(price)), [BALANCE_LEFT]: String(usdOf(left as bigint)) });
  // The body as bytes, not a stream: a stream is written after the headers in a second packet, which the client's delayed ACK holds.
  return new Response(await response.arrayBuffer(), { status: response.status, headers });
}

/** 402 insufficient_balance: the per-call challenge, the balance and how to top up; nothing debited. */
async function insufficient(core: PaymentGate, attempt: Attempt, wallet: string, price: bigint): Promise<Response> {
  const held = await balanceOf(core.options.store, wallet);
  return core.refuse(
    attempt,
    "insufficient_balance",
    `The balance of ${wallet} holds ${usdOf(held)} USDC, less than this call's ${usdOf(price)}. Nothing was debited. Top it up with POST /api/balance/topup?amount=<USD>, or pay this call with the challenge in this answer.`,
    {
      reason: "insufficient_balance",
      user_id: wallet,
      balance: usdOf(held),
      price: usdOf(price),
      top_up: "POST /api/balance/topup?amount=5",
    },
  );
}
