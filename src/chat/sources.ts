/**
 * What a chat answer cites: every live figure it used, with where and when it was fetched,
 * and every knowledge-base entry it drew on.
 */

/** What a live figure measures. */
export type ChatFigureKind =
  /** USD price, a decimal string as the source gave it. */
  | "price"
  /** 24 h change in percent. */
  | "change_24h"
  /** Perpetual funding in percent per hour (Hyperliquid funds hourly). */
  | "funding"
  /** The same funding over 8 hours (8 hourly payments), as other venues quote it. */
  | "funding_8h"
  /** Perpetual open interest in coin units. */
  | "open_interest"
  /** Open interest in USD at the mark price, rounded to whole dollars. */
  | "open_interest_usd"
  /** Gas on the served chain; `id` names which figure (`base_fee_gwei`, `priority_fee_medium_gwei`, `transfer_21000_usd`...). */
  | "gas"
  /** A protocol's total value locked in USD (DefiLlama); `id` is its slug. */
  | "tvl"
  /** The 24 h change of a protocol's TVL in percent; `id` is its slug. */
  | "tvl_change_24h";

/** A live figure fetched for this answer. */
export interface ChatFigure {
  kind: ChatFigureKind;
  /** The asset's symbol (`WETH`, `ETH` for a perpetual) when the figure is about one. */
  symbol?: string;
  /** Which figure, when the kind has several (gas), or the token address. */
  id?: string;
  value: number | string;
  /** `dexscreener`, `defillama`, `hyperliquid` or `chain`. */
  source: string;
  /** When the service fetched it (ISO 8601). */
  fetched_at: string;
}

/** A knowledge-base entry the answer drew on. */
export interface ChatCitation {
  kind: "kb";
  id: string;
  title: string;
  source: "knowledge-base";
}

/** One source of a chat answer. */
export type ChatSource = ChatFigure | ChatCitation;

/** What either engine answers: its reply (`answerChat` adds the disclaimer to a model's) and every source behind it. */
export interface EngineAnswer {
  reply: string;
  sources: ChatSource[];
}

/** `sources` without repeats (two parts quoting the same fetch cite it once), in first-seen order. */
export function uniqueSources(sources: readonly ChatSource[]): ChatSource[] {
  const seen = new Set<string>();
  return sources.filter((s) => {
    const key = JSON.stringify(s);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
