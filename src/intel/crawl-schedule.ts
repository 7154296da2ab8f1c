/**
 * The crawl on a schedule inside the service (`CRAWL_INTERVAL_MINUTES`, 0 disables), as a job
 * of the scheduler (src/operations/jobs.ts), which starts one run per interval across every
 * instance sharing the store. A crawl run by hand (`npm run crawl`) counts too: the next
 * scheduled one waits a whole interval after the newest run in the store.
 */
import type { JobDefinition } from "../operations/jobs.ts";
import type { Store } from "../store/store.ts";
import { lastRunStart } from "./leaderboard.ts";

/** Options of the crawl job. */
export interface CrawlJobOptions {
  intervalMs: number;
  store: Store;
  /** Runs one crawl; `signal` is aborted when the service stops. */
  crawl(signal: AbortSignal): Promise<{ origins_total: number; origins_scored: number }>;
}

/** The scheduled trust crawl. */
export function trustCrawlJob(options: CrawlJobOptions): JobDefinition {
  return {
    name: "trust_crawl",
    intervalMs: options.intervalMs,
    async notBefore() {
      const last = await lastRunStart(options.store);
      return last ? new Date(last.getTime() + options.intervalMs) : null;
    },
    async run(signal) {
      const result = await options.crawl(signal);
      return `${result.origins_scored} of ${result.origins_total} origins answered`;
    },
  };
}
