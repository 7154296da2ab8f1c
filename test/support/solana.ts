/**
 * The Solana site on a seeded local Solana, as the Solana tests start it, and the USDC a wallet
 * holds on it (read from its token account).
 */
import { type Address, createSolanaRpc } from "@solana/kit";
import type { FacilitatorClient } from "@x402/core/server";
import { type LocalSolanaDevnet, startLocalSolana } from "../../src/local/solana/devnet.ts";
import { ataOf, USDC_MINT } from "../../src/local/solana/scenario.ts";
import type { RunningService } from "../../src/server/service.ts";
import type { Store } from "../../src/store/store.ts";
import { startTestService } from "./service.ts";

/** USDC (atomic) in `owner`'s token account on the chain at `rpcUrl`. */
export async function usdcOn(rpcUrl: string, owner: string): Promise<bigint> {
  const ata = await ataOf(owner as Address, USDC_MINT);
  return BigInt((await createSolanaRpc(rpcUrl).getTokenAccountBalance(ata).send()).value.amount);
}

/** A local Solana, and the service with its Solana site on it (its scenario's payTo and fee payer, or the facilitator `facilitator` makes for the chain). */
export async function startSolanaSite(
  options: { store?: Store; facilitator?: (chain: LocalSolanaDevnet) => FacilitatorClient } = {},
): Promise<{ chain: LocalSolanaDevnet; service: RunningService; site: string }> {
  const chain = await startLocalSolana({});
  const s = chain.scenario;
  const service = await startTestService({
    ...(options.store ? { store: options.store } : {}),
    solana: { rpcUrl: chain.rpcUrl, network: s.network, usdcMint: s.usdcMint, payTo: s.payTo, feePayer: s.feePayer.signer },
    ...(options.facilitator ? { solanaFacilitator: options.facilitator(chain) } : {}),
  });
  return { chain, service, site: service.solanaUrl as string };
}
