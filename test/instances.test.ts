/**
 * Several instances on one store: scheduled jobs start once per period across instances (also
 * when one restarts at the due time, and when a run lasts longer than its interval), every
 * instance keeps a heartbeat, and a second process settling with the same key is refused at
 * start while a dead one's heartbeat is no obstacle.
 */

import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createLogger } from "../src/log.ts";
import { SettlementKeyInUseError } from "../src/operations/instances.ts";
import { type JobDefinition, type JobName, startJobs } from "../src/operations/jobs.ts";
import type { RunningService } from "../src/server/service.ts";
import { nowPlus } from "../src/store/dialect.ts";
import type { Store } from "../src/store/store.ts";
import { operationsConfig, startDirectoryStub } from "./support/operations.ts";
import { freshPostgresStore } from "./support/postgres.ts";
import { devnet, freshSqliteStore, startTestService } from "./support/service.ts";
import type { Stub } from "./support/stub-server.ts";

const quiet = createLogger("silent");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RunRow {
  job: JobName;
  instance: string;
  trigger: string;
  started_at: Date;
  finished_at: Date | null;
  outcome: string;
}

const runsOf = (store: Store, job: JobName) =>
  store.query<RunRow>(
    "select job, instance, trigger, started_at, finished_at, outcome from job_runs where job = $1 order by started_at, id",
    [job],
  );

/** Every scheduled run started a whole interval after the run before it, and no two runs overlapped. */
function expectOncePerPeriod(runs: RunRow[], intervalMs: number): void {
  for (let i = 1; i < runs.length; i++) {
    const [before, run] = [runs[i - 1] as RunRow, runs[i] as RunRow];
    if (run.trigger === "schedule") {
      expect(run.started_at.getTime() - before.started_at.getTime(), `run ${i} of ${run.job}`).toBeGreaterThanOrEqual(intervalMs);
    }
    expect(before.finished_at, `run ${i - 1} of ${run.job} ended`).not.toBeNull();
    expect(run.started_at.getTime(), `run ${i} of ${run.job} began after run ${i - 1} ended`).toBeGreaterThanOrEqual(
      (before.finished_at as Date).getTime(),
    );
  }
}

describe("the job scheduler on one store", () => {
  let store: Store;
  beforeAll(async () => {
    store = await freshSqliteStore();
  });
  afterAll(() => store.close());

  it("starts one run per period across two schedulers ticking together, and never overlaps a run longer than its interval", async () => {
    const runs: string[] = [];
    const quick = (who: string): JobDefinition => ({
      name: "ledger_upkeep",
      intervalMs: 500,
      run: async () => {
        runs.push(who);
        return "done";
      },
    });
    const slow: JobDefinition = { name: "trust_crawl", intervalMs: 200, run: () => sleep(700).then(() => undefined) };
    const a = startJobs({ store, instance: "a", log: quiet, jobs: [quick("a"), slow], tickMs: 20, leaseMs: 300 });
    const b = startJobs({ store, instance: "b", log: quiet, jobs: [quick("b"), slow], tickMs: 20, leaseMs: 300 });
    await sleep(3_200);
    await Promise.all([a.stop(), b.stop()]);

    const upkeep = await runsOf(store, "ledger_upkeep");
    expect(upkeep.length).toBe(runs.length);
    // 3.2 s at one run per 500 ms: 7 runs at most, and a tick every 20 ms leaves little room for fewer.
    expect(upkeep.length).toBeGreaterThanOrEqual(5);
    expect(upkeep.length).toBeLessThanOrEqual(7);
    expectOncePerPeriod(upkeep, 500);
    expect(upkeep.every((r) => r.outcome === "ok")).toBe(true);

    // Each crawl takes 700 ms with a 200 ms interval and a 300 ms lease: renewals keep the other scheduler out.
    const crawls = await runsOf(store, "trust_crawl");
    expect(crawls.length).toBeGreaterThanOrEqual(3);
    expect(crawls.length).toBeLessThanOrEqual(5);
    expectOncePerPeriod(crawls, 200);
  });

  it("waits for a crawl run by hand: the first scheduled one is due an interval after it", async () => {
    const ranAt = new Date(Date.now() - 1_000);
    const crawls: number[] = [];
    const scheduler = startJobs({
      store,
      instance: "a",
      log: quiet,
      jobs: [
        {
          name: "trust_crawl",
          intervalMs: 1_500,
          notBefore: async () => new Date(ranAt.getTime() + 1_500),
          run: async () => {
            crawls.push(Date.now());
            return undefined;
          },
        },
      ],
      tickMs: 20,
    });
    await sleep(300);
    expect(crawls).toEqual([]);
    await sleep(600);
    await scheduler.stop();
    expect(crawls).toHaveLength(1);
    expect((crawls[0] as number) - ranAt.getTime()).toBeGreaterThanOrEqual(1_400);
  });

  it("stops after the check under way: a job it was claiming has run and left no lease once stop resolves", async () => {
    const own = await freshSqliteStore();
    let release = () => {};
    const checking = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runs: string[] = [];
    const scheduler = startJobs({
      store: own,
      instance: "a",
      log: quiet,
      // Its check is under way (reading notBefore) when the scheduler is told to stop.
      jobs: [{ name: "status", intervalMs: 60_000, notBefore: () => checking.then(() => null), run: async () => void runs.push("ran") }],
      tickMs: 20,
    });
    await sleep(50);
    const stopping = scheduler.stop();
    release();
    await stopping;
    expect(runs).toEqual(["ran"]);
    await sleep(100);
    expect(runs).toEqual(["ran"]);
    expect(await own.query("select name from jobs where lease_until is not null")).toEqual([]);
    await own.close();
  });

  it("marks a run whose instance died as interrupted when the next one takes the job", async () => {
    await store.query(
      `insert into jobs (name, due_at, holder, lease_until) values ('status', now(), 'dead', ${nowPlus(store, "-1")}) on conflict (name) do update set due_at = now(), holder = 'dead', lease_until = ${nowPlus(store, "-1")}`,
    );
    await store.query("insert into job_runs (job, instance, trigger, outcome) values ('status', 'dead', 'schedule', 'running')");
    const scheduler = startJobs({
      store,
      instance: "alive",
      log: quiet,
      jobs: [{ name: "status", intervalMs: 60_000, run: async () => "fresh" }],
      tickMs: 20,
    });
    await sleep(300);
    await scheduler.stop();
    const runs = await store.query<{ instance: string; outcome: string; detail: string }>(
      "select instance, outcome, detail from job_runs where job = 'status' order by id",
    );
    expect(runs).toEqual([
      { instance: "dead", outcome: "interrupted", detail: "its instance stopped before the run ended" },
      { instance: "alive", outcome: "ok", detail: "fresh" },
    ]);
  });
});

describe("a second process settling with the same key", () => {
  let store: Store;
  let directories: Stub;
  const started: RunningService[] = [];
  beforeAll(async () => {
    store = await freshSqliteStore();
    directories = await startDirectoryStub();
  });
  afterAll(async () => {
    for (const s of started) await s.close();
    await store.close();
    await directories.close();
  });
  const start = async (instance: string, processId: string, heartbeatMs = 200) => {
    const s = await startTestService({ store, config: operationsConfig(directories), instance, processId, heartbeatMs });
    started.push(s);
    return s;
  };

  it("is refused while the first one's heartbeat moves, with a message saying why and what to do", async () => {
    const first = await start("first", "process-1");
    const error = await start("second", "process-2").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SettlementKeyInUseError);
    expect((error as Error).message).toBe(
      `another live instance (first, heartbeat ${(error as SettlementKeyInUseError).other.last_seen}) already settles payments with the key of ${devnet().facilitator.address.toLowerCase()}. Two processes sending transactions from one key take the same nonces and their settlements collide. Give each instance its own FACILITATOR_PRIVATE_KEY (a separate funded gas account) or use a remote facilitator (FACILITATOR_URL); after the other instance stops, this one can start.`,
    );
    expect(first.facilitatorAddress).toBe(devnet().facilitator.address);
    // The refused instance left no heartbeat behind.
    expect(await store.query("select id from instances order by id")).toEqual([{ id: "first" }]);
  });

  it("starts once the first one stopped cleanly, and in the same process beside it (one nonce manager per key there)", async () => {
    const first = started.find((s) => s.instance === "first") as RunningService;
    await first.close();
    expect(await store.query("select id from instances")).toEqual([]);
    const second = await start("second", "process-2");
    const sibling = await start("sibling", "process-2");
    expect((await store.query<{ id: string }>("select id from instances order by id")).map((r) => r.id)).toEqual(["second", "sibling"]);
    await second.close();
    await sibling.close();
  });

  it("leaves no heartbeat behind when its port is taken, so the status feed counts no dead instance", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const error = await startTestService({
        store,
        config: { ...operationsConfig(directories), port },
        instance: "port-taken",
        processId: "process-7",
        heartbeatMs: 200,
      }).catch((e: unknown) => e);
      expect((error as NodeJS.ErrnoException).code).toBe("EADDRINUSE");
      expect(await store.query("select id from instances")).toEqual([]);
    } finally {
      taken.close();
    }
  });

  it("starts after watching a crashed instance's heartbeat stand still", async () => {
    // What a killed process leaves: a fresh heartbeat that never moves again.
    await store.query("insert into instances (id, process, version, settlement_address) values ('crashed', 'process-dead', '1.0.0', $1)", [
      devnet().facilitator.address.toLowerCase(),
    ]);
    const begun = Date.now();
    const next = await start("after-crash", "process-3", 400);
    expect(Date.now() - begun).toBeGreaterThanOrEqual(600);
    expect((await store.query<{ id: string }>("select id from instances order by id")).map((r) => r.id)).toEqual([
      "after-crash",
      "crashed",
    ]);
    await next.close();
  });

  it("never waits when the store is this process's own database directory: another process's row there is a dead one's", async () => {
    const { registerInstance } = await import("../src/operations/instances.ts");
    await store.query("insert into instances (id, process, version, settlement_address) values ('killed', 'process-killed', '1.0.0', $1)", [
      devnet().facilitator.address.toLowerCase(),
    ]);
    const begun = Date.now();
    const info = { id: "restarted", version: "1.0.0", settlementAddress: devnet().facilitator.address, process: "process-6" };
    await registerInstance(store, info, { log: quiet, heartbeatMs: 30_000, exclusiveStore: true });
    expect(Date.now() - begun).toBeLessThan(2_000);
    const rows = await store.query<{ id: string }>("select id from instances where id in ('killed', 'restarted') order by id");
    expect(rows.map((r) => r.id)).toEqual(["restarted"]);
    await store.query("delete from instances where id = 'restarted'");
  });

  it("is no obstacle with a remote facilitator (no settlement key of its own)", async () => {
    await start("keyed", "process-4");
    const { createRemoteFacilitator } = await import("../src/payments/facilitator.ts");
    const remote = await startTestService({
      store,
      config: operationsConfig(directories),
      instance: "remote",
      processId: "process-5",
      heartbeatMs: 200,
      facilitator: createRemoteFacilitator("http://127.0.0.1:9/facilitator", undefined, 1_000),
    });
    started.push(remote);
    expect(remote.facilitatorAddress).toBeUndefined();
    const rows = await store.query<{ id: string; settlement_address: string | null }>(
      "select id, settlement_address from instances where id in ('keyed', 'remote') order by id",
    );
    expect(rows).toEqual([
      { id: "keyed", settlement_address: devnet().facilitator.address.toLowerCase() },
      { id: "remote", settlement_address: null },
    ]);
  });
});

const databaseUrl = inject("databaseUrl");
describe.runIf(databaseUrl)("two instances on one PostgreSQL", () => {
  let store: Store;
  let directories: Stub;
  const intervals = { trust_crawl: 1_500, ledger_upkeep: 1_000, status: 2_000 } as const;
  beforeAll(async () => {
    store = await freshPostgresStore(databaseUrl as string);
    directories = await startDirectoryStub();
  });
  afterAll(async () => {
    await store?.close();
    await directories?.close();
  });

  const start = (instance: string) =>
    startTestService({
      store,
      config: operationsConfig(directories, { CRAWL_INTERVAL_MINUTES: "60" }),
      instance,
      maintenance: true,
      jobIntervalsMs: intervals,
      jobTiming: { tickMs: 50, leaseMs: 3_000 },
    });

  it("refuse a second process settling with the same key while the first one's heartbeat moves", async () => {
    const config = operationsConfig(directories);
    const first = await startTestService({ store, config, instance: "keyed-1", processId: "process-1", heartbeatMs: 200 });
    try {
      const error = await startTestService({ store, config, instance: "keyed-2", processId: "process-2", heartbeatMs: 200 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SettlementKeyInUseError);
      expect((error as SettlementKeyInUseError).other.id).toBe("keyed-1");
    } finally {
      await first.close();
    }
    expect(await store.query("select id from instances")).toEqual([]);
  });

  it("run each job once per period, also when one restarts at the due time", async () => {
    const a = await start("instance-a");
    let b = await start("instance-b");
    await sleep(2_500);
    // Restart b so that it comes back exactly when the upkeep falls due.
    const [due] = await store.query<{ due_at: Date }>("select due_at from jobs where name = 'ledger_upkeep'");
    if (!due) throw new Error("the upkeep has no due time");
    await b.close();
    await sleep(Math.max(0, due.due_at.getTime() - Date.now()));
    b = await start("instance-b2");
    await sleep(3_000);
    await b.close();
    await a.close();

    for (const job of ["trust_crawl", "ledger_upkeep", "status"] as const) {
      const runs = await runsOf(store, job);
      expect(runs.length, job).toBeGreaterThanOrEqual(job === "ledger_upkeep" ? 4 : 2);
      expectOncePerPeriod(runs, intervals[job]);
      expect(
        runs.every((r) => r.outcome === "ok"),
        `${job}: ${JSON.stringify(runs)}`,
      ).toBe(true);
    }
    // The status document is also made at each start, so it counts every instance that joined.
    const starts = (await runsOf(store, "status")).filter((r) => r.trigger === "start").map((r) => r.instance);
    expect(starts).toEqual(["instance-a", "instance-b", "instance-b2"]);
    // Both stopped cleanly: no heartbeat, no lease left behind.
    expect(await store.query("select id from instances")).toEqual([]);
    expect(await store.query("select name from jobs where lease_until > now()")).toEqual([]);
  });
});
