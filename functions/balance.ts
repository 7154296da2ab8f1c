/** `GET /api/balance`: the signed-in wallet's prepaid balance, its last 20 movements and its debits per route. */
import { atomicUsdc } from "../spec/route.ts";
import { balance, CHAT_PRICE_USD } from "../spec/routes/assistant.ts";
import { defineFunction } from "../src/context.ts";
import { balanceOf, debitsByRoute, movementsOf, usdOf } from "../src/store/balances.ts";

export default defineFunction(balance, async (_input, ctx) => {
  const wallet = ctx.signedIn;
  if (!wallet) throw new Error("GET /api/balance ran without a signed-in wallet");
  const [held, movements, byRoute] = await Promise.all([
    balanceOf(ctx.store, wallet),
    movementsOf(ctx.store, wallet, 20),
    debitsByRoute(ctx.store, wallet),
  ]);
  return {
    user_id: wallet,
    balance: usdOf(held),
    credits_left: Number(held / BigInt(atomicUsdc(CHAT_PRICE_USD))),
    movements,
    debits_by_route: byRoute,
  };
});
