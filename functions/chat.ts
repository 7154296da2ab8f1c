/**
 * `POST /api/chat`: the trading assistant (src/chat/). Paid per message through x402, or from the
 * prepaid balance of `user_id` (src/payments/balances.ts): then the debit is the last step, so a
 * message that fails is never debited, and the answer says what the balance holds after it.
 */
import { atomicUsdc } from "../spec/route.ts";
import { CHAT_PRICE_USD, chat } from "../spec/routes/assistant.ts";
import { chatDepsFromContext } from "../src/chat/deps.ts";
import { answerChat } from "../src/chat/engine.ts";
import { defineFunction } from "../src/context.ts";
import { ServiceError } from "../src/errors.ts";
import { usdOf } from "../src/store/balances.ts";

export default defineFunction(chat, async (input, ctx) => {
  const answer = await answerChat(input.message, chatDepsFromContext(ctx), ctx.chatLlm);
  const debit = ctx.payment?.balance;
  let balance: number | null = null;
  let creditsLeft: number | null = null;
  if (debit) {
    const left = await debit.debit();
    if (left === null) throw new ServiceError("insufficient_balance", "The balance no longer covers this message.");
    balance = usdOf(left);
    creditsLeft = Number(left / BigInt(atomicUsdc(CHAT_PRICE_USD)));
  }
  return {
    reply: answer.reply,
    balance,
    charged: true,
    price_per_msg: CHAT_PRICE_USD,
    engine: answer.engine,
    credits_left: creditsLeft,
    sources: answer.sources,
  };
});
