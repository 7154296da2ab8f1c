/**
 * Whether a token contract on the chain this service reads has an EIP-3009 transfer, asked by
 * calling its `authorizationState` view: a contract that answers it has the EIP-3009 functions;
 * one without code, or that reverts or answers nothing (WETH's fallback takes any call), has
 * not. Only the service's own network can be read; other networks answer null (not known).
 */
import { LRUCache } from "lru-cache";
import { ContractFunctionExecutionError, ContractFunctionZeroDataError, type PublicClient, zeroAddress, zeroHash } from "viem";
import { eip3009Abi } from "../chain/authorization.ts";
import type { Eip3009Probe } from "./x402-clients.ts";

/**
 * The answers read through each chain client, so that they outlive the request that asked. A
 * read depends only on the client and the token; the network only says which questions a probe answers.
 */
const answers = new WeakMap<PublicClient, LRUCache<string, boolean>>();

/** The `Eip3009Probe` reading `network` through `client`, remembering each answer (a token's code does not change its interface). */
export function eip3009Probe(client: PublicClient, network: string): Eip3009Probe {
  const known = answers.get(client) ?? newAnswers(client);
  return async (asked, asset) =>
    asked === network && /^0x[0-9a-fA-F]{40}$/.test(asset) ? ((await known.fetch(asset.toLowerCase())) ?? null) : null;
}

function newAnswers(client: PublicClient): LRUCache<string, boolean> {
  // lru-cache's fetch shares a read in flight; an answer not known (undefined) is not kept, so it is asked again.
  const known = new LRUCache<string, boolean>({
    max: 1_000,
    fetchMethod: (asset) =>
      client
        .readContract({
          address: asset as `0x${string}`,
          abi: eip3009Abi,
          functionName: "authorizationState",
          args: [zeroAddress, zeroHash],
        })
        .then(
          () => true,
          (error: unknown) => {
            // A revert or an empty answer is the contract's own: no EIP-3009. Anything else (the RPC failed) is not known.
            if (error instanceof ContractFunctionZeroDataError) return false;
            if (error instanceof ContractFunctionExecutionError) {
              const cause = error.cause as { name?: string } | undefined;
              return cause?.name === "ContractFunctionRevertedError" || cause?.name === "ContractFunctionZeroDataError" ? false : undefined;
            }
            return undefined;
          },
        ),
  });
  answers.set(client, known);
  return known;
}
