/**
 * The leaderboard's durable side: crawl runs and their rows in the store (`trust_runs`,
 * `trust_rows`; every run and row is kept, so history accumulates), the run summary
 * computed once when a run finishes, and the leaderboard document read back
 * from the latest completed run.
 */
import {
  getTrustLeaderboard,
  type postTrustLeaderboard,
  type TrustLeaderboardDocument,
  type TrustLeaderboardFull,
  type TrustRowSchema,
  trustRoutes,
} from "../../spec/routes/intel.ts";
import type { FunctionConfig, RouteInput } from "../context.ts";
import { UpstreamError } from "../errors.ts";
import { inArray } from "../store/dialect.ts";
import { lastPurchases } from "../store/ledger.ts";
import type { Queryable, Store } from "../store/store.ts";
import { type CheckName, isConformant, isDiscoverable, RULES_VERSION } from "./conformance.ts";
import { PURCHASE_OUTCOME_MEANINGS, type PurchaseBudget, type PurchaseOutcome } from "./purchase.ts";
import type { Reputation } from "./reputation.ts";
import { CAVEAT, describeScoring, NOT_CHECKED, PENALTIES, type PenaltyId, penaltyTexts, type Verdict } from "./trust-score.ts";

/** One scored origin as the crawl records it: a leaderboard row before it is ranked, with its penalty ids and every check. */
export type TrustRecord = Omit<
  TrustRowSchema,
  "rank" | "previous_score" | "failed_checks" | "penalties" | "reputation" | "probed_at" | "last_verified_by_purchase"
> & {
  penalties: PenaltyId[];
  checks: Record<CheckName, boolean>;
  reputation: Reputation;
  probed_at: Date;
};

/** A completed run, with the rules it scored with (src/intel/conformance.ts RULES_VERSION at the time). */
export type RunInfo = Omit<TrustLeaderboardFull["run"], "sources" | "runs_total"> & { summary: RunSummary };

const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString();
const json = <T>(value: unknown): T => (typeof value === "string" ? (JSON.parse(value) as T) : (value as T));

/** Open a run under the current rules version; returns its id. */
export async function startRun(store: Queryable, trigger: string, startedAt: Date): Promise<number> {
  const [row] = await store.query<{ id: string | number }>(
    "insert into trust_runs (trigger, status, started_at, rules_version) values ($1, 'running', $2, $3) returning id",
    [trigger, startedAt.toISOString(), RULES_VERSION],
  );
  return Number(row?.id);
}

/** Rows per insert statement: 21 parameters each stay under SQLite's 32,766 (and PostgreSQL's 65,535). */
const ROWS_PER_INSERT = 1_000;

/** Record rows of a run (one statement per 1,000 rows). */
export async function insertRows(store: Queryable, runId: number, rows: readonly TrustRecord[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await insertBatch(store, runId, rows.slice(i, i + ROWS_PER_INSERT));
}

async function insertBatch(store: Queryable, runId: number, rows: readonly TrustRecord[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = 21;
  const params: unknown[] = [];
  const tuples = rows.map((r, i) => {
    params.push(
      runId,
      r.origin,
      r.endpoint,
      r.method,
      r.endpoints,
      r.reachable,
      r.status,
      r.score,
      r.verdict,
      JSON.stringify(r.penalties),
      JSON.stringify(r.checks),
      r.payable,
      r.conformant,
      r.discoverable,
      r.price_usd === null ? null : String(r.price_usd),
      r.pay_to,
      r.network,
      r.x402_version,
      JSON.stringify(r.reputation),
      r.latency_ms,
      r.probed_at.toISOString(),
    );
    const base = i * columns;
    return `(${Array.from({ length: columns }, (_, k) => `$${base + k + 1}`).join(", ")})`;
  });
  await store.query(
    `insert into trust_rows (run_id, origin, endpoint, method, endpoints, reachable, status, score, verdict, penalties, checks,
       payable, conformant, discoverable, price_usd, pay_to, network, x402_version, reputation, latency_ms, probed_at)
     values ${tuples.join(", ")}
     on conflict (run_id, origin) do nothing`,
    params,
  );
}

/** Median, mean (1 decimal) and nearest-rank 90th percentile of `scores`; nulls when empty. */
export function scoreStats(scores: readonly number[]): { median: number | null; mean: number | null; p90: number | null } {
  if (scores.length === 0) return { median: null, mean: null, p90: null };
  const sorted = [...scores].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  const mean = Math.round((sorted.reduce((s, x) => s + x, 0) / sorted.length) * 10) / 10;
  const p90 = sorted[Math.ceil(0.9 * sorted.length) - 1] as number;
  return { median, mean, p90 };
}

/** The summary of a run's rows. Unreachable and refused origins count in `unreachable`, not in the score statistics. */
export function summarise(
  rows: readonly Pick<TrustRecord, "reachable" | "score" | "verdict" | "penalties">[],
  originsInCatalogue: number | null,
  sources: Record<string, string>,
) {
  const scored = rows.filter((r) => r.reachable);
  const verdicts: Record<Verdict, number> = { pay: 0, pay_with_caution: 0, avoid: 0 };
  // Penalty id to count.
  const penalties: Partial<Record<PenaltyId, number>> = {};
  for (const row of rows) {
    verdicts[row.verdict]++;
    for (const id of row.penalties) penalties[id] = (penalties[id] ?? 0) + 1;
  }
  const unreachable = rows.length - scored.length;
  return {
    origins_in_catalogue: originsInCatalogue,
    origins_total: rows.length,
    origins_scored: scored.length,
    unreachable,
    verdicts,
    score_stats: { ...scoreStats(scored.map((r) => r.score)), unreachable },
    penalties,
    sources,
  };
}

/** What a finished run knows about itself (stored with the run). */
export type RunSummary = ReturnType<typeof summarise>;

/** Close a run as done with its summary. */
export async function finishRun(store: Queryable, runId: number, summary: RunSummary, finishedAt: Date): Promise<void> {
  await store.query("update trust_runs set status = 'done', finished_at = $2, summary = $3 where id = $1", [
    runId,
    finishedAt.toISOString(),
    JSON.stringify(summary),
  ]);
}

/** Close a run as failed (its rows stay in the history, but it never becomes the leaderboard). */
export async function failRun(store: Queryable, runId: number, error: string, finishedAt: Date): Promise<void> {
  await store.query("update trust_runs set status = 'failed', finished_at = $2, error = $3 where id = $1", [
    runId,
    finishedAt.toISOString(),
    error.slice(0, 500),
  ]);
}

/** When the newest run (any status) started, or null. */
export async function lastRunStart(store: Queryable): Promise<Date | null> {
  const [row] = await store.query<{ started_at: unknown }>("select started_at from trust_runs order by started_at desc limit 1");
  return row ? new Date(iso(row.started_at)) : null;
}

/** The latest completed run, or null. */
export async function latestRun(store: Queryable): Promise<RunInfo | null> {
  const [row] = await store.query<{
    id: string | number;
    started_at: unknown;
    finished_at: unknown;
    trigger: string;
    rules_version: number;
    summary: unknown;
  }>("select id, started_at, finished_at, trigger, rules_version, summary from trust_runs where status = 'done' order by id desc limit 1");
  if (!row) return null;
  return {
    id: Number(row.id),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    trigger: row.trigger,
    rules_version: Number(row.rules_version),
    summary: json<RunSummary>(row.summary),
  };
}

/** 503 before the first crawl has completed (never charged). */
export class NoLeaderboardError extends UpstreamError {
  override name = "NoLeaderboardError";
  constructor() {
    super(
      "unavailable",
      "leaderboard",
      "No trust crawl has completed yet, so there is no leaderboard; you were not charged. It appears after the first crawl (npm run crawl, or CRAWL_INTERVAL_MINUTES).",
      { retryAfterSeconds: 300 },
    );
  }
}

/**
 * The settings of the document that are not in the store: who provides it, the leaderboard's
 * routes, and whether the trust runs verify sellers by purchase, within what budget.
 */
export function documentContext(
  config: Pick<FunctionConfig, "version" | "publicUrl">,
  purchases?: { enabled: boolean; budget: PurchaseBudget } | undefined,
) {
  return {
    provider: `x402-chain-data-service ${config.version}${config.publicUrl ? ` (${config.publicUrl})` : ""}`,
    endpoints: trustRoutes.map((r) => ({ route: `${r.method} ${r.path}`, price_usd: r.price ?? 0 })),
    purchases: purchases?.enabled ? { enabled: true, budget: purchases.budget } : { enabled: false, budget: null },
  };
}

/** Settings of the document that are not in the store. */
export type DocumentContext = ReturnType<typeof documentContext>;

/** What "verified by purchase" means, for the document and the page. */
export const VERIFIED_BY_PURCHASE =
  "A trust run may buy once from each seller judged payable, with the default x402 client, from the operator's own buyer wallet, " +
  "within an operator-set budget (per origin per run, per run in total, and only sellers quoting at most a price cap), and records what it got: " +
  Object.entries(PURCHASE_OUTCOME_MEANINGS)
    .map(([k, v]) => `${k} (${v})`)
    .join("; ") +
  ". A seller that took payment without serving, settled twice or refused a signed payment is avoid whatever else it scores. " +
  "Purchases are the operator's own spending, recorded apart from income; a caller's request never buys anything.";

/** When an origin was last verified by purchase, and what the purchase got. */
export type PurchaseVerification = NonNullable<TrustRowSchema["last_verified_by_purchase"]>;

/** The latest purchase of each of `origins`, by origin (origins never bought from are absent). */
export async function lastVerifiedByPurchase(store: Queryable, origins: readonly string[]): Promise<Map<string, PurchaseVerification>> {
  const found = await lastPurchases(store, origins);
  return new Map(
    [...found].map(([origin, p]) => [
      origin,
      { at: p.created_at, outcome: p.outcome as PurchaseOutcome, charged_usd: Number(p.charged_atomic) / 1e6, detail: p.detail },
    ]),
  );
}

/** A trust row as the database returns it: JSON unparsed, numerics as text, no verdict columns on rows of the first rules. */
type RowRecord = Omit<TrustRecord, "penalties" | "checks" | "conformant" | "discoverable" | "price_usd" | "reputation" | "probed_at"> & {
  penalties: unknown;
  checks: unknown;
  conformant: boolean | null;
  discoverable: boolean | null;
  price_usd: string | null;
  reputation: unknown;
  probed_at: unknown;
  rank: string | number;
  previous_score: number | null;
};

function toRow(r: RowRecord): Omit<TrustRowSchema, "last_verified_by_purchase"> {
  // Checks as the row's own rules version named them: rows of earlier runs keep their names.
  const checks = json<Record<string, boolean>>(r.checks);
  const failed = Object.keys(checks).filter((name) => !checks[name]);
  return {
    rank: Number(r.rank),
    origin: r.origin,
    endpoint: r.endpoint,
    method: r.method,
    endpoints: r.endpoints,
    score: r.score,
    verdict: r.verdict,
    previous_score: r.previous_score,
    reachable: r.reachable,
    status: r.status,
    payable: r.payable,
    conformant: r.conformant ?? isConformant(checks),
    discoverable: r.discoverable ?? isDiscoverable(checks),
    failed_checks: failed,
    penalties: penaltyTexts(json<PenaltyId[]>(r.penalties)),
    price_usd: r.price_usd === null ? null : Number(r.price_usd),
    pay_to: r.pay_to,
    network: r.network,
    x402_version: r.x402_version,
    reputation: json<Reputation>(r.reputation),
    latency_ms: r.latency_ms,
    probed_at: iso(r.probed_at),
  };
}

/** Row filters and order of the paid leaderboard: the POST body, its limit and order resolved. */
type RowQuery = Omit<RouteInput<typeof postTrustLeaderboard>, "limit" | "order"> & { limit: number; order: "best" | "worst" };

async function readRows(store: Queryable, runId: number, q: RowQuery): Promise<{ matching: number; rows: TrustRowSchema[] }> {
  const [previous] = await store.query<{ id: string | number }>(
    "select id from trust_runs where status = 'done' and id < $1 order by id desc limit 1",
    [runId],
  );
  const filters = "(cast($2 as text) is null or ranked.verdict = $2) and ranked.score >= $3";
  const params = [runId, q.verdict ?? null, q.min_score ?? 0];
  const [count] = await store.query<{ n: number }>(
    `select cast(count(*) as integer) as n from (select verdict, score from trust_rows where run_id = $1) ranked where ${filters}`,
    params,
  );
  const rows = await store.query<RowRecord>(
    `with ranked as (
       select r.*, row_number() over (order by r.score desc, r.origin asc) as rank from trust_rows r where r.run_id = $1
     )
     select ranked.origin, ranked.endpoint, ranked.method, ranked.endpoints, ranked.reachable, ranked.status, ranked.score, ranked.verdict,
            ranked.penalties, ranked.checks, ranked.payable, ranked.conformant, ranked.discoverable, cast(ranked.price_usd as text) as price_usd, ranked.pay_to, ranked.network, ranked.x402_version,
            ranked.reputation, ranked.latency_ms, ranked.probed_at, ranked.rank, p.score as previous_score
     from ranked left join trust_rows p on p.run_id = $4 and p.origin = ranked.origin
     where ${filters}
     order by ranked.rank ${q.order === "best" ? "asc" : "desc"}
     limit $5`,
    [...params, previous ? Number(previous.id) : null, q.limit],
  );
  const verified = await lastVerifiedByPurchase(
    store,
    rows.map((r) => r.origin),
  );
  return { matching: count?.n ?? 0, rows: rows.map((r) => ({ ...toRow(r), last_verified_by_purchase: verified.get(r.origin) ?? null })) };
}

/** The leaderboard document for `run`. */
export async function leaderboardDocument(store: Queryable, run: RunInfo, context: DocumentContext): Promise<TrustLeaderboardDocument> {
  const top = await readRows(store, run.id, { limit: 10, order: "best" });
  const s = run.summary;
  const common = Object.entries(s.penalties)
    .sort(([a, x], [b, y]) => (y as number) - (x as number) || (a < b ? -1 : 1))
    .map(([id, n]) => [PENALTIES[id as PenaltyId].text, n as number] as const);
  return {
    provider: context.provider,
    what_it_is: describeScoring(),
    // The price of the paid leaderboard (GET /api/trust-leaderboard).
    price_usdc_per_call: getTrustLeaderboard.price,
    endpoints: context.endpoints,
    freshness: run.finished_at,
    coverage: {
      origins_in_catalogue: s.origins_in_catalogue,
      origins_scored: s.origins_scored,
      origins_total: s.origins_total,
      // Rebuilt in a fixed order: jsonb does not keep the order keys were written in.
      verdicts: { pay: s.verdicts.pay, pay_with_caution: s.verdicts.pay_with_caution, avoid: s.verdicts.avoid },
    },
    score_stats: { median: s.score_stats.median, mean: s.score_stats.mean, p90: s.score_stats.p90, unreachable: s.score_stats.unreachable },
    common_penalties: Object.fromEntries(common),
    free_preview_top_10: top.rows.map((r) => ({ origin: r.origin, score: r.score, verdict: r.verdict, endpoints: r.endpoints })),
    not_checked: [...NOT_CHECKED],
    caveat: CAVEAT,
    verified_by_purchase: {
      what_it_means: VERIFIED_BY_PURCHASE,
      enabled: context.purchases.enabled,
      budget: context.purchases.budget,
    },
  };
}

/** The paid leaderboard: the document, the run and the requested rows. */
export async function fullLeaderboard(store: Store, context: DocumentContext, q: RowQuery): Promise<TrustLeaderboardFull> {
  const run = await latestRun(store);
  if (!run) throw new NoLeaderboardError();
  const [document, rows, [runs]] = await Promise.all([
    leaderboardDocument(store, run, context),
    readRows(store, run.id, q),
    store.query<{ n: number }>("select cast(count(*) as integer) as n from trust_runs where status = 'done'"),
  ]);
  const { summary, ...info } = run;
  return {
    ...document,
    run: {
      ...info,
      sources: Object.fromEntries(Object.entries(summary.sources).sort(([a], [b]) => (a < b ? -1 : 1))),
      runs_total: runs?.n ?? 0,
    },
    order: q.order,
    limit: q.limit,
    rows_matching: rows.matching,
    rows: rows.rows,
  };
}

/** The free preview: the document of the latest completed run. */
export async function previewLeaderboard(store: Store, context: DocumentContext): Promise<TrustLeaderboardDocument> {
  const run = await latestRun(store);
  if (!run) throw new NoLeaderboardError();
  return leaderboardDocument(store, run, context);
}

/** An origin's place in the latest leaderboard, or null. */
export async function originStanding(store: Queryable, origin: string) {
  const run = await latestRun(store);
  if (!run) return null;
  const [row] = await store.query<{ rank: string | number; score: number; verdict: Verdict }>(
    `select rank, score, verdict from (
       select origin, score, verdict, row_number() over (order by score desc, origin asc) as rank from trust_rows where run_id = $1
     ) ranked where origin = $2`,
    [run.id, origin],
  );
  return row ? { run_id: run.id, freshness: run.finished_at, rank: Number(row.rank), score: row.score, verdict: row.verdict } : null;
}

/** An origin's crawl rows in completed runs, newest first. */
export async function originHistory(store: Queryable, origin: string, limit = 20) {
  const rows = await store.query<{ run_id: string | number; rules_version: number; probed_at: unknown; score: number; verdict: Verdict }>(
    `select r.run_id, t.rules_version, r.probed_at, r.score, r.verdict from trust_rows r join trust_runs t on t.id = r.run_id
     where r.origin = $1 and t.status = 'done' order by r.run_id desc limit $2`,
    [origin, limit],
  );
  return rows.map((r) => ({
    run_id: Number(r.run_id),
    rules_version: Number(r.rules_version),
    probed_at: iso(r.probed_at),
    score: r.score,
    verdict: r.verdict,
  }));
}

/** Scores of the origins a run reached, counted in ten bins of ten points (0-9, 10-19, …, 90-100). */
export async function scoreDistribution(store: Queryable, runId: number): Promise<number[]> {
  const rows = await store.query<{ bin: number; n: number }>(
    "select cast(least(score / 10, 9) as integer) as bin, cast(count(*) as integer) as n from trust_rows where run_id = $1 and reachable group by 1",
    [runId],
  );
  const bins = Array<number>(10).fill(0);
  for (const row of rows) bins[row.bin] = row.n;
  return bins;
}

/**
 * The scores of `origins` in the last `runs` completed runs up to `runId`, oldest first, one
 * entry per run (null where the origin was not in that run): what its sparkline draws.
 */
export async function scoreHistories(
  store: Queryable,
  runId: number,
  origins: readonly string[],
  runs = 20,
): Promise<Map<string, (number | null)[]>> {
  const recent = await store.query<{ id: string | number }>(
    "select id from trust_runs where status = 'done' and id <= $1 order by id desc limit $2",
    [runId, runs],
  );
  const ids = recent.map((r) => Number(r.id)).reverse();
  const rows = await store.query<{ origin: string; run_id: string | number; score: number }>(
    `select origin, run_id, score from trust_rows where ${inArray(store, "run_id", "$1", "bigint")} and ${inArray(store, "origin", "$2", "text")}`,
    [ids, origins],
  );
  const histories = new Map(origins.map((o) => [o, ids.map(() => null as number | null)]));
  for (const row of rows) {
    const history = histories.get(row.origin);
    if (history) history[ids.indexOf(Number(row.run_id))] = row.score;
  }
  return histories;
}
