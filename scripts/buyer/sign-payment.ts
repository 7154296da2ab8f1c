/**
 * Signing an x402 v2 exact-scheme payment by hand, as a buyer's client does: an EIP-3009
 * `TransferWithAuthorization` for the first option of a challenge, encoded as the
 * `PAYMENT-SIGNATURE` / `X-Payment` header value. Used by the benchmarks (signing ahead of
 * time) and by the tests (including deliberately spoiled payments); the buyer CLI uses
 * `@x402/fetch` instead.
 */
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { authorizationTypes } from "@x402/evm";
import { getAddress, type PrivateKeyAccount, toHex } from "viem";
import { base } from "../../src/networks/base.ts";

/** Changes that spoil a payment in one way (tests), or fix its time window (benchmarks). */
export interface PaymentOverrides {
  value?: string;
  to?: `0x${string}`;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: `0x${string}`;
  chainId?: number;
  /** Replaces fields of the requirements echoed as `accepted`. */
  accepted?: Partial<PaymentRequirements>;
  /** The payload's extensions, e.g. `{"payment-identifier": {info: {required: false, id}}}`. */
  extensions?: Record<string, unknown>;
}

/** Sign a payment for `challenge.accepts[0]` with `account` and encode it as the header value. */
export async function signPayment(
  challenge: PaymentRequired,
  account: PrivateKeyAccount,
  overrides: PaymentOverrides = {},
): Promise<string> {
  const requirements = challenge.accepts[0] as PaymentRequirements;
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: account.address,
    to: overrides.to ?? getAddress(requirements.payTo),
    value: BigInt(overrides.value ?? requirements.amount),
    validAfter: overrides.validAfter ?? 0n,
    validBefore: overrides.validBefore ?? now + BigInt(requirements.maxTimeoutSeconds),
    nonce: overrides.nonce ?? toHex(crypto.getRandomValues(new Uint8Array(32))),
  };
  const extra = requirements.extra as { name: string; version: string };
  const signature = await account.signTypedData({
    domain: {
      name: extra.name,
      version: extra.version,
      chainId: overrides.chainId ?? base.chainId,
      verifyingContract: getAddress(requirements.asset),
    },
    types: authorizationTypes,
    primaryType: "TransferWithAuthorization",
    message,
  });
  const authorization = {
    from: message.from,
    to: message.to,
    value: message.value.toString(),
    validAfter: message.validAfter.toString(),
    validBefore: message.validBefore.toString(),
    nonce: message.nonce,
  };
  const payload = {
    x402Version: 2,
    resource: challenge.resource,
    accepted: { ...requirements, ...overrides.accepted },
    payload: { authorization, signature },
    ...(overrides.extensions ? { extensions: overrides.extensions } : {}),
  } as PaymentPayload;
  return encodePaymentSignatureHeader(payload);
}
