/**
 * The entity routes' reads of Transfer logs: a window (`blocks` ending at `to_block`), read
 * newest chunk first through the shared log scanner (so its chunking, refusal handling and
 * finalized-range cache apply), with a log budget and a time budget checked before every
 * request. When a budget runs out the answer keeps what it read and says which part of the
 * window that was, instead of timing out.
 */
import type { Address } from "viem";
import {
  type ScanAllowance,
  TARGET_LOGS_PER_RESPONSE,
  type TransferLog,
  type TransferQuery,
  type TransferScanner,
} from "../chain/log-scanner.ts";
import { InvalidRequestError } from "../errors.ts";

/** The most addresses one topic OR-list carries; longer lists are split into several queries. */
export const MAX_TOPIC_ADDRESSES = 50;

/** The limits of one answer. */
export interface BudgetLimits {
  /** ENTITY_INTEL_MAX_LOGS: Transfer logs one answer may read. */
  maxLogs: number;
  /** ENTITY_INTEL_MAX_MS: time one answer may spend reading. */
  maxMs: number;
}

/** Defaults of {@link BudgetLimits}: what a public RPC serves well within an agent's usual 30 s timeout. */
export const DEFAULT_BUDGET: BudgetLimits = { maxLogs: 250_000, maxMs: 20_000 };

/**
 * What one answer has spent, and the scanner's allowance: every `eth_getLogs` request asks it
 * first, so the budget is checked per request, not per window. Requests go out together while
 * the logs left could take an answer of the largest size seen for each one in flight (at least
 * the scanner's target size); closer to the limit they go one at a time, so the answer stops
 * within one request of its log budget.
 */
export class ScanBudget implements ScanAllowance {
  readonly limits: BudgetLimits;
  readonly #started: number;
  readonly #now: () => number;
  logsRead = 0;
  #inFlight = 0;
  /** The most transfers one request may be expected to bring. */
  #perRequest = TARGET_LOGS_PER_RESPONSE;
  /**
   * Requests waiting for leave, highest `toBlock` first and first come first served among equals:
   * a retry or a half of a refused range asks again after older chunks have asked, and the answer
   * keeps only the unbroken range ending at the window's last block, so a newer request must not
   * wait behind older ones the budget would be spent on and then dropped.
   */
  readonly #waiting: { toBlock: number; go: (go: boolean) => void }[] = [];
  /** Set by {@link stop}: no further request is let through. */
  #stopped = false;

  constructor(limits: BudgetLimits, now: () => number = Date.now) {
    this.limits = limits;
    this.#now = now;
    this.#started = now();
  }

  /** True once either limit is reached: no further request is sent. */
  exhausted(): boolean {
    return this.#stopped || this.logsRead >= this.limits.maxLogs || this.#now() - this.#started >= this.limits.maxMs;
  }

  /**
   * A request without a block goes after every request with one. Leave is given a microtask
   * later, not at once: the requests of every scan of an answer ask in one go (each scan its
   * chunks newest first, one scan after another), and they must all be in the queue, in block
   * order, before the first ones are let through, or the first scan's oldest chunks would take
   * the slots before the other scans' newest.
   */
  acquire(toBlock: number = Number.NEGATIVE_INFINITY): Promise<boolean> {
    return new Promise((go) => {
      const before = this.#waiting.findIndex((waiting) => waiting.toBlock < toBlock);
      this.#waiting.splice(before === -1 ? this.#waiting.length : before, 0, { toBlock, go });
      queueMicrotask(() => this.#admit());
    });
  }

  /** Spend the budget now: the requests waiting and any asking later are refused (one read of the answer failed, so the others are of no use). */
  stop(): void {
    this.#stopped = true;
    this.#admit();
  }

  release(transfers: number): void {
    this.#inFlight--;
    this.logsRead += transfers;
    if (transfers > this.#perRequest) this.#perRequest = transfers;
    this.#admit();
  }

  add(transfers: number): void {
    this.logsRead += transfers;
  }

  #admit(): void {
    while (this.#waiting.length > 0) {
      if (this.exhausted()) {
        for (const { go } of this.#waiting.splice(0)) go(false);
        return;
      }
      if (this.#inFlight > 0 && this.logsRead + (this.#inFlight + 1) * this.#perRequest > this.limits.maxLogs) return;
      this.#inFlight++;
      (this.#waiting.shift() as { go: (go: boolean) => void }).go(true);
    }
  }

  /** The `budget` object of an answer. */
  report(): { logs_read: number; ms: number; max_logs: number; max_ms: number } {
    return {
      logs_read: this.logsRead,
      ms: Math.max(0, Math.round(this.#now() - this.#started)),
      max_logs: this.limits.maxLogs,
      max_ms: this.limits.maxMs,
    };
  }
}

/** An inclusive block window and what the chain looked like when it was chosen. */
export interface ScanWindow {
  fromBlock: number;
  toBlock: number;
  /** The highest block whose chunks may be cached. */
  finalized: number;
}

/** The window of a request: `blocks` ending at `to_block` (default: the latest block); a future `to_block` is a 400. */
export async function resolveWindow(scanner: TransferScanner, blocks: number, toBlock: number | undefined): Promise<ScanWindow> {
  const { latest, finalized } = await scanner.head();
  if (toBlock !== undefined && toBlock > latest) {
    throw new InvalidRequestError(`Invalid request: body.to_block (${toBlock}) is after the latest block, ${latest}.`, [
      { field: "body.to_block", expected: `a block at or before the latest block, ${latest}`, received: toBlock },
    ]);
  }
  const end = toBlock ?? latest;
  return { fromBlock: Math.max(0, end - blocks + 1), toBlock: end, finalized };
}

/** The queries of every transfer of `token` (every token when undefined) from and to `addresses`. */
export function bothWays(token: Address | undefined, addresses: Address | Address[]): Omit<TransferQuery, "fromBlock" | "toBlock">[] {
  return [
    { token, from: addresses },
    { token, to: addresses },
  ];
}

/** Split a query whose OR-lists are longer than {@link MAX_TOPIC_ADDRESSES} into several. */
export function splitQuery(query: Omit<TransferQuery, "fromBlock" | "toBlock">): Omit<TransferQuery, "fromBlock" | "toBlock">[] {
  for (const side of ["from", "to"] as const) {
    const list = query[side];
    if (list !== undefined && typeof list !== "string" && list.length > MAX_TOPIC_ADDRESSES) {
      const parts: Omit<TransferQuery, "fromBlock" | "toBlock">[] = [];
      for (let i = 0; i < list.length; i += MAX_TOPIC_ADDRESSES) {
        parts.push(...splitQuery({ ...query, [side]: list.slice(i, i + MAX_TOPIC_ADDRESSES) }));
      }
      return parts;
    }
  }
  return [query];
}

/**
 * Read `queries` over `window` through `budget`, newest chunk first: one scan per query, each
 * starting its newest chunk first, so a budget that runs out leaves the newest part of the
 * window read. The logs of all queries are merged (a log two queries match is kept once); those
 * older than the newest block some query left unread are dropped, so the answer covers one
 * unbroken range ending at `toBlock`, from `coveredFrom` (the window's first block unless
 * `truncated`), its logs unique by block and log index and in chain order.
 */
export async function scanBudgeted(
  scanner: TransferScanner,
  queries: readonly Omit<TransferQuery, "fromBlock" | "toBlock">[],
  window: ScanWindow,
  budget: ScanBudget,
) {
  const parts = queries.flatMap(splitQuery);
  // One failed read fails the answer; the scanner then stops the budget, so the other reads send nothing more.
  const results = await Promise.all(
    parts.map((q) =>
      scanner.transfers({ ...q, fromBlock: window.fromBlock, toBlock: window.toBlock }, window.finalized, { allowance: budget }),
    ),
  );
  const coveredFrom = Math.max(window.fromBlock, ...results.map((r) => r.coveredFrom));
  const seen = new Set<string>();
  const logs: TransferLog[] = [];
  for (const { logs: part } of results) {
    for (const log of part) {
      if (log.blockNumber < coveredFrom) continue;
      const key = `${log.blockNumber}:${log.logIndex}`;
      if (seen.has(key)) continue;
      seen.add(key);
      logs.push(log);
    }
  }
  logs.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return { logs, coveredFrom, truncated: coveredFrom > window.fromBlock };
}

/** The coverage fields of an answer. */
export function coverage(window: ScanWindow, result: { coveredFrom: number; truncated: boolean }, budget: ScanBudget) {
  return {
    from_block: window.fromBlock,
    to_block: window.toBlock,
    truncated: result.truncated,
    covered_from_block: result.coveredFrom,
    budget: budget.report(),
  };
}
