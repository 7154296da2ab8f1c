/**
 * Solana keys of local mode: Ed25519 key pairs derived from a label, so the seeded chain, its
 * ground truth and the DexScreener stand-in's fixtures name the same addresses on every machine.
 * Exported as Solana wallets export them: the 64-byte secret key (seed then public key) in base58.
 */
import { createHash } from "node:crypto";
import {
  type Address,
  createKeyPairSignerFromBytes,
  createKeyPairSignerFromPrivateKeyBytes,
  getAddressEncoder,
  getBase58Decoder,
  getBase58Encoder,
  type KeyPairSigner,
} from "@solana/kit";

/** A key pair with its exportable secret. */
export interface SolanaKey {
  address: Address;
  signer: KeyPairSigner;
  /** The 64-byte secret key in base58 (what `solana-keygen` and wallets import). */
  secretKey: string;
}

/** The key of `label` in local mode: the same on every machine (public, like anvil's accounts). */
export async function localKey(label: string): Promise<SolanaKey> {
  const seed = new Uint8Array(createHash("sha256").update(`x402-local-solana:${label}`).digest());
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed, true);
  const secret = new Uint8Array(64);
  secret.set(seed, 0);
  secret.set(getAddressEncoder().encode(signer.address), 32);
  return { address: signer.address, signer, secretKey: getBase58Decoder().decode(secret) };
}

/** A signer from a 64-byte secret key in base58 (a wallet's export), or a JSON array of 64 numbers (a keygen file). */
export async function signerFromSecret(secret: string): Promise<KeyPairSigner> {
  const text = secret.trim();
  const bytes = text.startsWith("[") ? Uint8Array.from(JSON.parse(text) as number[]) : new Uint8Array(getBase58Encoder().encode(text));
  if (bytes.length !== 64) throw new Error(`a Solana secret key has 64 bytes, this one ${bytes.length}`);
  return createKeyPairSignerFromBytes(bytes);
}
