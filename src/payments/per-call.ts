/**
 * Paying per call with x402 `exact` (an EIP-3009 authorisation, verified and settled by the
 * facilitator), and redeeming a payment settled earlier.
 *
 *   decode every field          → 402 invalid_payload naming the field; no facilitator call
 *   never seen, leases free?    → claim + pending row (one statement) while verify runs: go to run
 *   else read what is known     → 402 unless the payer's own signature
 *   claim (in-flight lease)     → 409 payment_in_progress while another request holds the payment
 *   settled before?             → redeem: kept answer, or run again; never a second charge
 *                                 (same request + complete signed authorisation within its window from
 *                                 the client that paid, or its payment-identifier id / Sign-In-With-X for 24 h)
 *   verify (facilitator)        → 402 refused, 503 payment_unavailable past the time budget
 *   run                         → status >= 400: not charged
 *   client gone?                → not settled: the authorisation stays unused, a retry with it pays
 *   settle                      → 402 settlement_failed / settlement_unknown (answer held for the retry)
 *   keep answer, row settled,   → the answer with PAYMENT-RESPONSE
 *   lease freed (one statement)
 */
import { randomUUID } from "node:crypto";
import { decodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { HTTPRequestContext, x402HTTPResourceServer } from "@x402/core/server";
import { routeKey } from "../../spec/route.ts";
import type { AuthorizationReader } from "../chain/authorization.ts";
import { errorBody, errorResponse, jsonResponse, ServiceError } from "../errors.ts";
import { storedAddress } from "../store/dialect.ts";
import {
  type AttemptRow,
  attemptsOf,
  finishLedgerRow,
  insertLedgerRow,
  type LedgerPayment,
  markLedgerRowVerified,
  openFreshAttempt,
} from "../store/ledger.ts";
import { withBudget } from "../time-budget.ts";
import { type Attempt, round, withHeaders } from "./call.ts";
import { SETTLEMENT_UNKNOWN } from "./facilitator.ts";
import type { PaymentGate } from "./gate.ts";
import { claimAll, type HeldLeases, holding, releaseAll } from "./inflight.ts";
import { KEPT_HEADERS, type KeptAnswer, keepAnswer, keptAnswerOf, MAX_KEPT_ANSWER_BYTES, settleAndKeep } from "./kept-answers.ts";
import { type DecodedPayment, isProblem, type PayloadProblem } from "./payload.ts";
import type { PaymentScheme } from "./scheme.ts";
import { resolvePayment } from "./upkeep.ts";

/** The facilitator's answer to a payment, with the x402 request context it was given. */
interface Verification {
  context: HTTPRequestContext;
  result: Awaited<ReturnType<x402HTTPResourceServer["processHTTPRequest"]>>;
  /** How long the facilitator took, in milliseconds. */
  ms: number;
}

/** Per-call x402 payments of one gate. */
export class PerCallPayment {
  private readonly core: PaymentGate;
  /** The chain's record of authorisations, each read within the payment time budget. */
  private readonly chain: AuthorizationReader;
  /** The scheme's own lookup of a payment left open (Solana), within the same budget. */
  private readonly lookup: PaymentScheme["settlementOf"];
  private readonly network: `${string}:${string}`;

  constructor(core: PaymentGate) {
    this.core = core;
    const { config, authorizations } = core.options;
    this.chain = budgeted(authorizations, config.payments.timeoutMs);
    this.lookup = core.scheme.settlementOf && withinBudget(core.scheme.settlementOf, config.payments.timeoutMs);
    this.network = core.scheme.network as `${string}:${string}`;
  }

  /** Record a decodable payment refused before it was looked at (its input failed the route's schema): never charged. */
  async refusedUnread(attempt: Attempt, header: string, status: number, reason: string): Promise<void> {
    const decoded = this.decode(attempt, header);
    if (!isProblem(decoded)) await this.notCharged(attempt, decoded, status, reason);
  }

  /** The ledger row of a payment presented and not charged (`paid`: the earlier settlement that answered it). */
  private async notCharged(attempt: Attempt, decoded: DecodedPayment | undefined, status: number, reason: string, paid?: AttemptRow) {
    const settled = paid?.settlement_tx ? { settlementTx: paid.settlement_tx } : {};
    await insertLedgerRow(this.core.options.store, this.ledgerPayment(attempt, decoded, paid), {
      outcome: "not_charged",
      status,
      reason,
      ...settled,
    });
  }

  /** The payment header read by the site's scheme: once per request, so as the rate limits read it when they did. */
  private decode(attempt: Attempt, header: string): DecodedPayment | PayloadProblem {
    return attempt.decoded?.() ?? this.core.scheme.decode(header);
  }

  /** A request carrying a payment header: it pays (or redeems), whatever else the request carries. */
  async pay(attempt: Attempt, header: string): Promise<Response> {
    const { options } = this.core;
    const decoded = this.decode(attempt, header);
    if (isProblem(decoded)) {
      return this.core.refuse(attempt, "invalid_payload", `The payment header is malformed at ${decoded.field}.`, { ...decoded });
    }
    const payer = storedAddress(decoded.authorization.from);
    const holder = `${options.instance}:${randomUUID()}`;
    const onLeaseError = (error: unknown) =>
      options.log.warn("in-flight lease not renewed or released; it runs out", { error: error as Error });
    // One lease per authorisation and, with a payment-identifier id, one per id: two fresh
    // authorisations carrying the same id never both pay.
    const keys = decoded.paymentId ? [decoded.key, `id:${payer}:${decoded.paymentId}`] : [decoded.key];
    const fresh = await this.payFresh(attempt, header, decoded, keys, holder, onLeaseError);
    if (fresh) return fresh;

    // Seen before, or contended: read everything the ledger knows of it first.
    const seen = await attemptsOf(options.store, payer, decoded.authorization.nonce, decoded.paymentId);
    // An authorisation seen before, or one naming a known id, must carry the payer's own signature,
    // checked before it may hold anything. A settled one is public on chain, signature and all:
    // that proves nothing of who asks, so its bare retry is answered only to the client that paid.
    const known = seen.settled || seen.open.length > 0 || seen.byId || seen.byIdOpen.length > 0;
    if (known && !(await this.core.scheme.signedByPayer(decoded))) {
      return this.core.refuse(attempt, "invalid_payload", "The authorisation's signature is not the payer's.", {
        field: "payload.signature",
        expected: "the payer's EIP-712 signature of exactly this authorisation",
      });
    }
    // Held while it runs, renewed every third of the lease; taken by another request: 409.
    if (await claimAll(options.inFlight, keys, holder, onLeaseError)) {
      const lease = { keys, holder, released: false };
      return holding(options.inFlight, lease, () => this.paySeen(attempt, header, decoded, seen), onLeaseError);
    }
    await this.notCharged(attempt, decoded, 409, "payment_in_progress");
    return inProgress("This payment is being used by another request in flight; wait for that answer, or retry in a second.");
  }

  /**
   * The common case: an authorisation the ledger has never seen, whose leases are free. Claims
   * the leases and opens the pending row (one statement when the leases live in the store) while
   * the facilitator verifies, since verifying moves nothing; nothing is run or settled before
   * both are done. Undefined when the authorisation is known or contended: the caller then reads
   * everything the ledger knows and decides carefully (any verification made here is dropped).
   */
  private async payFresh(
    attempt: Attempt,
    header: string,
    decoded: DecodedPayment,
    keys: string[],
    holder: string,
    onLeaseError: (error: unknown) => void,
  ): Promise<Response | undefined> {
    const { inFlight, store } = this.core.options;
    const payment = this.ledgerPayment(attempt, decoded);
    let opening: Promise<Awaited<ReturnType<typeof openFreshAttempt>>>;
    if (inFlight.shared) {
      opening = openFreshAttempt(store, payment, { keys, holder, leaseSeconds: inFlight.leaseSeconds });
    } else {
      if (!(await claimAll(inFlight, keys, holder, onLeaseError))) return undefined;
      opening = openFreshAttempt(store, payment, null).then(
        (opened) => ({ ...opened, claimed: keys }),
        async (error: unknown) => {
          await releaseAll(inFlight, keys, holder, onLeaseError);
          throw error;
        },
      );
    }
    const verifying = this.verify(attempt, header);
    // A verification nobody will use (the row was not opened here): let it finish, then drop it.
    const drop = () =>
      verifying.then(
        (v) => (v.result.type === "payment-verified" ? v.result.cancellationDispatcher.cancel({ reason: "handler_failed" }) : undefined),
        () => undefined,
      );
    let opened: Awaited<typeof opening>;
    try {
      opened = await opening;
    } catch (error) {
      void drop();
      throw error;
    }
    const { rowId, claimed } = opened;
    if (rowId === null) {
      void drop();
      await releaseAll(inFlight, claimed, holder, onLeaseError);
      return undefined;
    }
    const [verified] = await Promise.allSettled([verifying]);
    const lease: HeldLeases = { keys, holder, released: false };
    return holding(
      inFlight,
      lease,
      async () => {
        if (verified.status === "rejected") {
          await finishLedgerRow(store, rowId, { outcome: "not_charged", status: 503, reason: "payment_unavailable" });
          throw verified.reason;
        }
        return this.afterVerify(attempt, decoded, rowId, verified.value, [], lease);
      },
      onLeaseError,
    );
  }

  /** A payment header that decoded, its authorisation and id held: redeem an earlier settlement, or pay now. */
  private async paySeen(
    attempt: Attempt,
    header: string,
    decoded: DecodedPayment,
    seen: Awaited<ReturnType<typeof attemptsOf>>,
  ): Promise<Response> {
    const payer = storedAddress(decoded.authorization.from);
    const { settled, open } = seen;
    // An earlier authorisation with the same id whose outcome is open: read the chain before paying again.
    const sameId = seen.byIdOpen.filter((r) => r.nonce === seen.byIdOpen[0]?.nonce);
    const earlierById = seen.byId ? { settled: seen.byId, stillOpen: false } : await this.resolveOpen(sameId);
    if (earlierById.stillOpen) return inProgress("An earlier payment with this payment-identifier id is not settled yet; retry shortly.");
    const byId = earlierById.settled;
    // The payment-identifier id is the buyer's secret (it never reaches the chain): the same id,
    // payer and request get the kept answer of whichever authorisation it paid with.
    if (byId) {
      if (byId.payer !== payer || byId.request_hash !== attempt.requestHash) {
        return errorResponse(
          new ServiceError("payment_id_conflict", "This payment-identifier id was already used for another request; use a new id.", {
            details: { payment_id: decoded.paymentId },
          }),
        );
      }
      if (this.redemptionExpired(byId)) return this.expired(attempt, byId, decoded);
      return this.redeem(attempt, byId, decoded);
    }

    const resolved = settled ? { settled, stillOpen: false } : await this.resolveOpen(open);
    const earlier = resolved.settled;
    // A transfer for another request may still land: paying now would let it pay for this request instead of that one.
    if (!earlier && resolved.stillOpen && open.some((r) => r.verified && r.request_hash !== attempt.requestHash)) {
      await this.notCharged(attempt, decoded, 409, "payment_in_progress");
      return inProgress("This authorisation is paying for another request whose settlement is not known yet; retry shortly.");
    }
    if (!earlier) return this.payNow(attempt, header, decoded, open);
    if (earlier.request_hash !== attempt.requestHash) {
      return this.refuseUsed(attempt, decoded, "This authorisation already paid for a different request.", {
        reason: "payment_already_used",
      });
    }
    if (this.redemptionExpired(earlier)) return this.expired(attempt, earlier, decoded);
    // A validBefore too large to read (null) bounds nothing; the challenge's validity still does.
    const windowEnd = Math.min(
      earlier.valid_before === null ? Number.POSITIVE_INFINITY : Number(earlier.valid_before) * 1000,
      new Date(earlier.created_at).getTime() + this.core.options.config.maxTimeoutSeconds * 1000,
    );
    // Anyone watching the chain can rebuild this header: the bare retry is the paying client's
    // alone (a row from before clients were recorded names none, and keeps the window only).
    const sameClient = earlier.client_address === null || earlier.client_address === attempt.client;
    const proven = (sameClient && Date.now() < windowEnd) || (await this.core.provesPayer(attempt, payer));
    if (!proven) {
      return this.refuseUsed(
        attempt,
        decoded,
        "This payment was settled; its header alone is honoured only within its retry window and from the client address that paid. Redeem it with the payment-identifier id you sent with it, or sign in with the paying wallet (SIGN-IN-WITH-X).",
        { reason: "retry_window_closed", redeem_until: new Date(new Date(earlier.created_at).getTime() + this.redeemMs()).toISOString() },
      );
    }
    return this.redeem(attempt, earlier, decoded);
  }

  private redeemMs(): number {
    return this.core.options.config.payments.redeemHours * 3_600_000;
  }

  private redemptionExpired(paid: AttemptRow): boolean {
    return Date.now() > new Date(paid.created_at).getTime() + this.redeemMs();
  }

  private expired(attempt: Attempt, paid: AttemptRow, decoded: DecodedPayment): Promise<Response> {
    const hours = this.core.options.config.payments.redeemHours;
    const message = `This payment was settled more than ${hours} hours ago; its answer can no longer be redeemed.`;
    return this.refuseUsed(attempt, decoded, message, { reason: "redemption_expired", settled_at: paid.created_at });
  }

  /** A decodable payment refused as already used: recorded as not charged, as every refused payment is. */
  private async refuseUsed(
    attempt: Attempt,
    decoded: DecodedPayment,
    message: string,
    details: { reason: string } & Record<string, unknown>,
  ) {
    await this.notCharged(attempt, decoded, 402, details.reason);
    return this.core.refuse(attempt, "payment_already_used", message, details);
  }

  /** Rows still open for one authorisation (a crash, a stall): their fate on chain, within the time budget. */
  private async resolveOpen(open: AttemptRow[]): Promise<{ settled: AttemptRow | undefined; stillOpen: boolean }> {
    if (open.length === 0) return { settled: undefined, stillOpen: false };
    const rows = open.map((r) => ({ ...r, valid_before: r.valid_before === null ? null : Number(r.valid_before) }));
    const reader = { authorizations: this.chain, lookup: this.lookup };
    const { tx, stillOpen } = await resolvePayment(this.core.options.store, reader, this.core.options.payTo, rows);
    const first = open.find((r) => r.verified);
    return { settled: tx && first ? { ...first, outcome: "settled", settlement_tx: tx } : undefined, stillOpen };
  }

  /** Answer for a payment settled earlier: its kept answer, or the function run again. Never charged again. */
  async redeem(attempt: Attempt, paid: AttemptRow, presented: DecodedPayment | undefined, reread?: "signed_in_reread"): Promise<Response> {
    const { store, log } = this.core.options;
    // A purchase from a balance moved no money on chain: there is no transfer to report.
    const settlement = paid.settlement_tx ? this.paymentResponse(paid.settlement_tx, paid.payer) : {};
    const row = (reason: string) => this.notCharged(attempt, presented, 200, reason, paid);
    // A debit from a balance (request_hash "") records no request, so no kept answer can be its.
    const kept = paid.request_hash === "" ? undefined : await keptAnswerOf(store, paid.payer, paid.nonce);
    if (kept && kept.requestHash === paid.request_hash && kept.requestHash === attempt.requestHash) {
      await row(reread ?? "paid_retry: kept answer replayed");
      log.info("paid retry: kept answer replayed", { payer: paid.payer, tx: paid.settlement_tx });
      return new Response(kept.body, { status: kept.status, headers: { ...settlement, ...kept.headers } });
    }
    const response = await this.core.runFunction(
      attempt,
      this.core.verifiedPayment(attempt.route, paid.payer, paid.nonce, paid.amount_atomic),
    );
    if (response.status >= 400) return response;
    const bytes = Buffer.from(await response.arrayBuffer());
    const headers = withHeaders(response.headers, settlement);
    if (reread) {
      await row(reread);
      return new Response(bytes, { status: response.status, headers });
    }
    const answer = this.answerToKeep(attempt, headers, response.status, bytes, paid.payer, paid.nonce, new Date(paid.created_at));
    if (answer) await keepAnswer(store, answer, false);
    await row("paid_retry: answered for an earlier settled attempt");
    log.info("paid retry: answered again for a settled payment", { payer: paid.payer, tx: paid.settlement_tx });
    return new Response(bytes, { status: response.status, headers });
  }

  /** A fresh payment: ledger row, verify, run, settle, keep. */
  private async payNow(attempt: Attempt, header: string, decoded: DecodedPayment, earlierOpen: AttemptRow[]): Promise<Response> {
    const { store } = this.core.options;
    const rowId = await insertLedgerRow(store, this.ledgerPayment(attempt, decoded), { outcome: "pending" });
    const verified = await this.verify(attempt, header).catch(async (error: unknown) => {
      await finishLedgerRow(store, rowId, { outcome: "not_charged", status: 503, reason: "payment_unavailable" });
      throw error;
    });
    return this.afterVerify(attempt, decoded, rowId, verified, earlierOpen);
  }

  /** The facilitator's verdict on the request's payment, with how long it took; throws when it is unavailable. */
  private async verify(attempt: Attempt, header: string): Promise<Verification> {
    const context = this.core.context(attempt, header);
    const started = performance.now();
    const result = await this.core.http.processHTTPRequest(context);
    return { context, result, ms: round(performance.now() - started) };
  }

  /** A verified (or refused) payment with its open ledger row: run, settle, keep. */
  private async afterVerify(
    attempt: Attempt,
    decoded: DecodedPayment,
    rowId: number,
    { context, result, ms }: Verification,
    earlierOpen: AttemptRow[],
    lease?: HeldLeases,
  ): Promise<Response> {
    attempt.timings.verify = ms;
    this.core.options.observer?.verified(ms / 1000);
    const { store, log, inFlight } = this.core.options;
    const { authorization } = decoded;
    const notCharged = (status: number, reason: string) => finishLedgerRow(store, rowId, { outcome: "not_charged", status, reason });
    if (result.type !== "payment-verified") {
      const refused =
        result.type === "payment-error" ? decodePaymentRequiredHeader(result.response.headers["PAYMENT-REQUIRED"] as string) : undefined;
      // x402's own refusals before the facilitator are sentences; the buyer gets a stable code.
      const reason = refused?.error && /^[a-z0-9_]{1,80}$/.test(refused.error) ? refused.error : "no_matching_requirements";
      await notCharged(402, reason);
      const used = /nonce_already_used|authorization_used/.test(reason);
      return this.core.refuse(attempt, used ? "payment_already_used" : "payment_required", "The payment was refused.", { reason });
    }
    // Recorded while the function runs, and always before settling: only verified rows can later count as paid.
    const verifiedRecorded = markLedgerRowVerified(store, rowId);

    const payment = this.core.verifiedPayment(attempt.route, authorization.from, authorization.nonce, result.paymentRequirements.amount);
    const [response] = await Promise.all([this.core.runFunction(attempt, payment), verifiedRecorded]);
    if (response.status >= 400) {
      await result.cancellationDispatcher.cancel({ reason: "handler_failed", responseStatus: response.status });
      await notCharged(response.status, await errorCodeOf(response));
      return response;
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    // A client gone before settlement is not charged: the authorisation stays unused, and a retry with it pays.
    if (attempt.request.signal.aborted) {
      await result.cancellationDispatcher.cancel({ reason: "handler_failed" });
      await notCharged(499, "client_gone");
      attempt.record.outcome = "failed";
      log.info("client gone before settlement: not settled", { payer: authorization.from });
      return new Response(null, { status: 499 });
    }
    const settleStarted = performance.now();
    const settled = await this.core.http.processSettlement(result.paymentPayload, result.paymentRequirements, result.declaredExtensions, {
      request: context,
      responseBody: bytes,
      responseHeaders: Object.fromEntries(response.headers),
    });
    attempt.timings.settle = round(performance.now() - settleStarted);
    this.core.options.observer?.settled(attempt.timings.settle / 1000);
    // A settlement that failed may still have paid us (a lost receipt, an earlier attempt's
    // transfer landing first): the chain decides, so a payer is never told "not charged" wrongly.
    if (!settled.success) {
      const tx = await this.chain
        .findPayment(authorization.from, authorization.nonce, this.core.options.payTo, BigInt(result.paymentRequirements.amount), 10_000)
        .catch(() => null);
      if (tx) {
        log.warn("settlement reported failed but the transfer is on chain; answering", { reason: settled.errorReason, tx });
        Object.assign(settled, { success: true, transaction: tx, headers: this.paymentResponse(tx, authorization.from) });
      }
    }
    const timing = serverTiming(attempt.timings);
    const headers = withHeaders(response.headers, settled.success ? settled.headers : {});
    const answer = this.answerToKeep(attempt, headers, response.status, bytes, authorization.from, authorization.nonce, new Date());

    if (settled.success) {
      attempt.record.outcome = "settled";
      attempt.record.amountAtomic = payment.amount;
      // Leases in the store are freed by the same statement; in memory they cost nothing to free after.
      const release = lease && inFlight.shared ? { keys: lease.keys, holder: lease.holder } : null;
      // Earlier attempts of this authorisation left open are closed with it: the payment is counted once, here.
      const superseded = earlierOpen.filter((r) => r.verified).map((r) => r.id);
      await settleAndKeep(store, rowId, response.status, settled.transaction, answer, release, superseded).then(
        () => {
          if (lease && release) lease.released = true;
        },
        (error: unknown) =>
          // The transfer happened: the answer goes out; the upkeep records the row from the chain.
          log.error("ledger: settled payment not recorded", { error: error as Error, tx: settled.transaction }),
      );
      const { requestId: request_id, timings } = attempt;
      log.info("paid call", {
        request_id,
        route: payment.route,
        payer: authorization.from,
        amount: payment.amount,
        tx: settled.transaction,
        ...timings,
      });
      headers.set("Server-Timing", timing);
      return new Response(bytes, { status: response.status, headers });
    }
    const unknown = settled.errorReason === SETTLEMENT_UNKNOWN;
    const outcome = unknown ? "settlement_unknown" : "settlement_failed";
    attempt.record.outcome = outcome;
    const tx = settled.transaction ? { settlementTx: settled.transaction } : {};
    await finishLedgerRow(store, rowId, { outcome, status: 402, reason: settled.errorReason, ...tx });
    // If the transfer did land, the retry finds it on chain and gets this very answer.
    if (unknown && answer) await keepAnswer(store, answer, true);
    const message = unknown
      ? "The settlement's outcome is not known yet: the transfer may have gone through. Retry the same request with the same payment header: if it settled you get this answer without paying again; if not, it is settled then."
      : "The payment could not be settled, so the answer was withheld and you were not charged. Sign a fresh authorisation and retry.";
    return jsonResponse(402, errorBody(outcome, message, { reason: settled.errorReason }), { ...settled.headers, "Server-Timing": timing });
  }

  /** The PAYMENT-RESPONSE header of a settled payment: its transaction and payer. */
  private paymentResponse(transaction: string, payer: string): Record<string, string> {
    return { "payment-response": encodePaymentResponseHeader({ success: true, transaction, network: this.network, payer }) };
  }

  private ledgerPayment(attempt: Attempt, presented: DecodedPayment | undefined, paid?: AttemptRow): LedgerPayment {
    const a = presented?.authorization;
    return {
      requestId: attempt.requestId,
      route: routeKey(attempt.route),
      payer: paid?.payer ?? (a?.from as string),
      amountAtomic: paid?.amount_atomic ?? (a?.value as string),
      asset: this.core.scheme.asset,
      network: this.core.scheme.network,
      nonce: paid?.nonce ?? (a?.nonce as string),
      validBefore: a && Number.isSafeInteger(Number(a.validBefore)) ? Number(a.validBefore) : null,
      requestHash: attempt.requestHash,
      instance: this.core.options.instance,
      paymentId: presented?.paymentId ?? null,
      client: attempt.client,
    };
  }

  /** The answer to keep for the payer, or undefined (and a warning) when it is too large. */
  private answerToKeep(
    attempt: Attempt,
    responseHeaders: Headers,
    status: number,
    bytes: Buffer,
    payer: string,
    nonce: string,
    settledAt: Date,
  ): KeptAnswer | undefined {
    if (bytes.length > MAX_KEPT_ANSWER_BYTES) {
      this.core.options.log.warn("paid answer too large to keep; a retry runs the function again", { bytes: bytes.length });
      return undefined;
    }
    const headers = Object.fromEntries(
      KEPT_HEADERS.flatMap((name) => [[name, responseHeaders.get(name)]].filter(([, v]) => v !== null)),
    ) as Record<string, string>;
    const expiresAt = new Date(settledAt.getTime() + this.redeemMs());
    return { payer, nonce, requestHash: attempt.requestHash, status, headers, body: bytes.toString("utf8"), expiresAt };
  }
}

function inProgress(message: string): Response {
  return errorResponse(new ServiceError("payment_in_progress", message, { headers: { "Retry-After": "1" } }));
}

export function paymentUnavailable(): ServiceError {
  return new ServiceError(
    "payment_unavailable",
    "The payment facilitator or the chain did not answer in time, so nothing was run or charged. Retry shortly with the same payment.",
    { headers: { "Retry-After": "5" } },
  );
}

/** `call`, within `ms`: past it, or failing, a `payment_unavailable` error. */
function withinBudget<A extends unknown[], R>(call: (...args: A) => Promise<R>, ms: number): (...args: A) => Promise<R> {
  return (...args: A): Promise<R> =>
    withBudget(
      call(...args).catch((error: unknown) => {
        throw Object.assign(paymentUnavailable(), { cause: error });
      }),
      ms,
      () => {
        throw paymentUnavailable();
      },
    );
}

/** `reader`, each call within `ms`. */
function budgeted({ isUsed, findUse, findPayment }: AuthorizationReader, ms: number): AuthorizationReader {
  return { isUsed: withinBudget(isUsed, ms), findUse: withinBudget(findUse, ms), findPayment: withinBudget(findPayment, ms) };
}

function serverTiming(t: Attempt["timings"]): string {
  return `verify;dur=${t.verify ?? 0}, fn;dur=${t.fn ?? 0}, settle;dur=${t.settle ?? 0}`;
}
async function errorCodeOf(response: Response): Promise<string> {
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown } };
    return typeof body.error?.code === "string" ? body.error.code : `status_${response.status}`;
  } catch {
    return `status_${response.status}`;
  }
}
