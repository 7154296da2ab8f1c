/** `GET /api/health`: liveness, mode, network and the latest block. */
import { health } from "../spec/routes/core.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(health, async (_input, ctx) => {
  let blockNumber: number | null = null;
  try {
    blockNumber = Number(await ctx.chain.getBlockNumber({ cacheTime: 0 }));
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
