/**
 * The chain analytics read one chain: the one the service settles on. A caller asking for
 * another chain id gets a 400 naming the field, never an answer about the wrong chain.
 */
import type { FunctionContext } from "../context.ts";
import { InvalidRequestError } from "../errors.ts";

/** The chain id to answer for: `requested` when it is the configured chain, else a 400 on `body.chain_id`. */
export function servedChainId(requested: number | undefined, ctx: Pick<FunctionContext, "config">): number {
  const served = ctx.config.chainId;
  if (requested === undefined || requested === served) return served;
  throw new InvalidRequestError(`Invalid request: body.chain_id (only ${served} (Base) is configured on this service).`, [
    { field: "body.chain_id", expected: `${served} (Base); no other chain is configured`, received: requested },
  ]);
}
