/**
 * Canonical Base mainnet addresses that the local devnet reproduces, so code written against
 * the devnet runs unchanged on Base. USDC and the chain id are the network entry's
 * (src/networks/base.ts).
 */
import type { Address } from "viem";

/** OP-stack WETH9 predeploy on Base. */
export const WETH_ADDRESS: Address = "0x4200000000000000000000000000000000000006";

/** mds1 Multicall3, deployed at the same address on every chain. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** The well-known Hardhat/Anvil test mnemonic: devnet keys are public, never fund them on a real chain. */
export const TEST_MNEMONIC = "test test test test test test test test test test test junk";
