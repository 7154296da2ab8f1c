/**
 * Sign-In-With-X (CAIP-122, `@x402/extensions/sign-in-with-x`): a wallet proves it is itself,
 * for one of our public origins, on a chain the route's challenge declares, for the route it is
 * used on, within the last 5 minutes, once.
 *
 * The library's `createSIWxRequestHook` checks only the origin (one per hook) and uses the nonce
 * before knowing whether the sign-in grants anything; here the chain and the route are checked
 * too, and the nonce is used only by the way of paying that the sign-in actually serves.
 */
import { randomBytes } from "node:crypto";
import { invert } from "@noble/curves/abstract/modular";
import { secp256k1 } from "@noble/curves/secp256k1";
import { type EVMMessageVerifier, parseSIWxHeader, validateSIWxMessage, verifySIWxSignature } from "@x402/extensions/sign-in-with-x";
import { bytesToBigInt, hashMessage, hexToBytes, recoverPublicKey } from "viem";
import { publicKeyToAddress } from "viem/accounts";
import type { RouteDef } from "../../spec/route.ts";
import type { Queryable } from "../store/store.ts";
import { payableFromBalance } from "./balances.ts";
import { useSiwxNonce } from "./kept-answers.ts";

/** The request header carrying the proof. */
export const SIWX_HEADER = "sign-in-with-x";

/** How old a sign-in may be. */
const MAX_AGE_MS = 5 * 60_000;

/** What a sign-in must name to be accepted for one request. */
export interface SignInScope {
  /** The site's configured public origin (never one read from the request). */
  origin: string;
  /** The chains the route's challenge declares (CAIP-2). */
  chains: readonly string[];
  /** The route's path: the sign-in's `uri` or one of its `resources` must name it on `origin`. */
  path: string;
}

/** A verified sign-in whose nonce is not used yet. */
export interface SignedIn {
  payer: string;
  nonceKey: string;
}

export interface SignInRefusal {
  field: string;
  expected: string;
  reason: string;
}

export function isRefusal(value: SignedIn | SignInRefusal): value is SignInRefusal {
  return "reason" in value;
}

/** Whether `url` names `path` on `origin` (query and fragment aside). */
function names(url: string, origin: string, path: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.origin === new URL(origin).origin && parsed.pathname === path;
  } catch {
    return false;
  }
}

/**
 * The wallet that signed `header` within `scope`, or the field that is wrong. Its nonce is not
 * used up here: `useSignIn` does that once the sign-in grants something, and refuses a replay then.
 */
export async function checkSignIn(header: string, scope: SignInScope): Promise<SignedIn | SignInRefusal> {
  const refused = (reason: string, expected: string): SignInRefusal => ({ field: "header.sign-in-with-x", expected, reason });
  let payload: ReturnType<typeof parseSIWxHeader>;
  try {
    payload = parseSIWxHeader(header);
  } catch {
    return refused("invalid_siwx_payload", "base64 JSON of a CAIP-122 sign-in payload");
  }
  if (!scope.chains.includes(payload.chainId)) return refused("invalid_siwx_chain_id", `a sign-in on ${scope.chains.join(" or ")}`);
  const valid = await validateSIWxMessage(payload, new URL(scope.origin), { maxAge: MAX_AGE_MS });
  if (!valid.isValid) return refused(valid.invalidReason, `a sign-in for ${scope.origin}, issued in the last 5 minutes, not expired`);
  const resources = [payload.uri, ...(payload.resources ?? [])];
  if (!resources.some((r) => names(r, scope.origin, scope.path))) {
    return refused("invalid_siwx_resource", `a uri or resource naming ${scope.origin}${scope.path}`);
  }
  const verified = await verifySIWxSignature(payload, { evmVerifier });
  if (!verified.isValid) return refused(verified.invalidReason, "the wallet's EIP-191 signature of the sign-in message");
  const payer = verified.payer.toLowerCase();
  return { payer, nonceKey: `${payer}:${payload.nonce}` };
}

type Point = InstanceType<typeof secp256k1.ProjectivePoint>;
/** Public keys of the wallets that signed in lately, with their multiplication tables (about 0.1 MB each). */
const keys = new Map<string, Point>();
const KEPT_KEYS = 256;

/**
 * An EOA's EIP-191 signature, checked against its public key once known: recovering the key
 * (viem's `verifyMessage`) costs about four times a verification with a key whose table is
 * ready, and a balance-paid call checks one sign-in each time. The first sign-in recovers it.
 */
const evmVerifier: EVMMessageVerifier = async ({ address, message, signature }) => {
  const hash = hashMessage(message);
  const wallet = address.toLowerCase();
  const key = keys.get(wallet);
  if (key) return verifies(key, hash, signature);
  try {
    const recovered = await recoverPublicKey({ hash, signature });
    if (publicKeyToAddress(recovered).toLowerCase() !== wallet) return false;
    const point = secp256k1.ProjectivePoint.fromHex(recovered.slice(2));
    point.precompute(4);
    if (keys.size >= KEPT_KEYS) keys.delete(keys.keys().next().value as string);
    keys.set(wallet, point);
    return true;
  } catch {
    return false;
  }
};

/** ECDSA verification of `signature` (r, s, v) over `hash` with `key`. */
function verifies(key: Point, hash: `0x${string}`, signature: `0x${string}`): boolean {
  const bytes = hexToBytes(signature);
  if (bytes.length !== 65) return false;
  const { n } = secp256k1.CURVE;
  const r = bytesToBigInt(bytes.subarray(0, 32));
  const s = bytesToBigInt(bytes.subarray(32, 64));
  if (r <= 0n || r >= n || s <= 0n || s >= n) return false;
  const w = invert(s, n);
  const point = secp256k1.ProjectivePoint.BASE.multiply((BigInt(hash) * w) % n).add(key.multiply((r * w) % n));
  return !point.equals(secp256k1.ProjectivePoint.ZERO) && point.toAffine().x % n === r;
}

/** Use the sign-in's nonce: false when another request used it first (a replay). */
export function useSignIn(store: Queryable, signedIn: SignedIn): Promise<boolean> {
  return useSiwxNonce(store, signedIn.nonceKey, new Date(Date.now() + MAX_AGE_MS));
}

/**
 * The `sign-in-with-x` extension a challenge declares: what to sign for `resourceUrl` on
 * `origin`, in the form `@x402/extensions/sign-in-with-x` clients (`wrapFetchWithSIWx`,
 * agentcash) read. Only the fields they need: the payload's JSON schema (0.7 KB), a statement and
 * an expiry (the service accepts 5 minutes from issuedAt) would take from the 402's header budget.
 */
export function signInDeclaration(origin: string, resourceUrl: string, network: string) {
  return {
    info: {
      domain: new URL(origin).host,
      uri: resourceUrl,
      version: "1",
      nonce: randomBytes(16).toString("hex"),
      issuedAt: new Date().toISOString(),
    },
    supportedChains: [{ chainId: network, type: "eip191" as const }],
  };
}

/** Whether a route's challenge declares Sign-In-With-X: a sign-in would serve it (a balance, content bought, a read of one's own). */
export function declaresSignIn(route: RouteDef): boolean {
  return Boolean(route.signIn || route.signInRereadDays || payableFromBalance(route));
}
