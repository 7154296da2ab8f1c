/**
 * Networks x402 sellers and directories name, beyond the ones the service settles on: their
 * v1 short names, their USDC (6 decimals) and, on EVM, USDC's EIP-712 domain (the same table
 * as @x402/evm's default assets). The service reads other sellers' challenges with it; it
 * never settles on these. Networks of the registry are added from their entries.
 */
import { NETWORKS } from "./index.ts";

/** A network as the x402 ecosystem writes it. */
export interface KnownNetwork {
  /** CAIP-2 id. */
  id: string;
  /** x402 v1 short names. */
  v1Names: readonly [string, ...string[]];
  /** USDC's contract or mint, when known. */
  usdc?: string;
  /** USDC's EIP-712 domain (EVM), when known. */
  usdcDomain?: { name: string; version: string };
}

const OTHERS: readonly KnownNetwork[] = [
  {
    id: "eip155:84532",
    v1Names: ["base-sepolia"],
    usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    usdcDomain: { name: "USDC", version: "2" },
  },
  {
    id: "eip155:1",
    v1Names: ["ethereum", "mainnet"],
    usdc: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    usdcDomain: { name: "USD Coin", version: "2" },
  },
  {
    id: "eip155:137",
    v1Names: ["polygon"],
    usdc: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    usdcDomain: { name: "USD Coin", version: "2" },
  },
  { id: "eip155:80002", v1Names: ["polygon-amoy"] },
  {
    id: "eip155:43114",
    v1Names: ["avalanche"],
    usdc: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
    usdcDomain: { name: "USD Coin", version: "2" },
  },
  { id: "eip155:43113", v1Names: ["avalanche-fuji"] },
  {
    id: "eip155:42161",
    v1Names: ["arbitrum"],
    usdc: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
    usdcDomain: { name: "USD Coin", version: "2" },
  },
  { id: "eip155:10", v1Names: ["optimism"], usdc: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85" },
  { id: "eip155:1329", v1Names: ["sei"] },
  { id: "eip155:1328", v1Names: ["sei-testnet"] },
  { id: "eip155:4689", v1Names: ["iotex"] },
  { id: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", v1Names: ["solana-devnet"] },
];

/** Every network the x402 ecosystem names that this service recognises, its own first. */
export const KNOWN_NETWORKS: readonly KnownNetwork[] = [
  ...NETWORKS.map(
    (n): KnownNetwork => ({
      id: n.id,
      v1Names: [n.v1Name],
      usdc: n.usdc.address,
      ...(n.family === "evm" ? { usdcDomain: n.usdc.eip712 } : {}),
    }),
  ),
  ...OTHERS.filter((o) => !NETWORKS.some((n) => n.id === o.id)),
];
