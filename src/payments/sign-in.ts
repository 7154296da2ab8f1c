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
import { SiweMessage } from "@signinwithethereum/siwe";
import { parseSIWxHeader, validateSIWxMessage } from "@x402/extensions/sign-in-with-x";
import { getAddress, hashMessage, isAddress } from "viem";
import type { RouteDef } from "../../spec/route.ts";
import type { NetworkId } from "../config.ts";
import type { Queryable } from "../store/store.ts";
import { payableFromBalance } from "./balances.ts";
import { useSiwxNonce } from "./kept-answers.ts";
import type { PayloadProblem } from "./payload.ts";
import { signedBy } from "./payload.ts";

/** The request header carrying the proof. */
export const SIWX_HEADER = "sign-in-with-x";

/** How old a sign-in may be. */
const MAX_AGE_MS = 5 * 60_000;

/** What a sign-in must name to be accepted for one request. */
export interface SignInScope {
  /** The site's configured public origin (never one read from the request). */
  origin: string;
  /** The chains the route's challenge declares (CAIP-2): EVM networks, whose wallets sign EIP-4361. */
  chains: readonly NetworkId[];
  /** The route's path: the sign-in's `uri` or one of its `resources` must name it on `origin`. */
  path: string;
}

/** A verified sign-in whose nonce is not used yet. */
export interface SignedIn {
  payer: string;
  nonceKey: string;
}

/** Why a sign-in is refused: the field, what was expected there, and the reason code. */
export type SignInRefusal = PayloadProblem & { reason: string };

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
  if (!(scope.chains as readonly string[]).includes(payload.chainId))
    return refused("invalid_siwx_chain_id", `a sign-in on ${scope.chains.join(" or ")}`);
  const valid = await validateSIWxMessage(payload, new URL(scope.origin), { maxAge: MAX_AGE_MS });
  if (!valid.isValid) return refused(valid.invalidReason, `a sign-in for ${scope.origin}, issued in the last 5 minutes, not expired`);
  const resources = [payload.uri, ...(payload.resources ?? [])];
  if (!resources.some((r) => names(r, scope.origin, scope.path))) {
    return refused("invalid_siwx_resource", `a uri or resource naming ${scope.origin}${scope.path}`);
  }
  if (!signedByItsWallet(payload)) return refused("invalid_siwx_signature", "the wallet's signature of the sign-in message");
  const payer = payload.address.toLowerCase();
  return { payer, nonceKey: `${payer}:${payload.nonce}` };
}

/** A character that would let a field's text pass for another line of the EIP-4361 message. */
const LINE_BREAK = /[\r\n\u2028\u2029]/;

/**
 * Whether the wallet named in an `eip155` sign-in signed its EIP-4361 text (EIP-191, EOAs).
 * Checked here, not by `verifySIWxSignature`: its `SiweMessage` re-parses the text it builds with
 * an ABNF grammar and viem recovers with pure-JavaScript secp256k1, together two thirds of a
 * balance-paid call's CPU. This builds the same text with the same library's formatter, refuses a
 * field holding a line break (what the grammar is there to catch), and recovers with libsecp256k1.
 */
function signedByItsWallet(payload: ReturnType<typeof parseSIWxHeader>): boolean {
  const { address, signature } = payload;
  const { domain, uri, statement, nonce, version, issuedAt, expirationTime, notBefore, requestId, resources = [] } = payload;
  const fields = [domain, uri, statement, nonce, version, issuedAt, expirationTime, notBefore, requestId, ...resources];
  if (fields.some((f) => typeof f === "string" && LINE_BREAK.test(f))) return false;
  if (!isAddress(address, { strict: false }) || (address !== address.toLowerCase() && !isAddress(address))) return false;
  const text = Object.assign(Object.create(SiweMessage.prototype) as SiweMessage, {
    ...{ domain, uri, statement, nonce, version, issuedAt, expirationTime, notBefore, requestId, resources: payload.resources },
    address: getAddress(address),
    chainId: Number(payload.chainId.slice("eip155:".length)),
  }).prepareMessage();
  return signedBy(address, hashMessage(text), signature);
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
      // 64 random bits: a nonce is single-use per wallet, and each byte is the header budget's.
      nonce: randomBytes(8).toString("hex"),
      issuedAt: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    },
    supportedChains: [{ chainId: network, type: "eip191" as const }],
  };
}

/** Whether a route's challenge declares Sign-In-With-X: a sign-in would serve it (a balance, content bought, a read of one's own). */
export function declaresSignIn(route: RouteDef): boolean {
  return Boolean(route.signIn || route.signInRereadDays || payableFromBalance(route));
}
