/**
 * The EVM family's parts of a network entry: x402's `exact` scheme from @x402/evm registered
 * for one network in each role, and a chain definition pointed at given RPC URLs.
 */
import { registerExactEvmScheme as registerClient } from "@x402/evm/exact/client";
import { registerExactEvmScheme as registerFacilitator } from "@x402/evm/exact/facilitator";
import { registerExactEvmScheme as registerServer } from "@x402/evm/exact/server";
import { type Chain, defineChain } from "viem";
import type { CaipNetworkId, EvmNetwork } from "./types.ts";

/** x402 `exact` (EIP-3009 `transferWithAuthorization`) on the EVM network `id`, in each role. */
export function exactEvmSchemes(id: CaipNetworkId): EvmNetwork["schemes"] {
  return {
    server: (server) => registerServer(server, { networks: [id] }),
    facilitator: (facilitator, signer) => registerFacilitator(facilitator, { signer, networks: id }),
    client: (client, signer) => registerClient(client, { signer, networks: [id] }),
  };
}

/**
 * `chain` read through `rpcUrls`. Multicall3's creation block is dropped: viem would refuse
 * multicalls pinned below it, which on a local chain is every block.
 */
export function evmChainAt(chain: Chain, rpcUrls: string[]): Chain {
  const multicall3 = chain.contracts?.multicall3;
  return defineChain({
    ...chain,
    rpcUrls: { default: { http: rpcUrls } },
    contracts: { ...chain.contracts, ...(multicall3 ? { multicall3: { address: multicall3.address } } : {}) },
  });
}
