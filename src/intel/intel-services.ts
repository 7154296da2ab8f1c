/**
 * The long-lived pieces of the x402 intelligence routes, built once at start: the safe
 * fetcher for caller-chosen URLs, the cached directory catalogue, and the crawl's fetcher
 * and bounds. Loopback targets are refused unless a caller of `createIntelServices` (tests,
 * or local mode on request) says otherwise; production never does (see service.ts).
 */
import { createSafeFetcher, type Resolver } from "../outbound/safe-fetch.ts";
import { cdpBazaarDirectory } from "../upstreams/directory-cdp.ts";
import { x402ListDirectory } from "../upstreams/directory-x402-list.ts";
import { createCatalogue } from "./catalogue.ts";
import type { PurchaseBudget } from "./purchase.ts";

/** Settings of `createIntelServices`. */
export interface IntelSettings {
  cdpDiscoveryUrl: string;
  x402ListUrl: string;
  /** Let caller-chosen URLs reach loopback (tests; local mode with ALLOW_LOOPBACK_TARGETS=1). */
  allowLoopbackTargets: boolean;
  /** Let the crawl reach loopback (local mode's demo catalogue lists local sellers). */
  crawlAllowLoopback: boolean;
  crawlConcurrency: number;
  crawlOriginTimeoutMs: number;
  /** Replace DNS (tests). */
  resolve?: Resolver;
  /** Whether the trust runs verify sellers by purchase, and their budget (shown on the leaderboard). */
  purchases?: { enabled: boolean; budget: PurchaseBudget };
}

/** What the intelligence functions and the crawl use. */
export type IntelServices = ReturnType<typeof createIntelServices>;

/** Build the intelligence services. */
export function createIntelServices(settings: IntelSettings) {
  const resolve = settings.resolve ? { resolve: settings.resolve } : {};
  const crawlTotal = Math.max(1_000, Math.min(8_000, settings.crawlOriginTimeoutMs));
  return {
    /** Fetches caller-chosen URLs (x402-check, x402-trust). */
    fetcher: createSafeFetcher({ allowLoopback: settings.allowLoopbackTargets, ...resolve }),
    /** The CDP Bazaar and x402 List directories, merged and cached. */
    catalogue: createCatalogue([cdpBazaarDirectory(settings.cdpDiscoveryUrl), x402ListDirectory(settings.x402ListUrl)]),
    crawl: {
      /** Fetches the catalogue's origins, with the crawl's own time limits. */
      fetcher: createSafeFetcher({
        allowLoopback: settings.allowLoopbackTargets || settings.crawlAllowLoopback,
        connectTimeoutMs: Math.min(3_000, crawlTotal),
        totalTimeoutMs: crawlTotal,
        ...resolve,
      }),
      concurrency: settings.crawlConcurrency,
      originTimeoutMs: settings.crawlOriginTimeoutMs,
    },
  };
}

const built = new WeakMap<IntelSettings, IntelServices>();

/** The intelligence services of a function's context, built on first use, once per settings object. */
export function intelOf(services: { intel?: IntelSettings | undefined }): IntelServices {
  if (!services.intel) throw new Error("the x402 intelligence settings were not provided to this context");
  let found = built.get(services.intel);
  if (!found) {
    found = createIntelServices(services.intel);
    built.set(services.intel, found);
  }
  return found;
}
