/**
 * x402's exact scheme on Solana, wired for this service: the in-process facilitator (a fee-payer
 * key co-signs and pays the fee), the payment scheme the gate takes for the Solana site, and a
 * buyer's client scheme. Each is the library's own (`@x402/svm`); what is here works around the
 * traps it has: a kit RPC passed bare is mistaken for a per-network map (so it goes in
 * `{ [network]: rpc }`), and the client helper has no RPC URL (so the scheme is registered by hand).
 */
import {
  type Address,
  getBase64Encoder,
  getPublicKeyFromAddress,
  getSignatureFromTransaction,
  getTransactionDecoder,
  isSolanaError,
  type KeyPairSigner,
  type SignatureBytes,
  SOLANA_ERROR__JSON_RPC__INVALID_PARAMS,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  verifySignature,
} from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { SupportedResponse } from "@x402/core/types";
import { toClientSvmSigner, toFacilitatorSvmSigner } from "@x402/svm";
import bs58 from "bs58";
import { isObject } from "../json.ts";
import { svmNetwork } from "../networks/index.ts";
import { type DecodedPayment, decodeEnvelope, isProblem, type PayloadProblem, signedOnce } from "../payments/payload.ts";
import type { PaymentScheme } from "../payments/scheme.ts";
import { solanaRpc } from "./rpc.ts";
import { svmSettlementLookup } from "./settlements.ts";
import { messageHash, readTransfer, type TransferRead, transactionBytes } from "./transfer.ts";

/** A validBefore no ledger reads as a time: a Solana payment's window is its blockhash's, and the challenge's. */
const NO_DEADLINE = "18446744073709551615";

/** Whether `error` is the RPC's own answer (a JSON-RPC error), not a failure to reach it or to hear back from it. */
const rpcAnswered = (error: unknown) => isSolanaError(error) && !isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR);

/**
 * Whether a failed simulation is a verdict on the transaction: the library's own "Simulation
 * failed: ..." (the RPC ran it and it failed), or the RPC refusing the transaction it was given
 * (JSON-RPC -32602, invalid params). Any other JSON-RPC error is the provider's (-32603 internal,
 * -32005 node unhealthy, a rate limit some providers answer as JSON-RPC) and says nothing of the payment.
 */
const simulationVerdict = (error: unknown) =>
  isSolanaError(error, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS) ||
  (error instanceof Error && error.message.startsWith("Simulation failed:"));

/** How a simulation the RPC could not run is marked in the library's verdict (it catches every error as a failed simulation). */
const RPC_UNAVAILABLE = "solana_rpc_unavailable";

/** The id of a signed wire transaction (base64): its first signature, the fee payer's. */
function transactionId(transaction: string): string {
  return getSignatureFromTransaction(getTransactionDecoder().decode(getBase64Encoder().encode(transaction)));
}

/**
 * The in-process facilitator: verifies, co-signs as fee payer and sends through `rpcUrl`. Two
 * failures of the RPC are not verdicts on the payment, so the library's signer is wrapped:
 * - a simulation the RPC could not run (unreachable, rate-limited, a JSON-RPC error of the
 *   provider's own) makes `verify` throw, which the gate answers 503, instead of refusing a good payment;
 * - a send that failed without the RPC answering (a reset connection, a gateway's 502, a timeout)
 *   may have been forwarded: the transaction's id is returned, so the library confirms it on chain
 *   (landed: settled; not yet: pending, which the upkeep resolves) instead of calling it failed.
 */
export function createSvmFacilitator(feePayer: KeyPairSigner, rpcUrl: string, network: string): FacilitatorClient & { address: string } {
  const rpc = solanaRpc(rpcUrl);
  const stock = toFacilitatorSvmSigner(feePayer, { [network]: rpc } as never);
  const signer: typeof stock = {
    ...stock,
    simulateTransaction: (transaction, net, options) =>
      stock.simulateTransaction(transaction, net, options).catch((error: unknown) => {
        throw simulationVerdict(error) ? error : new Error(`${RPC_UNAVAILABLE}: ${error instanceof Error ? error.message : String(error)}`);
      }),
    sendTransaction: (transaction, net) =>
      stock.sendTransaction(transaction, net).catch((error: unknown) => {
        if (rpcAnswered(error)) throw error;
        return transactionId(transaction);
      }),
  };
  const facilitator = svmNetwork(network).schemesAt(rpcUrl).facilitator(new x402Facilitator(), signer);
  return {
    address: feePayer.address,
    verify: async (payload, requirements) => {
      const verdict = await facilitator.verify(payload, requirements);
      if (verdict.invalidMessage?.startsWith(RPC_UNAVAILABLE)) throw new Error(verdict.invalidMessage);
      return verdict;
    },
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
    signedByPayer: signedOnce(svmSignedByPayer),
    signIn: false,
    // The fee payer the server scheme adds to every challenge (a base58 address, at most 44 characters).
    sizingExtra: { feePayer: "1".repeat(44) },
  };
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
  const nonce = messageHash(read.message);
  const authorization = {
    from: payer as `0x${string}`,
    to: accepted.payTo as `0x${string}`,
    value: accepted.amount as string,
    validAfter: "0",
    validBefore: NO_DEADLINE,
    nonce: nonce as `0x${string}`,
  };
  return { payload, authorization, signature: bs58.encode(signature) as `0x${string}`, paymentId, key: `${payer}:${nonce}` };
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
