/**
 * The facilitator that verifies and settles payments: in-process with a gas-paying key, or
 * remote over HTTP. Every call goes through `GuardedFacilitator`, which gives it a time budget
 * and tells the buyer's fault (a refused payment, with a stable reason code) from ours (the
 * facilitator or the chain did not answer: `FacilitatorUnavailable`, a 503 in the gate).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { x402Facilitator } from "@x402/core/facilitator";
import { type FacilitatorClient, type FacilitatorConfig, FacilitatorResponseError, HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import {
  type Chain,
  ContractFunctionRevertedError,
  concatHex,
  createPublicClient,
  encodeFunctionData,
  type Hex,
  HttpRequestError,
  type PublicClient,
  RpcRequestError,
  TimeoutError,
  type Transport,
  verifyTypedData,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Logger } from "../log.ts";
import { withBudget } from "../time-budget.ts";
import { BASE_TIMING, type SenderTiming, SettlementSender } from "./settlement-sender.ts";

/** The reason given when a settlement may or may not have landed on chain. */
export const SETTLEMENT_UNKNOWN = "settlement_unknown";
/** The x402 libraries' reasons for a transfer that may still land: a receipt that never came, the same transaction already being settled. */
const MAY_LAND = new Set(["settlement_pending", "duplicate_settlement"]);

/** A reason code is passed on only when it is a stable snake_case code, never free text from viem. */
const REASON_CODE = /^[a-z0-9_]{1,80}$/;
const TIMEOUT = /time(d)?\s?out|timeout/i;

/** The facilitator or the chain behind it did not answer in time, or failed: nothing was decided about the payment. */
export class FacilitatorUnavailable extends FacilitatorResponseError {
  constructor(operation: string, detail: string) {
    super(`${operation}: ${detail}`);
    this.name = "FacilitatorUnavailable";
  }
}

/** The payer codes read during one verification of the in-process facilitator, by address. */
const verification = new AsyncLocalStorage<Map<string, Promise<Hex | undefined>>>();

/** Set while a verify runs, so the chain reads under it can report that the chain failed. */
const chainCalls = new AsyncLocalStorage<{ failed: boolean }>();

/** A failure to reach the chain (timeout, HTTP error, node error), as opposed to a contract's answer (a revert). */
function isTransportFailure(error: unknown): boolean {
  let failed = false;
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e instanceof ContractFunctionRevertedError) return false;
    if (e instanceof TimeoutError || e instanceof HttpRequestError) failed = true;
    // Node-side failures (resource unavailable, internal error, rate limit), not a contract's revert (code 3).
    if (e instanceof RpcRequestError && [-32002, -32005, -32603].includes(e.code)) failed = true;
  }
  return failed;
}

/** Run `call`, marking the current verify's chain as failed when the chain could not be reached. */
async function watched<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const scope = chainCalls.getStore();
    if (scope && isTransportFailure(error)) scope.failed = true;
    throw error;
  }
}

/**
 * Wraps any facilitator: a time budget per call; raw error text (often a viem error with RPC
 * details) is logged, never sent; a verify that failed because the chain failed, or timed
 * out, throws `FacilitatorUnavailable` instead of blaming the buyer's signature; a settle that
 * threw or timed out is `settlement_unknown` (it may have been broadcast).
 */
export class GuardedFacilitator implements FacilitatorClient {
  private readonly inner: FacilitatorClient;
  private readonly log: Logger;
  private readonly timeoutMs: number;

  constructor(inner: FacilitatorClient, log: Logger, timeoutMs: number) {
    this.inner = inner;
    this.log = log;
    this.timeoutMs = timeoutMs;
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const scope = { failed: false };
    let result: VerifyResponse;
    try {
      result = await withBudget(
        chainCalls.run(scope, () => this.inner.verify(payload, requirements)),
        this.timeoutMs,
        () => {
          throw new FacilitatorUnavailable("verify", `no answer within ${this.timeoutMs} ms`);
        },
      );
    } catch (error) {
      this.log.error("facilitator verify failed", { error: error instanceof Error ? error : String(error) });
      throw error instanceof FacilitatorUnavailable ? error : new FacilitatorUnavailable("verify", "the facilitator failed");
    }
    if (result.isValid) return result;
    if (scope.failed) {
      this.log.error("payment verify hit a chain failure", { reason: result.invalidReason });
      throw new FacilitatorUnavailable("verify", "the chain could not be read");
    }
    this.log.info("payment refused", { reason: result.invalidReason, detail: result.invalidMessage, payer: result.payer });
    const { invalidMessage: _hidden, ...rest } = result;
    return { ...rest, invalidReason: safeReason(result.invalidReason, "invalid_payment") };
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const unknown: SettleResponse = { success: false, errorReason: SETTLEMENT_UNKNOWN, transaction: "", network: requirements.network };
    let result: SettleResponse;
    try {
      result = await withBudget(this.inner.settle(payload, requirements), this.timeoutMs, () => {
        this.log.error("facilitator settle timed out; its outcome is unknown", { timeout_ms: this.timeoutMs });
        return unknown;
      });
    } catch (error) {
      // A settle that threw may have broadcast first (a lost connection, a timeout): unknown.
      this.log.error("facilitator settle failed", { error: error instanceof Error ? error : String(error) });
      return unknown;
    }
    if (result.success || result === unknown) return result;
    this.log.error("settlement refused", { reason: result.errorReason, detail: result.errorMessage, tx: result.transaction });
    const { errorMessage: _hidden, ...rest } = result;
    // A timeout, a pending settlement or a broadcast transaction means the transfer may still land.
    // Only a stable reason code given before broadcasting is a known failure; free text (a thrown
    // error caught inside the facilitator), a timeout, a pending settlement or a transaction may have landed.
    const mayLand =
      !REASON_CODE.test(result.errorReason ?? "") ||
      TIMEOUT.test(`${result.errorReason ?? ""} ${result.errorMessage ?? ""}`) ||
      MAY_LAND.has(result.errorReason ?? "") ||
      Boolean(result.transaction);
    return { ...rest, errorReason: mayLand ? SETTLEMENT_UNKNOWN : safeReason(result.errorReason, "settlement_failed") };
  }

  getSupported(): Promise<SupportedResponse> {
    return withBudget(this.inner.getSupported(), this.timeoutMs, () => {
      throw new FacilitatorUnavailable("supported", `no answer within ${this.timeoutMs} ms`);
    });
  }
}

function safeReason(reason: string | undefined, fallback: string): string {
  return reason && REASON_CODE.test(reason) ? reason : fallback;
}

/** Options of {@link createSelfFacilitator}. */
export interface SelfFacilitatorOptions {
  /** Receipt polling, stuck-nonce detection and the receipt deadline (default: Base's). */
  timing?: Partial<SenderTiming>;
  /** Where stuck nonces and unanswered broadcasts are reported. */
  log?: Logger;
  /**
   * Asked before each settlement: false when this instance must not send from its key (another
   * live instance took the key over); the settlement is then refused before anything is sent.
   */
  maySettle?: () => Promise<boolean>;
}

/** Why a settlement was refused before sending: this instance no longer settles with its key. */
export const SETTLEMENT_STOPPED = "settlement_stopped";

/** An in-process facilitator that verifies and settles with `privateKey` paying gas. */
export function createSelfFacilitator(
  privateKey: `0x${string}`,
  chain: Chain,
  transport: Transport,
  network: string,
  options: SelfFacilitatorOptions = {},
): FacilitatorClient & { address: `0x${string}`; sender: SettlementSender } {
  const account = privateKeyToAccount(privateKey);
  // No client-level polling: the sender polls receipts at the chain's own interval.
  const client = createPublicClient({ chain, transport, cacheTime: 0 }) as PublicClient;
  const sender = new SettlementSender(client, account, chain, { ...BASE_TIMING, ...options.timing }, options.log);
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => watched(() => client.readContract(args as never)),
    // An EOA's signature is checked locally; only a contract wallet's needs the chain (ERC-1271/6492).
    verifyTypedData: async (args) =>
      (await verifyTypedData(args as Parameters<typeof verifyTypedData>[0]).catch(() => false)) ||
      watched(() => client.verifyTypedData(args as never)),
    writeContract: (args) => {
      const call = encodeFunctionData({ abi: args.abi, functionName: args.functionName, args: args.args } as never);
      // An extension may append bytes to the calldata (builder codes), as viem's writeContract does.
      const suffix = (args as { dataSuffix?: Hex }).dataSuffix;
      return sender.send({ to: args.address, data: suffix ? concatHex([call, suffix]) : call });
    },
    sendTransaction: (args) => sender.send({ to: args.to, data: args.data }),
    waitForTransactionReceipt: (args) => sender.waitForReceipt(args.hash),
    // The library reads the payer's code twice per verification (ERC-6492 classification, then
    // the signature check): within one verification, the chain is asked once.
    getCode: (args) => {
      const codes = verification.getStore();
      if (!codes) return watched(() => client.getCode(args));
      const key = args.address.toLowerCase();
      let code = codes.get(key);
      if (!code) {
        code = watched(() => client.getCode(args));
        codes.set(key, code);
      }
      return code;
    },
  });
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, { signer, networks: network as `${string}:${string}` });
  return {
    address: account.address,
    sender,
    verify: (payload, requirements) => verification.run(new Map(), () => facilitator.verify(payload, requirements)),
    settle: async (payload, requirements) => {
      if (options.maySettle && !(await options.maySettle())) {
        return { success: false, errorReason: SETTLEMENT_STOPPED, transaction: "", network: requirements.network };
      }
      // The library verifies again before it sends: that verification, too, reads the payer's code once.
      return verification.run(new Map(), () => facilitator.settle(payload, requirements));
    },
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

/**
 * A remote facilitator over HTTP, with CDP JWT auth when configured. `@coinbase/x402`, which
 * makes the JWTs, is loaded at the first call that needs them (about 125 ms of a start that
 * mostly does not).
 */
export function createRemoteFacilitator(
  url: string,
  cdp: { keyId: string; keySecret: string } | undefined,
  timeoutMs: number,
): FacilitatorClient {
  if (!cdp) return new HTTPFacilitatorClient({ url, timeoutMs });
  // Loaded once; a failed load is tried again at the next call.
  let loading: Promise<NonNullable<FacilitatorConfig["createAuthHeaders"]>> | undefined;
  const authHeaders = () =>
    (loading ??= import("@coinbase/x402")
      .then(({ createFacilitatorConfig }) => {
        const create = createFacilitatorConfig(cdp.keyId, cdp.keySecret).createAuthHeaders;
        if (!create) throw new Error("@coinbase/x402 gave no CDP auth headers");
        return create;
      })
      .catch((error: unknown) => {
        loading = undefined;
        throw error;
      }));
  return new HTTPFacilitatorClient({ url, timeoutMs, createAuthHeaders: async () => (await authHeaders())() });
}
