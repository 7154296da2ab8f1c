/**
 * The in-process Solana facilitator on a worker thread of its own. Checking a payment (decoding
 * the transaction, deriving its token accounts, Ed25519) and co-signing it cost a few
 * milliseconds of CPU per call: on the event loop, that would hold back every other request the
 * service answers meanwhile. The thread holds one `@x402/svm` facilitator (so its de-duplication
 * of settlements still sees every payment); the service reaches it as any `FacilitatorClient`.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { KeyPairSigner } from "@solana/kit";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SupportedResponse } from "@x402/core/types";

interface ThreadData {
  keyPair: CryptoKeyPair;
  rpcUrl: string;
  network: string;
}

interface Call {
  id: number;
  op: "verify" | "settle" | "supported";
  payload?: PaymentPayload;
  requirements?: PaymentRequirements;
}
type Reply = { id: number; value: unknown } | { id: number; error: string };

/** A facilitator client whose facilitator runs on its own thread; `close` ends the thread. */
export function svmFacilitatorThread(
  feePayer: KeyPairSigner,
  rpcUrl: string,
  network: string,
): FacilitatorClient & { address: string; close(): Promise<void> } {
  type Pending = Map<number, { resolve(value: unknown): void; reject(error: Error): void }>;
  let next = 0;
  let current: { worker: Worker; pending: Pending } | undefined;
  // Started on first use, and again after a crash: the calls in flight then fail (not charged), later ones are served.
  const thread = () => {
    if (current) return current;
    const data: ThreadData = { keyPair: feePayer.keyPair, rpcUrl, network };
    // No inherited Node options: the parent's (`-e` with `--input-type`, a loader) need not fit a thread running this file.
    const worker = new Worker(new URL(import.meta.url), { workerData: data, execArgv: [] });
    const started = { worker, pending: new Map() as Pending };
    const { pending } = started;
    // It keeps the process alive only while a call waits on it (attaching the listener below refs
    // the thread's port: it is unref'd whenever no call waits).
    worker.unref();
    const failAll = (error: Error) => {
      for (const p of pending.values()) p.reject(error);
      pending.clear();
    };
    worker.on("message", (reply: Reply) => {
      const p = pending.get(reply.id);
      if (!p) return;
      pending.delete(reply.id);
      if (pending.size === 0) worker.unref();
      if ("error" in reply) p.reject(new Error(reply.error));
      else p.resolve(reply.value);
    });
    worker.on("error", failAll);
    worker.on("exit", (code) => {
      if (current === started) current = undefined;
      failAll(new Error(`the Solana facilitator thread ended (exit code ${code})`));
    });
    current = started;
    return started;
  };
  const call = <T>(op: Call["op"], payload?: PaymentPayload, requirements?: PaymentRequirements): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const { worker, pending } = thread();
      const id = next++;
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, op, payload, requirements } satisfies Call);
    });
  return {
    address: feePayer.address,
    verify: (payload, requirements) => call("verify", payload, requirements),
    settle: (payload, requirements) => call("settle", payload, requirements),
    getSupported: () => call<SupportedResponse>("supported"),
    async close() {
      const running = current;
      current = undefined;
      if (running) await running.worker.terminate();
    },
  };
}

function serve(data: ThreadData, port: NonNullable<typeof parentPort>): void {
  const facilitator = (async () => {
    const { createSignerFromKeyPair } = await import("@solana/kit");
    const { createSvmFacilitator } = await import("./x402.ts");
    return createSvmFacilitator(await createSignerFromKeyPair(data.keyPair), data.rpcUrl, data.network);
  })();
  port.on("message", (call: Call) => {
    facilitator
      .then(
        (f): Promise<unknown> =>
          call.op === "supported" ? f.getSupported() : f[call.op](call.payload as PaymentPayload, call.requirements as PaymentRequirements),
      )
      .then(
        (value) => port.postMessage({ id: call.id, value } satisfies Reply),
        (error: unknown) =>
          port.postMessage({ id: call.id, error: error instanceof Error ? error.message : String(error) } satisfies Reply),
      );
  });
}

if (!isMainThread && parentPort && (workerData as Partial<ThreadData> | null)?.keyPair) {
  serve(workerData as ThreadData, parentPort);
}
