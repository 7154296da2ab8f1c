/**
 * The trust crawl: read the catalogue fresh, group it by origin, probe one representative
 * endpoint per origin with bounded concurrency and a per-origin deadline, read each distinct
 * payTo's reputation once (with its own, smaller concurrency bound, as public RPCs rate-limit),
 * score, and record the run and its rows in the store. Rows are written in batches while the
 * crawl runs; the run becomes the leaderboard only once it is marked done. With purchases on,
 * each seller judged payable is bought from once within the run's budget (src/intel/purchase.ts)
 * and the purchase, recorded in the ledger of our own purchases, counts in its verdict; an
 * origin not bought from in this run keeps its latest earlier purchase.
 */
import pLimit from "p-limit";
import type { PublicClient } from "viem";
import { UpstreamError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { type SafeFetcher, TargetNotAllowedError } from "../outbound/safe-fetch.ts";
import { lastPurchases, type OurPurchaseRow, recordPurchase } from "../store/ledger.ts";
import type { Store } from "../store/store.ts";
import { probeOrigin } from "./assess-origin.ts";
import { type Catalogue, type CatalogueEndpoint, groupByOrigin, representativeEndpoint } from "./catalogue.ts";
import { type ConformanceReport, NO_CHECKS } from "./conformance.ts";
import { eip3009Probe } from "./eip3009-probe.ts";
import { failRun, finishRun, insertRows, startRun, summarise, type TrustRecord } from "./leaderboard.ts";
import { type PurchaseOutcome, PurchaseRun, type PurchaserSettings, type PurchaseTarget } from "./purchase.ts";
import { notMeasured, payToReputation, type Reputation } from "./reputation.ts";
import { assessTrust, notScored } from "./trust-score.ts";

/** Everything a crawl needs. */
export interface CrawlOptions {
  store: Store;
  catalogue: Catalogue;
  /** The safe fetcher the probes go through. */
  fetcher: SafeFetcher;
  /** Where payTo reputations are read. */
  chain: { client: PublicClient; network: string; usdc: `0x${string}` };
  /** Origins probed at once. */
  concurrency: number;
  /** Time allowed for one origin (probe, discovery documents and retries). */
  originTimeoutMs: number;
  /** What started the run: `schedule`, `cli`, `test`, `bench`. */
  trigger: string;
  log: Logger;
  /** Stops the crawl early (the run is then marked failed). */
  signal?: AbortSignal;
  /** Told how many origins are probed of how many, once the catalogue is read and after each origin. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Verified by purchase: buy once from each seller judged payable, within this budget, from
   * this buyer (src/intel/purchase.ts). Absent: nothing is bought, and each origin's latest
   * earlier purchase still counts in its verdict.
   */
  purchases?: Omit<PurchaserSettings, "fetcher">;
}

/** Run one crawl and record it. Throws `UpstreamError` (run marked failed) when no directory answers. */
export async function runCrawl(options: CrawlOptions) {
  const started = performance.now();
  const log = options.log.child({ crawl: options.trigger });
  const runId = await startRun(options.store, options.trigger, new Date());
  try {
    const snapshot = await options.catalogue.read({ fresh: true });
    if (snapshot.sources_ok === 0) {
      throw new UpstreamError("unavailable", "directories", `No directory answered: ${JSON.stringify(snapshot.sources)}`);
    }
    const origins = [...groupByOrigin(snapshot.endpoints)];
    log.info("trust crawl started", {
      run_id: runId,
      origins: origins.length,
      concurrency: options.concurrency,
      sources: snapshot.sources,
    });

    options.onProgress?.(0, origins.length);
    const earlier = await lastPurchases(
      options.store,
      origins.map(([origin]) => origin),
    );
    const purchases = options.purchases ? new PurchaseRun({ ...options.purchases, fetcher: options.fetcher }) : undefined;
    const bought: OurPurchaseRow[] = [];
    let charged = 0n;
    const eip3009 = eip3009Probe(options.chain.client, options.chain.network);
    const buy = async (target: PurchaseTarget, report: ConformanceReport) => {
      const record = await purchases?.buy(target, report);
      if (!record) return null;
      await recordPurchase(options.store, runId, record);
      charged += BigInt(record.charged_atomic);
      const row = { ...record, id: 0, run_id: runId, created_at: record.at.toISOString() };
      bought.push(row);
      log.info("trust purchase", {
        origin: target.origin,
        outcome: record.outcome,
        charged_atomic: record.charged_atomic,
        status: record.status,
      });
      return row;
    };
    // Four reputation reads at once: public RPCs rate-limit.
    const chainSlot = pLimit(4);
    const reputations = new Map<string, Promise<Reputation>>();
    const readReputation = (payTo: string, network: string | null) => {
      const key = `${network}|${payTo.toLowerCase()}`;
      let found = reputations.get(key);
      if (!found) {
        found = chainSlot(() =>
          payToReputation(payTo, network, {
            chain: options.chain.client,
            network: options.chain.network,
            usdc: options.chain.usdc,
          }),
        );
        reputations.set(key, found);
      }
      return found;
    };

    /** Probe, score and maybe buy from one origin; never throws for the origin's own failures. */
    const probeOne = async (origin: string, endpoints: CatalogueEndpoint[]): Promise<TrustRecord> => {
      const target = representativeEndpoint(endpoints);
      const probedAt = new Date();
      const deadline = AbortSignal.timeout(options.originTimeoutMs);
      const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
      const base = { origin, endpoint: target.url, endpoints: endpoints.length, probed_at: probedAt };
      try {
        // Budgets inside the origin's limit: the unpaid call may use most of it (a GET answering 404
        // may be followed by a POST), the discovery documents a shorter share, so a slow
        // /openapi.json never costs more than the call itself.
        const probe = await probeOrigin(options.fetcher, target, readReputation, {
          signal,
          probeTimeoutMs: options.originTimeoutMs,
          discoveryTimeoutMs: Math.max(250, Math.floor(options.originTimeoutMs / 2)),
          eip3009Probe: eip3009,
        });
        const r = probe.report;
        // Bought outside the origin's probe deadline: a purchase has its own time limit.
        const boughtNow = await buy({ origin, url: target.url, method: probe.method }, r).catch((error: unknown) => {
          options.log.error("trust purchase failed", { origin, error: error instanceof Error ? error : String(error) });
          return null;
        });
        const purchase = boughtNow ?? earlier.get(origin) ?? null;
        const assessment = assessTrust(r, probe.reputation, purchase && { outcome: purchase.outcome as PurchaseOutcome });
        return {
          ...base,
          method: probe.method,
          reachable: r.reachable,
          status: r.status,
          ...assessment,
          checks: r.checks,
          payable: r.payable,
          conformant: r.conformant,
          discoverable: r.discoverable,
          price_usd: r.price_usd,
          pay_to: r.pay_to,
          network: r.network,
          x402_version: r.x402Version,
          reputation: probe.reputation,
          latency_ms: r.reachable ? r.elapsed_ms : null,
        };
      } catch (error) {
        // One broken origin must not sink the crawl: a refusal is recorded as such, anything
        // else (our own bug included) is logged and recorded as unreachable.
        const refused = error instanceof TargetNotAllowedError;
        if (!refused) options.log.error("trust probe failed", { origin, error: error instanceof Error ? error : String(error) });
        return {
          ...base,
          method: target.method ?? "GET",
          reachable: false,
          status: null,
          ...notScored(refused ? "refused" : "unreachable"),
          checks: NO_CHECKS,
          payable: refused ? null : false,
          conformant: false,
          discoverable: false,
          price_usd: null,
          pay_to: null,
          network: null,
          x402_version: null,
          reputation: notMeasured(refused ? "the host is not allowed" : "the probe failed"),
          latency_ms: null,
        };
      }
    };

    const records: TrustRecord[] = [];
    let pending: TrustRecord[] = [];
    let writes = Promise.resolve();
    const flush = () => {
      const batch = pending;
      pending = [];
      writes = writes.then(() => insertRows(options.store, runId, batch));
      return writes;
    };

    const originSlot = pLimit(Math.max(1, options.concurrency));
    await Promise.all(
      origins.map(([origin, endpoints]) =>
        originSlot(async () => {
          if (options.signal?.aborted) throw new Error("the crawl was stopped");
          const record = await probeOne(origin, endpoints);
          records.push(record);
          options.onProgress?.(records.length, origins.length);
          pending.push(record);
          if (pending.length >= 100) await flush();
        }),
      ),
    );
    await flush();

    const summary = summarise(records, origins.length, snapshot.sources);
    await finishRun(options.store, runId, summary, new Date());
    const elapsed = Math.round(performance.now() - started);
    log.info("trust crawl finished", {
      run_id: runId,
      origins: summary.origins_total,
      unreachable: summary.unreachable,
      verdicts: summary.verdicts,
      ms: elapsed,
    });
    return {
      ...summary,
      run_id: runId,
      elapsed_ms: elapsed,
      // Purchases made in this run and what they were charged on chain (atomic USDC); null when purchases were off.
      purchases: purchases
        ? { made: bought.length, signed_atomic: purchases.reservedAtomic.toString(), charged_atomic: charged.toString() }
        : null,
    };
  } catch (error) {
    await failRun(options.store, runId, error instanceof Error ? error.message : String(error), new Date()).catch(() => {});
    log.error("trust crawl failed", { run_id: runId, error: error instanceof Error ? error : String(error) });
    throw error;
  }
}

/** What a finished crawl reports. */
export type CrawlResult = Awaited<ReturnType<typeof runCrawl>>;
