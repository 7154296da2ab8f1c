/**
 * The Solana site on a seeded local Solana, as the Solana tests start it, and the USDC a wallet
 * holds on it (read from its token account).
 */
import { type Address, createSolanaRpc } from "@solana/kit";
import { x402HTTPClient } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { type LocalSolanaDevnet, startLocalSolana } from "../../src/local/solana/devnet.ts";
import { ataOf, USDC_MINT } from "../../src/local/solana/scenario.ts";
import type { RunningService } from "../../src/server/service.ts";
import { createSvmFacilitator, svmClient } from "../../src/solana/x402.ts";
import type { Store } from "../../src/store/store.ts";
import { startTestService } from "./service.ts";

/** USDC (atomic) in `owner`'s token account on the chain at `rpcUrl`. */
export async function usdcOn(rpcUrl: string, owner: string): Promise<bigint> {
  const ata = await ataOf(owner as Address, USDC_MINT);
  return BigInt((await createSolanaRpc(rpcUrl).getTokenAccountBalance(ata).send()).value.amount);
}

/** A facilitator's settle, given the chain's own in-process facilitator to settle with for real. */
type Settle = (real: FacilitatorClient, ...args: Parameters<FacilitatorClient["settle"]>) => ReturnType<FacilitatorClient["settle"]>;

/**
 * A local Solana, and the service with its Solana site on it (its scenario's payTo and fee payer).
 * With `settle`, the site's facilitator is the chain's in-process one whose settlement goes
 * through `settle` (to lose an answer, say). With `chain`, the service reads that chain (already
 * started) rather than a new one: a service of its own, with nothing cached from other tests.
 */
export async function startSolanaSite(
  options: { store?: Store; settle?: Settle; chain?: LocalSolanaDevnet } = {},
): Promise<{ chain: LocalSolanaDevnet; service: RunningService; site: string }> {
  const chain = options.chain ?? (await startLocalSolana({}));
  const s = chain.scenario;
  const { settle } = options;
  const real = settle ? createSvmFacilitator(s.feePayer.signer, chain.rpcUrl, s.network) : undefined;
  const service = await startTestService({
    ...(options.store ? { store: options.store } : {}),
    solana: { rpcUrl: chain.rpcUrl, network: s.network, usdcMint: s.usdcMint, payTo: s.payTo, feePayer: s.feePayer.signer },
    ...(real && settle
      ? {
          solanaFacilitator: {
            verify: (payload, requirements) => real.verify(payload, requirements),
            settle: (payload, requirements) => settle(real, payload, requirements),
            getSupported: () => real.getSupported(),
          } satisfies FacilitatorClient,
        }
      : {}),
  });
  return { chain, service, site: service.solanaUrl as string };
}

/** POST `body` as JSON to `url`, with `headers` (a payment, say). */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

/** The PAYMENT-SIGNATURE header scenario buyer `buyer` signs with the stock SVM client for the challenge of POST `body` to `url`. */
export async function paymentHeaderFor(chain: LocalSolanaDevnet, buyer: number, url: string, body: unknown): Promise<string> {
  const { signer } = chain.scenario.buyers[buyer] as LocalSolanaDevnet["scenario"]["buyers"][number];
  const challenge = decodePaymentRequiredHeader((await postJson(url, body)).headers.get("payment-required") as string);
  const payload = await new x402HTTPClient(svmClient(signer, chain.rpcUrl, chain.scenario.network)).createPaymentPayload(challenge);
  return encodePaymentSignatureHeader(payload);
}
