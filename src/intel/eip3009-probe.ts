/**
 * Whether a token contract on the chain this service reads has an EIP-3009 transfer, asked by
 * calling its `authorizationState` view: a contract that answers it has the EIP-3009 functions;
 * one without code, or that reverts or answers nothing (WETH's fallback takes any call), has
 * not. Only the service's own network can be read; other networks answer null (not known).
 */
import { ContractFunctionExecutionError, ContractFunctionZeroDataError, type PublicClient } from "viem";
import type { Eip3009Probe } from "./x402-clients.ts";

const authorizationStateAbi = [
  {
    type: "function",
    name: "authorizationState",
    stateMutability: "view",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
    ],
    outputs: [{ type: "bool" }],
  },
] as const;

/** An `Eip3009Probe` reading `network` through `client`, remembering each answer (a token's code does not change its interface). */
export function eip3009Probe(client: PublicClient, network: string): Eip3009Probe {
  const known = new Map<string, Promise<boolean | null>>();
  return (asked, asset) => {
    if (asked !== network || !/^0x[0-9a-fA-F]{40}$/.test(asset)) return Promise.resolve(null);
    const key = asset.toLowerCase();
    let found = known.get(key);
    if (!found) {
      found = client
        .readContract({
          address: asset as `0x${string}`,
          abi: authorizationStateAbi,
          functionName: "authorizationState",
          args: ["0x0000000000000000000000000000000000000000", `0x${"00".repeat(32)}`],
        })
        .then(
          () => true,
          (error: unknown) => {
            // A revert or an empty answer is the contract's own: no EIP-3009. Anything else (the RPC failed) is not known.
            if (error instanceof ContractFunctionZeroDataError) return false;
            if (error instanceof ContractFunctionExecutionError) {
              const cause = error.cause as { name?: string } | undefined;
              return cause?.name === "ContractFunctionRevertedError" || cause?.name === "ContractFunctionZeroDataError" ? false : null;
            }
            return null;
          },
        );
      found.then((value) => {
        if (value === null) known.delete(key);
      });
      known.set(key, found);
    }
    return found;
  };
}
