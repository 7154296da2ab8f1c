/**
 * `POST /v1/honeypot-check`: buy, move and sell a token in a simulation on the chain itself, and
 * read what its owner can do; the verdict states every reason.
 */
import { honeypotCheck } from "../spec/routes/base-tools.ts";
import { readChain } from "../src/chain/rpc-error.ts";
import { defineFunction } from "../src/context.ts";
import { assessToken, riskDeps } from "../src/token-risk/assess.ts";
import { tokenRiskMethodology } from "../src/token-risk/methodology.ts";

export default defineFunction(honeypotCheck, async (input, ctx) => {
  const blockNumber = await readChain("reading the latest block number", () => ctx.chain.getBlockNumber({ cacheTime: 0 }));
  const answer = await assessToken(riskDeps(ctx), input.token as `0x${string}`, input.amount_usd ?? 100, blockNumber);
  return { ...answer, methodology: tokenRiskMethodology("honeypot-check") };
});
