/**
 * Reading a payment header before anything is asked of the facilitator: the base64 JSON of an
 * x402 v2 exact-scheme payment, every field checked for shape. A malformed payload is refused
 * here with the field that is wrong, so nobody can make the facilitator fail at will.
 */
import { decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { authorizationTypes, type ExactEIP3009Payload } from "@x402/evm";
import { extractPaymentIdentifier, isValidPaymentId, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import secp256k1 from "secp256k1";
import { bytesToHex, type Hex, hashTypedData, hexToBytes, isAddress, type TypedDataDomain } from "viem";
import { publicKeyToAddress } from "viem/accounts";
import { isObject } from "../json.ts";

/** A payment header whose every field has the right shape (nothing verified yet). */
export interface DecodedPayment {
  payload: PaymentPayload;
  /** The EIP-3009 authorisation of the payment, as signed. */
  authorization: ExactEIP3009Payload["authorization"];
  signature: `0x${string}`;
  /** The buyer's `payment-identifier` id, when it sent one. */
  paymentId: string | null;
  /** `payer:nonce`, lower case: the authorisation's identity. */
  key: string;
}

/** Why a header is not a payment: the field and what was expected there. */
export interface PayloadProblem {
  field: string;
  expected: string;
}

const MAX_HEADER_BYTES = 16 * 1024;
const UINT = /^(0|[1-9][0-9]{0,77})$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130,}$/;
const MAX_UINT256 = 2n ** 256n - 1n;

const uint = (v: unknown) => typeof v === "string" && UINT.test(v) && BigInt(v) <= MAX_UINT256;

/** A payment header's x402 v2 envelope, checked for shape: what every scheme's payload sits in. */
export interface PaymentEnvelope {
  payload: PaymentPayload;
  /** The option chosen from the challenge's accepts: scheme, network, asset, amount and payTo are strings. */
  accepted: Record<string, unknown>;
  /** The scheme's own payload object (not yet checked). */
  inner: unknown;
  /** The buyer's `payment-identifier` id, when it sent one. */
  paymentId: string | null;
}

/** Decode a `PAYMENT-SIGNATURE` / `X-Payment` value and check its x402 v2 envelope and payment-identifier id. */
export function decodeEnvelope(header: string): PaymentEnvelope | PayloadProblem {
  if (header.length > MAX_HEADER_BYTES) return { field: "header", expected: `at most ${MAX_HEADER_BYTES} bytes` };
  let payload: PaymentPayload;
  try {
    payload = decodePaymentSignatureHeader(header);
  } catch {
    return { field: "header", expected: "base64 of a JSON x402 payment payload" };
  }
  const raw = payload as unknown as Record<string, unknown>;
  if (!isObject(raw)) return { field: "header", expected: "base64 of a JSON object" };
  if (raw.x402Version !== 2) return { field: "x402Version", expected: "2 (this service speaks x402 version 2)" };
  const accepted = raw.accepted;
  if (!isObject(accepted)) return { field: "accepted", expected: "the payment option chosen from the challenge's accepts" };
  for (const name of ["scheme", "network", "asset", "amount", "payTo"]) {
    if (typeof accepted[name] !== "string") return { field: `accepted.${name}`, expected: "a string, copied from the challenge" };
  }
  if (raw.extensions !== undefined && !isObject(raw.extensions)) return { field: "extensions", expected: "an object" };
  const declared = (raw.extensions as Record<string, unknown> | undefined)?.[PAYMENT_IDENTIFIER];
  let paymentId: string | null = null;
  if (declared !== undefined) {
    const id = isObject(declared) && isObject(declared.info) ? declared.info.id : undefined;
    if (id !== undefined && (typeof id !== "string" || !isValidPaymentId(id)))
      return { field: `extensions.${PAYMENT_IDENTIFIER}.info.id`, expected: "16-128 characters: letters, digits, - and _" };
    paymentId = extractPaymentIdentifier(payload, false);
  }
  return { payload, accepted, inner: raw.payload, paymentId };
}

/** Decode and check an EVM exact (EIP-3009) `PAYMENT-SIGNATURE` / `X-Payment` value. */
export function decodePayment(header: string): DecodedPayment | PayloadProblem {
  const envelope = decodeEnvelope(header);
  if (isProblem(envelope)) return envelope;
  const { payload, inner, paymentId } = envelope;
  if (!isObject(inner)) return { field: "payload", expected: "an object with authorization and signature" };
  const auth = inner.authorization;
  if (!isObject(auth)) return { field: "payload.authorization", expected: "an EIP-3009 TransferWithAuthorization object" };
  for (const name of ["from", "to"] as const) {
    if (typeof auth[name] !== "string" || !isAddress(auth[name] as string, { strict: false }))
      return { field: `payload.authorization.${name}`, expected: "an address (0x + 40 hex digits)" };
  }
  for (const name of ["value", "validAfter", "validBefore"] as const) {
    if (!uint(auth[name])) return { field: `payload.authorization.${name}`, expected: "a decimal integer string (uint256)" };
  }
  if (typeof auth.nonce !== "string" || !NONCE.test(auth.nonce))
    return { field: "payload.authorization.nonce", expected: "0x + 64 hex digits" };
  if (typeof inner.signature !== "string" || !SIGNATURE.test(inner.signature))
    return { field: "payload.signature", expected: "a hex signature (0x + at least 130 hex digits)" };
  const authorization = auth as unknown as DecodedPayment["authorization"];
  return {
    payload,
    authorization,
    signature: inner.signature as `0x${string}`,
    paymentId,
    key: `${authorization.from.toLowerCase()}:${authorization.nonce.toLowerCase()}`,
  };
}

/** True when a decoder refused the header. */
export function isProblem<T extends object>(result: T | PayloadProblem): result is PayloadProblem {
  return "field" in result;
}

/**
 * Whether `signature` (65 bytes) over `hash` is `address`'s, recovered with libsecp256k1: viem's
 * pure-JavaScript recovery costs about 1 ms, and the rate limits ask it of every paid call.
 */
export function signedBy(address: string, hash: Hex, signature: string): boolean {
  try {
    const bytes = hexToBytes(signature as Hex);
    const v = bytes[64] as number;
    if (bytes.length !== 65 || ![0, 1, 27, 28].includes(v)) return false;
    const key = secp256k1.ecdsaRecover(bytes.subarray(0, 64), v % 27, hexToBytes(hash), false);
    return publicKeyToAddress(bytesToHex(key)).toLowerCase() === address.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * Whether the authorisation's signature is the payer's own, checked locally (no RPC): an EOA
 * signature. Once settled, the signed authorisation is public in the transaction's calldata, so
 * this proves the header is the real authorisation, not who sends it.
 */
export async function signedByPayer(decoded: DecodedPayment, domain: TypedDataDomain): Promise<boolean> {
  const { from, to, value, validAfter, validBefore, nonce } = decoded.authorization;
  const message = { from, to, value: BigInt(value), validAfter: BigInt(validAfter), validBefore: BigInt(validBefore), nonce };
  return signedBy(
    from,
    hashTypedData({ domain, types: authorizationTypes, primaryType: "TransferWithAuthorization", message }),
    decoded.signature,
  );
}

/**
 * `check` answered once per decoded payment: the rate limits and the gate both ask whether a
 * payment carries its payer's signature, and a signature recovery is the dearest step of a
 * request before the facilitator, so the second asker reuses the first's verdict.
 */
export function signedOnce(check: (decoded: DecodedPayment) => Promise<boolean>): (decoded: DecodedPayment) => Promise<boolean> {
  const verdicts = new WeakMap<DecodedPayment, Promise<boolean>>();
  return (decoded) => {
    let verdict = verdicts.get(decoded);
    if (verdict === undefined) {
      verdict = check(decoded);
      verdicts.set(decoded, verdict);
    }
    return verdict;
  };
}
