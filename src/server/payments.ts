/**
 * x402 wiring: the facilitator client (in-process with a gas-paying key, or remote over
 * HTTP), the resource server with the exact EVM scheme and Bazaar discovery, and the
 * `@x402/express` routes config derived from the route table.
 */
import { createFacilitatorConfig } from "@coinbase/x402";
import { x402Facilitator } from "@x402/core/facilitator";
import {
  type FacilitatorClient,
  FacilitatorResponseError,
  HTTPFacilitatorClient,
  type RoutesConfig,
  x402ResourceServer,
} from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme as registerFacilitatorScheme } from "@x402/evm/exact/facilitator";
import { registerExactEvmScheme as registerServerScheme } from "@x402/evm/exact/server";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import type { Request } from "express";
import { type Chain, createWalletClient, publicActions, type Transport } from "viem";
import { nonceManager, privateKeyToAccount } from "viem/accounts";
import { atomicUsdc, type RouteDef, routeKey } from "../../spec/route.ts";
import type { Config } from "../config.ts";
import type { VerifiedPayment } from "../context.ts";
import type { Logger } from "../log.ts";

/** A reason code is passed on only when it is a stable snake_case code, never free text from viem. */
const REASON_CODE = /^[a-z0-9_]{1,80}$/;

/** The reason given when a settlement may or may not have landed on chain. */
export const SETTLEMENT_UNKNOWN = "settlement_unknown";

/** Failures after which a settlement may or may not have landed on chain. */
const TIMEOUT = /time(d)?\s?out|timeout/i;

function safeReason(reason: string | undefined, fallback: string): string {
  return reason && REASON_CODE.test(reason) ? reason : fallback;
}

/**
 * Wraps any facilitator so that what reaches the buyer is a stable reason code: the raw
 * text of a failed verify or settle (often a viem error with RPC details) is logged, not sent.
 */
export class GuardedFacilitator implements FacilitatorClient {
  private readonly inner: FacilitatorClient;
  private readonly log: Logger;

  constructor(inner: FacilitatorClient, log: Logger) {
    this.inner = inner;
    this.log = log;
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    let result: VerifyResponse;
    try {
      result = await this.inner.verify(payload, requirements);
    } catch (error) {
      this.log.error("facilitator verify failed", { error: error instanceof Error ? error : String(error) });
      throw new FacilitatorResponseError("The payment facilitator could not verify the payment; you were not charged. Retry shortly.");
    }
    if (result.isValid) return result;
    this.log.info("payment refused", { reason: result.invalidReason, detail: result.invalidMessage, payer: result.payer });
    const { invalidMessage: _hidden, ...rest } = result;
    return { ...rest, invalidReason: safeReason(result.invalidReason, "invalid_payment") };
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    let result: SettleResponse;
    try {
      result = await this.inner.settle(payload, requirements);
    } catch (error) {
      // A settle that threw may have broadcast first (a lost connection, a timeout): unknown.
      this.log.error("facilitator settle failed", { error: error instanceof Error ? error : String(error) });
      return { success: false, errorReason: SETTLEMENT_UNKNOWN, transaction: "", network: requirements.network };
    }
    if (result.success) return result;
    this.log.error("settlement refused", { reason: result.errorReason, detail: result.errorMessage, tx: result.transaction });
    const { errorMessage: _hidden, ...rest } = result;
    // A timeout, a pending settlement or a broadcast transaction means the transfer may still land.
    const unknown =
      TIMEOUT.test(`${result.errorReason ?? ""} ${result.errorMessage ?? ""}`) ||
      result.errorReason === "settlement_pending" ||
      Boolean(result.transaction);
    return { ...rest, errorReason: unknown ? SETTLEMENT_UNKNOWN : safeReason(result.errorReason, "settlement_failed") };
  }

  getSupported(): Promise<SupportedResponse> {
    return this.inner.getSupported();
  }
}

/** An in-process facilitator that verifies and settles with `privateKey` paying gas. */
export function createSelfFacilitator(
  privateKey: `0x${string}`,
  chain: Chain,
  transport: Transport,
  network: string,
): FacilitatorClient & { address: `0x${string}` } {
  const account = privateKeyToAccount(privateKey, { nonceManager });
  const wallet = createWalletClient({ account, chain, transport }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => wallet.readContract(args as never),
    verifyTypedData: (args) => wallet.verifyTypedData(args as never),
    writeContract: (args) => wallet.writeContract(args as never),
    sendTransaction: (args) => wallet.sendTransaction(args as never),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
    getCode: (args) => wallet.getCode(args),
  });
  const facilitator = new x402Facilitator();
  registerFacilitatorScheme(facilitator, { signer, networks: network as `${string}:${string}` });
  return {
    address: account.address,
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

/** A remote facilitator over HTTP, with CDP JWT auth when configured. */
export function createRemoteFacilitator(url: string, cdp: { keyId: string; keySecret: string } | undefined): FacilitatorClient {
  if (cdp) return new HTTPFacilitatorClient({ ...createFacilitatorConfig(cdp.keyId, cdp.keySecret), url, timeoutMs: 30_000 });
  return new HTTPFacilitatorClient({ url, timeoutMs: 30_000 });
}

/** The payment verified for each in-flight request, set by the after-verify hook. */
const verifiedPayments = new WeakMap<Request, VerifiedPayment>();

/** How long each step of a paid request took, in milliseconds. */
export interface PaymentTimings {
  verifyMs?: number;
  functionMs?: number;
  settleMs?: number;
}
const timings = new WeakMap<Request, PaymentTimings & { verifyStart?: number; settleStart?: number }>();

/** The step timings of a request (created on first use). */
export function timingsOf(req: Request): PaymentTimings {
  let t = timings.get(req);
  if (!t) {
    t = {};
    timings.set(req, t);
  }
  return t;
}

function requestOf(transportContext: unknown): { req: Request; method: string | undefined; routePattern: string | undefined } | undefined {
  const request = (transportContext as { request?: { adapter?: unknown; method?: string; routePattern?: string } } | undefined)?.request;
  const req = (request?.adapter as { req?: Request } | undefined)?.req;
  return req && request ? { req, method: request.method, routePattern: request.routePattern } : undefined;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** The verified payment of a request, if x402 verified one. */
export function verifiedPaymentOf(req: Request): VerifiedPayment | null {
  return verifiedPayments.get(req) ?? null;
}

/** Requests answered for a payment settled by an earlier attempt: x402 must let them through. */
const prepaid = new WeakSet<Request>();

/** Mark a request as paid by an earlier, settled attempt with `payment`. */
export function markPrepaid(req: Request, payment: VerifiedPayment): void {
  prepaid.add(req);
  verifiedPayments.set(req, payment);
}

/** True for a request marked by `markPrepaid`. */
export function isPrepaid(req: Request): boolean {
  return prepaid.has(req);
}

/** The x402 resource server: exact EVM scheme on our network, recording each verified payment on its request. */
export function createResourceServer(
  facilitator: FacilitatorClient,
  network: string,
  onVerified: (req: Request) => Promise<void> = async () => {},
): x402ResourceServer {
  const server = new x402ResourceServer(facilitator);
  registerServerScheme(server, { networks: [network as `${string}:${string}`] });
  server.onBeforeVerify(async ({ transportContext }) => {
    const found = requestOf(transportContext);
    if (found) (timingsOf(found.req) as { verifyStart?: number }).verifyStart = performance.now();
  });
  server.onAfterVerify(async ({ paymentPayload, requirements, result, transportContext }) => {
    const found = requestOf(transportContext);
    // x402 runs these hooks for refused payments too.
    if (!found || !result.isValid) return;
    const { req } = found;
    const t = timings.get(req);
    if (t?.verifyStart !== undefined) t.verifyMs = round(performance.now() - t.verifyStart);
    const authorization = (paymentPayload.payload as { authorization?: { from?: string; nonce?: string } }).authorization;
    verifiedPayments.set(req, {
      route: `${(found.method ?? req.method).toUpperCase()} ${found.routePattern}`,
      payer: (result.payer ?? authorization?.from ?? "0x") as `0x${string}`,
      amount: requirements.amount,
      asset: requirements.asset as `0x${string}`,
      network: requirements.network,
      nonce: (authorization?.nonce ?? "0x") as `0x${string}`,
    });
    await onVerified(req);
  });
  server.onBeforeSettle(async ({ transportContext }) => {
    const found = requestOf(transportContext);
    if (found) (timingsOf(found.req) as { settleStart?: number }).settleStart = performance.now();
  });
  server.onAfterSettle(async ({ transportContext }) => {
    const found = requestOf(transportContext);
    const t = found && timings.get(found.req);
    if (!found || !t || t.settleStart === undefined) return;
    t.settleMs = round(performance.now() - t.settleStart);
    // Set before x402 replays the buffered response, so the buyer sees where the time went.
    const parts = [`verify;dur=${t.verifyMs ?? 0}`, `fn;dur=${t.functionMs ?? 0}`, `settle;dur=${t.settleMs}`];
    found.req.res?.setHeader("Server-Timing", parts.join(", "));
  });
  return server;
}

/** The `@x402/express` routes config: one exact-USDC option per paid route, with Bazaar metadata. */
export function paymentRoutes(routes: readonly RouteDef[], config: Config, payTo: `0x${string}`): RoutesConfig {
  const entries = routes
    .filter((route) => route.price !== null)
    .map((route) => {
      const bodyRoute = route.method === "POST";
      const discovery = bodyRoute
        ? declareDiscoveryExtension({
            bodyType: "json",
            input: route.example?.input ?? {},
            ...(route.body ? { inputSchema: route.body as unknown as Record<string, unknown> } : {}),
            output: {
              schema: route.response as unknown as Record<string, unknown>,
              ...(route.example?.output ? { example: route.example.output } : {}),
            },
          })
        : declareDiscoveryExtension({
            input: route.example?.input ?? {},
            ...(route.query ? { inputSchema: route.query as unknown as Record<string, unknown> } : {}),
            output: {
              schema: route.response as unknown as Record<string, unknown>,
              ...(route.example?.output ? { example: route.example.output } : {}),
            },
          });
      return [
        routeKey(route),
        {
          accepts: {
            scheme: "exact",
            network: config.network,
            payTo,
            price: {
              amount: atomicUsdc(route.price as number),
              asset: config.usdc.address,
              extra: { name: config.usdc.name, version: config.usdc.version },
            },
            maxTimeoutSeconds: config.maxTimeoutSeconds,
          },
          description: route.summary,
          mimeType: "application/json",
          ...(config.publicUrl ? { resource: `${config.publicUrl}${route.path}` } : {}),
          extensions: discovery,
          settlementFailedResponseBody: async (_request: unknown, failure: { errorReason?: string }) => ({
            contentType: "application/json",
            body:
              failure.errorReason === SETTLEMENT_UNKNOWN
                ? {
                    error: {
                      code: SETTLEMENT_UNKNOWN,
                      message:
                        "The settlement's outcome is not known yet: the transfer may have gone through. Retry the same request with the same payment header: if it settled you get the answer without paying again, if not it is settled then.",
                      details: { reason: SETTLEMENT_UNKNOWN },
                    },
                  }
                : {
                    error: {
                      code: "settlement_failed",
                      message:
                        "The payment could not be settled, so the answer was withheld and you were not charged. Sign a fresh authorisation and retry.",
                      details: { reason: safeReason(failure.errorReason, "settlement_failed") },
                    },
                  },
          }),
        },
      ] as const;
    });
  return Object.fromEntries(entries) as RoutesConfig;
}
