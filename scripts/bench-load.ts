/**
 * The buyers of a paid-throughput bench, in a worker thread of their own: each buyer sends its
 * prepared requests one after another, all buyers at once. Buyers are other machines in real
 * use, so their HTTP client's work is kept off the event loop of the service being measured (on
 * the same thread, the client's own parsing was about a third of a cheap paid call's CPU).
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

export interface LoadPlan {
  url: string;
  method: "GET" | "POST";
  body?: string;
  /** Per buyer, the headers of each of its calls, in order. */
  calls: Record<string, string>[][];
  /** The status every call must answer. */
  status: number;
}

export interface LoadResult {
  perSecond: number;
  /** Each call's time as the buyer saw it, ms. */
  client: number[];
  /** Each call's `Server-Timing` entries by name (verify, fn, settle…), ms. */
  steps: Record<string, number[]>;
}

async function send(plan: LoadPlan): Promise<LoadResult> {
  const client: number[] = [];
  const steps: Record<string, number[]> = {};
  const total = plan.calls.reduce((n, c) => n + c.length, 0);
  const started = performance.now();
  await Promise.all(
    plan.calls.map(async (own) => {
      for (const headers of own) {
        const t = performance.now();
        const res = await fetch(plan.url, {
          method: plan.method,
          headers: plan.body === undefined ? headers : { "content-type": "application/json", ...headers },
          body: plan.body,
        });
        const text = await res.text();
        if (res.status !== plan.status) throw new Error(`a call to ${plan.url} answered ${res.status}: ${text.slice(0, 300)}`);
        client.push(performance.now() - t);
        for (const m of (res.headers.get("server-timing") ?? "").matchAll(/([a-z_]+);dur=([0-9.]+)/g)) {
          const name = m[1] as string;
          const list = steps[name] ?? [];
          list.push(Number(m[2]));
          steps[name] = list;
        }
      }
    }),
  );
  return { perSecond: total / ((performance.now() - started) / 1000), client, steps };
}

/** Run `plan` from a worker thread and return what its buyers measured. */
export function runLoad(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: plan });
    worker.once("message", (message: { result?: LoadResult; error?: string }) => {
      if (message.error) reject(new Error(message.error));
      else resolve(message.result as LoadResult);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  send(workerData as LoadPlan).then(
    (result) => port.postMessage({ result }),
    (error: Error) => port.postMessage({ error: error.message }),
  );
}
