/**
 * Network names and USDC contracts as x402 sellers and directories write them: v1 used
 * short names (`base`), v2 uses CAIP-2 ids (`eip155:…`). Everything is compared in the
 * CAIP-2 form. The tables come from src/networks/known.ts.
 */
import { KNOWN_NETWORKS, type KnownNetwork } from "../networks/known.ts";

/** v1 short names to CAIP-2 ids (a Map: a name such as "constructor" is a key of every object, never a network). */
const ALIASES: ReadonlyMap<string, string> = new Map(KNOWN_NETWORKS.flatMap((n) => n.v1Names.map((name) => [name, n.id] as const)));

/**
 * Each network by CAIP-2 id: its USDC (6 decimals), so a price in atomic units can be read as
 * USD, and USDC's EIP-712 domain (name, version) as the token contracts declare it. A payment
 * signed with another name or version is refused by the token, so a challenge quoting a
 * different one is unpayable.
 */
const BY_ID: ReadonlyMap<string, KnownNetwork> = new Map(KNOWN_NETWORKS.map((n) => [n.id, n]));

/** The CAIP-2 id of a network as written by a seller or directory, or null when absent. */
export function normaliseNetwork(network: unknown): string | null {
  if (typeof network !== "string" || network.trim() === "") return null;
  const text = network.trim();
  return ALIASES.get(text.toLowerCase()) ?? text;
}

/** True when `network` is written as a CAIP-2 id (`namespace:reference`, e.g. `eip155:1`), as x402 v2 requires. */
export function isCaip2(network: unknown): boolean {
  return typeof network === "string" && /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(network);
}

/** True when `network` is a v1 short name (`base`, `base-sepolia`...), as x402 v1 clients expect. */
export function isV1NetworkName(network: unknown): boolean {
  return typeof network === "string" && ALIASES.has(network);
}

/**
 * True when `value` can be an account or token on `network` (a payTo or an asset): a 20-byte hex
 * address on eip155:*, a base58 key on solana:*, anything non-empty elsewhere.
 */
export function isAddressForNetwork(network: string | null, value: unknown): boolean {
  if (typeof value !== "string" || value.trim() === "") return false;
  if (isEvmNetwork(network)) return /^0x[0-9a-fA-F]{40}$/.test(value);
  if (network?.startsWith("solana:")) return /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(value);
  return true;
}

/** The EIP-712 domain of `asset` on `network` when it is a USDC contract this table knows, else undefined. */
export function knownTokenDomain(network: string | null, asset: unknown): { name: string; version: string } | undefined {
  return network && isUsdc(network, asset) ? BY_ID.get(network)?.usdcDomain : undefined;
}

/** True when `network` is an EVM chain (CAIP-2 namespace eip155). */
export function isEvmNetwork(network: string | null): network is `eip155:${string}` {
  return network?.startsWith("eip155:") ?? false;
}

/** True when `asset` is USDC on `network` (case-insensitive for EVM addresses). */
export function isUsdc(network: string | null, asset: unknown): boolean {
  if (!network || typeof asset !== "string") return false;
  const usdc = BY_ID.get(network)?.usdc;
  if (!usdc) return false;
  return isEvmNetwork(network) ? usdc.toLowerCase() === asset.toLowerCase() : usdc === asset;
}
