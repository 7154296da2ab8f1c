/**
 * The registry of networks the service can be paid on. Each entry (one file per network, e.g.
 * ./base.ts) carries its CAIP-2 id, chain client, payment asset, x402 scheme registrations and,
 * for an EVM network, its local-mode chain (./types.ts). Adding a network is one entry here plus its family's scheme
 * module (./evm.ts for EVM). Nothing outside src/networks/ names a chain id or a USDC address.
 */
import { base } from "./base.ts";
import { solana } from "./solana.ts";
import type { EvmNetwork, Network, SvmNetwork } from "./types.ts";

/** Every network of the registry. */
export const NETWORKS: readonly Network[] = [base, solana];

/** The network the service settles on when NETWORK is not set. */
export const DEFAULT_NETWORK: EvmNetwork = base;

/** The entry with CAIP-2 id `id`, or undefined. */
export function networkById(id: string): Network | undefined {
  return NETWORKS.find((n) => n.id === id);
}

/** The EVM entry with CAIP-2 id `id`; throws when there is none (a configuration the checks let through). */
export function evmNetwork(id: string): EvmNetwork {
  const network = networkById(id);
  if (network?.family !== "evm") throw new Error(`no EVM network ${id} in the registry (src/networks/)`);
  return network;
}

/** The Solana entry with CAIP-2 id `id`; throws when there is none. */
export function svmNetwork(id: string): SvmNetwork {
  const network = networkById(id);
  if (network?.family !== "svm") throw new Error(`no Solana network ${id} in the registry (src/networks/)`);
  return network;
}

/** The EVM entries: the ones the primary and Base-tools sites can settle on (NETWORK). */
export function evmNetworks(): EvmNetwork[] {
  return NETWORKS.filter((n): n is EvmNetwork => n.family === "evm");
}
