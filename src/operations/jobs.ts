/**
 * Scheduled jobs that run once per period across every instance sharing the store. A run is
 * claimed with one statement on the `jobs` row: the claim succeeds only when the job is due
 * and no live lease holds it, and it moves the due time a whole interval ahead at once. Two
 * instances ticking together, or one restarting at the due time, therefore start one run per
 * period, and a run longer than its interval is never started again beside itself: its lease
 * is renewed while it runs and expires only when its instance dies.
 *
 * A session advisory lock was the other way: it belongs to one pooled connection, guards only
 * while held, and says nothing about the run that finished a second ago, so a due time would
 * be needed anyway. The claim works the same on the embedded SQLite database, where every instance is in-process.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../log.ts";
import { nowPlus } from "../store/dialect.ts";
import type { Queryable, Store } from "../store/store.ts";

/** The jobs the service schedules. */
export type JobName = "trust_crawl" | "ledger_upkeep" | "status";

/** Every job, in the order the status feed lists them, with its readable name. */
export const JOB_NAMES: Readonly<Record<JobName, string>> = {
  trust_crawl: "Trust crawl",
  ledger_upkeep: "Ledger upkeep",
  status: "Status generator",
};

/** One scheduled job. */
export interface JobDefinition {
  name: JobName;
  intervalMs: number;
  /** One run; resolves with a short detail for the record, throws when the run failed. `signal` aborts on stop. */
  run(signal: AbortSignal): Promise<string | undefined>;
  /** The earliest time the job may run again for a reason outside the schedule (a crawl run by hand). */
  notBefore?(): Promise<Date | null>;
  /** Run once when the instance starts, due or not (the status document must count the new instance). */
  runAtStart?: boolean;
}

/** How a claimed run was started. */
export type JobTrigger = "schedule" | "start" | "manual";

/** The newest recorded run of a job. */
export interface JobRunRecord {
  job: JobName;
  instance: string;
  trigger: JobTrigger;
  started_at: string;
  finished_at: string | null;
  outcome: "running" | "ok" | "failed" | "interrupted";
  detail: string | null;
}

/** Options of {@link startJobs}. */
export interface JobsOptions {
  store: Store;
  /** This instance's id: the lease holder and the `instance` of its runs. */
  instance: string;
  log: Logger;
  jobs: readonly JobDefinition[];
  /** How often each job's due time is checked; default 5 s. */
  tickMs?: number;
  /** A running job's lease, renewed every third of it; default 60 s. */
  leaseMs?: number;
}

/** Running schedules. */
export interface JobScheduler {
  /**
   * Run `name` now on this instance, due or not (the status document at start, tests), once no
   * other instance holds it; the next scheduled run is then a whole interval away.
   */
  runNow(name: JobName, trigger?: JobTrigger): Promise<JobRunRecord>;
  /** Stop scheduling, abort running jobs and wait for them to end. */
  stop(): Promise<void>;
}

const seconds = (ms: number) => ms / 1000;

/**
 * Claim `job` for `holder`: due (or `force`) and not held by a live lease. One statement, so
 * two claims at once cannot both succeed; the due time moves an interval ahead with the claim.
 */
async function claim(db: Queryable, job: JobDefinition, holder: string, leaseMs: number, force: boolean): Promise<Date | null> {
  const rows = await db.query<{ claimed_at: Date }>(
    `insert into jobs (name, due_at, holder, lease_until)
       values ($1, ${nowPlus(db, "$2")}, $3, ${nowPlus(db, "$4")})
     on conflict (name) do update set due_at = excluded.due_at, holder = excluded.holder, lease_until = excluded.lease_until
       where ($5 or jobs.due_at <= now()) and (jobs.lease_until is null or jobs.lease_until <= now())
     returning now() as claimed_at`,
    [job.name, seconds(job.intervalMs), holder, seconds(leaseMs), force],
  );
  return rows[0] ? new Date(rows[0].claimed_at) : null;
}

/** A recorded run with its times as ISO strings. */
function runRecord(r: JobRunRecord & { started_at: Date | string; finished_at: Date | string | null }): JobRunRecord {
  return {
    ...r,
    started_at: new Date(r.started_at).toISOString(),
    finished_at: r.finished_at ? new Date(r.finished_at).toISOString() : null,
  };
}

/** The newest run of each job, or with `finished` the newest finished one (a running one is not an outcome yet). */
export async function latestJobRuns(db: Queryable, finished = false): Promise<Map<JobName, JobRunRecord>> {
  const rows = await db.query<JobRunRecord & { started_at: Date; finished_at: Date | null }>(
    `select job, instance, trigger, started_at, finished_at, outcome, detail
       from job_runs where id in (select max(id) from job_runs${finished ? " where outcome <> 'running'" : ""} group by job) order by job`,
  );
  return new Map(rows.map((r) => [r.job, runRecord(r)]));
}

/** Start checking every job's due time; returns the scheduler. */
export function startJobs(options: JobsOptions): JobScheduler {
  const { store, instance, log } = options;
  const tickMs = options.tickMs ?? 5_000;
  const leaseMs = options.leaseMs ?? 60_000;
  const stop = new AbortController();
  const running = new Map<JobName, Promise<JobRunRecord>>();
  /** Each job's schedule loop (`schedule` below), ended by the stop. */
  const loops: Promise<void>[] = [];

  // The claimed run: recorded, its lease renewed while it runs, then released with the outcome.
  const execute = async (job: JobDefinition, trigger: JobTrigger, claimedAt: Date): Promise<JobRunRecord> => {
    // Holding the lease, no other instance runs this job: a run still marked running died with its instance.
    await store.query(
      "update job_runs set outcome = 'interrupted', finished_at = now(), detail = 'its instance stopped before the run ended' where job = $1 and outcome = 'running'",
      [job.name],
    );
    const [row] = await store.query<{ id: string }>(
      // Started at the claim's time, the clock the due times are kept on.
      "insert into job_runs (job, instance, trigger, started_at, outcome) values ($1, $2, $3, $4, 'running') returning id",
      [job.name, instance, trigger, claimedAt],
    );
    const renew = setInterval(() => {
      store
        .query(`update jobs set lease_until = ${nowPlus(store, "$3")} where name = $1 and holder = $2`, [
          job.name,
          instance,
          seconds(leaseMs),
        ])
        .catch((error: unknown) => log.warn("job lease renewal failed", { job: job.name, error: error as Error }));
    }, leaseMs / 3);
    renew.unref();
    let outcome: "ok" | "failed" = "ok";
    let detail: string | null = null;
    try {
      detail = (await job.run(stop.signal)) ?? null;
    } catch (error) {
      outcome = "failed";
      detail = error instanceof Error ? error.message : String(error);
      log.warn("scheduled job failed", { job: job.name, error: detail });
    } finally {
      clearInterval(renew);
    }
    const [done] = await store.query<JobRunRecord & { started_at: Date; finished_at: Date }>(
      `update job_runs set outcome = $2, detail = $3, finished_at = now() where id = $1
       returning job, instance, trigger, started_at, finished_at, outcome, detail`,
      [row?.id, outcome, detail],
    );
    await store.query("update jobs set holder = null, lease_until = null where name = $1 and holder = $2", [job.name, instance]);
    if (!done) throw new Error(`the run of ${job.name} was not recorded`);
    return runRecord(done);
  };

  const runOnce = (job: JobDefinition, trigger: JobTrigger, claimedAt: Date): Promise<JobRunRecord> => {
    const run = execute(job, trigger, claimedAt).finally(() => running.delete(job.name));
    running.set(job.name, run);
    return run;
  };

  const tick = async (job: JobDefinition) => {
    if (stop.signal.aborted || running.has(job.name)) return;
    try {
      const notBefore = await job.notBefore?.();
      if (notBefore)
        await store.query(
          "insert into jobs (name, due_at) values ($1, $2) on conflict (name) do update set due_at = excluded.due_at where jobs.due_at < excluded.due_at",
          [job.name, notBefore],
        );
      const claimedAt = await claim(store, job, instance, leaseMs, false);
      if (claimedAt) await runOnce(job, "schedule", claimedAt);
    } catch (error) {
      log.warn("job schedule check failed; will retry", { job: job.name, error: error as Error });
    }
  };

  const scheduler: JobScheduler = {
    async runNow(name, trigger = "manual") {
      const job = options.jobs.find((j) => j.name === name);
      if (!job) throw new Error(`no job ${name} is scheduled here`);
      for (;;) {
        if (stop.signal.aborted) throw new Error("the scheduler is stopped");
        const mine = running.get(name);
        if (mine) await mine.catch(() => {});
        else {
          const claimedAt = await claim(store, job, instance, leaseMs, true);
          if (claimedAt) return runOnce(job, trigger, claimedAt);
          await sleep(Math.min(250, tickMs));
        }
      }
    },
    async stop() {
      stop.abort();
      // Each job's checks end first: one under way may still claim its job and run it, which must not outlive the stop.
      await Promise.allSettled(loops);
      await Promise.allSettled([...running.values()]);
    },
  };

  /** Check `job` `tickMs` after each check has ended (the first check: a run now, for a job that runs at start), until stopped. */
  const schedule = async (job: JobDefinition) => {
    if (job.runAtStart)
      await scheduler.runNow(job.name, "start").catch((error: unknown) => {
        if (!stop.signal.aborted) log.warn("job start run failed", { job: job.name, error: error as Error });
      });
    else await tick(job);
    while (!stop.signal.aborted) {
      await sleep(tickMs, undefined, { signal: stop.signal, ref: false }).catch(() => {});
      await tick(job);
    }
  };
  loops.push(...options.jobs.map(schedule));

  return scheduler;
}
