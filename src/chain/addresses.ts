/**
 * Canonical Base mainnet addresses that the local devnet reproduces, so code written against
 * the devnet runs unchanged on Base.
 */
import type { Address } from "viem";

/** Circle's native USDC on Base (FiatTokenV2_2 proxy on mainnet; FiatTokenLocal on the devnet). */
export const USDC_ADDRESS: Address = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

/** OP-stack WETH9 predeploy on Base. */
export const WETH_ADDRESS: Address = "0x4200000000000000000000000000000000000006";

/** mds1 Multicall3, deployed at the same address on every chain. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** Base mainnet chain id; the devnet uses it too so EIP-712 domains match Base. */
export const BASE_CHAIN_ID = 8453;

/** The well-known Hardhat/Anvil test mnemonic: devnet keys are public, never fund them on a real chain. */
export const TEST_MNEMONIC = "test test test test test test test test test test test junk";
