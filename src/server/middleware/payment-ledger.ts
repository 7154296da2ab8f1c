/**
 * The payment ledger and paid retries, around `@x402/express`.
 *
 * `record` (before the in-flight guard): for a request carrying a payment, answers a repeat
 * of an already settled request with the kept answer (same body, same `PAYMENT-RESPONSE`, no
 * function run, no settlement), and otherwise records the response as x402 releases it.
 *
 * `open` (after the in-flight guard, before x402): resolves an earlier attempt with the same
 * payment whose outcome is unknown by reading the authorisation on chain: if it was settled,
 * the request is answered without a new payment; if not, it goes on as a fresh attempt. Then
 * it writes the ledger row as `pending` before anything is verified or run, so a crash
 * between verify and settle never loses a row.
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
import { finishLedgerRow, insertLedgerRow, type LedgerPayment, ledgerRowsOf } from "../../store/ledger.ts";
import { findAnswer, keepAnswer } from "../../store/paid-answers.ts";
import type { Store } from "../../store/store.ts";
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
}

interface LedgerState {
  claim: ClaimedPayment;
  hash: string;
  route: string;
  rowId?: number;
  /** Set when the request is answered for an earlier, settled attempt. */
  prepaidTx?: string | null;
}

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

/** Build the two middlewares of the ledger. */
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
      await finishLedgerRow(store, state.rowId, { outcome: "settled", status, settlementTx: settlement?.transaction as string });
    } else if (status === 402 && settlement && !settlement.success) {
      const unknown = settlement.errorReason === "settlement_timeout";
      await finishLedgerRow(store, state.rowId, {
        outcome: unknown ? "settlement_unknown" : "settlement_failed",
        status,
        reason: settlement.errorReason ?? "settlement_failed",
        ...(settlement.transaction ? { settlementTx: settlement.transaction } : {}),
      });
    } else {
      await finishLedgerRow(store, state.rowId, { outcome: "not_charged", status, reason: reason ?? `status_${status}` });
    }

    if (status < 400 && (settled || state.prepaidTx !== undefined)) {
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = res.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      const expiresAt = new Date((state.claim.validBefore ?? Math.floor(Date.now() / 1000) + 300) * 1000);
      const kept = await keepAnswer(store, {
        payer: state.claim.payer,
        nonce: state.claim.nonce,
        requestHash: state.hash,
        status,
        headers,
        body: body.toString("utf8"),
        settlementTx: settlement?.transaction ?? state.prepaidTx ?? "",
        expiresAt,
      });
      if (!kept) log.warn("paid answer too large to keep for retries", { request_id: requestIdOf(req), bytes: body.length });
    }
  }

  /** Capture what is finally written (x402 replays the buffered answer through these after settling). */
  function recordResponse(req: Request, res: Response, state: LedgerState): void {
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.write = ((...args: unknown[]) => {
      const chunk = chunkToBuffer(args[0], args[1]);
      if (chunk) chunks.push(chunk);
      return write(...args);
    }) as Response["write"];
    res.end = ((...args: unknown[]) => {
      const chunk = chunkToBuffer(args[0], args[1]);
      if (chunk) chunks.push(chunk);
      // The outcome is recorded (and a settled answer kept) before the answer is released, so a
      // buyer who retries the moment they see it finds the kept answer.
      finish(req, res, state, Buffer.concat(chunks))
        .catch((error: unknown) =>
          log.error("ledger: could not record the outcome of a paid request", { request_id: requestIdOf(req), error: error as Error }),
        )
        .finally(() => end(...args));
      return res;
    }) as Response["end"];
  }

  return {
    /** Before the in-flight guard: replay kept answers, record everything else. */
    record: async function paymentLedgerRecord(req: Request, res: Response, next: NextFunction): Promise<void> {
      const claim = claimedPayment(req);
      const route = routeOf(req);
      if (!claim || !options.paidRoutes.has(route)) return next();
      const state: LedgerState = { claim, hash: requestHash(req), route };
      states.set(req, state);
      try {
        const kept = await findAnswer(store, claim.payer, claim.nonce);
        if (kept && kept.requestHash === state.hash) {
          res.status(kept.status);
          for (const [name, value] of Object.entries(kept.headers)) res.setHeader(name, value);
          res.end(kept.body);
          await insertLedgerRow(store, paymentOf(state, req), {
            outcome: "not_charged",
            status: kept.status,
            reason: "paid_retry: kept answer replayed",
            settlementTx: kept.settlementTx,
          });
          return;
        }
        // A kept answer for another request: x402 refuses the used authorisation with a 402.
      } catch (error) {
        log.error("ledger: store unavailable", { error: error as Error });
        sendError(res, 503, "unavailable", "The payment ledger is unavailable, so nothing was run or charged; retry shortly.", undefined, {
          "Retry-After": "5",
        });
        return;
      }
      recordResponse(req, res, state);
      next();
    },

    /** After the in-flight guard: resolve an unknown earlier attempt, then open this request's row. */
    open: async function paymentLedgerOpen(req: Request, res: Response, next: NextFunction): Promise<void> {
      const state = states.get(req);
      if (!state) return next();
      try {
        const earlier = (await ledgerRowsOf(store, state.claim.payer, state.claim.nonce)).filter(
          (row) => row.request_hash === state.hash && (row.outcome === "pending" || row.outcome === "settlement_unknown"),
        );
        if (earlier.length > 0) {
          if (await authorizations.isUsed(state.claim.payer, state.claim.nonce)) {
            const tx = await authorizations.findUse(state.claim.payer, state.claim.nonce, 10_000);
            for (const row of earlier) {
              await finishLedgerRow(store, row.id, {
                outcome: "settled",
                status: row.status,
                reason: "reconciled_on_chain",
                ...(tx ? { settlementTx: tx } : {}),
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
                transaction: tx ?? "",
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
          for (const row of earlier) {
            await finishLedgerRow(store, row.id, { outcome: "not_charged", status: row.status, reason: "interrupted_before_settlement" });
          }
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
