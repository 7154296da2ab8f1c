/**
 * Solana mainnet: the Solana site's network. Local mode runs litesvm in the service's process in
 * its place, with USDC at the canonical mint and a JSON-RPC on loopback (src/local/solana/), so stock
 * Solana clients pay it unchanged.
 */
import { exactSvmSchemes } from "./svm.ts";
import type { SvmNetwork } from "./types.ts";

const id = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

/** Solana mainnet (`solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`, the genesis hash's first 32 characters). */
export const solana: SvmNetwork = {
  family: "svm",
  id,
  name: "Solana",
  v1Name: "solana",
  publicRpc: "https://api.mainnet-beta.solana.com",
  /** Circle's USDC mint (SPL Token, 6 decimals). */
  usdc: { symbol: "USDC", address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", decimals: 6 },
  schemes: exactSvmSchemes(id),
  schemesAt: (rpcUrl) => exactSvmSchemes(id, rpcUrl),
};
