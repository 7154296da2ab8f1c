/**
 * Signing in with a wallet (Sign-In-With-X, CAIP-122 through `@x402/extensions/sign-in-with-x`),
 * as a buyer does to spend or read its prepaid balance or to re-read what it bought: the
 * `SIGN-IN-WITH-X` header value for one request, issued now, valid 5 minutes, with a fresh nonce. Used by the buyer
 * CLI, the benchmarks and the tests (which change fields to make refused sign-ins).
 */
import { randomBytes } from "node:crypto";
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x";
import type { PrivateKeyAccount } from "viem";
import { base } from "../../src/networks/base.ts";

/** The message fields a caller may set instead of the defaults (tests: an old `issuedAt`, another `domain` and `uri`). */
export interface SignInOverrides {
  domain?: string;
  uri?: string;
  issuedAt?: string;
  expirationTime?: string;
  statement?: string;
  /** CAIP-2 chain the wallet signs for (default Base). */
  chainId?: string;
  resources?: string[];
}

/**
 * The `SIGN-IN-WITH-X` header of `account` for a request to `url`: this origin, issued now, a
 * fresh nonce, on Base. A message for another domain is signed as that domain's page would ask
 * for it (the library refuses to sign one for a host other than the page's).
 */
export async function signInHeader(account: PrivateKeyAccount, url: string, overrides: SignInOverrides = {}): Promise<string> {
  const target = new URL(url);
  const now = Date.now();
  const info = {
    domain: target.host,
    uri: `${target.origin}${target.pathname}`,
    version: "1",
    nonce: randomBytes(16).toString("hex"),
    issuedAt: new Date(now).toISOString(),
    // The service accepts a sign-in for 5 minutes at most.
    expirationTime: new Date(now + 5 * 60_000).toISOString(),
    chainId: base.id,
    type: "eip191" as const,
    ...overrides,
  };
  const page = info.domain === target.host ? url : info.uri;
  return encodeSIWxHeader(await createSIWxPayload(info, account, page));
}
