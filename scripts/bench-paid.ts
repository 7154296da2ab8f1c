/** Shared by the benchmarks: pre-signed paid calls and the per-step timings the service logs for them. */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { privateKeyToAccount } from "viem/accounts";
import { signPayment } from "./buyer/sign-payment.ts";

/** The `p`th percentile of `values`. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Per-call step timings in ms, one entry per call. */
export interface PaidTimings {
  verify: number[];
  fn: number[];
  settle: number[];
  total: number[];
  /** Server total minus verify, function and settle: the service's own work. */
  overhead: number[];
  client: number[];
}

/**
 * Make `n` sequential paid `POST /api/payment-verify` calls with authorisations signed
 * beforehand, and read their step timings from the access-log lines collected in `lines`.
 */
export async function measurePaidCalls(
  baseUrl: string,
  buyerKey: `0x${string}`,
  n: number,
  lines: Record<string, unknown>[],
): Promise<PaidTimings> {
  const paidPath = "/api/payment-verify";
  const challengeRes = await fetch(`${baseUrl}${paidPath}`, { method: "POST" });
  const challenge = decodePaymentRequiredHeader(challengeRes.headers.get("payment-required") as string);
  const buyer = privateKeyToAccount(buyerKey);
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 600);
  const headers: string[] = [];
  for (let i = 0; i < n; i++) headers.push(await signPayment(challenge, buyer, { validBefore }));
  lines.length = 0;
  const client: number[] = [];
  for (const header of headers) {
    const started = performance.now();
    const res = await fetch(`${baseUrl}${paidPath}`, {
      method: "POST",
      headers: { "content-type": "application/json", "payment-signature": header },
      body: JSON.stringify({ tx_hash: `0x${"ab".repeat(32)}` }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`paid call answered ${res.status}`);
    client.push(performance.now() - started);
  }
  // The access-log line is written when the response closes; give the last one a moment.
  await new Promise((resolve) => setTimeout(resolve, 50));
  // The gate logs each paid call's steps ("paid call"); the access log its total ("request").
  const steps = new Map(
    lines.filter((l) => l.msg === "paid call").map((l) => [l.request_id, l as { verify: number; fn: number; settle: number }]),
  );
  const rows = lines
    .filter((l) => l.msg === "request" && l.path === paidPath && l.status === 200 && steps.has(l.request_id))
    .map((l) => ({ ms: l.ms as number, ...(steps.get(l.request_id) as { verify: number; fn: number; settle: number }) }));
  return {
    verify: rows.map((r) => r.verify),
    fn: rows.map((r) => r.fn),
    settle: rows.map((r) => r.settle),
    total: rows.map((r) => r.ms),
    overhead: rows.map((r) => r.ms - r.verify - r.fn - r.settle),
    client,
  };
}

/** A logger sink keeping only the paid calls' step and access lines (parsing every line would load the server under test). */
export function paidLineSink(lines: Record<string, unknown>[]): (line: string) => void {
  return (line) => {
    if (line.includes("payment-verify") && (line.includes('"status":200') || line.includes('"msg":"paid call"')))
      lines.push(JSON.parse(line) as Record<string, unknown>);
  };
}
