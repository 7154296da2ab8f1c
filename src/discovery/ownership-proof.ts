/**
 * Ownership proofs: a signature of this service's origin (`https://host[:port]`, exactly as
 * `new URL(url).origin` prints it) by the `payTo` key, with EIP-191 `personal_sign`. x402scan
 * recovers the signer of each proof in `/openapi.json` and marks the origin's payment options
 * as verified when it is their `payTo`. The owner signs on their own machine
 * (`npm run ownership-proof`) and gives the service only the signature (`OWNERSHIP_PROOFS`);
 * local mode's `payTo` key is the public devnet key, so local mode signs for itself.
 */
import { type Address, type Hex, isAddressEqual, recoverMessageAddress } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { TEST_MNEMONIC } from "../chain/addresses.ts";

/** An ownership proof as published: a 65-byte (or EIP-2098 64-byte) signature in hex. */
export const OWNERSHIP_PROOF = /^0x(?:[0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/;

/** The address that signed `proof` for `origin`, as x402scan recovers it; undefined when it is not a signature. */
export async function ownershipProofSigner(proof: string, origin: string): Promise<Address | undefined> {
  if (!OWNERSHIP_PROOF.test(proof)) return undefined;
  try {
    return await recoverMessageAddress({ message: new URL(origin).origin, signature: proof as Hex });
  } catch {
    return undefined;
  }
}

/** True when `proof` is a signature of `origin` by `payTo`. */
export async function provesOwnership(proof: string, origin: string, payTo: Address): Promise<boolean> {
  const signer = await ownershipProofSigner(proof, origin);
  return signer !== undefined && isAddressEqual(signer, payTo);
}

let devnetPayTo: ReturnType<typeof mnemonicToAccount> | undefined;

/** Local mode's receiving account: account 1 of the public test mnemonic (src/local/devnet/devnet.ts). */
export function devnetPayToAccount() {
  devnetPayTo ??= mnemonicToAccount(TEST_MNEMONIC, { addressIndex: 1 });
  return devnetPayTo;
}

/** The devnet `payTo` key's proof for `origin`, when `payTo` is that account; local mode publishes it unasked. */
export async function devnetOwnershipProof(payTo: Address, origin: string): Promise<Hex | undefined> {
  const account = devnetPayToAccount();
  return isAddressEqual(account.address, payTo) ? account.signMessage({ message: new URL(origin).origin }) : undefined;
}
