/**
 * Verified by purchase: a trust run may buy from a seller once, with the client a buyer runs
 * (`@x402/fetch`'s `wrapFetchWithPayment` with the `@x402/evm` exact scheme), from the
 * operator's own buyer wallet, within an operator-set budget, and record what it got:
 *
 * - `served`: a 2xx answer with a body of the declared type;
 * - `charged_without_service`: one of the buyer's signed authorizations was used on chain and
 *   no such answer came;
 * - `refused_after_signing`: the client signed, nothing was used on chain, nothing was served;
 * - `settled_twice`: more than one payment was taken for one call (two of the buyer's
 *   authorizations used, or more USDC gone than it signed for);
 * - `not_signed`: the client produced no payment (nothing could be spent).
 *
 * Only the option the checker judged payable itself is bought (USDC on the buyer's network, to
 * the payTo the check quoted, with an EIP-3009 authorization), and only if the seller still
 * offers it unchanged, its amount aside, when asked again at purchase.
 *
 * The budget is kept by construction: a policy of the buyer's client drops every option it
 * cannot afford (per origin per run, per run in total, and the price cap), and every payment
 * the client signs is reserved from the budget at once, used on chain or not (a signed
 * authorization stays spendable until it expires). What was charged is read on chain: the
 * state of each signed authorization and the buyer's USDC balance before and after.
 * Purchases run one at a time, so a balance change belongs to the purchase that saw it.
 */
import { isDeepStrictEqual } from "node:util";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { erc20Abi, type LocalAccount, type PublicClient } from "viem";
import type { TrustLeaderboardDocument } from "../../spec/routes/intel.ts";
import { authorizationReader } from "../chain/authorization.ts";
import { OutboundError, type SafeFetcher, TargetNotAllowedError } from "../outbound/safe-fetch.ts";
import type { OurPurchase } from "../store/ledger.ts";
import type { ConformanceReport } from "./conformance.ts";
import { isUsdc, normaliseNetwork } from "./networks.ts";
import { isPermit2 } from "./x402-clients.ts";

/** What a purchase got, in the order of the module comment. */
export const PURCHASE_OUTCOMES = ["served", "charged_without_service", "refused_after_signing", "settled_twice", "not_signed"] as const;

/** The outcome of one purchase. */
export type PurchaseOutcome = (typeof PURCHASE_OUTCOMES)[number];

/** What each outcome means, for documentation. */
export const PURCHASE_OUTCOME_MEANINGS: Readonly<Record<PurchaseOutcome, string>> = {
  served: "the seller answered 2xx with a body of the type it declared",
  charged_without_service: "a payment the buyer signed was settled on chain and no such answer came",
  refused_after_signing: "the buyer signed a payment, none was settled, and nothing was served",
  settled_twice:
    "more than one payment was taken for one call: two of the buyer's authorizations settled, or more USDC gone than it signed for",
  not_signed: "the buyer's client produced no payment, so nothing could be spent",
};

/**
 * The operator's budget in USD, as the leaderboard shows it: spent at most in one run, at most on
 * one origin in one run, and the price cap (only sellers quoting at most it are bought from).
 */
export type PurchaseBudget = NonNullable<TrustLeaderboardDocument["verified_by_purchase"]["budget"]>;

/** What a purchase run needs. */
export interface PurchaserSettings {
  /** The operator's buyer wallet. */
  buyer: LocalAccount;
  /** Reads the buyer's USDC and its authorizations. */
  chain: PublicClient;
  /** The network the buyer pays on (CAIP-2) and its USDC. */
  network: string;
  usdc: `0x${string}`;
  budget: PurchaseBudget;
  /** The fetcher sellers are reached through (the crawl's, with its address policy). */
  fetcher: SafeFetcher;
  /** How long to look again for a late settlement before calling a purchase refused; default 2 s. */
  settleGraceMs?: number;
}

/** One purchase, as recorded in the ledger of our own purchases. */
export type PurchaseRecord = OurPurchase & { outcome: PurchaseOutcome };

const usd = (atomic: bigint) => Number(atomic) / 1e6;
const atomicOf = (dollars: number) => BigInt(Math.floor(dollars * 1e6 + 1e-6));

/** The declared type of a challenge's answer: v2's resource.mimeType, v1's option mimeType. */
function declaredType(required: PaymentRequired | undefined, selected: PaymentRequirements | undefined): string | null {
  const resource = (required as { resource?: { mimeType?: unknown } } | undefined)?.resource;
  const fromResource = typeof resource?.mimeType === "string" ? resource.mimeType : undefined;
  const fromOption = (selected as { mimeType?: unknown } | undefined)?.mimeType;
  const type = fromResource ?? (typeof fromOption === "string" ? fromOption : undefined);
  return type && type.trim() !== "" ? type : null;
}

const baseType = (type: string) => type.split(";")[0]?.trim().toLowerCase() ?? "";

/** True when `contentType` is of `declared` (base types compared; a wildcard subtype matches its family). */
function ofType(contentType: string | null, declared: string | null): boolean {
  if (!declared) return true;
  if (!contentType) return false;
  const [want, got] = [baseType(declared), baseType(contentType)];
  if (want === "*/*" || want === got) return true;
  return want.endsWith("/*") && got.startsWith(want.slice(0, -1));
}

/** `fetch` over the safe fetcher, so purchases obey the crawl's address policy and limits. */
function safeFetch(fetcher: SafeFetcher, signal: AbortSignal): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const headers = Object.fromEntries(request.headers);
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.text();
    const res = await fetcher({ url: request.url, method: request.method, headers, ...(body ? { body } : {}), signal });
    const response = new Response(res.status === 204 || res.status === 304 ? null : new Uint8Array(res.body), {
      status: res.status,
      headers: res.headers,
    });
    Object.defineProperty(response, "url", { value: res.url });
    return response;
  }) as typeof fetch;
}

/** A purchase target: the endpoint the probe scored, with the method and body it used. */
export interface PurchaseTarget {
  origin: string;
  url: string;
  method: "GET" | "POST";
}

const sameAddress = (a: unknown, b: unknown) => typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();

/**
 * The option a purchase pays, or null when the seller is not bought from: USDC on the buyer's
 * network, judged payable itself, to the payTo the report quotes, at a price within the budget.
 */
function purchasable(report: ConformanceReport, settings: Pick<PurchaserSettings, "network" | "budget">): Record<string, unknown> | null {
  // `payable` is true when any option is, whatever its network: the one bought must be payable itself.
  if (report.payable !== true) return null;
  // The checker answers by position in the challenge it read, which the report's options are.
  const judged = report.payable_options.length === report.accepts.length;
  // A Permit2 payment carries no EIP-3009 authorization whose use can be read back.
  const option = judged
    ? report.accepts.find(
        (o, i) =>
          normaliseNetwork(o.network) === settings.network &&
          isUsdc(settings.network, o.asset) &&
          report.payable_options[i]?.payable === true &&
          !isPermit2(o),
      )
    : undefined;
  if (!option) return null;
  // The payTo the report quotes is the one its reputation and trust score are about.
  if (!sameAddress(option.payTo, report.pay_to)) return null;
  const { budget } = settings;
  if (report.price_usd === null) return null;
  if (report.price_usd > budget.price_cap_usd) return null;
  if (report.price_usd > budget.per_origin_usd) return null;
  return option;
}

/** `option` without its amount: what the checker judged of it apart from the price, which the budget holds. */
function termsOf(option: Record<string, unknown>): Record<string, unknown> {
  const { amount: _amount, maxAmountRequired: _maxAmountRequired, ...terms } = option;
  return terms;
}

/** The purchases of one trust run: one per origin at most, within the run's budget. */
export class PurchaseRun {
  readonly settings: PurchaserSettings;
  /** Reserved so far (atomic): every payment signed in this run. */
  #reserved = 0n;
  readonly #bought = new Set<string>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(settings: PurchaserSettings) {
    this.settings = settings;
  }

  /** Signed (and so reserved) in this run, in atomic USDC. */
  get reservedAtomic(): bigint {
    return this.#reserved;
  }

  /** What is left of the run's budget, in atomic USDC. */
  get remainingAtomic(): bigint {
    const left = atomicOf(this.settings.budget.per_run_usd) - this.#reserved;
    return left > 0n ? left : 0n;
  }

  /**
   * Buy once from `target` when its report allows it and the budget holds; null when not bought.
   * Purchases are queued one at a time.
   */
  buy(target: PurchaseTarget, report: ConformanceReport): Promise<PurchaseRecord | null> {
    const next = this.#queue.then(() => this.#buyNow(target, report));
    this.#queue = next.catch(() => {});
    return next;
  }

  async #buyNow(target: PurchaseTarget, report: ConformanceReport): Promise<PurchaseRecord | null> {
    const { settings } = this;
    if (this.#bought.has(target.origin)) return null;
    const option = purchasable(report, settings);
    if (!option) return null;
    const judgedTerms = termsOf(option);
    const price = atomicOf(report.price_usd as number);
    if (price > this.remainingAtomic) return null;
    this.#bought.add(target.origin);

    const perOrigin = atomicOf(settings.budget.per_origin_usd);
    const cap = atomicOf(settings.budget.price_cap_usd);
    let spentHere = 0n;
    const signed: { nonce: `0x${string}`; value: bigint }[] = [];
    let required: PaymentRequired | undefined;
    let selected: PaymentRequirements | undefined;
    // v1 options quote maxAmountRequired instead of amount.
    const amountOf = (r: PaymentRequirements) => {
      const text =
        (r as { amount?: unknown; maxAmountRequired?: unknown }).amount ?? (r as { maxAmountRequired?: unknown }).maxAmountRequired;
      return typeof text === "string" && /^[0-9]{1,78}$/.test(text) ? BigInt(text) : null;
    };
    const affordable = (r: PaymentRequirements) => {
      const amount = amountOf(r);
      const option = r as unknown as Record<string, unknown>;
      return (
        amount !== null &&
        // The seller answers again at purchase: only the option the checker judged payable is
        // paid, not one whose payTo, timeout or signing domain changed since. Its terms keep the
        // network, asset and extra, so it is USDC on the buyer's network and not paid with Permit2.
        isDeepStrictEqual(termsOf(option), judgedTerms) &&
        amount <= cap &&
        spentHere + amount <= perOrigin &&
        amount <= this.remainingAtomic
      );
    };
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: settings.buyer });
    // The budget, as the client's own policy: an option it cannot afford is never signed.
    client.registerPolicy((_version, requirements) => requirements.filter(affordable));
    client.onBeforePaymentCreation(async (context) => {
      required = context.paymentRequired;
      selected = context.selectedRequirements;
      return affordable(context.selectedRequirements) ? undefined : { abort: true, reason: "over the purchase budget" };
    });
    client.onAfterPaymentCreation(async (context) => {
      const payload = context.paymentPayload as PaymentPayload & { payload: { authorization?: { nonce?: string; value?: string } } };
      const value = BigInt(payload.payload.authorization?.value ?? amountOf(context.selectedRequirements) ?? 0n);
      // Reserved at once: a signed authorization can be settled until it expires.
      this.#reserved += value;
      spentHere += value;
      const nonce = payload.payload.authorization?.nonce;
      if (nonce) signed.push({ nonce: nonce as `0x${string}`, value });
    });

    const balance = () =>
      settings.chain.readContract({ address: settings.usdc, abi: erc20Abi, functionName: "balanceOf", args: [settings.buyer.address] });
    const before = await balance();
    // Time allowed for one purchase.
    const signal = AbortSignal.timeout(20_000);
    const paying = wrapFetchWithPayment(safeFetch(settings.fetcher, signal), new x402HTTPClient(client));
    let status: number | null = null;
    let contentType: string | null = null;
    let bodyBytes = 0;
    let failure: string | null = null;
    try {
      const res = await paying(target.url, {
        method: target.method,
        ...(target.method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}),
      });
      status = res.status;
      contentType = res.headers.get("content-type");
      bodyBytes = (await res.arrayBuffer()).byteLength;
    } catch (error) {
      failure =
        error instanceof TargetNotAllowedError || error instanceof OutboundError || error instanceof Error ? error.message : String(error);
    }

    const reader = authorizationReader(settings.chain, settings.usdc);
    const usedCount = async () => {
      let used = 0;
      for (const s of signed) if (await reader.isUsed(settings.buyer.address, s.nonce)) used++;
      return used;
    };
    const served =
      status !== null && status >= 200 && status < 300 && bodyBytes > 0 && ofType(contentType, declaredType(required, selected));
    let settlements = await usedCount();
    if (!served && settlements === 0 && signed.length > 0) {
      // A seller may settle just after it answered: look once more before calling it refused.
      await new Promise((resolve) => setTimeout(resolve, settings.settleGraceMs ?? 2_000));
      settlements = await usedCount();
    }
    const after = await balance();
    const firstUsed = settlements > 0 ? signed[0] : undefined;
    const tx = firstUsed ? await reader.findUse(settings.buyer.address, firstUsed.nonce, 5_000).catch(() => null) : null;
    const charged = before - after;
    // More than one payment: two of its authorizations used, or more taken than it signed for
    // (the buyer wallet is the trust runs' own and purchases run one at a time).
    const outcome: PurchaseOutcome =
      signed.length === 0
        ? "not_signed"
        : settlements > 1 || charged > spentHere
          ? "settled_twice"
          : served
            ? "served"
            : settlements === 1
              ? "charged_without_service"
              : "refused_after_signing";
    const declared = declaredType(required, selected);
    const detail =
      outcome === "not_signed"
        ? `the client produced no payment: ${failure ?? `the seller answered ${status}`}`
        : `signed ${signed.length} payment(s) of $${usd(spentHere)}, ${settlements} settled on chain; ` +
          (failure
            ? `the call failed: ${failure}`
            : `answered ${status}${contentType ? ` ${baseType(contentType)}` : ""} with ${bodyBytes} bytes${declared ? ` (declared ${declared})` : ""}`);
    return {
      origin: target.origin,
      endpoint: target.url,
      method: target.method,
      payer: settings.buyer.address,
      pay_to: report.pay_to,
      network: settings.network,
      asset: settings.usdc,
      price_atomic: price.toString(),
      signed_atomic: spentHere.toString(),
      signed: signed.length,
      settlements,
      charged_atomic: charged.toString(),
      outcome,
      status,
      content_type: contentType,
      body_bytes: bodyBytes,
      settlement_tx: tx,
      detail: detail.slice(0, 500),
      at: new Date(),
    };
  }
}
