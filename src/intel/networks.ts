/**
 * Network names and USDC contracts as x402 sellers and directories write them: v1 used
 * short names (`base`), v2 uses CAIP-2 ids (`eip155:8453`). Everything is compared in the
 * CAIP-2 form.
 */

/** v1 short names to CAIP-2 ids. */
const ALIASES: Readonly<Record<string, string>> = {
  base: "eip155:8453",
  "base-sepolia": "eip155:84532",
  ethereum: "eip155:1",
  mainnet: "eip155:1",
  polygon: "eip155:137",
  "polygon-amoy": "eip155:80002",
  avalanche: "eip155:43114",
  "avalanche-fuji": "eip155:43113",
  arbitrum: "eip155:42161",
  optimism: "eip155:10",
  sei: "eip155:1329",
  "sei-testnet": "eip155:1328",
  iotex: "eip155:4689",
  solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
};

/** USDC (6 decimals) per CAIP-2 network, so a price in atomic units can be read as USD. */
const USDC: Readonly<Record<string, string>> = {
  "eip155:8453": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  "eip155:84532": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  "eip155:1": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
  "eip155:137": "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
  "eip155:43114": "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
  "eip155:42161": "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
  "eip155:10": "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
};

/** The CAIP-2 id of a network as written by a seller or directory, or null when absent. */
export function normaliseNetwork(network: unknown): string | null {
  if (typeof network !== "string" || network.trim() === "") return null;
  const text = network.trim();
  return ALIASES[text.toLowerCase()] ?? text;
}

/** True when `network` is an EVM chain (CAIP-2 namespace eip155). */
export function isEvmNetwork(network: string | null): boolean {
  return network?.startsWith("eip155:") ?? false;
}

/** True when `asset` is USDC on `network` (case-insensitive for EVM addresses). */
export function isUsdc(network: string | null, asset: unknown): boolean {
  if (!network || typeof asset !== "string") return false;
  const usdc = USDC[network];
  if (!usdc) return false;
  return isEvmNetwork(network) ? usdc.toLowerCase() === asset.toLowerCase() : usdc === asset;
}

/** True when `address` is a well-formed receiving address for `network`. */
export function isPayToAddress(network: string | null, address: unknown): boolean {
  if (typeof address !== "string") return false;
  if (isEvmNetwork(network)) return /^0x[0-9a-fA-F]{40}$/.test(address);
  if (network?.startsWith("solana:")) return /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address);
  return address.trim().length > 0;
}
