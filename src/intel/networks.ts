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

/** True when `network` is written as a CAIP-2 id (`namespace:reference`, e.g. `eip155:8453`), as x402 v2 requires. */
export function isCaip2(network: unknown): boolean {
  return typeof network === "string" && /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(network);
}

/** True when `network` is a v1 short name (`base`, `base-sepolia`...), as x402 v1 clients expect. */
export function isV1NetworkName(network: unknown): boolean {
  return typeof network === "string" && network in ALIASES;
}

/** True when `value` is a 20-byte hex EVM address (any letter case). */
export function isEvmAddress(value: unknown): value is `0x${string}` {
  return typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value);
}

/** True when `asset` can be a token on `network`: an EVM address on eip155:*, a base58 mint on solana:*, anything non-empty elsewhere. */
export function isAssetForNetwork(network: string | null, asset: unknown): boolean {
  if (typeof asset !== "string" || asset.trim() === "") return false;
  if (isEvmNetwork(network)) return isEvmAddress(asset);
  if (network?.startsWith("solana:")) return /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(asset);
  return true;
}

/**
 * The EIP-712 domain (name, version) of USDC per CAIP-2 network, as the token contracts
 * declare it (the same table as @x402/evm's default assets). A payment signed with another
 * name or version is refused by the token, so a challenge quoting a different one is unpayable.
 */
const USDC_DOMAIN: Readonly<Record<string, { name: string; version: string }>> = {
  "eip155:8453": { name: "USD Coin", version: "2" },
  "eip155:84532": { name: "USDC", version: "2" },
  "eip155:1": { name: "USD Coin", version: "2" },
  "eip155:137": { name: "USD Coin", version: "2" },
  "eip155:43114": { name: "USD Coin", version: "2" },
  "eip155:42161": { name: "USD Coin", version: "2" },
};

/** The EIP-712 domain of `asset` on `network` when it is a USDC contract this table knows, else undefined. */
export function knownTokenDomain(network: string | null, asset: unknown): { name: string; version: string } | undefined {
  return network && isUsdc(network, asset) ? USDC_DOMAIN[network] : undefined;
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
