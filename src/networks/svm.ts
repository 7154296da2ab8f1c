/**
 * The Solana (SVM) family's parts of a network entry: x402's `exact` scheme from @x402/svm for
 * one network in each role, with the RPC it reads. Two traps of the library are handled here: its
 * client helper has no RPC URL (it would read the public mainnet endpoint), so the client scheme
 * is registered by hand; and a kit RPC given bare to the facilitator signer is mistaken for a
 * per-network map, so it goes in as `{ [network]: rpc }` (src/solana/x402.ts).
 */
import { ExactSvmScheme as ExactSvmClientScheme } from "@x402/svm/exact/client";
import { registerExactSvmScheme as registerFacilitator } from "@x402/svm/exact/facilitator";
import { ExactSvmScheme as ExactSvmServerScheme } from "@x402/svm/exact/server";
import type { CaipNetworkId, SvmNetwork } from "./types.ts";

/**
 * x402 `exact` (a USDC TransferChecked the facilitator co-signs as fee payer) on the Solana network
 * `id`, in each role. With `rpcUrl`, challenges carry a recent blockhash read there (a buyer then
 * needs only getAccountInfo) and buyers read the mint there.
 */
export function exactSvmSchemes(id: CaipNetworkId, rpcUrl?: string): SvmNetwork["schemes"] {
  return {
    server: (server) => server.register(id, new ExactSvmServerScheme(rpcUrl ? { rpcUrl } : {})),
    facilitator: (facilitator, signer) => registerFacilitator(facilitator, { signer, networks: id }),
    client: (client, signer) => client.register(id, new ExactSvmClientScheme(signer, rpcUrl ? { rpcUrl } : undefined)),
  };
}
