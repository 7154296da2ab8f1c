/**
 * Sign-In-With-X (CAIP-122, `@x402/extensions/sign-in-with-x`): a wallet proves it is itself,
 * for this origin, within the last 5 minutes, once. The gate accepts it as the payer's proof
 * when redeeming a settled payment whose answer was lost (src/payments/gate.ts).
 */
import { randomBytes } from "node:crypto";
import { buildSIWxSchema, parseSIWxHeader, validateSIWxMessage, verifySIWxSignature } from "@x402/extensions/sign-in-with-x";
import type { RouteDef } from "../../spec/route.ts";
import type { Queryable } from "../store/store.ts";
import { useSiwxNonce } from "./kept-answers.ts";

/** The request header carrying the proof. */
export const SIWX_HEADER = "sign-in-with-x";

/** How old a sign-in may be. */
const MAX_AGE_MS = 5 * 60_000;

/** The wallet that signed `header` for `origin`, or the field that is wrong. */
export async function signedInPayer(
  header: string,
  origin: string,
  store: Queryable,
): Promise<{ payer: string } | { field: string; expected: string; reason: string }> {
  const refused = (reason: string, expected: string) => ({ field: "header.sign-in-with-x", expected, reason });
  let payload: ReturnType<typeof parseSIWxHeader>;
  try {
    payload = parseSIWxHeader(header);
  } catch {
    return refused("invalid_siwx_payload", "base64 JSON of a CAIP-122 sign-in payload");
  }
  if (!payload.chainId.startsWith("eip155:")) return refused("invalid_siwx_chain_id", "an eip155 wallet's sign-in");
  const valid = await validateSIWxMessage(payload, new URL(origin), { maxAge: MAX_AGE_MS });
  if (!valid.isValid) return refused(valid.invalidReason, `a sign-in for ${origin}, issued in the last 5 minutes, not expired`);
  const verified = await verifySIWxSignature(payload);
  if (!verified.isValid) return refused(verified.invalidReason, "the wallet's EIP-191 signature of the sign-in message");
  // Single use: a sign-in seen once (by anyone) cannot be replayed.
  if (!(await useSiwxNonce(store, `${verified.payer.toLowerCase()}:${payload.nonce}`, new Date(Date.now() + MAX_AGE_MS)))) {
    return refused("invalid_siwx_nonce", "a sign-in nonce not used before");
  }
  return { payer: verified.payer.toLowerCase() };
}

/**
 * The `sign-in-with-x` extension a challenge (or a 401) declares: what to sign for `resourceUrl`
 * on `origin`, in the form `@x402/extensions/sign-in-with-x` clients (`wrapFetchWithSIWx`) read.
 * The payload's JSON schema (`buildSIWxSchema`, 0.7 KB) is left out of challenges, which must stay
 * under 4 KB for nginx; clients do not read it, and the 401 of a sign-in carries it.
 */
export function signInDeclaration(origin: string, resourceUrl: string, network: string, statement: string, withSchema = false) {
  const issuedAt = new Date();
  return {
    info: {
      domain: new URL(origin).host,
      uri: resourceUrl,
      version: "1",
      nonce: randomBytes(16).toString("hex"),
      issuedAt: issuedAt.toISOString(),
      expirationTime: new Date(issuedAt.getTime() + MAX_AGE_MS).toISOString(),
      statement,
      resources: [resourceUrl],
    },
    supportedChains: [{ chainId: network, type: "eip191" as const }],
    ...(withSchema ? { schema: buildSIWxSchema() } : {}),
  };
}

/** Whether a route's challenge declares Sign-In-With-X: a wallet may use it by signing in (a balance, content it bought). */
export function declaresSignIn(route: RouteDef): boolean {
  return Boolean(route.balancePayable || route.signInRereadDays);
}

/** What a sign-in for `route` says to the wallet. */
export function signInStatement(route: RouteDef): string {
  return route.signInRereadDays
    ? `Sign in to read again what this wallet bought in the last ${route.signInRereadDays} days.`
    : "Sign in to use this wallet's prepaid balance.";
}
