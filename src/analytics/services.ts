/**
 * The long-lived parts of the chain analytics: the log scanner, the address classifier, the
 * labels, the price source and the market-data adapters. The service hands functions only
 * their settings (`Services.analytics`); `analyticsOf` builds the parts once per settings
 * object, on first use, and every call of that service shares them.
 */
import type { PublicClient } from "viem";
import { AddressClassifier } from "../chain/classify.ts";
import { type ScannerOptions, TransferScanner } from "../chain/log-scanner.ts";
import type { UpstreamsConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import { DEFILLAMA_COINS_DEFAULT_URL, DEFILLAMA_DEFAULT_URL, DefiLlama } from "../upstreams/defillama.ts";
import { DEXSCREENER_DEFAULT_URL, DexScreener } from "../upstreams/dexscreener.ts";
import { HYPERLIQUID_DEFAULT_URL, Hyperliquid } from "../upstreams/hyperliquid.ts";
import { loadLabelBook } from "./labels.ts";
import { PriceSource } from "./price-source.ts";

/** What the analytics are built from: plain data from the configuration. */
export interface AnalyticsSettings {
  /** Local mode reads the `local` labels (the seeded chain's), production the `base` ones. */
  mode: "local" | "production";
  /** Market-data API URLs (undefined: the public API) and their time limit. */
  upstreams: UpstreamsConfig;
  /** Chunk size, concurrency and cache bounds of the log scanner (tests, benchmark). */
  scanner?: ScannerOptions;
  /** Log and time budget of one entity-intelligence answer (absent: the defaults). */
  entityBudget?: { maxLogs: number; maxMs: number };
  /** The most tokens a trace asks prices for (absent: MAX_PRICED_TOKENS): tests set fewer to reach the cap with the devnet's few tokens. */
  pricedTokens?: number;
}

/** Everything the analytics functions need besides the chain client, built on `chain`; an undefined upstream URL means the public API. */
export function createChainAnalytics(settings: AnalyticsSettings, chain: PublicClient, log: Logger) {
  const { upstreams } = settings;
  const dexscreener = new DexScreener(upstreams.dexscreenerUrl ?? DEXSCREENER_DEFAULT_URL, upstreams.timeoutMs);
  const defillama = new DefiLlama(
    upstreams.defillamaUrl ?? DEFILLAMA_DEFAULT_URL,
    upstreams.defillamaCoinsUrl ?? DEFILLAMA_COINS_DEFAULT_URL,
    upstreams.timeoutMs,
  );
  return {
    scanner: new TransferScanner(chain, settings.scanner),
    classifier: new AddressClassifier(chain),
    labels: loadLabelBook(settings.mode),
    prices: new PriceSource(dexscreener, defillama, log.child({ component: "prices" })),
    dexscreener,
    defillama,
    hyperliquid: new Hyperliquid(upstreams.hyperliquidUrl ?? HYPERLIQUID_DEFAULT_URL, upstreams.timeoutMs),
  };
}

const built = new WeakMap<AnalyticsSettings, ReturnType<typeof createChainAnalytics>>();

/** The analytics services of a call, built on first use for its settings; a service started without settings is a bug (500). */
export function analyticsOf(ctx: { analytics?: AnalyticsSettings | undefined; chain: PublicClient; log: Logger }) {
  if (!ctx.analytics) throw new Error("the chain analytics settings were not provided to this context (src/server/service.ts)");
  let found = built.get(ctx.analytics);
  if (!found) {
    found = createChainAnalytics(ctx.analytics, ctx.chain, ctx.log);
    built.set(ctx.analytics, found);
  }
  return found;
}
