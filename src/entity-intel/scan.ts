/**
 * The entity routes' reads of Transfer logs: a window (`blocks` ending at `to_block`), read
 * newest block first in groups of aligned chunks through the shared log scanner (so its
 * chunking, refusal handling and finalized-range cache apply), with a log budget and a time
 * budget checked between groups. When a budget runs out the answer keeps what it read and
 * says which part of the window that was, instead of timing out.
 */
import type { Address } from "viem";
import { DEFAULT_SCAN_CONCURRENCY, type TransferLog, type TransferQuery, type TransferScanner } from "../chain/log-scanner.ts";
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

/** What one answer has spent. */
export class ScanBudget {
  readonly limits: BudgetLimits;
  readonly #started: number;
  readonly #now: () => number;
  logsRead = 0;

  constructor(limits: BudgetLimits, now: () => number = Date.now) {
    this.limits = limits;
    this.#now = now;
    this.#started = now();
  }

  /** True once either limit is reached: no further group of chunks is started. */
  exhausted(): boolean {
    return this.logsRead >= this.limits.maxLogs || this.#now() - this.#started >= this.limits.maxMs;
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

/** What a budgeted read found. */
export interface ScanResult {
  /** Unique logs (by block and log index), in chain order. */
  logs: TransferLog[];
  /** The oldest block read; the window's first block when nothing was cut. */
  coveredFrom: number;
  truncated: boolean;
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
 * Read `queries` over `window`, newest group of chunks first, stopping before a group once
 * `budget` is spent. The logs of all queries are merged (a log two queries match is kept once).
 */
export async function scanBudgeted(
  scanner: TransferScanner,
  queries: readonly Omit<TransferQuery, "fromBlock" | "toBlock">[],
  window: ScanWindow,
  budget: ScanBudget,
): Promise<ScanResult> {
  const parts = queries.flatMap(splitQuery);
  const span = scanner.chunkSize * DEFAULT_SCAN_CONCURRENCY;
  const seen = new Set<string>();
  const logs: TransferLog[] = [];
  let coveredFrom = window.toBlock + 1;
  // Groups end on chunk boundaries so the scanner's finalized-chunk cache serves repeated windows.
  let end = window.toBlock;
  while (end >= window.fromBlock) {
    if (budget.exhausted()) return { logs: sorted(logs), coveredFrom, truncated: true };
    const start = Math.max(window.fromBlock, Math.floor(end / span) * span);
    const results = await Promise.all(parts.map((q) => scanner.transfers({ ...q, fromBlock: start, toBlock: end }, window.finalized)));
    for (const { logs: found } of results) {
      budget.logsRead += found.length;
      for (const log of found) {
        const key = `${log.blockNumber}:${log.logIndex}`;
        if (seen.has(key)) continue;
        seen.add(key);
        logs.push(log);
      }
    }
    coveredFrom = start;
    end = start - 1;
  }
  return { logs: sorted(logs), coveredFrom: window.fromBlock, truncated: false };
}

function sorted(logs: TransferLog[]): TransferLog[] {
  return logs.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

/** The coverage fields of an answer. */
export function coverage(window: ScanWindow, result: { coveredFrom: number; truncated: boolean }, budget: ScanBudget) {
  return {
    from_block: window.fromBlock,
    to_block: window.toBlock,
    truncated: result.truncated,
    covered_from_block: result.truncated ? result.coveredFrom : window.fromBlock,
    budget: budget.report(),
  };
}
