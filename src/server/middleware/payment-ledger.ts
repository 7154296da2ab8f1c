/**
 * The payment ledger and paid retries, around `@x402/express`.
 *
 * `record` (before the in-flight guard): for a request carrying a payment to a paid route,
 * records the response as x402 releases it (so 409 duplicates get rows too).
 *
 * `open` (after the in-flight guard, before x402): answers a repeat of an already settled
 * request with the kept answer (same body, same `PAYMENT-RESPONSE`, no function run, no
 * settlement); resolves an earlier verified attempt whose outcome is unknown from the chain: if
 * it paid us, the request is answered without a new payment; if not, it goes on as a fresh
 * attempt. Then it writes the ledger row as `pending` before anything is verified or run, so a
 * crash between verify and settle never loses a row.
 *
 * When x402 writes the final response, the row gets its outcome, and a settled answer is kept
 * for the authorisation's validity window.
 */
import { createHash } from "node:crypto";
import { decodePaymentResponseHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { NextFunction, Request, Response } from "express";
import type { AuthorizationReader } from "../../chain/authorization.ts";
import type { VerifiedPayment } from "../../context.ts";
import type { Logger } from "../../log.ts";
import {
  finishLedgerRow,
  insertLedgerRow,
  type LedgerPayment,
  markLedgerRowVerified,
  type OpenAttempt,
  paymentState,
} from "../../store/ledger.ts";
import { type KeptAnswer, keepAnswer, MAX_KEPT_ANSWER_BYTES, settleAndKeep } from "../../store/paid-answers.ts";
import type { Store } from "../../store/store.ts";
import { SETTLEMENT_UNKNOWN } from "../payments.ts";
import { type ClaimedPayment, claimedPayment } from "./payment-header.ts";
import { requestIdOf } from "./request-context.ts";
import { sendError } from "./send-error.ts";

/** Options of `paymentLedger`. */
export interface PaymentLedgerOptions {
  store: Store;
  /** This instance's id, recorded on each row. */
  instance: string;
  log: Logger;
  /** Reads authorisations of the settlement token. */
  authorizations: AuthorizationReader;
  /** Mark a request as already paid so x402 lets it through, with the payment it carries. */
  markPrepaid(req: Request, payment: VerifiedPayment): void;
  /** `"POST /api/x"` keys of the paid routes: only their requests are ledger rows. */
  paidRoutes: ReadonlySet<string>;
  /** The receiving address: an earlier attempt counts as paid only if it paid this address. */
  payTo: string;
  /** The challenge's validity: kept answers are kept at most this long. */
  maxTimeoutSeconds: number;
}

interface LedgerState {
  claim: ClaimedPayment;
  hash: string;
  /** SHA-256 of the exact payment header: a kept answer is replayed only for the same one. */
  paymentHash: string;
  route: string;
  rowId?: number;
  /** Set when the request is answered for an earlier, settled attempt. */
  prepaidTx?: string | null;
  /** Set when the kept answer of this exact payment and request is replayed. */
  replayedTx?: string;
}

/** Set on `res.locals` when the ledger records the request: the in-flight guard then hands it its release. */
export const LEDGER_DONE = "ledgerDone";

/** On `res.locals`: releases the request's in-flight claim; the ledger calls it before releasing the answer. */
export const RELEASE_CLAIM = "releaseClaim";

/** Headers of a paid answer that are kept and replayed. */
const KEPT_HEADERS = ["content-type", "payment-response", "cache-control"];

/** What identifies "the same request" for a paid retry: method, path with query, and body bytes. */
export function requestHash(req: Request): string {
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  return createHash("sha256").update(`${req.method} ${req.originalUrl}\n`).update(body).digest("hex");
}

function routeOf(req: Request): string {
  const path = req.path.length > 1 && req.path.endsWith("/") ? req.path.slice(0, -1) : req.path;
  return `${req.method} ${path}`;
}

function chunkToBuffer(chunk: unknown, encoding?: unknown): Buffer | undefined {
  if (chunk === undefined || chunk === null || typeof chunk === "function") return undefined;
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk);
  return Buffer.from(String(chunk), typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
}

function errorCodeOf(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { error?: unknown };
    if (typeof parsed.error === "string") return parsed.error;
    const code = (parsed.error as { code?: unknown } | undefined)?.code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Build the ledger: its two middlewares and the hook x402 calls when a payment is verified. */
export function paymentLedger(options: PaymentLedgerOptions) {
  const { store, instance, log, authorizations } = options;
  const states = new WeakMap<Request, LedgerState>();

  const paymentOf = (state: LedgerState, req: Request): LedgerPayment => ({
    requestId: requestIdOf(req),
    route: state.route,
    payer: state.claim.payer,
    amountAtomic: state.claim.amount,
    asset: state.claim.asset,
    network: state.claim.network,
    nonce: state.claim.nonce,
    validBefore: state.claim.validBefore,
    requestHash: state.hash,
    instance,
  });

  /** Give the request's row its outcome and keep a settled answer. */
  async function finish(req: Request, res: Response, state: LedgerState, body: Buffer): Promise<void> {
    const status = res.statusCode;
    const header = res.getHeader("payment-response");
    let settlement: { success: boolean; transaction?: string; errorReason?: string } | undefined;
    if (typeof header === "string") {
      try {
        settlement = decodePaymentResponseHeader(header);
      } catch {}
    }
    const settled = status < 400 && settlement?.success === true;
    const reason = errorCodeOf(body);

    if (state.replayedTx !== undefined) {
      await insertLedgerRow(store, paymentOf(state, req), {
        outcome: "not_charged",
        status,
        reason: "paid_retry: kept answer replayed",
        settlementTx: state.replayedTx,
      });
      return;
    }
    if (state.prepaidTx !== undefined) {
      await insertLedgerRow(store, paymentOf(state, req), {
        outcome: "not_charged",
        status,
        reason: "paid_retry: answered for an earlier settled attempt",
        ...(state.prepaidTx ? { settlementTx: state.prepaidTx } : {}),
      });
    } else if (state.rowId === undefined) {
      // Refused before a row was opened (409 duplicate, or the store was down).
      await insertLedgerRow(store, paymentOf(state, req), { outcome: "not_charged", status, ...(reason ? { reason } : {}) });
    } else if (settled) {
      await settleAndKeep(
        store,
        state.rowId,
        status,
        settlement?.transaction as string,
        answerToKeep(req, res, state, body, settlement?.transaction ?? ""),
      );
      return;
    } else if (status === 402 && settlement && !settlement.success) {
      // GuardedFacilitator says when the transfer may have landed (timeout, throw, broadcast tx).
      const unknown = settlement.errorReason === SETTLEMENT_UNKNOWN;
      await finishLedgerRow(store, state.rowId, {
        outcome: unknown ? "settlement_unknown" : "settlement_failed",
        status,
        reason: settlement.errorReason ?? "settlement_failed",
        ...(settlement.transaction ? { settlementTx: settlement.transaction } : {}),
      });
    } else {
      await finishLedgerRow(store, state.rowId, { outcome: "not_charged", status, reason: reason ?? `status_${status}` });
    }

    if (status < 400 && state.prepaidTx !== undefined) {
      const answer = answerToKeep(req, res, state, body, state.prepaidTx ?? "");
      if (answer) await keepAnswer(store, answer);
    }
  }

  /** The answer to keep for paid retries, or undefined (and a warning) when it is too large. */
  function answerToKeep(req: Request, res: Response, state: LedgerState, body: Buffer, settlementTx: string): KeptAnswer | undefined {
    if (body.length > MAX_KEPT_ANSWER_BYTES) {
      log.warn("paid answer too large to keep for retries", { request_id: requestIdOf(req), bytes: body.length });
      return undefined;
    }
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = res.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    // Kept for the authorisation's validity, but never longer than a challenge stays payable.
    const cap = Date.now() + options.maxTimeoutSeconds * 1000;
    return {
      payer: state.claim.payer,
      nonce: state.claim.nonce,
      requestHash: state.hash,
      paymentHash: state.paymentHash,
      status: res.statusCode,
      headers,
      body: body.toString("utf8"),
      settlementTx,
      expiresAt: new Date(Math.min(state.claim.validBefore !== null ? state.claim.validBefore * 1000 : cap, cap)),
    };
  }

  /** Capture what is finally written (x402 replays the buffered answer through these after settling). */
  function recordResponse(req: Request, res: Response, state: LedgerState): void {
    res.locals[LEDGER_DONE] = true;
    // The answer is held back, writes included, until its outcome is recorded (and a settled
    // answer kept): a client that has every byte may retry at once and must find the kept answer.
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (chunk: Buffer) => boolean;
    const end = res.end.bind(res) as (callback?: () => void) => Response;
    res.write = ((...args: unknown[]) => {
      const chunk = chunkToBuffer(args[0], args[1]);
      if (chunk) chunks.push(chunk);
      const callback = args.find((a) => typeof a === "function") as (() => void) | undefined;
      callback?.();
      return true;
    }) as Response["write"];
    res.end = ((...args: unknown[]) => {
      const chunk = chunkToBuffer(args[0], args[1]);
      if (chunk) chunks.push(chunk);
      const callback = args.find((a) => typeof a === "function") as (() => void) | undefined;
      finish(req, res, state, Buffer.concat(chunks))
        .catch((error: unknown) =>
          log.error("ledger: could not record the outcome of a paid request", { request_id: requestIdOf(req), error: error as Error }),
        )
        .then(async () => {
          // Release the in-flight claim first, so a client retrying on seeing the answer is not refused.
          await (res.locals[RELEASE_CLAIM] as (() => Promise<void>) | undefined)?.();
        })
        .catch((error: unknown) =>
          log.warn("in-flight claim not released; it expires", { request_id: requestIdOf(req), error: error as Error }),
        )
        .finally(() => {
          for (const c of chunks) write(c);
          end(callback);
        });
      return res;
    }) as Response["end"];
  }

  return {
    /** Called when the facilitator verified a request's payment: only verified rows can later count as paid. */
    onVerified: async (req: Request): Promise<void> => {
      const rowId = states.get(req)?.rowId;
      if (rowId !== undefined) await markLedgerRowVerified(store, rowId);
    },

    /** Before the in-flight guard: replay kept answers, record everything else. */
    record: async function paymentLedgerRecord(req: Request, res: Response, next: NextFunction): Promise<void> {
      const claim = claimedPayment(req);
      const route = routeOf(req);
      if (!claim || !options.paidRoutes.has(route)) return next();
      const paymentHash = createHash("sha256").update(String(req.headers["payment-signature"])).digest("hex");
      const state: LedgerState = { claim, hash: requestHash(req), paymentHash, route };
      states.set(req, state);
      recordResponse(req, res, state);
      next();
    },

    /** After the in-flight guard: resolve an unknown earlier attempt, then open this request's row. */
    open: async function paymentLedgerOpen(req: Request, res: Response, next: NextFunction): Promise<void> {
      const state = states.get(req);
      if (!state) return next();
      try {
        const { kept, open } = await paymentState(store, state.claim.payer, state.claim.nonce, state.hash);
        // Payer and nonce are public once settled: only the exact same payment header replays.
        if (kept && kept.requestHash === state.hash && kept.paymentHash === state.paymentHash) {
          state.replayedTx = kept.settlementTx;
          res.status(kept.status);
          for (const [name, value] of Object.entries(kept.headers)) res.setHeader(name, value);
          res.end(kept.body);
          return;
        }
        // A kept answer for another request or header: x402 refuses the used authorisation with a 402.
        // A row whose payment was never verified proves nothing (anyone can send a header).
        for (const row of open.filter((r) => r.verified_at === null)) {
          await finishLedgerRow(store, row.id, { outcome: "not_charged", status: row.status, reason: "never_verified" });
        }
        const earlier = open.filter((r) => r.verified_at !== null);
        if (earlier.length > 0) {
          const amount = BigInt((earlier[0] as OpenAttempt).amount_atomic);
          const tx = await authorizations.findPayment(state.claim.payer, state.claim.nonce, options.payTo, amount, 10_000);
          if (tx) {
            for (const row of earlier) {
              await finishLedgerRow(store, row.id, {
                outcome: "settled",
                status: row.status,
                reason: "reconciled_on_chain",
                settlementTx: tx,
              });
            }
            state.prepaidTx = tx;
            options.markPrepaid(req, {
              route: state.route,
              payer: state.claim.payer as `0x${string}`,
              amount: state.claim.amount,
              asset: state.claim.asset as `0x${string}`,
              network: state.claim.network,
              nonce: state.claim.nonce as `0x${string}`,
            });
            res.setHeader(
              "PAYMENT-RESPONSE",
              encodePaymentResponseHeader({
                success: true,
                transaction: tx,
                network: state.claim.network as `${string}:${string}`,
                payer: state.claim.payer,
              }),
            );
            log.info("paid retry: earlier attempt was settled on chain; answering without a new payment", {
              request_id: requestIdOf(req),
              tx,
            });
            return next();
          }
          // Not paid to us: never settled (the attempt goes ahead) or used elsewhere (x402 refuses it).
          const reason = (await authorizations.isUsed(state.claim.payer, state.claim.nonce))
            ? "authorization_used_elsewhere"
            : "interrupted_before_settlement";
          for (const row of earlier) await finishLedgerRow(store, row.id, { outcome: "not_charged", status: row.status, reason });
        }
        state.rowId = await insertLedgerRow(store, paymentOf(state, req), { outcome: "pending" });
      } catch (error) {
        log.error("ledger: could not open a row", { error: error as Error });
        sendError(res, 503, "unavailable", "The payment ledger is unavailable, so nothing was run or charged; retry shortly.", undefined, {
          "Retry-After": "5",
        });
        return;
      }
      next();
    },
  };
}
