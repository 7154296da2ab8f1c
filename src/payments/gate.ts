/**
 * The payment gate: every paid call, from its Fetch `Request` to its `Response`, in one
 * sequence that decides how the request pays, then runs it and charges it once. HTTP (the
 * Astro endpoints through src/dispatch.ts) and MCP tool calls enter through `handle`. The ways
 * of paying are modules beside it:
 *
 *   PAYMENT-SIGNATURE / X-Payment    → per call with x402 `exact` (per-call.ts): verify, run, settle
 *   SIGN-IN-WITH-X, bought before    → re-read (reread.ts): the kept answer, or the function run again
 *   SIGN-IN-WITH-X, a balance        → from the balance (from-balance.ts): run, then debit once
 *   nothing that pays                → 402 challenge: PAYMENT-REQUIRED header, the same JSON as body
 *
 * Before any of them the input is checked (a 400 before a 402), and a request carrying a
 * payment is paid by it whatever else it carries. A sign-in is read only when no payment is
 * sent, or when a settled payment's retry needs its payer's proof.
 */
import { createHash, randomUUID } from "node:crypto";
import { decodePaymentRequiredHeader, encodePaymentRequiredHeader } from "@x402/core/http";
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
import { type RouteDef, routeKey } from "../../spec/route.ts";
import type { AuthorizationReader } from "../chain/authorization.ts";
import type { Config } from "../config.ts";
import type { VerifiedPayment } from "../context.ts";
import { errorBody, errorResponse, InvalidRequestError, jsonResponse, ServiceError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { balanceOf } from "../store/balances.ts";
import type { Store } from "../store/store.ts";
import { checkBeforeCharging, type RequestBody } from "../validate.ts";
import { payableFromBalance } from "./balances.ts";
import { type Attempt, type PaidOutcome, type PaidRun, type RefusalCode, round } from "./call.ts";
import { GuardedFacilitator } from "./facilitator.ts";
import { payFromBalance } from "./from-balance.ts";
import type { InFlightRegistry } from "./inflight.ts";
import type { DecodedPayment, PayloadProblem } from "./payload.ts";
import { PerCallPayment, paymentUnavailable } from "./per-call.ts";
import { paymentRoutes } from "./requirements.ts";
import { boughtBy } from "./reread.ts";
import { type PaymentScheme, usdcScheme } from "./scheme.ts";
import { checkSignIn, isRefusal, SIWX_HEADER, type SignedIn, type SignInRefusal, signInDeclaration, useSignIn } from "./sign-in.ts";

export type { PaidOutcome, PaidRun } from "./call.ts";

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

/** What the dispatcher hands the gate with a call: its body, read once, and its payment header, when decoded already. */
export interface Given {
  body: RequestBody;
  /** The payment header as the site's scheme decoded it for the rate limits (undefined: not decoded). */
  payment?: () => DecodedPayment | PayloadProblem | undefined;
  /** The client's address as the rate limits key it (for an MCP tool call, POST /mcp's client). */
  client?: string | null;
}

/** Observes the payment gate (src/metrics/metrics.ts counts what it is told). */
export interface PaymentObserver {
  /** One call to a paid route ended; `amountAtomic` is what it charged (only when `settled`). */
  paidCall(route: string, outcome: PaidOutcome, amountAtomic?: string): void;
  /** The facilitator verified (or refused) a payment in `seconds`. */
  verified(seconds: number): void;
  /** The facilitator settled (or failed to settle) a payment in `seconds`. */
  settled(seconds: number): void;
}

/** What identifies "the same request" for a paid retry: method, path with query, and body bytes. */
export function requestHash(method: string, url: URL, body: Uint8Array): string {
  return createHash("sha256").update(`${method} ${url.pathname}${url.search}\n`).update(body).digest("hex");
}

/** The payment header of a request (`PAYMENT-SIGNATURE`, or its alias `X-Payment`), or a 400 when they disagree. */
function paymentHeaderOf(headers: Headers): string | undefined | ServiceError {
  const signature = headers.get("payment-signature") ?? undefined;
  const alias = headers.get("x-payment") ?? undefined;
  if (signature !== undefined && alias !== undefined && signature !== alias) {
    return new ServiceError("invalid_request", "PAYMENT-SIGNATURE and X-Payment carry different payments; send one.", {
      details: { fields: [{ field: "header.x-payment", expected: "absent, or the same value as PAYMENT-SIGNATURE" }] },
    });
  }
  return signature ?? alias;
}

/** The payment gate of one site. */
export class PaymentGate {
  readonly options: GateOptions;
  readonly http: x402HTTPResourceServer;
  readonly scheme: PaymentScheme;
  private readonly perCall: PerCallPayment;
  private initialized: Promise<void> | undefined;
  /** The origin this site listens on (local mode). */
  private listening: string | undefined;

  constructor(options: GateOptions) {
    this.options = options;
    const { config, payTo, routes, log } = options;
    const server = new x402ResourceServer(new GuardedFacilitator(options.facilitator, log, config.payments.timeoutMs));
    this.scheme = options.scheme ?? usdcScheme(config);
    this.scheme.register(server);
    server.registerExtension(bazaarResourceServerExtension);
    server.registerExtension(paymentIdentifierResourceServerExtension);
    // x402's own `createSIWxResourceServerExtension` adds a 0.7 KB schema to every challenge and
    // takes its origin at construction (local mode learns it on listening): its declaration is ours.
    // Sign-in is an EVM wallet's (EIP-4361): a site paid on another family declares none.
    if (this.scheme.signIn)
      server.registerExtension({
        key: SIWX_HEADER,
        dynamicInfoFields: ["nonce", "issuedAt"],
        enrichPaymentRequiredResponse: async (_declared, context) => {
          const origin = this.signInOrigin();
          return origin ? signInDeclaration(origin, context.resourceInfo.url, config.network) : undefined;
        },
      });
    this.http = new x402HTTPResourceServer(server, paymentRoutes(routes, config as Config, payTo, this.scheme));
    this.perCall = new PerCallPayment(this);
  }

  /**
   * Answer one call to a paid route: `request` is the call (an MCP tool call builds one: its
   * method, URL, payment and sign-in headers, JSON body), `run` the route's function. Never
   * throws: every failure is a response, and none is charged.
   */
  async handle(request: Request, route: RouteDef, run: PaidRun, given: Given): Promise<Response> {
    const attempt = this.attemptOf(request, route, run, given);
    const response = await this.answer(attempt);
    this.options.observer?.paidCall(routeKey(route), attempt.record.outcome ?? outcomeOf(response.status), attempt.record.amountAtomic);
    return response;
  }

  private async answer(attempt: Attempt): Promise<Response> {
    const { request, route, url } = attempt;
    try {
      await this.initialize();
      // One payment header: PAYMENT-SIGNATURE, or its alias X-Payment.
      const header = paymentHeaderOf(request.headers);
      if (header instanceof ServiceError) return errorResponse(header);
      // Checked before charged: a present body or query that fails the route's schema is a 400.
      try {
        checkBeforeCharging(route, url, attempt.body);
      } catch (error) {
        if (header !== undefined && error instanceof InvalidRequestError)
          await this.perCall.refusedUnread(attempt, header, 400, "invalid_request");
        throw error;
      }
      // HEAD asks what a GET would answer without a body: the challenge, never a paid run.
      if (request.method === "HEAD") return await this.challenge(attempt);
      // A payment pays, whatever else the request carries.
      if (header !== undefined) return await this.perCall.pay(attempt, header);
      // Without one, a sign-in may pay: with what the wallet bought, or its balance.
      return await this.bySignIn(attempt);
    } catch (error) {
      if (error instanceof InvalidRequestError) return errorResponse(error);
      const unavailable =
        error instanceof FacilitatorResponseError || (error instanceof ServiceError && error.code === "payment_unavailable");
      this.options.log.error(unavailable ? "payment unavailable" : "payment gate failed", {
        request_id: attempt.requestId,
        error: error instanceof Error ? error : String(error),
      });
      const failed = "The payment path failed before anything was run or charged; retry shortly.";
      return errorResponse(
        unavailable ? paymentUnavailable() : new ServiceError("unavailable", failed, { headers: { "Retry-After": "5" } }),
      );
    }
  }

  /**
   * A request without a payment: the ways a sign-in pays, the first that grants (what this
   * wallet bought, then its balance), else the challenge. A sign-in that grants nothing leaves
   * its nonce unused, so the client may send it again beside a payment.
   */
  private async bySignIn(attempt: Attempt): Promise<Response> {
    const { store } = this.options;
    const named = balanceUserOf(attempt.body);
    if (attempt.siwx === null && !named) return this.challenge(attempt);
    const signedIn = await this.signedIn(attempt, `Spending the balance of ${named} needs a SIGN-IN-WITH-X header signed by that wallet.`);
    if (signedIn instanceof Response) return signedIn;
    if (named && named !== signedIn.payer) {
      return this.refuse(attempt, "signin_invalid", "The Sign-In-With-X header was signed by another wallet than user_id.", {
        reason: "wallet_mismatch",
        field: "body.user_id",
        expected: "the address of the wallet that signed SIGN-IN-WITH-X",
      });
    }
    const bought = await boughtBy(store, attempt, signedIn.payer, this.options.config.payments.redeemHours);
    if (bought) return (await this.used(attempt, signedIn)) ?? this.perCall.redeem(attempt, bought.paid, undefined, bought.reason);
    const held = payableFromBalance(attempt.route) ? await balanceOf(store, signedIn.payer) : 0n;
    if (named || held > 0n) return payFromBalance(this, attempt, signedIn, held);
    return this.challenge(attempt);
  }

  /**
   * The wallet signed in on a free route that needs one (`RouteDef.signIn`), or the 402 that
   * asks for a sign-in (the form `wrapFetchWithSIWx` and agentcash act on).
   */
  async signIn(request: Request, route: RouteDef, body: RequestBody): Promise<{ wallet: `0x${string}` } | Response> {
    const notRun = () => Promise.reject(new Error("a sign-in route is not run by the gate"));
    const attempt = this.attemptOf(request, route, notRun, { body });
    await this.initialize();
    const signed = await this.signedIn(attempt, `Reading this (${routeKey(route)}) needs a SIGN-IN-WITH-X header signed by your wallet.`);
    if (signed instanceof Response) return signed;
    return (await this.used(attempt, signed)) ?? { wallet: signed.payer as `0x${string}` };
  }

  /** The request's sign-in, checked for its route; or the 402 saying why not (`missing`: what to say when it has none). */
  private async signedIn(attempt: Attempt, missing: string): Promise<SignedIn | Response> {
    if (attempt.siwx === null)
      return this.refuse(attempt, "signin_required", missing, { reason: "signin_required", header: "SIGN-IN-WITH-X" });
    const signed = await this.verifySignIn(attempt.siwx, attempt.route);
    if (!isRefusal(signed)) return signed;
    return this.refuse(attempt, "signin_invalid", `The Sign-In-With-X header was refused (${signed.reason}).`, { ...signed });
  }

  /** Use the sign-in's nonce, as it grants something now: undefined, or the 402 of a sign-in used already. */
  async used(attempt: Attempt, signed: SignedIn): Promise<Response | undefined> {
    if (await useSignIn(this.options.store, signed)) return undefined;
    const details = { field: "header.sign-in-with-x", expected: "a sign-in nonce not used before", reason: "invalid_siwx_nonce" };
    return this.refuse(attempt, "signin_invalid", "The Sign-In-With-X header was used already.", details);
  }

  /** Tell the gate the origin its site listens on, once it does (local mode binds sign-ins to it). */
  listeningAt(origin: string): void {
    this.listening = origin;
  }

  /**
   * The origin sign-ins bind to and challenges name: PUBLIC_URL, or in local mode the origin
   * this site listens on; never one read from the request (its Host header is the caller's).
   */
  private signInOrigin(): string | null {
    return this.options.config.publicUrl ?? (this.options.config.mode === "local" ? (this.listening ?? null) : null);
  }

  private async verifySignIn(header: string, route: RouteDef): Promise<SignedIn | SignInRefusal> {
    const origin = this.signInOrigin();
    if (!origin)
      return { field: "header.sign-in-with-x", expected: "the service's PUBLIC_URL to be configured", reason: "siwx_unavailable" };
    return checkSignIn(header, { origin, chains: [this.options.config.network], path: route.path });
  }

  /** Whether the request's sign-in proves `payer` (its nonce then used). */
  async provesPayer(attempt: Attempt, payer: string): Promise<boolean> {
    if (attempt.siwx === null) return false;
    const signed = await this.verifySignIn(attempt.siwx, attempt.route);
    return !isRefusal(signed) && signed.payer === payer && (await useSignIn(this.options.store, signed));
  }

  private attemptOf(request: Request, route: RouteDef, run: PaidRun, { body, payment, client }: Given): Attempt {
    const url = new URL(request.url);
    return {
      request,
      route,
      url,
      body,
      ...(payment ? { decoded: payment } : {}),
      requestHash: requestHash(request.method, url, body.bytes),
      requestId: request.headers.get("x-request-id") ?? randomUUID(),
      run,
      siwx: request.headers.get(SIWX_HEADER),
      client: client ?? null,
      timings: {},
      record: {},
    };
  }

  /** Sync with the facilitator once (supported kinds); retried on the next call after a failure. */
  private initialize(): Promise<void> {
    this.initialized ??= this.http.initialize().catch((error: unknown) => {
      this.initialized = undefined;
      throw error instanceof FacilitatorResponseError ? error : new FacilitatorResponseError(String(error));
    });
    return this.initialized;
  }

  /** x402's view of the request: its payment header is the one the gate chose (PAYMENT-SIGNATURE or X-Payment). */
  context(attempt: Attempt, payment: string | undefined): HTTPRequestContext {
    const { request, url, route } = attempt;
    const origin = this.signInOrigin() ?? url.origin;
    const header = (name: string) => request.headers.get(name) ?? undefined;
    // The route the caller resolved is the one priced: never a path x402 re-derives from the request.
    const adapter: HTTPAdapter = {
      getHeader: (name) => (name.toLowerCase() === "payment-signature" ? payment : header(name)),
      getMethod: () => route.method,
      getPath: () => route.path,
      getUrl: () => `${origin}${url.pathname}${url.search}`,
      getAcceptHeader: () => header("accept") ?? "",
      getUserAgent: () => header("user-agent") ?? "",
    };
    return { adapter, path: route.path, method: route.method, ...(payment ? { paymentHeader: payment } : {}) };
  }

  /** The unpaid challenge: 402 with PAYMENT-REQUIRED and the same JSON in the body (none for HEAD). */
  private async challenge(attempt: Attempt): Promise<Response> {
    attempt.record.outcome = "challenged";
    const { header, challenge } = await this.paymentRequired(attempt);
    const headers = { "Content-Type": "application/json; charset=utf-8", "PAYMENT-REQUIRED": header, "Cache-Control": "no-store" };
    return new Response(attempt.request.method === "HEAD" ? null : JSON.stringify(challenge), { status: 402, headers });
  }

  private async paymentRequired(attempt: Attempt): Promise<{ header: string; challenge: PaymentRequired }> {
    const result = await this.http.processHTTPRequest(this.context(attempt, undefined));
    if (result.type !== "payment-error") throw new Error(`${routeKey(attempt.route)} is not a paid route of the x402 config`);
    const header = result.response.headers["PAYMENT-REQUIRED"] as string;
    return { header, challenge: decodePaymentRequiredHeader(header) };
  }

  /** 402: the challenge, its `error` the reason, with the service's error object saying why; nothing charged. */
  async refuse(attempt: Attempt, code: RefusalCode, message: string, details: Record<string, unknown>): Promise<Response> {
    const { challenge } = await this.paymentRequired(attempt);
    const reason = typeof details.reason === "string" ? details.reason : code;
    const header = encodePaymentRequiredHeader({ ...challenge, error: reason });
    const nothing = code === "signin_required" || code === "signin_invalid" ? "Nothing was charged or debited." : "You were not charged.";
    const body = errorBody(code, `${message} ${nothing}`, details);
    return jsonResponse(402, { ...challenge, ...body }, { "PAYMENT-REQUIRED": header, "Cache-Control": "no-store" });
  }

  /** The paid function; a throw is a 500, never charged. */
  async runFunction(attempt: Attempt, payment: VerifiedPayment): Promise<Response> {
    const started = performance.now();
    try {
      return await attempt.run(payment);
    } catch (error) {
      this.options.log.error("paid function threw", { request_id: attempt.requestId, error: error as Error });
      return errorResponse(new ServiceError("internal_error", "The service failed while answering; you were not charged."));
    } finally {
      attempt.timings.fn = round(performance.now() - started);
    }
  }

  verifiedPayment(route: RouteDef, payer: string, nonce: string, amount: string): VerifiedPayment {
    return {
      route: routeKey(route),
      payer: payer as `0x${string}`,
      amount,
      asset: this.scheme.asset as `0x${string}`,
      network: this.scheme.network,
      nonce: nonce as `0x${string}`,
    };
  }
}

/** The outcome of a call the gate did not label on its way: read from the status it answered. */
function outcomeOf(status: number): PaidOutcome {
  if (status < 400) return "redeemed";
  if (status === 402) return "refused";
  if (status === 409) return "in_progress";
  return "failed";
}

/** The `user_id` a JSON body names (the wallet whose balance is to pay), lower case; the route's schema checked its form. */
function balanceUserOf(body: RequestBody): string | undefined {
  // Checked before charging: a body that is not a JSON object was refused with a 400 already.
  const id = (body.json() as { user_id?: unknown }).user_id;
  return typeof id === "string" ? id.toLowerCase() : undefined;
}
