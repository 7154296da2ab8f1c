/** `GET /api/pricing`: the price of every route, from the route table. */
import { atomicUsdc } from "../spec/route.ts";
import { pricing } from "../spec/routes/core.ts";
import { routes } from "../spec/routes.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(pricing, async (_input, ctx) => ({
  network: ctx.config.network,
  scheme: "exact" as const,
  asset: ctx.config.usdc,
  pay_to: ctx.config.payTo,
  routes: routes.map((r) => ({
    method: r.method,
    path: r.path,
    summary: r.summary,
    free: r.price === null,
    price_usd: r.price ?? 0,
    amount: r.price === null ? "0" : atomicUsdc(r.price),
  })),
}));
