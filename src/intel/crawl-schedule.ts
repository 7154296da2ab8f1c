/**
 * The crawl on a schedule inside the service (`CRAWL_INTERVAL_MINUTES`, 0 disables). A crawl
 * starts when the newest run in the store (from any instance, or `npm run crawl`) is older
 * than the interval, so several instances sharing one PostgreSQL do not all crawl, and a
 * restart does not crawl again at once. Crawls never overlap within an instance.
 */
import type { Logger } from "../log.ts";
import type { Store } from "../store/store.ts";
import { lastRunStart } from "./leaderboard.ts";

/** Options of the schedule. */
export interface CrawlScheduleOptions {
  intervalMinutes: number;
  store: Store;
  /** Runs one crawl; `signal` is aborted when the service stops. */
  crawl(signal: AbortSignal): Promise<unknown>;
  log: Logger;
  /** Delay before the first due-check, so start-up is not slowed. Default 5 s. */
  firstCheckMs?: number;
  now?: () => Date;
}

/** Start the schedule; the returned function stops it and waits for a running crawl to end. */
export function startCrawlSchedule(options: CrawlScheduleOptions): () => Promise<void> {
  const intervalMs = options.intervalMinutes * 60_000;
  const now = options.now ?? (() => new Date());
  const stop = new AbortController();
  let running: Promise<unknown> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (ms: number) => {
    if (stop.signal.aborted) return;
    timer = setTimeout(() => void tick(), ms);
    timer.unref();
  };
  const tick = async () => {
    let wait = intervalMs;
    try {
      const last = await lastRunStart(options.store);
      const dueIn = last ? last.getTime() + intervalMs - now().getTime() : 0;
      if (dueIn > 0) wait = dueIn;
      else {
        running = options.crawl(stop.signal);
        await running;
      }
    } catch (error) {
      options.log.warn("scheduled trust crawl did not complete", { error: error instanceof Error ? error.message : String(error) });
    } finally {
      running = undefined;
    }
    schedule(Math.max(1_000, wait));
  };
  schedule(options.firstCheckMs ?? 5_000);

  return async () => {
    stop.abort();
    clearTimeout(timer);
    await running?.catch(() => {});
  };
}
