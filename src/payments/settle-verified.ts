/**
 * Settling an EIP-3009 payment this facilitator verified moments before, without verifying it
 * again. The x402 library's `settle` starts with a full verification of its own: the payer's
 * code read twice and the signature recovered again (about 5 ms of CPU on the bench machine,
 * the costliest step of a paid call), though the gate (src/payments/gate.ts) only ever settles
 * what it verified for the same request. Here a verified plain payment (a 65-byte signature
 * from an address without code, EIP-3009 `transferWithAuthorization`) is remembered, and its
 * settlement goes straight to the transfer: the gas estimate before broadcasting
 * (src/payments/settlement-sender.ts) simulates it, so a signature, nonce, balance or time
 * window that stopped being valid since the verification is never broadcast. Anything else,
 * and any failure before broadcasting, takes the library's own path, so refusals keep its
 * reason codes.
 */
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { eip3009ABI } from "@x402/evm";
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hash,
  type Hex,
  isAddressEqual,
  parseEventLogs,
  parseSignature,
  type TransactionReceipt,
} from "viem";

/** The library's reason codes for a transfer that reverted, or whose receipt lacks the transfer (`@x402/evm`'s exact scheme). */
export const TRANSACTION_FAILED = "invalid_exact_evm_transaction_failed";
export const TRANSFER_EVENT_MISMATCH = "invalid_exact_evm_transfer_event_mismatch";
/** The library's reason when a broadcast transaction's receipt never came (it may still land). */
export const SETTLEMENT_PENDING = "settlement_pending";

/** How close to its `validBefore` an authorisation may be settled: the library's own margin, in seconds. */
const VALID_BEFORE_MARGIN_S = 6;
/** Verified payments remembered at most; the gate settles within seconds of verifying, so this is generous. */
const MAX_REMEMBERED = 10_000;

/** A plain EIP-3009 payment as a settlement needs it. */
interface PlainPayment {
  key: string;
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
  asset: Address;
}

const isHex = (v: unknown): v is Hex => typeof v === "string" && /^0x[0-9a-fA-F]*$/.test(v);

/**
 * The payment as a plain EIP-3009 transfer of `requirements`, or undefined when it is anything
 * else (Permit2, a wrapped ERC-6492 or contract-wallet signature, another scheme or version).
 */
export function plainPayment(payload: PaymentPayload, requirements: PaymentRequirements): PlainPayment | undefined {
  if (payload.x402Version !== 2 || requirements.scheme !== "exact" || payload.accepted?.scheme !== "exact") return undefined;
  if (payload.accepted.network !== requirements.network) return undefined;
  const { authorization: a, signature } = payload.payload as { authorization?: Record<string, unknown>; signature?: unknown };
  if (!a || !isHex(signature) || signature.length !== 132) return undefined;
  const { from, to, value, validAfter, validBefore, nonce } = a;
  if (!isHex(from) || !isHex(to) || !isHex(nonce) || from.length !== 42 || to.length !== 42 || nonce.length !== 66) return undefined;
  if (typeof value !== "string" || typeof validAfter !== "string" || typeof validBefore !== "string") return undefined;
  if (!/^\d{1,78}$/.test(value) || !/^\d{1,20}$/.test(validAfter) || !/^\d{1,20}$/.test(validBefore)) return undefined;
  if (!isHex(requirements.asset) || requirements.asset.length !== 42) return undefined;
  const { name, version } = (requirements.extra ?? {}) as { name?: unknown; version?: unknown };
  // Everything the verification depended on is in the key: settling under other terms verifies again.
  const key = JSON.stringify([
    signature.toLowerCase(),
    from.toLowerCase(),
    to.toLowerCase(),
    value,
    validAfter,
    validBefore,
    nonce.toLowerCase(),
    requirements.network,
    requirements.asset.toLowerCase(),
    requirements.payTo.toLowerCase(),
    requirements.amount,
    name,
    version,
  ]);
  return {
    key,
    from: getAddress(from),
    to: getAddress(to),
    value: BigInt(value),
    validAfter: BigInt(validAfter),
    validBefore: BigInt(validBefore),
    nonce,
    signature,
    asset: getAddress(requirements.asset),
  };
}

/** Payments verified as valid, each settled without a second verification at most once. */
export class VerifiedPayments {
  readonly #entries = new Map<string, number>();

  /** Remember `payment` as verified now; forgotten at its `validBefore`. */
  remember(payment: PlainPayment): void {
    if (this.#entries.size >= MAX_REMEMBERED) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(payment.key, Number(payment.validBefore) * 1000);
  }

  /** True once for a payment remembered and still inside its window (with the library's margin). */
  take(payment: PlainPayment, now = Date.now()): boolean {
    const until = this.#entries.get(payment.key);
    if (until === undefined) return false;
    this.#entries.delete(payment.key);
    return now + VALID_BEFORE_MARGIN_S * 1000 <= until && BigInt(Math.floor(now / 1000)) >= payment.validAfter;
  }
}

/** What a settlement is sent and waited on with (src/payments/settlement-sender.ts). */
export interface Sender {
  send(tx: { to: Address; data: Hex }): Promise<Hash>;
  waitForReceipt(hash: Hash): Promise<TransactionReceipt>;
}

/**
 * Settle a payment verified moments ago: the transfer, its receipt and its Transfer event, as
 * the library's settlement does after its verification. Undefined when nothing was broadcast
 * (the gas estimate refused it, or the node did): the caller then settles through the library,
 * whose verification and error mapping name the reason.
 */
export async function settleVerified(sender: Sender, payment: PlainPayment, network: Network): Promise<SettleResponse | undefined> {
  const { r, s, v, yParity } = parseSignature(payment.signature);
  const data = encodeFunctionData({
    abi: eip3009ABI,
    functionName: "transferWithAuthorization",
    args: [
      payment.from,
      payment.to,
      payment.value,
      payment.validAfter,
      payment.validBefore,
      payment.nonce,
      Number(v ?? 27n + BigInt(yParity)),
      r,
      s,
    ],
  });
  let hash: Hash;
  try {
    hash = await sender.send({ to: payment.asset, data });
  } catch {
    return undefined;
  }
  const answer = { transaction: hash, network, payer: payment.from };
  let receipt: TransactionReceipt;
  try {
    receipt = await sender.waitForReceipt(hash);
  } catch {
    // Broadcast, and no receipt in time: it may still land.
    return { success: false, errorReason: SETTLEMENT_PENDING, ...answer };
  }
  if (receipt.status !== "success") return { success: false, errorReason: TRANSACTION_FAILED, ...answer };
  const transfers = parseEventLogs({
    abi: erc20Abi,
    eventName: "Transfer",
    logs: receipt.logs.filter((log) => isAddressEqual(log.address, payment.asset)),
  });
  const paid = transfers.some(
    (t) => isAddressEqual(t.args.from, payment.from) && isAddressEqual(t.args.to, payment.to) && t.args.value === payment.value,
  );
  return paid ? { success: true, ...answer } : { success: false, errorReason: TRANSFER_EVENT_MISMATCH, ...answer };
}
