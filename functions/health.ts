/** `GET /api/health`: liveness, mode, network and the latest block. */
import { health } from "../spec/routes/core.ts";
import { defineFunction } from "../src/context.ts";
import { withBudget } from "../src/time-budget.ts";

/** Health answers within this, whatever the chain does: a stalled node is "degraded", not a hung probe. */
const CHAIN_PROBE_MS = 800;

export default defineFunction(health, async (_input, ctx) => {
  let blockNumber: number | null = null;
  try {
    const latest = await withBudget(ctx.chain.getBlockNumber({ cacheTime: 0 }), CHAIN_PROBE_MS, () => {
      throw new Error(`no answer within ${CHAIN_PROBE_MS} ms`);
    });
    blockNumber = Number(latest);
  } catch (error) {
    ctx.log.warn("health: chain unreachable", { error: error instanceof Error ? error.message : String(error) });
  }
  const status: "ok" | "degraded" = blockNumber === null ? "degraded" : "ok";
  return {
    status,
    mode: ctx.config.mode,
    network: ctx.config.network,
    chain_id: ctx.config.chainId,
    block_number: blockNumber,
    usdc: ctx.config.usdc,
    pay_to: ctx.config.payTo,
    version: ctx.config.version,
  };
});
