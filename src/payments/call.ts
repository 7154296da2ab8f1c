/**
 * One paid call as the gate and its ways of paying (per call with x402, from a balance, by
 * signing in to re-read) see it, and the few answers they all build.
 */
import type { RouteDef } from "../../spec/route.ts";
import type { VerifiedPayment } from "../context.ts";
import type { ErrorCode } from "../errors.ts";
import type { RequestBody } from "../validate.ts";
import type { DecodedPayment, PayloadProblem } from "./payload.ts";

/** Runs the paid function with the payment that pays it; a status >= 400 means it failed and nothing is charged. */
export type PaidRun = (payment: VerifiedPayment) => Promise<Response>;

/**
 * How a call to a paid route ended, for the metrics: settled now (a new charge); redeemed (a paid
 * retry or a re-read, no new charge); paid from a balance; challenged (no payment); refused (the
 * payment refused or the balance short); settlement failed or unknown; in progress in another
 * request; failed (the function or the payment path failed, or the client left: not charged).
 */
export type PaidOutcome =
  | "settled"
  | "redeemed"
  | "balance"
  | "challenged"
  | "refused"
  | "settlement_failed"
  | "settlement_unknown"
  | "in_progress"
  | "failed";

/** One paid request. */
export interface Attempt {
  request: Request;
  route: RouteDef;
  url: URL;
  /** The body, read and parsed once by the dispatcher. */
  body: RequestBody;
  /** The payment header as decoded for the rate limits, when it was (src/server/middleware/route-match.ts). */
  decoded?: () => DecodedPayment | PayloadProblem | undefined;
  requestHash: string;
  requestId: string;
  run: PaidRun;
  /** The request's SIGN-IN-WITH-X header: checked only when a way of paying needs it. */
  siwx: string | null;
  /** The client's address as the rate limits key it (src/limits/client-key.ts); null when unknown. */
  client: string | null;
  /** How long each step took, in milliseconds. */
  timings: { verify?: number; fn?: number; settle?: number };
  /** How the call ended and what it charged, for the metrics. */
  record: { outcome?: PaidOutcome; amountAtomic?: string };
}

/** A 402 refusal's codes. */
export type RefusalCode = Extract<
  ErrorCode,
  "invalid_payload" | "payment_required" | "payment_already_used" | "signin_required" | "signin_invalid" | "insufficient_balance"
>;

export const round = (ms: number) => Math.round(ms * 100) / 100;

export function withHeaders(base: Headers, extra: Record<string, string>): Headers {
  const headers = new Headers(base);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return headers;
}
