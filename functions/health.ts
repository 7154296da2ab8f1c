/** `GET /api/health`: liveness, mode, network and the latest block. */
import { health } from "../spec/routes/core.ts";
import { defineFunction, type FunctionContext } from "../src/context.ts";
import { withBudget } from "../src/time-budget.ts";

/** Health answers within this, whatever the chain does: a stalled node is "degraded", not a hung probe. */
const CHAIN_PROBE_MS = 800;

/** What `read` answers within CHAIN_PROBE_MS, or null (logged) when the chain cannot be read in time. */
export async function probeChain<T>(read: Promise<T>, ctx: FunctionContext): Promise<T | null> {
  try {
    return await withBudget(read, CHAIN_PROBE_MS, () => {
      throw new Error(`no answer within ${CHAIN_PROBE_MS} ms`);
    });
  } catch (error) {
    ctx.log.warn("health: chain unreachable", { error: error instanceof Error ? error.message : String(error) });
    return null;
  }
}

export default defineFunction(health, async (_input, ctx) => {
  const latest = await probeChain(ctx.chain.getBlockNumber({ cacheTime: 0 }), ctx);
  const blockNumber = latest === null ? null : Number(latest);
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
