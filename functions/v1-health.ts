/** `GET /health` on the secondary site: the network, the chain head and how old it is. */
import { baseToolsHealth } from "../spec/routes/base-tools.ts";
import { defineFunction } from "../src/context.ts";
import { probeChain } from "./health.ts";

/**
 * In production a head older than this means the node has stopped following the chain (Base
 * makes a block every 2 s). Local mode's chain mines only when a transaction arrives, so an old
 * head there is normal and only an unreadable chain is degraded.
 */
const STALE_HEAD_SECONDS = 60;

export default defineFunction(baseToolsHealth, async (_input, ctx) => {
  const block = await probeChain(ctx.chain.getBlock({ blockTag: "latest" }), ctx);
  const head = block && { number: Number(block.number), timestamp: Number(block.timestamp) };
  const age = head ? Math.max(0, Math.floor(ctx.now().getTime() / 1000) - head.timestamp) : null;
  return {
    status: head && (ctx.config.mode === "local" || (age ?? 0) <= STALE_HEAD_SECONDS) ? ("ok" as const) : ("degraded" as const),
    network: ctx.config.network,
    chain_head: head?.number ?? null,
    head_age_seconds: age,
    version: ctx.config.version,
  };
});
