/**
 * A Solana payment's wire transaction, read as @x402/svm reads it: its payer, the payer's
 * signature and the signed message, whose hash is the payment's identity (its nonce).
 */
import { createHash } from "node:crypto";
import { getShortU16Decoder } from "@solana/kit";
import { TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from "@x402/svm";
import bs58 from "bs58";

/** The token programs whose transfer names the payer, as 32 raw bytes. */
const TOKEN_PROGRAMS = [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS].map((address) => bs58.decode(address));
const shortU16 = getShortU16Decoder();

/** What a payment's transaction says of its payer: the token transfer's authority, its signature (null: not signed), and the signed message. */
export interface TransferRead {
  payer: string;
  signature: Uint8Array | null;
  message: Uint8Array;
}

/**
 * Read a wire transaction as @x402/svm's `decodeTransactionFromPayload` and
 * `getTokenPayerFromTransaction` do (the payer is the authority, fourth account, of the first
 * token-program instruction; the whole message must parse), base58-encoding only the payer: kit's
 * decoders encode every account with BigInt arithmetic, about 0.5 ms a header, a tenth of a paid
 * call. Throws where kit's decoders throw.
 */
export function readTransfer(bytes: Uint8Array): TransferRead {
  let of = bytes;
  let at = 0;
  const skip = (length: number) => {
    if (at + length > of.length) throw new RangeError("transaction truncated");
    at += length;
    return at - length;
  };
  const shortVec = () => {
    skip(1);
    const [value, next] = shortU16.read(of, at - 1);
    if (next > of.length) throw new RangeError("transaction truncated");
    at = next;
    return value;
  };
  const signatures = shortVec();
  const signaturesAt = skip(64 * signatures);
  const message = bytes.subarray(at);
  of = message;
  at = 0;
  // A versioned message starts with 0x80 | version (kit reads version 0 only); a legacy one with its header.
  if ((message[0] as number) & 0x80 && message[skip(1)] !== 0x80) throw new RangeError("unsupported version");
  const signers = message[skip(3)] as number;
  if (signers !== signatures) throw new RangeError("signature count differs from the message's signers");
  const accounts = shortVec();
  const keysAt = skip(32 * accounts);
  skip(32); // the recent blockhash
  const key = (index: number) => {
    if (index >= accounts) throw new RangeError("an index outside the static accounts");
    return message.subarray(keysAt + 32 * index, keysAt + 32 * index + 32);
  };
  let owner: number | undefined;
  for (let i = shortVec(); i > 0; i--) {
    const program = message[skip(1)] as number;
    const count = shortVec();
    const indices = message.subarray(skip(count), at);
    skip(shortVec()); // the instruction's data
    // As the library, every program up to the transfer's must be a static account; later ones are not looked at.
    if (owner === undefined) {
      const programKey = key(program);
      if (indices.length >= 4 && TOKEN_PROGRAMS.some((token) => Buffer.compare(token, programKey) === 0)) owner = indices[3] as number;
    }
  }
  for (let i = shortVec(); i > 0; i--) {
    skip(32); // an address lookup table, then its writable and read-only indexes
    skip(shortVec());
    skip(shortVec());
  }
  if (owner === undefined) return { payer: "", signature: null, message };
  const payer = bs58.encode(key(owner));
  const signature = owner < signers ? bytes.subarray(signaturesAt + 64 * owner, signaturesAt + 64 * owner + 64) : null;
  return { payer, signature: signature?.some((b) => b !== 0) ? signature : null, message };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A payload's base64 transaction as bytes (Buffer skips characters outside the alphabet: refused first, as kit's decoder does). */
export function transactionBytes(transaction: string): Uint8Array {
  if (!BASE64.test(transaction)) throw new RangeError("not base64");
  return Buffer.from(transaction, "base64");
}

/** A payment's nonce: the hash of its transaction's message (what the payer signed; the facilitator de-duplicates by it). */
export function messageHash(message: Uint8Array): `0x${string}` {
  return `0x${createHash("sha256").update(message).digest("hex")}`;
}
