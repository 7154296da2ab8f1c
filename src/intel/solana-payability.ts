/**
 * Whether a buyer's stock Solana client can pay a Solana option: `@x402/svm`'s own exact client
 * scheme parses the option and builds and signs the transfer with a throwaway key made at start
 * (offline: nothing is sent, no money can move). It reads two things from a Solana RPC that the
 * seller cannot get wrong: a recent blockhash (a placeholder stands in when the challenge carries
 * none) and the mint's token program and decimals, known here for USDC; an option in another
 * mint is not measured (null): the checker reads no Solana RPC.
 */
import { generateKeyPairSigner, isAddress, type KeyPairSigner } from "@solana/kit";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type { PaymentRequired, PaymentRequirements, SchemeNetworkClient } from "@x402/core/types";
import { findDefaultAsset, TOKEN_PROGRAM_ADDRESS } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { isObject } from "../json.ts";
import { isUsdc } from "./networks.ts";
import { controlOf, messageOf, optionAnswer, optionChooser, signOffline } from "./sign-offline.ts";

/** A well-formed blockhash for offline signing: a real buyer reads the latest one itself. */
const PLACEHOLDER_BLOCKHASH = "11111111111111111111111111111111";

/** Why a Solana option could not be measured (not the seller's fault): the checker answers null for it. */
export class SolanaNotMeasured extends Error {
  override name = "SolanaNotMeasured";
}

let signer: Promise<KeyPairSigner> | undefined;

/** The stock client scheme, with what it would read from the chain for USDC given. */
class CheckingSvmClient implements SchemeNetworkClient {
  readonly scheme = "exact";
  // The stock scheme's default assets, which the default client's spend controls allow.
  readonly findDefaultAsset = findDefaultAsset;

  async createPaymentPayload(x402Version: number, requirements: PaymentRequirements) {
    signer ??= generateKeyPairSigner();
    const known = isUsdc(requirements.network, requirements.asset);
    // What the client's address codec would refuse, refused here without reading any chain.
    if (!isAddress(String(requirements.asset)))
      throw new Error(`the asset ${JSON.stringify(requirements.asset)} is not a Solana mint address (base58 of 32 bytes)`);
    if (!known) {
      throw new SolanaNotMeasured(
        `the mint ${requirements.asset} is not USDC, and this checker reads no Solana RPC to learn its token program`,
      );
    }
    const client = new ExactSvmScheme(await signer);
    // What getAccountInfo answers for USDC's mint: the SPL Token program, 6 decimals.
    (client as unknown as { mintCache: Map<string, Promise<unknown>> }).mintCache.set(
      `${requirements.network}:${requirements.asset}`,
      Promise.resolve({ decimals: 6, programAddress: TOKEN_PROGRAM_ADDRESS }),
    );
    const extra = requirements.extra ?? {};
    const withBlockhash = extra.recentBlockhash
      ? requirements
      : { ...requirements, extra: { ...extra, recentBlockhash: PLACEHOLDER_BLOCKHASH } };
    return client.createPaymentPayload(x402Version, withBlockhash);
  }
}

/** The stock client a Solana buyer gets (x402Client with the SVM exact scheme, default spend controls), checking as above. */
const solanaClient = new x402HTTPClient(new x402Client().register("solana:*", new CheckingSvmClient()));
/** The option of a challenge the same client pays, if any. */
export const solanaChoice = optionChooser(new x402Client().register("solana:*", new CheckingSvmClient()));
/** The same client with its spend controls off: what a buyer who loosened them would do. */
const loosenedSolanaClient = new x402HTTPClient(new x402Client().register("solana:*", new CheckingSvmClient()).setSpendControls(false));
/** The option of a challenge that loosened client pays, if any. */
export const loosenedSolanaChoice = optionChooser(new x402Client().register("solana:*", new CheckingSvmClient()).setSpendControls(false));

/** Whether `option` is a Solana option of an x402 v2 challenge (CAIP-2 `solana:*`): the options checked here. */
export function isSolanaOption(version: unknown, option: unknown): boolean {
  return version === 2 && isObject(option) && String(option.network).startsWith("solana:");
}

/** One Solana option's payability, in the shape of the EVM options' (src/intel/x402-clients.ts). */
export async function solanaOptionPayability(index: number, required: PaymentRequired, option: unknown) {
  const failure = await signOffline(solanaClient, required, option);
  if (failure === null) return optionAnswer(index, true);
  if (failure instanceof SolanaNotMeasured) return optionAnswer(index, null, { reason: messageOf(failure) });
  const control = controlOf(messageOf(failure));
  if (!control) return optionAnswer(index, false, { reason: messageOf(failure), refused_by: "client" });
  // Refused by the default client's spend controls: would a loosened client pay it (null when not measured)?
  const loosened = await signOffline(loosenedSolanaClient, required, option);
  return optionAnswer(index, false, {
    reason: messageOf(failure),
    refused_by: "spend_controls",
    control,
    payable_with_loosened_controls: loosened === null ? true : loosened instanceof SolanaNotMeasured ? null : false,
  });
}
