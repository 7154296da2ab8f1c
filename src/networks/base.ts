/**
 * Base mainnet: the network the service settles on. Local mode runs anvil in its place with
 * Base's chain id and USDC at Base's address (src/local/devnet/devnet.ts), so code written against
 * the local chain runs unchanged on Base.
 */
import { base as baseChain } from "./base-chain.ts";
import { evmChainAt, exactEvmSchemes } from "./evm.ts";
import type { EvmNetwork } from "./types.ts";

/** Base mainnet (`eip155:8453`). */
export const base: EvmNetwork = {
  family: "evm",
  id: `eip155:${baseChain.id}`,
  chainId: baseChain.id,
  name: "Base",
  v1Name: "base",
  publicRpc: "https://mainnet.base.org",
  chain: baseChain,
  chainAt: (rpcUrls) => evmChainAt(baseChain, rpcUrls),
  /** Circle's native USDC on Base (FiatTokenV2_2 proxy on mainnet; FiatTokenLocal on the local chain). */
  usdc: {
    symbol: "USDC",
    address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    decimals: 6,
    eip712: { name: "USD Coin", version: "2" },
  },
  schemes: exactEvmSchemes(`eip155:${baseChain.id}`),
  local: {
    // Loaded only in local mode: production never loads the local chain's code.
    start: async (options) => (await import("../local/devnet/devnet.ts")).startDevnet(options),
  },
};
