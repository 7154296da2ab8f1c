/**
 * `POST /api/balance/topup?amount=<USD>`: what a top-up will credit. The credit itself is made by
 * the ledger when the payment settles (src/payments/balances.ts), and the gate answers the balance
 * the ledger then holds; this function only checks the amount against the payment and estimates.
 */
import { atomicUsdc } from "../spec/route.ts";
import { balanceTopup, CHAT_PRICE_USD } from "../spec/routes/assistant.ts";
import { defineFunction } from "../src/context.ts";
import { ServiceError } from "../src/errors.ts";
import { balanceOf, TOPUP_DEFAULT_USD, usdOf } from "../src/payments/balances.ts";

export default defineFunction(balanceTopup, async (input, ctx) => {
  const payment = ctx.payment;
  if (!payment || payment.balance)
    throw new ServiceError("invalid_request", 400, "A top-up is paid with an x402 payment, not from a balance.");
  const amount = input.amount ?? TOPUP_DEFAULT_USD;
  const credited = BigInt(payment.amount);
  if (credited !== BigInt(atomicUsdc(amount))) {
    throw new ServiceError("invalid_request", 400, `The payment quotes ${usdOf(credited)} USDC, not the amount asked (${amount}).`);
  }
  const estimate = (await balanceOf(ctx.store, payment.payer)) + credited;
  return {
    user_id: payment.payer.toLowerCase() as `0x${string}`,
    credited: usdOf(credited),
    balance: usdOf(estimate),
    credits_left: Number(estimate / BigInt(atomicUsdc(CHAT_PRICE_USD))),
  };
});
