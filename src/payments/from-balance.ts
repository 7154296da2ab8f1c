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
  const wallet = signedIn.payer;
  const price = BigInt(atomicUsdc(attempt.route.price ?? 0));
  // The balance pays for the calls it can pay for, also while they run: the debit comes after the
  // function, so without this one wallet's 1 USD could start any number of calls at once (each a
  // full chain scan, say) and pay for ten. Held before anything awaits, so concurrent calls see it.
  const running = reserved.get(wallet) ?? 0n;
  if (held - running < price) return insufficient(core, attempt, wallet, price, running);
  reserved.set(wallet, running + price);
  let released = false;
  // Given back once: when the debit is made (the balance read from then on has it), or when the call ends without one.
  const release = () => {
    if (released) return;
    released = true;
    const left = (reserved.get(wallet) ?? price) - price;
    if (left > 0n) reserved.set(wallet, left);
    else reserved.delete(wallet);
  };
  try {
    return await runAndDebit(core, attempt, signedIn, price, release);
  } finally {
    release();
  }
}

/**
 * What each wallet's calls in flight on this process will take from its balance (atomic USDC),
 * by wallet: the balance spent across all sites of the process, so one map for them all.
 */
const reserved = new Map<string, bigint>();

/** Run the paid function for a wallet whose balance covers `price`, then debit it once. */
async function runAndDebit(core: PaymentGate, attempt: Attempt, signedIn: SignedIn, price: bigint, release: () => void): Promise<Response> {
  const { store, log } = core.options;
  const wallet = signedIn.payer;
  const used = await core.used(attempt, signedIn);
  if (used) return used;
  let left: bigint | null | undefined;
  const debit = async () => {
    if (left === undefined) {
      left = await debitBalance(store, wallet, price, routeKey(attempt.route), attempt.requestId);
      release();
    }
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

/**
 * 402 insufficient_balance: the per-call challenge, the balance and how to top up; nothing
 * debited. `running`: what the wallet's calls in flight will take from it.
 */
async function insufficient(core: PaymentGate, attempt: Attempt, wallet: string, price: bigint, running = 0n): Promise<Response> {
  const held = await balanceOf(core.options.store, wallet);
  const holds =
    running > 0n && held >= price
      ? `holds ${usdOf(held)} USDC, of which its calls still in flight take ${usdOf(running)}, which leaves less than this call's ${usdOf(price)}. Nothing was debited. Send it again when they have answered, top the balance up with POST /api/balance/topup?amount=<USD>, or pay this call with the challenge in this answer.`
      : `holds ${usdOf(held)} USDC, less than this call's ${usdOf(price)}. Nothing was debited. Top it up with POST /api/balance/topup?amount=<USD>, or pay this call with the challenge in this answer.`;
  return core.refuse(attempt, "insufficient_balance", `The balance of ${wallet} ${holds}`, {
    reason: "insufficient_balance",
    user_id: wallet,
    balance: usdOf(held),
    ...(running > 0n && held >= price ? { in_flight: usdOf(running) } : {}),
    price: usdOf(price),
    top_up: "POST /api/balance/topup?amount=5",
  });
}
