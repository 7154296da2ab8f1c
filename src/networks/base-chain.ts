/**
 * Base mainnet's chain definition, the same object `viem/chains` exports as `base`, made without
 * loading `viem/chains`: that module defines every chain viem knows (about 265 ms of a ~2 s
 * restart on the bench machine), and `viem/op-stack`, which exports the OP Stack's chain config,
 * loads all of its actions too (about 115 ms). Base is built here exactly as viem builds it, from
 * the OP Stack chain config module viem's own `base` is made of (the same module instance, so
 * the same formatters and serializers); test/base-chain.test.ts holds the two equal.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type Chain, defineChain } from "viem";
import type { chainConfig as OpStackChainConfig } from "viem/op-stack";

// The module viem's chain definitions import (`viem/op-stack` re-exports it), in viem's ES build.
const viemDir = path.dirname(createRequire(import.meta.url).resolve("viem/package.json"));
const { chainConfig } = (await import(pathToFileURL(path.join(viemDir, "_esm/op-stack/chainConfig.js")).href)) as {
  chainConfig: typeof OpStackChainConfig;
};

const sourceId = 1; // Ethereum mainnet

/** Base mainnet (`eip155:8453`), as `viem/chains` defines it. */
export const base = defineChain({
  ...chainConfig,
  id: 8453,
  name: "Base",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: ["https://mainnet.base.org"] } },
  blockExplorers: { default: { name: "Basescan", url: "https://basescan.org", apiUrl: "https://api.basescan.org/api" } },
  contracts: {
    ...chainConfig.contracts,
    disputeGameFactory: { [sourceId]: { address: "0x43edB88C4B80fDD2AdFF2412A7BebF9dF42cB40e" } },
    l2OutputOracle: { [sourceId]: { address: "0x56315b90c40730925ec5485cf004d835058518A0" } },
    multicall3: { address: "0xca11bde05977b3631167028862be2a173976ca11", blockCreated: 5022 },
    portal: { [sourceId]: { address: "0x49048044D57e1C92A77f79988d21Fa8fAF74E97e", blockCreated: 17482143 } },
    l1StandardBridge: { [sourceId]: { address: "0x3154Cf16ccdb4C6d922629664174b904d80F2C35", blockCreated: 17482143 } },
  },
  sourceId,
}) satisfies Chain;
