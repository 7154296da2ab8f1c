/**
 * The service's Prometheus metrics (prom-client), one registry per running service so that
 * several services in one process (tests, benchmarks) never mix their counts. Served at
 * `/metrics` by src/server/middleware/metrics.ts; fed by that middleware (requests), the
 * payment gate (`PaymentObserver`), the store (`observedStore`), the crawl and the rate limits.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { PaidOutcome, PaymentObserver } from "../payments/gate.ts";
import type { Queryable, Store } from "../store/store.ts";

/** Seconds: from a fast local facilitator (milliseconds) to a slow chain (tens of seconds). */
const PAYMENT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** The metrics of one service: every metric `createMetrics` makes, and what the payment gate reports to (`payments`). */
export type ServiceMetrics = ReturnType<typeof createMetrics>;

/** Create the registry and every metric, Node's own (memory, CPU, event loop) included. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const paidCalls = new Counter({
    name: "x402_paid_calls_total",
    help: "Calls to paid routes by how they ended (settled = a new charge; challenged = answered with the 402 challenge).",
    labelNames: ["route", "outcome"] as const,
    registers,
  });
  const revenue = new Counter({
    name: "x402_revenue_atomic_usdc_total",
    help: "USDC settled by paid calls, in atomic units (6 decimals: 1000000 = 1 USDC).",
    labelNames: ["route"] as const,
    registers,
  });
  const verifySeconds = new Histogram({
    name: "x402_verify_duration_seconds",
    help: "Time the facilitator took to verify a payment.",
    buckets: PAYMENT_BUCKETS,
    registers,
  });
  const settleSeconds = new Histogram({
    name: "x402_settle_duration_seconds",
    help: "Time the facilitator took to settle a payment.",
    buckets: PAYMENT_BUCKETS,
    registers,
  });
  return {
    registry,
    requests: new Counter({
      name: "http_requests_total",
      help: "HTTP requests by route (the route table's path for /api/, else page, static or metrics), method and status.",
      labelNames: ["route", "method", "status"] as const,
      registers,
    }),
    requestSeconds: new Histogram({
      name: "http_request_duration_seconds",
      help: "Time from a request's arrival to the end of its answer.",
      labelNames: ["route", "method"] as const,
      buckets: REQUEST_BUCKETS,
      registers,
    }),
    paidCalls,
    revenue,
    verifySeconds,
    settleSeconds,
    storeSeconds: new Histogram({
      name: "store_query_duration_seconds",
      help: "Time of one statement sent to the store (SQLite or PostgreSQL), by its first keyword.",
      labelNames: ["statement"] as const,
      buckets: STORE_BUCKETS,
      registers,
    }),
    crawlOrigins: new Gauge({
      name: "trust_crawl_origins",
      help: "Origins of the trust crawl in progress (or the last one): total in the catalogue and done.",
      labelNames: ["state"] as const,
      registers,
    }),
    crawlRunning: new Gauge({ name: "trust_crawl_running", help: "1 while this instance runs a trust crawl.", registers }),
    crawlRuns: new Counter({
      name: "trust_crawl_runs_total",
      help: "Trust crawls this instance ran, by outcome.",
      labelNames: ["outcome"] as const,
      registers,
    }),
    rateLimitRefusals: new Counter({
      name: "rate_limit_refusals_total",
      help: "Requests refused with 429 rate_limited, by budget (free, challenge, paid_in_flight).",
      labelNames: ["budget"] as const,
      registers,
    }),
    payments: {
      paidCall(route: string, outcome: PaidOutcome, amountAtomic?: string) {
        paidCalls.inc({ route, outcome });
        if (outcome === "settled" && amountAtomic) revenue.inc({ route }, Number(amountAtomic));
      },
      verified: (seconds) => verifySeconds.observe(seconds),
      settled: (seconds) => settleSeconds.observe(seconds),
    } satisfies PaymentObserver,
  };
}

/** The first keyword of a statement (`select`, `insert`, `with`…), a bounded label. */
function statementOf(sql: string): string {
  const word = /^\s*([a-z]+)/i.exec(sql)?.[1]?.toLowerCase() ?? "other";
  return ["select", "insert", "update", "delete", "with", "begin", "commit"].includes(word) ? word : "other";
}

function timed(db: Queryable, histogram: ServiceMetrics["storeSeconds"]): Queryable {
  return {
    engine: db.engine,
    atomic: (fn) => db.atomic((tx) => fn(timed(tx, histogram))),
    async query<T>(sql: string, params?: readonly unknown[]) {
      const end = histogram.startTimer({ statement: statementOf(sql) });
      try {
        return await db.query<T>(sql, params);
      } finally {
        end();
      }
    },
  };
}

/** `store` with every statement timed (transactions' statements too); closing it closes `store`. */
export function observedStore(store: Store, metrics: ServiceMetrics): Store {
  return { ...timed(store, metrics.storeSeconds), close: () => store.close() };
}

/** Run a crawl with its progress fed into the gauges (`onProgress`), counting how it ended. */
export async function observedCrawl<T>(metrics: ServiceMetrics, crawl: (onProgress: (done: number, total: number) => void) => Promise<T>) {
  metrics.crawlRunning.set(1);
  metrics.crawlOrigins.set({ state: "done" }, 0);
  let outcome: "done" | "failed" = "failed";
  try {
    const result = await crawl((done, total) => {
      metrics.crawlOrigins.set({ state: "total" }, total);
      metrics.crawlOrigins.set({ state: "done" }, done);
    });
    outcome = "done";
    return result;
  } finally {
    metrics.crawlRunning.set(0);
    metrics.crawlRuns.inc({ outcome });
  }
}
