/**
 * The payment gate: every paid call, from its Fetch `Request` to its `Response`, in one
 * visible sequence. The Astro endpoint (src/dispatch.ts) hands it a paid route and the
 * function to run; nothing else touches the payment.
 *
 *   no payment header           → 402 challenge: PAYMENT-REQUIRED header, the same JSON as body (HEAD: no body)
 *   decode every field          → 402 invalid_payload naming the field; no facilitator call
 *   never seen, leases free?    → claim + pending row (one statement) while verify runs: go to run
 *   else read what is known     → 402 unless the payer's own signature
 *   claim (in-flight lease)     → 409 payment_in_progress while another request holds the payment
 *   settled before?             → redeem: kept answer, or run again; never a second charge
 *                                 (same request + complete signed authorisation within its window,
 *                                 or its payment-identifier id / Sign-In-With-X for 24 h after)
 *   open ledger row (pending)
 *   verify (facilitator)        → 402 refused, 503 payment_unavailable past the time budget
 *   run                         → status >= 400: not charged
 *   settle                      → 402 settlement_failed / settlement_unknown (answer held for the retry)
 *   keep answer, row settled,   → the answer with PAYMENT-RESPONSE
 *   lease freed (one statement)
 */
import { createHash, randomUUID } from "node:crypto";
import { decodePaymentRequiredHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import {
  type FacilitatorClient,
  FacilitatorResponseError,
  type HTTPAdapter,
  type HTTPRequestContext,
  x402HTTPResourceServer,
  x402ResourceServer,
} from "@x402/core/server";
import type { PaymentRequired } from "@x402/core/types";
import { bazaarResourceServerExtension } from "@x402/extensions/bazaar";
import { paymentIdentifierResourceServerExtension } from "@x402/extensions/payment-identifier";
import { atomicUsdc, type RouteDef, routeKey } from "../../spec/route.ts";
import { CHAT_PRICE_USD } from "../../spec/routes/assistant.ts";
import type { AuthorizationReader } from "../chain/authorization.ts";
import type { Config } from "../config.ts";
import type { VerifiedPayment } from "../context.ts";
import { type ErrorCode, InvalidRequestError, ServiceError, toErrorResponse } from "../errors.ts";
import type { Logger } from "../log.ts";
import {
  type AttemptRow,
  attemptsOf,
  finishLedgerRow,
  insertLedgerRow,
  type LedgerPayment,
  lastSettledFor,
  markLedgerRowVerified,
  openFreshAttempt,
} from "../store/ledger.ts";
import type { Store } from "../store/store.ts";
import { withBudget } from "../time-budget.ts";
import { validateQuery } from "../validate.ts";
import { balanceOf, debitBalance, TOPUP_ROUTE, usdOf } from "./balances.ts";
import { GuardedFacilitator, SETTLEMENT_UNKNOWN } from "./facilitator.ts";
import { type HeldLeases, holding, type InFlightRegistry, releaseAll, whileClaimed } from "./inflight.ts";
import { KEPT_HEADERS, type KeptAnswer, keepAnswer, keptAnswerOf, MAX_KEPT_ANSWER_BYTES, settleAndKeep } from "./kept-answers.ts";
import { type DecodedPayment, isProblem } from "./payload.ts";
import { paymentRoutes } from "./requirements.ts";
import { evmScheme, type PaymentScheme } from "./scheme.ts";
import { declaresSignIn, SIWX_HEADER, signedInPayer, signInDeclaration, signInStatement } from "./sign-in.ts";
import { resolveAuthorization } from "./upkeep.ts";

/** What a paid function receives from the gate. */
export interface PaidCall {
  payment: VerifiedPayment;
  /** The request body, read once by the gate. */
  body: Uint8Array;
}

/** Runs the paid function; a status >= 400 means it failed and nothing is charged. */
export type PaidRun = (call: PaidCall) => Promise<Response>;

/** Everything the gate needs, built once at start (src/server/service.ts). */
export interface GateOptions {
  routes: readonly RouteDef[];
  config: Pick<Config, "mode" | "network" | "chainId" | "usdc" | "maxTimeoutSeconds" | "publicUrl" | "payments">;
  payTo: `0x${string}`;
  facilitator: FacilitatorClient;
  store: Store;
  inFlight: InFlightRegistry;
  /** This instance's id, recorded on ledger rows and in-flight leases. */
  instance: string;
  authorizations: AuthorizationReader;
  log: Logger;
  /** Told how each paid call ended and how long the facilitator took (the metrics). */
  observer?: PaymentObserver;
  /** The site's network family (asset quoted, x402 scheme, how a payment header is read); default: EVM with `config.usdc`. */
  scheme?: PaymentScheme;
}

/** How a call to a paid route ended, for the metrics. */
export type PaidOutcome =
  /** Settled now: a new charge. */
  | "settled"
  /** Answered for a payment settled earlier (a paid retry, a re-read): no new charge. */
  | "redeemed"
  /** Paid from a prepaid balance. */
  | "balance"
  /** No payment: the 402 challenge. */
  | "challenged"
  /** The payment was refused (malformed, not verified, already used) or the balance was short. */
  | "refused"
  | "settlement_failed"
  | "settlement_unknown"
  /** The same payment was in flight in another request. */
  | "in_progress"
  /** The function or the payment path failed; nothing was charged. */
  | "failed";

/** Observes the payment gate (src/metrics/metrics.ts counts what it is told). */
export interface PaymentObserver {
  /** One call to a paid route ended; `amountAtomic` is what it charged (only when `settled`). */
  paidCall(route: string, outcome: PaidOutcome, amountAtomic?: string): void;
  /** The facilitator verified (or refused) a payment in `seconds`. */
  verified(seconds: number): void;
  /** The facilitator settled (or failed to settle) a payment in `seconds`. */
  settled(seconds: number): void;
}

/** What the gate learned about one call while answering it. */
interface CallRecord {
  outcome?: PaidOutcome;
  amountAtomic?: string;
}

/** How long each step of a paid call took, in milliseconds. */
interface Timings {
  verify?: number;
  fn?: number;
  settle?: number;
}

/** The facilitator's answer to a payment, with the x402 request context it was given. */
interface Verification {
  context: HTTPRequestContext;
  result: Awaited<ReturnType<x402HTTPResourceServer["processHTTPRequest"]>>;
  /** How long the facilitator took, in milliseconds. */
  ms: number;
}

/** One paid request as the gate sees it. */
interface Attempt {
  request: Request;
  route: RouteDef;
  url: URL;
  body: Uint8Array;
  requestHash: string;
  requestId: string;
  run: PaidRun;
  /** The wallet that signed in with Sign-In-With-X, when the request carries a valid proof. */
  signedIn: string | null;
  timings: Timings;
  record: CallRecord;
}

const JSON_TYPE = "application/json; charset=utf-8";
const round = (ms: number) => Math.round(ms * 100) / 100;

/** What identifies "the same request" for a paid retry: method, path with query, and body bytes. */
export function requestHash(method: string, url: URL, body: Uint8Array): string {
  return createHash("sha256").update(`${method} ${url.pathname}${url.search}\n`).update(body).digest("hex");
}

/** x402's view of a Fetch request; the payment header is chosen by the gate (PAYMENT-SIGNATURE or X-Payment). */
class FetchAdapter implements HTTPAdapter {
  private readonly request: Request;
  private readonly url: URL;
  private readonly path: string;
  private readonly payment: string | undefined;
  private readonly resourceOrigin: string;

  constructor(request: Request, url: URL, path: string, payment: string | undefined, resourceOrigin: string) {
    this.request = request;
    this.url = url;
    this.path = path;
    this.payment = payment;
    this.resourceOrigin = resourceOrigin;
  }
  getHeader(name: string) {
    return name.toLowerCase() === "payment-signature" ? this.payment : (this.request.headers.get(name) ?? undefined);
  }
  getMethod() {
    return this.request.method === "HEAD" ? "GET" : this.request.method;
  }
  getPath() {
    return this.path;
  }
  getUrl() {
    return `${this.resourceOrigin}${this.url.pathname}${this.url.search}`;
  }
  getAcceptHeader() {
    return this.request.headers.get("accept") ?? "";
  }
  getUserAgent() {
    return this.request.headers.get("user-agent") ?? "";
  }
}

/** The payment header of a request (`PAYMENT-SIGNATURE`, or its alias `X-Payment`), or a 400 when they disagree. */
function paymentHeaderOf(headers: Headers): string | undefined | ServiceError {
  const signature = headers.get("payment-signature") ?? undefined;
  const alias = headers.get("x-payment") ?? undefined;
  if (signature !== undefined && alias !== undefined && signature !== alias) {
    return new ServiceError("invalid_request", 400, "PAYMENT-SIGNATURE and X-Payment carry different payments; send one.", {
      details: { fields: [{ field: "header.x-payment", expected: "absent, or the same value as PAYMENT-SIGNATURE" }] },
    });
  }
  return signature ?? alias;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": JSON_TYPE, ...headers } });
}

function errorResponse(error: ServiceError): Response {
  const { status, headers, body } = toErrorResponse(error);
  return json(status, body, headers);
}

/** The payment gate of one service instance. */
export class PaymentGate {
  private readonly options: GateOptions;
  private readonly http: x402HTTPResourceServer;
  private readonly scheme: PaymentScheme;
  /** The chain's record of authorisations, each read within the payment time budget. */
  private readonly chain: AuthorizationReader;
  private initialized: Promise<void> | undefined;

  constructor(options: GateOptions) {
    this.options = options;
    const { config, payTo, routes, log } = options;
    const server = new x402ResourceServer(new GuardedFacilitator(options.facilitator, log, config.payments.timeoutMs));
    this.scheme =
      options.scheme ??
      evmScheme(config.network, {
        name: config.usdc.name,
        version: config.usdc.version,
        chainId: config.chainId,
        verifyingContract: config.usdc.address,
      });
    this.scheme.register(server);
    server.registerExtension(bazaarResourceServerExtension);
    server.registerExtension(paymentIdentifierResourceServerExtension);
    this.http = new x402HTTPResourceServer(server, paymentRoutes(routes, config as Config, payTo, this.scheme));
    this.chain = budgeted(options.authorizations, config.payments.timeoutMs);
  }

  /** Answer one request to a paid route. Never throws: every failure is a response, and none is charged. */
  async handle(request: Request, route: RouteDef, run: PaidRun): Promise<Response> {
    const record: CallRecord = {};
    const response = await this.answer(request, route, run, record);
    this.options.observer?.paidCall(routeKey(route), record.outcome ?? outcomeOf(response.status), record.amountAtomic);
    return response;
  }

  private async answer(request: Request, route: RouteDef, run: PaidRun, record: CallRecord): Promise<Response> {
    const url = new URL(request.url);
    const requestId = request.headers.get("x-request-id") ?? randomUUID();
    const log = this.options.log.child({ request_id: requestId, route: routeKey(route) });
    try {
      await this.initialize();
      const header = paymentHeaderOf(request.headers);
      if (header instanceof ServiceError) return errorResponse(header);
      const siwx = request.headers.get(SIWX_HEADER);
      // A price read from the query is quoted only for a valid query.
      if (route.dynamicPrice && route.query) validateQuery(route.query, url.searchParams);
      // HEAD asks what a GET would answer without a body: the challenge, never a paid run.
      if (request.method === "HEAD") {
        record.outcome = "challenged";
        return await this.challenge(request, route, url);
      }
      // A body naming a prepaid balance, without a payment: the balance pays, for its own wallet only.
      const body = route.balancePayable || header !== undefined || siwx !== null ? new Uint8Array(await request.arrayBuffer()) : undefined;
      const userId = route.balancePayable && header === undefined && body ? balanceUserOf(body) : undefined;
      if (userId === undefined && header === undefined && siwx === null) {
        record.outcome = "challenged";
        return await this.challenge(request, route, url);
      }

      const attempt: Attempt = {
        request,
        route,
        url,
        body: body as Uint8Array,
        requestHash: requestHash(request.method, url, body as Uint8Array),
        requestId,
        run,
        signedIn: null,
        timings: {},
        record,
      };
      if (userId !== undefined) return await this.payFromBalance(attempt, userId, siwx);
      if (siwx !== null) {
        const signedIn = await this.verifySignIn(siwx, url);
        if ("field" in signedIn) return await this.refuse(attempt, "invalid_payload", "The Sign-In-With-X header is not valid.", signedIn);
        attempt.signedIn = signedIn.payer;
      }
      if (header === undefined) return await this.redeemSignedIn(attempt);

      const decoded = this.scheme.decode(header);
      if (isProblem(decoded)) {
        return await this.refuse(attempt, "invalid_payload", `The payment header is malformed at ${decoded.field}.`, { ...decoded });
      }
      const payer = decoded.authorization.from.toLowerCase();
      const holder = `${this.options.instance}:${randomUUID()}`;
      const onLeaseError = (error: unknown) => log.warn("in-flight lease not renewed or released; it runs out", { error: error as Error });
      // One lease per authorisation and, with a payment-identifier id, one per id: two fresh
      // authorisations carrying the same id never both pay.
      const keys = decoded.paymentId ? [decoded.key, `id:${payer}:${decoded.paymentId}`] : [decoded.key];
      const fresh = await this.payFresh(attempt, decoded, keys, holder, onLeaseError);
      if (fresh) return fresh;

      // Seen before, or contended: read everything the ledger knows of it first.
      const seen = await attemptsOf(this.options.store, payer, decoded.authorization.nonce, decoded.paymentId);
      // An authorisation seen before, or one naming a known id, must carry the payer's own signature,
      // checked before it may hold anything: a stranger copying it from the chain changes nothing.
      const known = seen.settled || seen.open.length > 0 || seen.byId || seen.byIdOpen.length > 0;
      if (known && !(await this.scheme.signedByPayer(decoded))) {
        return await this.refuse(attempt, "invalid_payload", "The authorisation's signature is not the payer's.", {
          field: "payload.signature",
          expected: "the payer's EIP-712 signature of exactly this authorisation",
        });
      }
      const work = decoded.paymentId
        ? async () =>
            (await whileClaimed(this.options.inFlight, keys[1] as string, holder, () => this.pay(attempt, decoded, seen), onLeaseError))
              ?.value
        : () => this.pay(attempt, decoded, seen);
      const claimed = await whileClaimed(this.options.inFlight, decoded.key, holder, work, onLeaseError);
      if (claimed?.value) return claimed.value;
      await insertLedgerRow(this.options.store, this.ledgerPayment(attempt, decoded), {
        outcome: "not_charged",
        status: 409,
        reason: "payment_in_progress",
      });
      return inProgress("This payment is being used by another request in flight; wait for that answer, or retry in a second.");
    } catch (error) {
      if (error instanceof InvalidRequestError) return errorResponse(error);
      if (error instanceof FacilitatorResponseError || (error instanceof ServiceError && error.code === "payment_unavailable")) {
        log.error("payment unavailable", { error: error as Error });
        return errorResponse(unavailable());
      }
      log.error("payment gate failed", { error: error instanceof Error ? error : String(error) });
      return errorResponse(
        new ServiceError("unavailable", 503, "The payment path failed before anything was run or charged; retry shortly.", {
          headers: { "Retry-After": "5" },
        }),
      );
    }
  }

  /**
   * The wallet signed in on a free route that needs one (`RouteDef.signIn`), or the 401 to send.
   * Behind a proxy the Host header is the caller's to choose: a sign-in binds to PUBLIC_URL there.
   */
  async signIn(request: Request, route: RouteDef): Promise<{ wallet: `0x${string}` } | Response> {
    const url = new URL(request.url);
    const header = request.headers.get(SIWX_HEADER);
    const what = `reading this (${routeKey(route)})`;
    if (header === null) {
      return this.signInRefusal(url, route, "signin_required", `${what} needs a SIGN-IN-WITH-X header signed by your wallet.`);
    }
    const signed = await this.verifySignIn(header, url);
    if ("field" in signed) {
      return this.signInRefusal(url, route, "signin_invalid", `The Sign-In-With-X header was refused (${signed.reason}).`, signed);
    }
    return { wallet: signed.payer as `0x${string}` };
  }

  /** The origin a sign-in binds to; null in production without PUBLIC_URL (the Host header is the caller's to choose there). */
  private signInOrigin(url: URL): string | null {
    return this.options.config.mode === "production" && !this.options.config.publicUrl ? null : this.origin(url);
  }

  private async verifySignIn(header: string, url: URL) {
    const origin = this.signInOrigin(url);
    return origin
      ? await signedInPayer(header, origin, this.options.store)
      : { field: "header.sign-in-with-x", expected: "the service's PUBLIC_URL to be configured", reason: "siwx_unavailable" };
  }

  /** 401: no sign-in, or a refused one; says what to sign (the same declaration challenges carry). */
  private signInRefusal(
    url: URL,
    route: RouteDef,
    code: "signin_required" | "signin_invalid",
    message: string,
    details: Record<string, unknown> = {},
  ): Response {
    const origin = this.signInOrigin(url) ?? url.origin;
    const resource = `${origin}${url.pathname}${url.search}`;
    const signIn = signInDeclaration(origin, resource, this.options.config.network, signInStatement(route), true);
    const error = new ServiceError(code, 401, `${message} Nothing was charged or debited.`, {
      details: { ...details, header: "SIGN-IN-WITH-X", sign_in: signIn },
      headers: { "WWW-Authenticate": `SIWX realm="${origin}"`, "Cache-Control": "no-store" },
    });
    return errorResponse(error);
  }

  /**
   * A message paid from the prepaid balance of `userId`: signed in by that wallet, covered by the
   * balance, run, and debited by the function as its last step (one statement that cannot
   * overdraw). A failure is never debited; a balance that runs short is a 402 with the challenge.
   */
  private async payFromBalance(attempt: Attempt, userId: string | InvalidRequestError, siwx: string | null): Promise<Response> {
    if (userId instanceof InvalidRequestError) return errorResponse(userId);
    const wallet = userId.toLowerCase();
    if (siwx === null) {
      return this.signInRefusal(
        attempt.url,
        attempt.route,
        "signin_required",
        `Spending the balance of ${userId} needs a SIGN-IN-WITH-X header signed by that wallet.`,
      );
    }
    const signed = await this.verifySignIn(siwx, attempt.url);
    if ("field" in signed) {
      return this.signInRefusal(
        attempt.url,
        attempt.route,
        "signin_invalid",
        `The Sign-In-With-X header was refused (${signed.reason}).`,
        signed,
      );
    }
    if (signed.payer !== wallet) {
      return this.signInRefusal(
        attempt.url,
        attempt.route,
        "signin_invalid",
        "The Sign-In-With-X header was signed by another wallet than user_id.",
        {
          reason: "wallet_mismatch",
          field: "body.user_id",
          expected: "the address of the wallet that signed SIGN-IN-WITH-X",
        },
      );
    }
    return this.spendBalance(attempt, wallet);
  }

  /** A message paid by the balance of `wallet`, signed in already. */
  private async spendBalance(attempt: Attempt, wallet: string): Promise<Response> {
    const { store, log } = this.options;
    const price = BigInt(atomicUsdc(attempt.route.price ?? 0));
    const held = await balanceOf(store, wallet);
    if (held < price) return this.insufficient(attempt, wallet, held, price);
    let left: bigint | null | undefined;
    const debit = async () => {
      left ??= await debitBalance(store, wallet, price, routeKey(attempt.route), attempt.requestId);
      return left;
    };
    const payment: VerifiedPayment = {
      ...this.verifiedPayment(attempt.route, wallet, "0x", price.toString()),
      balance: { wallet: wallet as `0x${string}`, debit },
    };
    const response = await this.runFunction(attempt, payment);
    if (left === null) return this.insufficient(attempt, wallet, await balanceOf(store, wallet), price);
    if (response.status >= 400) return response;
    if (left === undefined) {
      // A balance-paid function debits as its last step; one that did not is charged here, or refused.
      log.error("balance-paid function answered without debiting", { route: routeKey(attempt.route) });
      if ((await debit()) === null) return this.insufficient(attempt, wallet, await balanceOf(store, wallet), price);
    }
    attempt.record.outcome = "balance";
    log.info("balance call", {
      request_id: attempt.requestId,
      route: routeKey(attempt.route),
      payer: wallet,
      amount: price.toString(),
      fn: attempt.timings.fn,
    });
    return response;
  }

  /** 402 insufficient_balance: the per-call challenge, the balance and how to top up; nothing debited. */
  private async insufficient(attempt: Attempt, wallet: string, held: bigint, price: bigint): Promise<Response> {
    const { challenge, header } = await this.paymentRequired(attempt.request, attempt.route, attempt.url);
    const error = new ServiceError(
      "insufficient_balance",
      402,
      `The balance of ${wallet} holds ${usdOf(held)} USDC, less than this message's ${usdOf(price)}. Nothing was debited. Top it up with POST /api/balance/topup?amount=<USD>, or pay this message per call with the challenge in this answer.`,
      { details: { user_id: wallet, balance: usdOf(held), price: usdOf(price), top_up: "POST /api/balance/topup?amount=5" } },
    );
    const { body } = toErrorResponse(error);
    return json(402, { ...challenge, ...body }, { "PAYMENT-REQUIRED": header, "Cache-Control": "no-store" });
  }

  /** Sync with the facilitator once (supported kinds); retried on the next call after a failure. */
  private initialize(): Promise<void> {
    this.initialized ??= this.http.initialize().catch((error: unknown) => {
      this.initialized = undefined;
      throw error instanceof FacilitatorResponseError ? error : new FacilitatorResponseError(String(error));
    });
    return this.initialized;
  }

  private origin(url: URL): string {
    return this.options.config.publicUrl ?? url.origin;
  }

  private context(request: Request, url: URL, route: RouteDef, payment: string | undefined): HTTPRequestContext {
    const adapter = new FetchAdapter(request, url, route.path, payment, this.origin(url));
    // The route the caller resolved is the one priced: never a path x402 re-derives from the request.
    return { adapter, path: route.path, method: route.method, ...(payment ? { paymentHeader: payment } : {}) };
  }

  /** The unpaid challenge: 402 with PAYMENT-REQUIRED and the same JSON in the body (none for HEAD). */
  private async challenge(request: Request, route: RouteDef, url: URL): Promise<Response> {
    const { header, challenge } = await this.paymentRequired(request, route, url);
    const headers = { "Content-Type": JSON_TYPE, "PAYMENT-REQUIRED": header, "Cache-Control": "no-store" };
    return new Response(request.method === "HEAD" ? null : JSON.stringify(challenge), { status: 402, headers });
  }

  private async paymentRequired(request: Request, route: RouteDef, url: URL): Promise<{ header: string; challenge: PaymentRequired }> {
    const result = await this.http.processHTTPRequest(this.context(request, url, route, undefined));
    if (result.type !== "payment-error") throw new Error(`${routeKey(route)} is not a paid route of the x402 config`);
    const header = result.response.headers["PAYMENT-REQUIRED"] as string;
    const challenge = decodePaymentRequiredHeader(header);
    // Routes a wallet may use by signing in (a balance, content it bought) say so, for wrapFetchWithSIWx.
    const origin = declaresSignIn(route) ? this.signInOrigin(url) : null;
    if (origin && challenge.resource) {
      challenge.extensions = {
        ...challenge.extensions,
        [SIWX_HEADER]: signInDeclaration(origin, challenge.resource.url, this.options.config.network, signInStatement(route)),
      };
      return { header: encodePaymentRequiredHeader(challenge), challenge };
    }
    return { header, challenge };
  }

  /** A 402 refusal: the challenge (its `error` the reason) plus the service's error object, saying why. */
  private async refuse(
    attempt: Attempt,
    code: Extract<ErrorCode, "invalid_payload" | "payment_required" | "payment_already_used">,
    message: string,
    details: Record<string, unknown>,
  ): Promise<Response> {
    const { challenge } = await this.paymentRequired(attempt.request, attempt.route, attempt.url);
    const reason = typeof details.reason === "string" ? details.reason : code;
    const header = encodePaymentRequiredHeader({ ...challenge, error: reason });
    const { body } = toErrorResponse(new ServiceError(code, 402, `${message} You were not charged.`, { details }));
    return json(402, { ...challenge, ...body }, { "PAYMENT-REQUIRED": header, "Cache-Control": "no-store" });
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
    decoded: DecodedPayment,
    keys: string[],
    holder: string,
    onLeaseError: (error: unknown) => void,
  ): Promise<Response | undefined> {
    const { inFlight, store } = this.options;
    const payment = this.ledgerPayment(attempt, decoded);
    let opening: Promise<Awaited<ReturnType<typeof openFreshAttempt>>>;
    if (inFlight.shared) {
      opening = openFreshAttempt(store, payment, { keys, holder, leaseSeconds: inFlight.leaseSeconds });
    } else {
      const taken: string[] = [];
      for (const key of keys) {
        if (!(await inFlight.claim(key, holder))) break;
        taken.push(key);
      }
      if (taken.length < keys.length) {
        await releaseAll(inFlight, taken, holder, onLeaseError);
        return undefined;
      }
      opening = openFreshAttempt(store, payment, null).then(
        (opened) => ({ ...opened, claimed: taken }),
        async (error: unknown) => {
          await releaseAll(inFlight, taken, holder, onLeaseError);
          throw error;
        },
      );
    }
    const verifying = this.verify(attempt);
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
  private async pay(attempt: Attempt, decoded: DecodedPayment, seen: Awaited<ReturnType<typeof attemptsOf>>): Promise<Response> {
    const payer = decoded.authorization.from.toLowerCase();
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
          new ServiceError("payment_id_conflict", 409, "This payment-identifier id was already used for another request; use a new id.", {
            details: { payment_id: decoded.paymentId },
          }),
        );
      }
      if (this.redemptionExpired(byId)) return this.expired(attempt, byId);
      return this.redeem(attempt, byId, decoded);
    }

    const earlier = settled ?? (await this.resolveOpen(open)).settled;
    if (!earlier) return this.payNow(attempt, decoded, open);
    if (earlier.request_hash !== attempt.requestHash) {
      return this.refuse(attempt, "payment_already_used", "This authorisation already paid for a different request.", {
        reason: "payment_already_used",
      });
    }
    if (this.redemptionExpired(earlier)) return this.expired(attempt, earlier);
    // A validBefore too large to read (null) bounds nothing; the challenge's validity still does.
    const windowEnd = Math.min(
      earlier.valid_before === null ? Number.POSITIVE_INFINITY : Number(earlier.valid_before) * 1000,
      new Date(earlier.created_at).getTime() + this.options.config.maxTimeoutSeconds * 1000,
    );
    const proven = Date.now() < windowEnd || attempt.signedIn === payer;
    if (!proven) {
      return this.refuse(
        attempt,
        "payment_already_used",
        "This payment was settled and its retry window has passed. Redeem it with the payment-identifier id you sent with it, or sign in with the paying wallet (SIGN-IN-WITH-X).",
        { reason: "retry_window_closed", redeem_until: new Date(new Date(earlier.created_at).getTime() + this.redeemMs()).toISOString() },
      );
    }
    return this.redeem(attempt, earlier, decoded);
  }

  private redeemMs(): number {
    return this.options.config.payments.redeemHours * 3_600_000;
  }

  private redemptionExpired(paid: AttemptRow): boolean {
    return Date.now() > new Date(paid.created_at).getTime() + this.redeemMs();
  }

  private expired(attempt: Attempt, paid: AttemptRow): Promise<Response> {
    const hours = this.options.config.payments.redeemHours;
    return this.refuse(
      attempt,
      "payment_already_used",
      `This payment was settled more than ${hours} hours ago; its answer can no longer be redeemed.`,
      {
        reason: "redemption_expired",
        settled_at: paid.created_at,
      },
    );
  }

  /** Sign-In-With-X without a payment: the payer's latest settled payment of the same request, or the challenge. */
  private async redeemSignedIn(attempt: Attempt): Promise<Response> {
    const { store, config } = this.options;
    const payer = attempt.signedIn as string;
    const row = await lastSettledFor(store, payer, { requestHash: attempt.requestHash }, config.payments.redeemHours);
    if (row) return this.redeem(attempt, row, undefined);
    // Content bought by this wallet (by GET or POST) is read again by signing in, for the route's days.
    const days = attempt.route.signInRereadDays;
    const bought = days
      ? await lastSettledFor(store, payer, { routes: [`GET ${attempt.route.path}`, `POST ${attempt.route.path}`] }, days * 24)
      : undefined;
    if (bought) return this.redeem(attempt, bought, undefined, "signed_in_reread");
    // Signed in without naming a balance (how wrapFetchWithSIWx answers the challenge): the wallet's own balance pays.
    if (attempt.route.balancePayable) return this.spendBalance(attempt, payer);
    return this.challenge(attempt.request, attempt.route, attempt.url);
  }

  /** Rows still open for one authorisation (a crash, a stall): their fate on chain, within the time budget. */
  private async resolveOpen(open: AttemptRow[]): Promise<{ settled: AttemptRow | undefined; stillOpen: boolean }> {
    if (open.length === 0) return { settled: undefined, stillOpen: false };
    const rows = open.map((r) => ({ ...r, valid_before: r.valid_before === null ? null : Number(r.valid_before) }));
    const { tx, stillOpen } = await resolveAuthorization(this.options.store, this.chain, this.options.payTo, rows);
    const first = open.find((r) => r.verified);
    return { settled: tx && first ? { ...first, outcome: "settled", settlement_tx: tx } : undefined, stillOpen };
  }

  /** Answer for a payment settled earlier: its kept answer, or the function run again. Never charged again. */
  private async redeem(
    attempt: Attempt,
    paid: AttemptRow,
    presented: DecodedPayment | undefined,
    reread?: "signed_in_reread",
  ): Promise<Response> {
    const { store, log } = this.options;
    const settlement = encodePaymentResponseHeader({
      success: true,
      transaction: paid.settlement_tx ?? "",
      network: this.options.config.network,
      payer: paid.payer,
    });
    const row = (reason: string) =>
      insertLedgerRow(store, this.ledgerPayment(attempt, presented, paid), {
        outcome: "not_charged",
        status: 200,
        reason,
        ...(paid.settlement_tx ? { settlementTx: paid.settlement_tx } : {}),
      });
    const kept = await keptAnswerOf(store, paid.payer, paid.nonce);
    if (kept && kept.requestHash === paid.request_hash && kept.requestHash === attempt.requestHash) {
      await row(reread ?? "paid_retry: kept answer replayed");
      log.info("paid retry: kept answer replayed", { payer: paid.payer, tx: paid.settlement_tx });
      return new Response(kept.body, { status: kept.status, headers: { "payment-response": settlement, ...kept.headers } });
    }
    const response = await this.runFunction(attempt, this.verifiedPayment(attempt.route, paid.payer, paid.nonce, paid.amount_atomic));
    if (response.status >= 400) return response;
    let bytes: Buffer<ArrayBuffer> = Buffer.from(await response.arrayBuffer());
    if (routeKey(attempt.route) === TOPUP_ROUTE) bytes = await this.withBalance(bytes, paid.payer);
    const headers = withHeaders(response.headers, { "PAYMENT-RESPONSE": settlement });
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
  private async payNow(attempt: Attempt, decoded: DecodedPayment, earlierOpen: AttemptRow[]): Promise<Response> {
    const { store } = this.options;
    const rowId = await insertLedgerRow(store, this.ledgerPayment(attempt, decoded), { outcome: "pending" });
    let verified: Verification;
    try {
      verified = await this.verify(attempt);
    } catch (error) {
      await finishLedgerRow(store, rowId, { outcome: "not_charged", status: 503, reason: "payment_unavailable" });
      throw error;
    }
    return this.afterVerify(attempt, decoded, rowId, verified, earlierOpen);
  }

  /** The facilitator's verdict on the request's payment, with how long it took; throws when it is unavailable. */
  private async verify(attempt: Attempt): Promise<Verification> {
    const header = attempt.request.headers.get("payment-signature") ?? (attempt.request.headers.get("x-payment") as string);
    const context = this.context(attempt.request, attempt.url, attempt.route, header);
    const started = performance.now();
    const result = await this.http.processHTTPRequest(context);
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
    this.options.observer?.verified(ms / 1000);
    const { store, log, inFlight } = this.options;
    const { authorization } = decoded;
    const notCharged = (status: number, reason: string) => finishLedgerRow(store, rowId, { outcome: "not_charged", status, reason });
    if (result.type !== "payment-verified") {
      const refused =
        result.type === "payment-error" ? decodePaymentRequiredHeader(result.response.headers["PAYMENT-REQUIRED"] as string) : undefined;
      // x402's own refusals before the facilitator are sentences; the buyer gets a stable code.
      const reason = refused?.error && /^[a-z0-9_]{1,80}$/.test(refused.error) ? refused.error : "no_matching_requirements";
      await notCharged(402, reason);
      const used = /nonce_already_used|authorization_used/.test(reason);
      return this.refuse(attempt, used ? "payment_already_used" : "payment_required", "The payment was refused.", { reason });
    }
    // Recorded while the function runs, and always before settling: only verified rows can later count as paid.
    const verifiedRecorded = markLedgerRowVerified(store, rowId);

    const payment = this.verifiedPayment(attempt.route, authorization.from, authorization.nonce, result.paymentRequirements.amount);
    const [response] = await Promise.all([this.runFunction(attempt, payment), verifiedRecorded]);
    if (response.status >= 400) {
      await result.cancellationDispatcher.cancel({ reason: "handler_failed", responseStatus: response.status });
      await notCharged(response.status, await errorCodeOf(response));
      return response;
    }
    let bytes: Buffer<ArrayBuffer> = Buffer.from(await response.arrayBuffer());
    const settleStarted = performance.now();
    const settled = await this.http.processSettlement(result.paymentPayload, result.paymentRequirements, result.declaredExtensions, {
      request: context,
      responseBody: bytes,
      responseHeaders: Object.fromEntries(response.headers),
    });
    attempt.timings.settle = round(performance.now() - settleStarted);
    this.options.observer?.settled(attempt.timings.settle / 1000);
    // A settlement that failed may still have paid us (a lost receipt, an earlier attempt's
    // transfer landing first): the chain decides, so a payer is never told "not charged" wrongly.
    if (!settled.success) {
      const tx = await this.chain
        .findPayment(authorization.from, authorization.nonce, this.options.payTo, BigInt(result.paymentRequirements.amount), 10_000)
        .catch(() => null);
      if (tx) {
        log.warn("settlement reported failed but the transfer is on chain; answering", { reason: settled.errorReason, tx });
        const header = encodePaymentResponseHeader({
          success: true,
          transaction: tx,
          network: this.scheme.network as `${string}:${string}`,
          payer: authorization.from,
        });
        Object.assign(settled, { success: true, transaction: tx, headers: { "PAYMENT-RESPONSE": header } });
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
      await settleAndKeep(store, rowId, response.status, settled.transaction, answer, release).then(
        () => {
          if (lease && release) lease.released = true;
        },
        (error: unknown) =>
          // The transfer happened: the answer goes out; the upkeep records the row from the chain.
          log.error("ledger: settled payment not recorded", { error: error as Error, tx: settled.transaction }),
      );
      // A settled top-up was credited by the ledger (src/payments/balances.ts): answer the balance it made.
      if (routeKey(attempt.route) === TOPUP_ROUTE) {
        bytes = await this.withBalance(bytes, authorization.from);
        if (answer) await keepAnswer(store, { ...answer, body: bytes.toString("utf8") }, true);
      }
      // Earlier attempts of this authorisation left open: the payment is counted once, here.
      for (const row of earlierOpen.filter((r) => r.verified)) {
        await finishLedgerRow(store, row.id, { outcome: "not_charged", status: null, reason: "same_payment_settled_once" });
      }
      log.info("paid call", {
        request_id: attempt.requestId,
        route: payment.route,
        payer: authorization.from,
        amount: payment.amount,
        tx: settled.transaction,
        ...attempt.timings,
      });
      headers.set("Server-Timing", timing);
      return new Response(bytes, { status: response.status, headers });
    }
    const unknown = settled.errorReason === SETTLEMENT_UNKNOWN;
    attempt.record.outcome = unknown ? "settlement_unknown" : "settlement_failed";
    await finishLedgerRow(store, rowId, {
      outcome: unknown ? "settlement_unknown" : "settlement_failed",
      status: 402,
      reason: settled.errorReason,
      ...(settled.transaction ? { settlementTx: settled.transaction } : {}),
    });
    // If the transfer did land, the retry finds it on chain and gets this very answer.
    if (unknown && answer) await keepAnswer(store, answer, true);
    const error = unknown
      ? new ServiceError(
          "settlement_unknown",
          402,
          "The settlement's outcome is not known yet: the transfer may have gone through. Retry the same request with the same payment header: if it settled you get this answer without paying again; if not, it is settled then.",
          { details: { reason: SETTLEMENT_UNKNOWN } },
        )
      : new ServiceError(
          "settlement_failed",
          402,
          "The payment could not be settled, so the answer was withheld and you were not charged. Sign a fresh authorisation and retry.",
          { details: { reason: settled.errorReason } },
        );
    const { body } = toErrorResponse(error);
    return json(402, body, { ...settled.headers, "Server-Timing": timing });
  }

  /** A top-up's answer with the balance as the ledger holds it now (the function could only estimate it). */
  private async withBalance(bytes: Buffer, wallet: string): Promise<Buffer<ArrayBuffer>> {
    const held = await balanceOf(this.options.store, wallet);
    const answer = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
    const chatPrice = BigInt(atomicUsdc(CHAT_PRICE_USD));
    return Buffer.from(JSON.stringify({ ...answer, balance: usdOf(held), credits_left: Number(held / chatPrice) }));
  }

  private async runFunction(attempt: Attempt, payment: VerifiedPayment): Promise<Response> {
    const started = performance.now();
    try {
      return await attempt.run({ payment, body: attempt.body });
    } catch (error) {
      this.options.log.error("paid function threw", { request_id: attempt.requestId, error: error as Error });
      return errorResponse(new ServiceError("internal_error", 500, "The service failed while answering; you were not charged."));
    } finally {
      attempt.timings.fn = round(performance.now() - started);
    }
  }

  private verifiedPayment(route: RouteDef, payer: string, nonce: string, amount: string): VerifiedPayment {
    const { config } = this.options;
    return {
      route: routeKey(route),
      payer: payer as `0x${string}`,
      amount,
      asset: this.scheme.asset as `0x${string}`,
      network: this.scheme.network as Config["network"],
      nonce: nonce as `0x${string}`,
    };
  }

  private ledgerPayment(attempt: Attempt, presented: DecodedPayment | undefined, paid?: AttemptRow): LedgerPayment {
    const a = presented?.authorization;
    return {
      requestId: attempt.requestId,
      route: routeKey(attempt.route),
      payer: paid?.payer ?? (a?.from as string),
      amountAtomic: paid?.amount_atomic ?? (a?.value as string),
      asset: this.scheme.asset,
      network: this.scheme.network as Config["network"],
      nonce: paid?.nonce ?? (a?.nonce as string),
      validBefore: a && Number.isSafeInteger(Number(a.validBefore)) ? Number(a.validBefore) : null,
      requestHash: attempt.requestHash,
      instance: this.options.instance,
      paymentId: presented?.paymentId ?? null,
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
      this.options.log.warn("paid answer too large to keep; a retry runs the function again", { bytes: bytes.length });
      return undefined;
    }
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = responseHeaders.get(name);
      if (value !== null) headers[name] = value;
    }
    return {
      payer,
      nonce,
      requestHash: attempt.requestHash,
      status,
      headers,
      body: bytes.toString("utf8"),
      expiresAt: new Date(settledAt.getTime() + this.redeemMs()),
    };
  }
}

/** The outcome of a call the gate did not label on its way: read from the status it answered. */
function outcomeOf(status: number): PaidOutcome {
  if (status < 400) return "redeemed";
  if (status === 402 || status === 401) return "refused";
  if (status === 409) return "in_progress";
  return "failed";
}

function inProgress(message: string): Response {
  return errorResponse(new ServiceError("payment_in_progress", 409, message, { headers: { "Retry-After": "1" } }));
}

function unavailable(): ServiceError {
  return new ServiceError(
    "payment_unavailable",
    503,
    "The payment facilitator or the chain did not answer in time, so nothing was run or charged. Retry shortly with the same payment.",
    { headers: { "Retry-After": "5" } },
  );
}

/** `reader`, each call within `ms`: past it, or failing, a `payment_unavailable` error. */
function budgeted(reader: AuthorizationReader, ms: number): AuthorizationReader {
  const bound =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      withBudget(
        call(...args).catch((error: unknown) => {
          throw Object.assign(unavailable(), { cause: error });
        }),
        ms,
        () => {
          throw unavailable();
        },
      );
  return { isUsed: bound(reader.isUsed), findUse: bound(reader.findUse), findPayment: bound(reader.findPayment) };
}

function serverTiming(t: Timings): string {
  return `verify;dur=${t.verify ?? 0}, fn;dur=${t.fn ?? 0}, settle;dur=${t.settle ?? 0}`;
}

function withHeaders(base: Headers, extra: Record<string, string>): Headers {
  const headers = new Headers(base);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return headers;
}

async function errorCodeOf(response: Response): Promise<string> {
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown } };
    return typeof body.error?.code === "string" ? body.error.code : `status_${response.status}`;
  } catch {
    return `status_${response.status}`;
  }
}

/**
 * The `user_id` of a JSON body (a balance-paid route): the address, undefined when absent or when
 * the body is not a JSON object (the route's validation answers that), or a 400 naming the field.
 */
function balanceUserOf(body: Uint8Array): string | InvalidRequestError | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || !("user_id" in parsed)) return undefined;
  const id = (parsed as { user_id: unknown }).user_id;
  if (typeof id === "string" && /^0x[0-9a-fA-F]{40}$/.test(id)) return id;
  return new InvalidRequestError("user_id must be the address of the wallet whose prepaid balance pays.", [
    {
      field: "body.user_id",
      expected: "an EVM address (0x and 40 hex digits)",
      received: typeof id === "string" ? id.slice(0, 64) : typeof id,
    },
  ]);
}
