/**
 * What the Solana site's routes read, through any Solana RPC (the local chain's in local mode, a
 * provider's in production): a mint's own risk (authorities, Token-2022 extensions, holders'
 * concentration), a wallet's balances, token accounts and activity, and the verdict.
 */

import type { Static } from "@sinclair/typebox";
import {
  type Address,
  isSolanaError,
  type PendingRpcRequest,
  type Rpc,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type SolanaRpcApi,
} from "@solana/kit";
import { getMintDecoder, TOKEN_2022_PROGRAM_ADDRESS } from "@solana-program/token-2022";
import { TOKEN_PROGRAM_ADDRESS } from "@x402/svm";
import { formatUnits } from "viem";
import type { MintRisk } from "../../spec/routes/solana.ts";
import { UpstreamError } from "../errors.ts";
import { TtlCache } from "../upstreams/ttl-cache.ts";
import { SolanaDexScreener } from "./dexscreener.ts";
import { solanaRpc } from "./rpc.ts";

/** The answers' name of a token program. */
const programName = (owner: string) => (owner === TOKEN_PROGRAM_ADDRESS ? ("spl-token" as const) : ("spl-token-2022" as const));

/** Where the Solana site reads. */
export interface SolanaSettings {
  network: string;
  rpcUrl: string;
  usdcMint: string;
  dexscreenerUrl: string;
  timeoutMs: number;
}

/** The Solana site's readers, built once per settings. */
export interface SolanaReads {
  settings: SolanaSettings;
  rpc: Rpc<SolanaRpcApi>;
  dex: SolanaDexScreener;
  /**
   * The chain's current epoch (which of a Token-2022 mint's two transfer fees is in force), kept
   * a minute: an epoch lasts about two days, and a meme-hunter call reads up to 30 mints. The
   * mints asking at once share one read; a failed read is not kept.
   */
  epoch: TtlCache<bigint>;
}

/** How long the chain's epoch is kept before it is read again. */
const EPOCH_TTL_MS = 60_000;

const built = new WeakMap<SolanaSettings, SolanaReads>();

/** The readers of `settings` (cached). */
export function solanaReads(settings: SolanaSettings | undefined): SolanaReads {
  if (!settings) throw new Error("the Solana settings were not provided to this context (src/server/service.ts)");
  let found = built.get(settings);
  if (!found) {
    const rpc = solanaRpc(settings.rpcUrl);
    const epoch = new TtlCache<bigint>(EPOCH_TTL_MS, { maxEntries: 1 });
    found = { settings, rpc, dex: new SolanaDexScreener(settings.dexscreenerUrl, settings.timeoutMs), epoch };
    built.set(settings, found);
  }
  return found;
}

/**
 * One RPC call (`request`, a method called on the reads' RPC and not yet sent), its failure a 502
 * (or 504 past the settings' time budget, the request then aborted) naming the Solana RPC.
 */
export async function rpcCall<T>(reads: Pick<SolanaReads, "settings">, what: string, request: PendingRpcRequest<T>): Promise<T> {
  const abortSignal = AbortSignal.timeout(reads.settings.timeoutMs);
  let answer: T;
  try {
    answer = await request.send({ abortSignal });
  } catch (error) {
    // The time budget's abort is told by the signal, whatever error the transport made of it.
    if (abortSignal.aborted) {
      throw new UpstreamError("upstream_timeout", "solana-rpc", `The Solana RPC did not answer ${what} in time.`, { cause: error });
    }
    // A provider's rate limit passes: the caller is told when to come back, as for the Base RPC.
    if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR) && error.context.statusCode === 429) {
      const header = Number(error.context.headers.get("retry-after"));
      const retryAfterSeconds = Number.isFinite(header) && header > 0 ? Math.min(Math.ceil(header), 3600) : 5;
      throw new UpstreamError(
        "unavailable",
        "solana-rpc",
        `The Solana RPC is rate-limiting us while reading ${what}; retry in ${retryAfterSeconds} s.`,
        {
          cause: error,
          retryAfterSeconds,
        },
      );
    }
    throw new UpstreamError("upstream_error", "solana-rpc", `The Solana RPC failed ${what}.`, { cause: error });
  }
  // Kit passes a JSON-RPC `result` through unchecked: one of the wrong shape would read as "no
  // such account" (a wrong answer, charged) or crash a reader (a 500).
  const expected = ANSWER_SHAPES[what];
  if (expected && !expected(answer)) {
    throw new UpstreamError("upstream_error", "solana-rpc", `The Solana RPC answered ${what} in an unexpected shape.`);
  }
  return answer;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isInteger = (v: unknown) => typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));
/** An `RpcResponse`: `{context, value}`, its value as `check` says. */
const response = (check: (value: unknown) => boolean) => (v: unknown) =>
  isObject(v) && isObject(v.context) && "value" in v && check(v.value);
/** The top-level shape of each method's answer that the readers rely on. */
const ANSWER_SHAPES: Record<string, (answer: unknown) => boolean> = {
  getAccountInfo: response((v) => v === null || (isObject(v) && typeof v.owner === "string" && Array.isArray(v.data))),
  getBalance: response(isInteger),
  getTokenLargestAccounts: response(Array.isArray),
  getTokenAccountsByOwner: response(Array.isArray),
  getEpochInfo: (v) => isObject(v) && isInteger(v.epoch),
  getSignaturesForAddress: Array.isArray,
};

export type MintRiskAnswer = Static<typeof MintRisk>;

const share = (part: bigint, whole: bigint) => (whole === 0n ? null : Number((part * 1_000_000n) / whole) / 10_000);

/** A mint's risk read on chain; null when the address is not a mint of SPL Token or Token-2022. */
export async function mintRisk(reads: SolanaReads, mint: string): Promise<MintRiskAnswer | null> {
  const { rpc } = reads;
  const info = await rpcCall(reads, "getAccountInfo", rpc.getAccountInfo(mint as Address, { encoding: "base64" }));
  const account = info.value;
  if (!account || (account.owner !== TOKEN_PROGRAM_ADDRESS && account.owner !== TOKEN_2022_PROGRAM_ADDRESS)) return null;
  const data = Buffer.from(account.data[0], "base64");
  // A token account is not a mint: 165 bytes (or its Token-2022 account type byte, 2).
  if (data.length !== 82 && !(data.length > 165 && data[165] === 1)) return null;
  const m = getMintDecoder().decode(data);
  const ext: MintRiskAnswer["extensions"] = {
    transfer_fee_bps: null,
    transfer_fee_max: null,
    transfer_fee_pending: null,
    transfer_hook_program: null,
    permanent_delegate: null,
    non_transferable: false,
    default_account_state: null,
    paused: false,
    pause_authority: null,
  };
  const extensions = m.extensions.__option === "Some" ? m.extensions.value : [];
  // The epoch is read only for a fee set after epoch 0 (a newer fee of epoch 0 is in force in any
  // epoch), and alongside the holders rather than before them.
  const feePending = extensions.some((e) => e.__kind === "TransferFeeConfig" && e.newerTransferFee.epoch !== 0n);
  const [epoch, largest] = await Promise.all([
    feePending
      ? reads.epoch
          .get("current", async () => BigInt((await rpcCall(reads, "getEpochInfo", rpc.getEpochInfo())).epoch))
          .then((cached) => cached.value)
      : 0n,
    rpcCall(reads, "getTokenLargestAccounts", rpc.getTokenLargestAccounts(mint as Address)),
  ]);
  for (const e of extensions) {
    if (e.__kind === "TransferFeeConfig") {
      // Token-2022 charges the older fee until the current epoch reaches the newer one's: a new
      // fee set now only applies two epochs on, and an authority that keeps setting a lower one
      // keeps the older fee charged for ever.
      const newer = e.newerTransferFee;
      const inForce = epoch >= newer.epoch ? newer : e.olderTransferFee;
      ext.transfer_fee_bps = inForce.transferFeeBasisPoints;
      ext.transfer_fee_max = inForce.maximumFee.toString();
      if (epoch < newer.epoch) {
        ext.transfer_fee_pending = {
          bps: newer.transferFeeBasisPoints,
          max: newer.maximumFee.toString(),
          from_epoch: Number(newer.epoch),
        };
      }
    } else if (e.__kind === "TransferHook") ext.transfer_hook_program = e.programId;
    else if (e.__kind === "PermanentDelegate") ext.permanent_delegate = e.delegate;
    else if (e.__kind === "NonTransferable") ext.non_transferable = true;
    else if (e.__kind === "DefaultAccountState") ext.default_account_state = e.state === 2 ? "frozen" : "initialized";
    else if (e.__kind === "PausableConfig") {
      ext.paused = e.paused;
      ext.pause_authority = e.authority.__option === "Some" ? e.authority.value : null;
    }
  }
  // The supply the mint account already holds: the shares are of the same supply answered beside
  // them, and no second read of it is sent per mint.
  const total = m.supply;
  const amounts = largest.value.map((a) => BigInt(a.amount));
  const top10 = amounts.slice(0, 10).reduce((s, a) => s + a, 0n);
  return {
    program: programName(account.owner),
    decimals: m.decimals,
    supply: m.supply.toString(),
    mint_authority: m.mintAuthority.__option === "Some" ? m.mintAuthority.value : null,
    freeze_authority: m.freezeAuthority.__option === "Some" ? m.freezeAuthority.value : null,
    extensions: ext,
    top10_share_pct: share(top10, total),
    largest_holder_share_pct: amounts.length ? share(amounts[0] as bigint, total) : null,
  };
}

/** Above this share of supply, the top 10 holders are a caution reason. */
export const CONCENTRATION_PCT = 80;
/** A transfer fee taking this much of the reference trade or more is high_tax (the Base site's 10%). */
export const HIGH_TAX_BPS = 1_000;
/**
 * The trade a transfer fee is judged on, in USD: the Base site's honeypot check buys 100 USD by
 * default, so a fee is high_tax on both sites when that trade would lose 10% to it.
 */
export const REFERENCE_TRADE_USD = 100;

/** One Token-2022 transfer fee: its rate and the most one transfer pays (atomic). */
interface TransferFee {
  bps: number;
  max: bigint;
}

/** Token-2022's fee on a transfer of `amount` (atomic): the rate rounded up, at most the maximum. */
export function transferFeeOn(fee: TransferFee, amount: bigint): bigint {
  if (fee.bps === 0 || amount === 0n) return 0n;
  const raw = (amount * BigInt(fee.bps) + 9_999n) / 10_000n;
  return raw < fee.max ? raw : fee.max;
}

// Plain decimals (no exponent, no grouping) for the reasons.
const sig3 = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 3, useGrouping: false });
const sig4 = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 4, useGrouping: false });

/** What a fee takes of the reference trade: null when no price values the trade. */
function feeJudged(fee: TransferFee, decimals: number, priceUsd: number | null) {
  const charged = fee.bps > 0 && fee.max > 0n;
  const cap = `${fee.bps / 100}% capped at ${formatUnits(fee.max, decimals)} tokens`;
  if (!charged) return { cap, high: false, charged, effect: "no fee is charged" };
  // The trade in atomic units; not finite with no usable price (none, 0, or too small to size it).
  const atomic = priceUsd !== null && priceUsd > 0 ? Math.round((REFERENCE_TRADE_USD / priceUsd) * 10 ** decimals) : Number.NaN;
  if (!Number.isFinite(atomic) || priceUsd === null) {
    // Without a price the cap cannot be weighed against a trade: the rate alone decides.
    return { cap, high: fee.bps >= HIGH_TAX_BPS, charged, effect: `no price to value the cap, judged by its ${fee.bps / 100}% rate` };
  }
  const amount = BigInt(Math.max(1, atomic));
  const paid = transferFeeOn(fee, amount);
  const capUsd = Number(formatUnits(fee.max, decimals)) * priceUsd;
  return {
    cap: `${cap} (${sig3.format(capUsd)} USD)`,
    high: paid * 10_000n >= amount * BigInt(HIGH_TAX_BPS),
    charged,
    effect: `a ${REFERENCE_TRADE_USD} USD trade pays ${sig4.format((Number(paid) / Number(amount)) * 100)}%`,
  };
}

/**
 * The verdict of a mint's risk, in the Base site's vocabulary, with every reason. A transfer fee
 * is judged by what a REFERENCE_TRADE_USD trade pays at `priceUsd` (the mint's USD price), its
 * maximum included; with no price, by its rate alone.
 */
export function verdictOf(
  risk: MintRiskAnswer | null,
  liquidityUsd: number | null,
  minLiquidityUsd: number,
  priceUsd: number | null,
): { verdict: "honeypot" | "high_tax" | "caution" | "ok"; reasons: string[] } {
  if (!risk) return { verdict: "caution", reasons: ["not a mint on this chain: nothing could be read"] };
  const honeypot: string[] = [];
  const highTax: string[] = [];
  const caution: string[] = [];
  const e = risk.extensions;
  if (e.non_transferable) honeypot.push("non-transferable (Token-2022): no holder can sell or send it");
  if (e.default_account_state === "frozen")
    honeypot.push("accounts start frozen (Token-2022 default account state): a buyer cannot sell until the authority thaws it");
  if (risk.freeze_authority) honeypot.push(`freeze authority live (${risk.freeze_authority}): any holder's account can be frozen`);
  if (e.paused) honeypot.push("paused (Token-2022 pausable): no holder can transfer it until the authority unpauses it");
  if (e.pause_authority) honeypot.push(`pause authority live (${e.pause_authority}): every transfer can be stopped at once`);
  if (e.transfer_fee_bps !== null) {
    // Judged by the worse of the fee in force and a pending one: a pending fee is in force within
    // two epochs. A fee whose maximum is 0 charges nothing; raising it is a new fee, pending
    // for two epochs before it is charged, and reported as such.
    const pending = e.transfer_fee_pending;
    const now = feeJudged({ bps: e.transfer_fee_bps, max: BigInt(e.transfer_fee_max ?? "0") }, risk.decimals, priceUsd);
    const next = pending && feeJudged({ bps: pending.bps, max: BigInt(pending.max) }, risk.decimals, priceUsd);
    const differs = pending !== null && (pending.bps !== e.transfer_fee_bps || pending.max !== e.transfer_fee_max);
    const reason =
      next && differs
        ? `transfer fee ${now.cap} now, ${next.cap} from epoch ${pending.from_epoch} (Token-2022): ${now.effect} now, ${next.effect} from epoch ${pending.from_epoch}`
        : `transfer fee ${now.cap} (Token-2022): ${now.effect}`;
    if (now.high || next?.high) highTax.push(reason);
    else if (now.charged || next?.charged) caution.push(reason);
  }
  if (e.transfer_hook_program)
    caution.push(`transfer hook (${e.transfer_hook_program}): a program runs on every transfer and can refuse it`);
  if (e.permanent_delegate) caution.push(`permanent delegate (${e.permanent_delegate}): can move or burn any holder's tokens`);
  if (risk.mint_authority) caution.push(`mint authority live (${risk.mint_authority}): supply can grow`);
  if (risk.top10_share_pct !== null && risk.top10_share_pct > CONCENTRATION_PCT)
    caution.push(`top 10 holders hold ${risk.top10_share_pct}% of supply`);
  if (liquidityUsd !== null && liquidityUsd < minLiquidityUsd) caution.push(`liquidity ${liquidityUsd} USD under ${minLiquidityUsd}`);
  const reasons = [...honeypot, ...highTax, ...caution];
  if (honeypot.length) return { verdict: "honeypot", reasons };
  if (highTax.length) return { verdict: "high_tax", reasons };
  if (caution.length) return { verdict: "caution", reasons };
  return { verdict: "ok", reasons: [] };
}

/** A wallet's token accounts under both token programs (jsonParsed), with the mint's decimals. */
export async function tokenAccountsOf(reads: SolanaReads, owner: string) {
  const { rpc } = reads;
  const lists = await Promise.all(
    [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS].map((program) =>
      rpcCall(
        reads,
        "getTokenAccountsByOwner",
        rpc.getTokenAccountsByOwner(owner as Address, { programId: program as Address }, { encoding: "jsonParsed" }),
      ).then((r) => r.value.map((a) => ({ program, a }))),
    ),
  );
  return lists.flat().map(({ program, a }) => {
    const { info } = a.account.data.parsed;
    return {
      account: a.pubkey as string,
      mint: info.mint as string,
      program: programName(program),
      atomic: info.tokenAmount.amount,
      amount: Number(info.tokenAmount.uiAmountString),
      decimals: info.tokenAmount.decimals,
      frozen: info.state === "frozen",
    };
  });
}
