/**
 * `POST /api/balance/topup?amount=<USD>`: what a top-up credits. The credit itself is made by the
 * ledger when the payment settles (src/payments/balances.ts), after this function answered: the
 * balance answered is the one held now plus this payment, unless the ledger already counts it
 * (a paid retry run again).
 */
import { atomicUsdc } from "../spec/route.ts";
import { balanceTopup, CHAT_PRICE_USD } from "../spec/routes/assistant.ts";
import { defineFunction } from "../src/context.ts";
import { ServiceError } from "../src/errors.ts";
import { TOPUP_DEFAULT_USD } from "../src/payments/balances.ts";
import { balanceOf, usdOf } from "../src/store/balances.ts";
import { attemptsOf } from "../src/store/ledger.ts";

export default defineFunction(balanceTopup, async (input, ctx) => {
  const payment = ctx.payment;
  if (!payment || payment.balance) throw new ServiceError("invalid_request", "A top-up is paid with an x402 payment, not from a balance.");
  const amount = input.amount ?? TOPUP_DEFAULT_USD;
  const credited = BigInt(payment.amount);
  if (credited !== BigInt(atomicUsdc(amount))) {
    throw new ServiceError("invalid_request", `The payment quotes ${usdOf(credited)} USDC, not the amount asked (${amount}).`);
  }
  const [held, earlier] = await Promise.all([
    balanceOf(ctx.store, payment.payer),
    attemptsOf(ctx.store, payment.payer, payment.nonce, null),
  ]);
  const balance = earlier.settled ? held : held + credited;
  return {
    user_id: payment.payer.toLowerCase() as `0x${string}`,
    credited: usdOf(credited),
    balance: usdOf(balance),
    credits_left: Number(balance / BigInt(atomicUsdc(CHAT_PRICE_USD))),
  };
});
