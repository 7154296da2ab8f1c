/** `GET /health` on the secondary site: the network, the chain head and how old it is. */
import { baseToolsHealth } from "../spec/routes/base-tools.ts";
import { defineFunction } from "../src/context.ts";
import { withBudget } from "../src/time-budget.ts";

/** Health answers within this, whatever the chain does: a stalled node is "degraded", not a hung probe. */
const CHAIN_PROBE_MS = 800;
/**
 * In production a head older than this means the node has stopped following the chain (Base
 * makes a block every 2 s). Local mode's chain mines only when a transaction arrives, so an old
 * head there is normal and only an unreadable chain is degraded.
 */
const STALE_HEAD_SECONDS = 60;

export default defineFunction(baseToolsHealth, async (_input, ctx) => {
  let head: { number: number; timestamp: number } | null = null;
  try {
    const block = await withBudget(ctx.chain.getBlock({ blockTag: "latest" }), CHAIN_PROBE_MS, () => {
      throw new Error(`no answer within ${CHAIN_PROBE_MS} ms`);
    });
    head = { number: Number(block.number), timestamp: Number(block.timestamp) };
  } catch (error) {
    ctx.log.warn("health: chain unreachable", { error: error instanceof Error ? error.message : String(error) });
  }
  const age = head ? Math.max(0, Math.floor(ctx.now().getTime() / 1000) - head.timestamp) : null;
  return {
    status: head && (ctx.config.mode === "local" || (age ?? 0) <= STALE_HEAD_SECONDS) ? ("ok" as const) : ("degraded" as const),
    network: ctx.config.network,
    chain_head: head?.number ?? null,
    head_age_seconds: age,
    version: ctx.config.version,
  };
});
