/** `POST /v1/dinalibrium`: where a token's price sits in each Base pool, against its reference and against each other. */
import { type Address, getAddress, isAddress } from "viem";
import { dinalibrium } from "../spec/routes/base-tools.ts";
import { readChain } from "../src/chain/rpc-error.ts";
import { readTokenMetadata } from "../src/chain/token-reads.ts";
import { defineFunction } from "../src/context.ts";
import { InvalidRequestError, NotFoundError } from "../src/errors.ts";
import { riskDeps } from "../src/token-risk/assess.ts";
import { tokenEquilibrium } from "../src/token-risk/equilibrium.ts";
import { tokenRiskMethodology } from "../src/token-risk/methodology.ts";
import type { KnownToken } from "../src/token-risk/venues.ts";

export default defineFunction(dinalibrium, async (input, ctx) => {
  const deps = riskDeps(ctx);
  const { venues } = deps;
  const blockNumber = await readChain("reading the latest block number", () => ctx.chain.getBlockNumber({ cacheTime: 0 }));

  let tokens: KnownToken[];
  if (input.token === undefined) tokens = venues.tokens.filter((t) => t.default);
  else if (isAddress(input.token, { strict: false })) {
    const address = getAddress(input.token) as Address;
    const known = venues.token(address);
    if (known) tokens = [known];
    else {
      const metadata = await readTokenMetadata(ctx.chain, address, blockNumber);
      if (metadata.decimals === null) {
        throw new InvalidRequestError(`Invalid request: body.token (${address} does not answer decimals() like an ERC-20 token).`, [
          { field: "body.token", expected: "an ERC-20 token address or a curated symbol", received: input.token },
        ]);
      }
      tokens = [{ symbol: metadata.symbol ?? address, address, decimals: metadata.decimals, quote: false, peg_usd: null, default: false }];
    }
  } else {
    const wanted = input.token.toLowerCase();
    const known = venues.tokens.find((t) => t.symbol.toLowerCase() === wanted);
    if (!known) {
      throw new NotFoundError(
        `No curated token "${input.token}"; give its address, or one of ${venues.tokens.map((t) => t.symbol).join(", ")}.`,
        {
          token: input.token,
          symbols: venues.tokens.map((t) => t.symbol),
        },
      );
    }
    tokens = [known];
  }
  const answers = await Promise.all(tokens.map((t) => tokenEquilibrium(deps, t, blockNumber)));
  return { block_number: Number(blockNumber), tokens: answers, methodology: tokenRiskMethodology("dinalibrium") };
});
