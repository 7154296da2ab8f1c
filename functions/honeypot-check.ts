/**
 * `POST /v1/honeypot-check`: buy, move and sell a token in a simulation on the chain itself, and
 * read what its owner can do; the verdict states every reason.
 */
import { getAddress } from "viem";
import { honeypotCheck } from "../spec/routes/base-tools.ts";
import { readChain } from "../src/chain/rpc-error.ts";
import { readTokenMetadata } from "../src/chain/token-reads.ts";
import { defineFunction } from "../src/context.ts";
import { InvalidRequestError } from "../src/errors.ts";
import { assessToken, riskDeps } from "../src/token-risk/assess.ts";
import { tokenRiskMethodology } from "../src/token-risk/methodology.ts";

export default defineFunction(honeypotCheck, async (input, ctx) => {
  const blockNumber = await readChain("reading the latest block number", () => ctx.chain.getBlockNumber({ cacheTime: 0 }));
  const token = getAddress(input.token);
  // A wallet or a contract that is not a token has nothing to buy or sell: a verdict about it
  // ("caution: no pool") would read as a judgement of a token, so it is refused, not charged.
  const { decimals } = await readTokenMetadata(ctx.chain, token, blockNumber);
  if (decimals === null) {
    throw new InvalidRequestError(`Invalid request: body.token (${token} does not answer decimals() like an ERC-20 token).`, [
      { field: "body.token", expected: "the address of an ERC-20 token", received: input.token },
    ]);
  }
  const answer = await assessToken(riskDeps(ctx), token, input.amount_usd ?? 100, blockNumber);
  return { ...answer, methodology: tokenRiskMethodology("honeypot-check") };
});
