/**
 * The status document: what one instance finds when it probes the service's parts, stored as
 * the exact bytes every instance then serves (`GET /api/status.json`), with each group's status
 * kept for the 24-hour history the `/status` page draws.
 *
 * Groups: `api` from the heartbeats (src/operations/instances.ts), `chain` one probe per RPC
 * URL, `payments` the facilitator and the last hour of the ledger, `upstreams` one light call
 * per third-party API, `jobs` the newest run of each scheduled job (src/operations/jobs.ts).
 */
import { createHash } from "node:crypto";
import type { FacilitatorClient } from "@x402/core/server";
import { createPublicClient, http } from "viem";
import type { HealthStatus, StatusCheck, StatusDocument, StatusGroup, StatusGroupId } from "../../spec/routes/status.ts";
import { urlsCutToOrigin } from "../log.ts";
import { nowPlus } from "../store/dialect.ts";
import type { Queryable, Store } from "../store/store.ts";
import { withBudget } from "../time-budget.ts";
import { countedInstances } from "./instances.ts";
import { JOB_NAMES, type JobName, latestJobRuns } from "./jobs.ts";

/** How often the document is generated. */
export const STATUS_INTERVAL_SECONDS = 540;
/** How long generated documents are kept (the page draws the last 24 hours). */
const KEEP_HOURS = 48;
/** Time allowed to each probe. */
export const PROBE_TIMEOUT_MS = 5_000;
/** An RPC node this many blocks behind the best one is degraded. */
const MAX_LAG_BLOCKS = 10;

/** One RPC node to probe; `label` is what the public document names it (never the URL, which may hold a key). */
export interface RpcProbe {
  label: string;
  url: string;
}

/** One third-party API and the light call that shows it answers. */
export interface UpstreamProbe {
  name: string;
  /** Resolves when the API answered as expected; throws otherwise (the message becomes the detail). */
  probe(signal: AbortSignal): Promise<void>;
}

/** A scheduled job as the feed reports it; `intervalMs` null when it is not scheduled here. */
export interface JobSchedule {
  name: JobName;
  intervalMs: number | null;
  /** Why it is not scheduled, for the detail. */
  disabledReason?: string;
}

/** Everything a generation probes. */
export interface StatusSources {
  store: Store;
  /** The generating instance. */
  instance: string;
  rpc: readonly RpcProbe[];
  facilitator: FacilitatorClient;
  network: string;
  upstreams: readonly UpstreamProbe[];
  jobs: readonly JobSchedule[];
}

/** The short public name of an instance: its id hashed (ids hold host names and pids). */
export function instanceLabel(id: string): string {
  return `instance ${createHash("sha256").update(id).digest("hex").slice(0, 8)}`;
}

/** "just now", "42 s ago", "3 min ago", "5 h ago". */
function age(from: Date | string, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - new Date(from).getTime()) / 1000));
  if (s < 2) return "just now";
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

const iso = (d: Date | string) => new Date(d).toISOString().replace(/\.\d{3}Z$/, "Z");

/** All operational: operational; all down (or none at all): down; otherwise degraded. */
function combine(statuses: readonly HealthStatus[]): HealthStatus {
  if (statuses.length === 0 || statuses.every((s) => s === "down")) return "down";
  return statuses.every((s) => s === "operational") ? "operational" : "degraded";
}

function group(id: StatusGroupId, name: string, checks: StatusCheck[], status = combine(checks.map((c) => c.status))): StatusGroup {
  return { id, name, status, workers: { total: checks.length, healthy: checks.filter((c) => c.status === "operational").length }, checks };
}

/** The longest error text a public check shows. */
const MAX_ERROR_TEXT = 300;

/** An error's text as the public document may show it: every URL cut to its origin, on one line and bounded. */
export function publicErrorText(text: string): string {
  const line = urlsCutToOrigin(text).replace(/\s+/g, " ").trim();
  return line.length > MAX_ERROR_TEXT ? `${line.slice(0, MAX_ERROR_TEXT - 1)}…` : line;
}

/** Time a probe under a budget; the outcome and how long it took (a failure's text fit for the public document). */
async function timed(
  probe: (signal: AbortSignal) => Promise<unknown>,
): Promise<{ ok: true; value: unknown; ms: number } | { ok: false; error: string; ms: number }> {
  const started = performance.now();
  const controller = new AbortController();
  try {
    const value = await withBudget(probe(controller.signal), PROBE_TIMEOUT_MS, () => {
      controller.abort();
      throw new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`);
    });
    return { ok: true, value, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    return { ok: false, error: publicErrorText(text), ms: Math.round(performance.now() - started) };
  }
}

/** The API group: one check per instance counted, from their heartbeats. */
export async function apiGroup(db: Queryable, now: Date): Promise<StatusGroup> {
  const instances = await countedInstances(db);
  const checks = instances.map<StatusCheck>((i) => {
    // The rule each instance applies to itself (src/operations/instances.ts): of two live processes
    // settling with one key, the older one stops settling.
    const takenBy = i.settlement_address
      ? instances.find(
          (o) => o.healthy && o.settlement_address === i.settlement_address && o.process !== i.process && o.started_at > i.started_at,
        )
      : undefined;
    const base = `version ${i.version}, started ${iso(i.started_at)}, last heartbeat ${age(i.last_seen, now)}${i.healthy ? "" : " (silent for more than 90 s)"}`;
    if (i.healthy && takenBy) {
      return {
        name: instanceLabel(i.id),
        status: "degraded",
        detail: `${base}; stopped settling: ${instanceLabel(takenBy.id)} settles with the same key since this one was paused`,
      };
    }
    return { name: instanceLabel(i.id), status: i.healthy ? "operational" : "down", detail: base };
  });
  return group("api", "API instances", checks);
}

async function chainGroup(rpc: readonly RpcProbe[]): Promise<StatusGroup> {
  const probes = await Promise.all(
    rpc.map(async (node) => {
      const client = createPublicClient({ transport: http(node.url, { timeout: PROBE_TIMEOUT_MS, retryCount: 0 }) });
      return { node, result: await timed(() => client.getBlockNumber({ cacheTime: 0 })) };
    }),
  );
  const best = probes.reduce((max, p) => (p.result.ok ? Math.max(max, Number(p.result.value)) : max), -1);
  const checks = probes.map<StatusCheck>(({ node, result }) => {
    if (!result.ok) return { name: node.label, status: "down", detail: `unreachable: ${result.error}`, latency_ms: result.ms };
    const block = Number(result.value);
    const lag = best - block;
    return {
      name: node.label,
      status: lag > MAX_LAG_BLOCKS ? "degraded" : "operational",
      detail: `latest block ${block}, ${lag} behind the best node`,
      latency_ms: result.ms,
    };
  });
  return group("chain", "Chain (RPC nodes)", checks);
}

async function paymentsGroup(sources: StatusSources): Promise<StatusGroup> {
  const supported = await timed(() => sources.facilitator.getSupported());
  let facilitator: StatusCheck;
  if (!supported.ok)
    facilitator = { name: "facilitator", status: "down", detail: `unreachable: ${supported.error}`, latency_ms: supported.ms };
  else {
    const kinds = (supported.value as { kinds?: { scheme: string; network: string }[] }).kinds ?? [];
    const exact = kinds.some((k) => k.scheme === "exact" && k.network === sources.network);
    facilitator = {
      name: "facilitator",
      status: exact ? "operational" : "down",
      detail: exact ? `reachable, supports exact on ${sources.network}` : `reachable, but does not support exact on ${sources.network}`,
      latency_ms: supported.ms,
    };
  }
  const [counts] = await sources.store.query<{ settled: number; failed: number; open: number }>(
    `select cast(count(*) filter (where outcome = 'settled') as integer) as settled,
            cast(count(*) filter (where outcome in ('settlement_failed', 'settlement_unknown')) as integer) as failed,
            cast(count(*) filter (where outcome = 'pending' and created_at < ${nowPlus(sources.store, "-300")}) as integer) as open
       from ledger where created_at > ${nowPlus(sources.store, "-3600")}`,
  );
  const { settled = 0, failed = 0, open = 0 } = counts ?? {};
  const attempts = settled + failed;
  const failedShare = attempts === 0 ? 0 : failed / attempts;
  const settlements: StatusCheck = {
    name: "settlements (last hour)",
    status: failedShare > 0.5 ? "down" : failedShare > 0.1 || open > 0 ? "degraded" : "operational",
    detail: `${settled} settled, ${failed} failed or unknown${open > 0 ? `, ${open} pending for more than 5 minutes` : ""}`,
  };
  // Workers are the facilitators; the ledger check colours the group without being one.
  const status = combine([facilitator.status, settlements.status === "down" ? "degraded" : settlements.status]);
  return {
    id: "payments",
    name: "Payments",
    status,
    workers: { total: 1, healthy: facilitator.status === "operational" ? 1 : 0 },
    checks: [facilitator, settlements],
  };
}

async function upstreamsGroup(upstreams: readonly UpstreamProbe[], lastSuccess: Record<string, string>, now: Date): Promise<StatusGroup> {
  const results = await Promise.all(upstreams.map(async (u) => ({ u, result: await timed((signal) => u.probe(signal)) })));
  const checks = results.map<StatusCheck>(({ u, result }) => {
    if (result.ok) lastSuccess[u.name] = now.toISOString();
    const last = lastSuccess[u.name];
    const since = last ? `last success ${iso(last)} (${age(last, now)})` : "no success recorded";
    return result.ok
      ? { name: u.name, status: "operational", detail: `answered; ${since}`, latency_ms: result.ms }
      : { name: u.name, status: "down", detail: `failed: ${result.error}; ${since}`, latency_ms: result.ms };
  });
  return group("upstreams", "Upstream data APIs", checks);
}

async function jobsGroup(db: Queryable, jobs: readonly JobSchedule[], instance: string, now: Date): Promise<StatusGroup> {
  const finished = await latestJobRuns(db, true);
  const latest = await latestJobRuns(db);
  const checks: StatusCheck[] = [];
  for (const job of jobs) {
    const name = JOB_NAMES[job.name];
    if (job.intervalMs === null) {
      checks.push({ name, status: "operational", detail: `not scheduled: ${job.disabledReason ?? "disabled"}` });
      continue;
    }
    const every = `every ${Math.round(job.intervalMs / 1000)} s`;
    const last = finished.get(job.name);
    const current = latest.get(job.name);
    const runningNow = current?.outcome === "running" ? current : undefined;
    const running = runningNow
      ? job.name === "status" && runningNow.instance === instance
        ? `; this document is its current run on ${instanceLabel(instance)}`
        : `; running since ${iso(runningNow.started_at)} on ${instanceLabel(runningNow.instance)}`
      : "";
    if (!last) {
      checks.push({ name, status: "operational", detail: `${every}; no finished run yet${running}` });
      continue;
    }
    const lastStart = new Date(last.started_at).getTime();
    // Late when neither a run started within two intervals (and a minute of slack) nor one is running.
    const overdue = !runningNow && now.getTime() - lastStart > 2 * job.intervalMs + 60_000;
    // A failed run's detail is its error's message, which may name a URL of the configuration.
    const outcome = last.outcome === "ok" ? "ok" : `${last.outcome}${last.detail ? ` (${publicErrorText(last.detail)})` : ""}`;
    checks.push({
      name,
      status: last.outcome === "ok" && !overdue ? "operational" : "degraded",
      detail: `${every}; last run ${iso(last.started_at)} (${age(last.started_at, now)}) on ${instanceLabel(last.instance)}: ${outcome}${overdue ? "; overdue" : ""}${running}`,
    });
  }
  return group("jobs", "Scheduled jobs", checks);
}

/** The service as a whole: down when instances, chain or payments are down (nothing can be sold), else the worst group. */
function overallOf(groups: readonly StatusGroup[]): HealthStatus {
  if (groups.some((g) => ["api", "chain", "payments"].includes(g.id) && g.status === "down")) return "down";
  return groups.every((g) => g.status === "operational") ? "operational" : "degraded";
}

/** Probe everything and store the document; returns it. */
export async function generateStatus(sources: StatusSources): Promise<StatusDocument> {
  const now = new Date();
  const [previous] = await sources.store.query<{ last_success: Record<string, string> }>(
    "select last_success from status_documents order by generated_at desc, id desc limit 1",
  );
  const lastSuccess = { ...(previous?.last_success ?? {}) };
  const [api, chain, payments, upstreams, jobs] = await Promise.all([
    apiGroup(sources.store, now),
    chainGroup(sources.rpc),
    paymentsGroup(sources),
    upstreamsGroup(sources.upstreams, lastSuccess, now),
    jobsGroup(sources.store, sources.jobs, sources.instance, now),
  ]);
  const groups = [api, chain, payments, upstreams, jobs];
  const doc: StatusDocument = {
    generated_at: now.toISOString(),
    next_update_at: new Date(now.getTime() + STATUS_INTERVAL_SECONDS * 1000).toISOString(),
    interval_seconds: STATUS_INTERVAL_SECONDS,
    overall: overallOf(groups),
    groups,
  };
  const statuses = Object.fromEntries(groups.map((g) => [g.id, g.status]));
  await sources.store.query(
    "insert into status_documents (generated_at, instance, body, groups, last_success) values ($1, $2, $3, $4, $5)",
    [now, sources.instance, JSON.stringify(doc), JSON.stringify({ ...statuses, overall: doc.overall }), JSON.stringify(lastSuccess)],
  );
  await sources.store.query(`delete from status_documents where generated_at < ${nowPlus(sources.store, "-3600.0 * $1")}`, [KEEP_HOURS]);
  return doc;
}

/** The newest stored document, exactly as stored, or null before the first generation. */
export async function latestStatusBody(db: Queryable): Promise<string | null> {
  const [row] = await db.query<{ body: string }>("select body from status_documents order by generated_at desc, id desc limit 1");
  return row?.body ?? null;
}

/** One generation's group statuses, for the history. */
export interface StatusPoint {
  at: Date;
  statuses: Partial<Record<StatusGroupId | "overall", HealthStatus>>;
}

/** The group statuses of every document generated since `since`, oldest first. */
export async function statusHistory(db: Queryable, since: Date): Promise<StatusPoint[]> {
  const rows = await db.query<{ generated_at: Date; groups: StatusPoint["statuses"] }>(
    "select generated_at, groups from status_documents where generated_at >= $1 order by generated_at, id",
    [since],
  );
  return rows.map((r) => ({ at: new Date(r.generated_at), statuses: r.groups }));
}
