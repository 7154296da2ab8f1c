/**
 * x402's exact scheme on Solana, wired for this service: the in-process facilitator (a fee-payer
 * key co-signs and pays the fee), the payment scheme the gate takes for the Solana site, and a
 * buyer's client scheme. Each is the library's own (`@x402/svm`); what is here works around the
 * traps it has: a kit RPC passed bare is mistaken for a per-network map (so it goes in
 * `{ [network]: rpc }`), and the client helper has no RPC URL (so the scheme is registered by hand).
 */
import { createHash } from "node:crypto";
import {
  type Address,
  createSolanaRpc,
  getPublicKeyFromAddress,
  getShortU16Decoder,
  type KeyPairSigner,
  type SignatureBytes,
  verifySignature,
} from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { SupportedResponse } from "@x402/core/types";
import { TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS, toClientSvmSigner, toFacilitatorSvmSigner } from "@x402/svm";
import bs58 from "bs58";
import { svmNetwork } from "../networks/index.ts";
import { type DecodedPayment, decodeEnvelope, isProblem, type PayloadProblem } from "../payments/payload.ts";
import type { PaymentScheme } from "../payments/scheme.ts";
import { svmSettlementLookup } from "./settlements.ts";

/** A validBefore no ledger reads as a time: a Solana payment's window is its blockhash's, and the challenge's. */
const NO_DEADLINE = "18446744073709551615";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The in-process facilitator: verifies, co-signs as fee payer and sends through `rpcUrl`. */
export function createSvmFacilitator(feePayer: KeyPairSigner, rpcUrl: string, network: string): FacilitatorClient & { address: string } {
  const rpc = createSolanaRpc(rpcUrl);
  const signer = toFacilitatorSvmSigner(feePayer, { [network]: rpc } as never);
  const facilitator = svmNetwork(network).schemesAt(rpcUrl).facilitator(new x402Facilitator(), signer);
  return {
    address: feePayer.address,
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

/**
 * The Solana site's payment scheme for the gate. Challenges name the facilitator's fee payer and
 * carry no blockhash: with one (the server scheme given an RPC URL) some routes' challenges pass
 * the 4 KB header budget, and every challenge and paid call would cost a getLatestBlockhash. A
 * buyer's client reads the blockhash from its own RPC, as stock clients do. With `chain` (its
 * RPC and payTo), the upkeep can find how a payment left open ended (src/solana/settlements.ts).
 */
export function svmScheme(network: string, mint: string, chain?: { rpcUrl: string; payTo: string }): PaymentScheme {
  return {
    ...(chain ? { settlementOf: svmSettlementLookup(chain.rpcUrl, chain.payTo, mint) } : {}),
    network,
    asset: mint,
    assetExtra: {},
    register: (server) => svmNetwork(network).schemes.server(server),
    decode: decodeSvmPayment,
    signedByPayer: svmSignedByPayer,
    signIn: false,
    // The fee payer the server scheme adds to every challenge (a base58 address, at most 44 characters).
    sizingExtra: { feePayer: "1".repeat(44) },
  };
}

/** The token programs whose transfer names the payer, as 32 raw bytes. */
const TOKEN_PROGRAMS = [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS].map((address) => bs58.decode(address));
const shortU16 = getShortU16Decoder();

/** What a payment's transaction says of its payer: the token transfer's authority, its signature (null: not signed), and the signed message. */
interface TransferRead {
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
function readTransfer(bytes: Uint8Array): TransferRead {
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
  if ((message[0] as number) & 0x80 && skip(1) >= 0 && (message[0] as number) !== 0x80) throw new RangeError("unsupported version");
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
function transactionBytes(transaction: string): Uint8Array {
  if (!BASE64.test(transaction)) throw new RangeError("not base64");
  return Buffer.from(transaction, "base64");
}

/**
 * A Solana payment header read for shape: the partly signed transfer transaction, its payer (the
 * token transfer's authority) and its identity, the hash of the transaction's message (what the
 * payer signed; the facilitator de-duplicates settlements by the same hash).
 */
export function decodeSvmPayment(header: string): DecodedPayment | PayloadProblem {
  const envelope = decodeEnvelope(header);
  if (isProblem(envelope)) return envelope;
  const { payload, accepted, inner, paymentId } = envelope;
  if (!isObject(inner) || typeof inner.transaction !== "string") {
    return { field: "payload.transaction", expected: "a base64 Solana transaction signed by the payer" };
  }
  let read: TransferRead;
  try {
    read = readTransfer(transactionBytes(inner.transaction));
  } catch {
    return { field: "payload.transaction", expected: "a base64 Solana transaction (wire format)" };
  }
  const { payer, signature } = read;
  if (!payer) return { field: "payload.transaction", expected: "a token transfer instruction naming the payer as its authority" };
  if (!signature) return { field: "payload.transaction", expected: "the payer's signature on the transaction" };
  const nonce = `0x${createHash("sha256").update(read.message).digest("hex")}`;
  const authorization = {
    from: payer as `0x${string}`,
    to: accepted.payTo as `0x${string}`,
    value: accepted.amount as string,
    validAfter: "0",
    validBefore: NO_DEADLINE,
    nonce: nonce as `0x${string}`,
  };
  return { payload, authorization, signature: bs58.encode(signature) as `0x${string}`, paymentId, key: `${payer.toLowerCase()}:${nonce}` };
}

/** Whether the payer's signature on the transaction's message is valid (Ed25519, no RPC). */
async function svmSignedByPayer(decoded: DecodedPayment): Promise<boolean> {
  try {
    const { payer, signature, message } = readTransfer(transactionBytes((decoded.payload.payload as { transaction: string }).transaction));
    if (!signature || payer !== decoded.authorization.from) return false;
    const key = await getPublicKeyFromAddress(payer as Address);
    return await verifySignature(key, signature as SignatureBytes, message);
  } catch {
    return false;
  }
}

/** A buyer's x402 client paying on Solana with `signer`, reading the chain at `rpcUrl`. */
export function svmClient(signer: KeyPairSigner, rpcUrl: string, network: string): x402Client {
  return svmNetwork(network).schemesAt(rpcUrl).client(new x402Client(), toClientSvmSigner(signer));
}
