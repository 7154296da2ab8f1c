/**
 * Probe one origin's representative endpoint: the conformance check and the payTo reputation,
 * which the trust score is computed from (with the origin's latest purchase, where there is
 * one). Shared by the leaderboard crawl and `x402-trust`, so an on-demand score is computed
 * exactly as the leaderboard's.
 */
import type { SafeFetcher } from "../outbound/safe-fetch.ts";
import type { DirectoryEntry } from "../upstreams/directory-entry.ts";
import { type CheckTarget, checkConformance } from "./conformance.ts";
import { notMeasured, type Reputation } from "./reputation.ts";

/** Reads the reputation of a payTo on a network (cached and rate-bounded by the crawl). */
export type ReputationReader = (payTo: string, network: string | null) => Promise<Reputation>;

/** Statuses that mean "not this method": an unknown method is tried with GET, then POST. */
const WRONG_METHOD = new Set([404, 405]);

/**
 * Probe `target` (the endpoint and, when a directory says, its method) with the signal, time
 * budgets and token reader of `check`. The unpaid call carries an empty JSON object on POST
 * (sellers answer 402 before reading input). Throws `TargetNotAllowedError` when the host is refused.
 */
export async function probeOrigin(
  fetcher: SafeFetcher,
  target: Pick<DirectoryEntry, "url" | "method">,
  readReputation: ReputationReader,
  check: Omit<CheckTarget, "url" | "method" | "body"> = {},
) {
  const call = (method: "GET" | "POST") =>
    checkConformance(fetcher, { ...check, url: target.url, method, ...(method === "POST" ? { body: {} } : {}) });
  let method: "GET" | "POST" = target.method ?? "GET";
  let report = await call(method);
  if (target.method === null && report.reachable && report.status !== null && WRONG_METHOD.has(report.status)) {
    method = "POST";
    report = await call(method);
  }
  const reputation = !report.reachable
    ? notMeasured("the endpoint did not answer")
    : report.checks.has_challenge && report.pay_to
      ? await readReputation(report.pay_to, report.network)
      : notMeasured("no payTo address in the challenge");
  return { report, method, reputation };
}
