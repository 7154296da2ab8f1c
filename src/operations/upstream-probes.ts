/**
 * The status feed's light call to each third-party API: one small, documented request that
 * shows the API answers, through the same HTTP helpers as the real calls (so a timeout, an
 * error status or a malformed body counts as a failure here too). None is cached: the feed
 * must see the API as it is now.
 */
import type { UpstreamsConfig } from "../config.ts";
import { DEFILLAMA_COINS_DEFAULT_URL, DEFILLAMA_DEFAULT_URL } from "../upstreams/defillama.ts";
import { DEXSCREENER_DEFAULT_URL } from "../upstreams/dexscreener.ts";
import { fetchDirectoryJson } from "../upstreams/directory-http.ts";
import { fetchUpstreamJson } from "../upstreams/http-json.ts";
import { HYPERLIQUID_DEFAULT_URL } from "../upstreams/hyperliquid.ts";
import type { UpstreamProbe } from "./status-feed.ts";

/** Where the APIs are (the configured market APIs, undefined: the public one; the directories) and how long a probe may take. */
export type UpstreamProbeSettings = UpstreamsConfig & {
  cdpDiscoveryUrl: string;
  x402ListUrl: string;
  /** The USDC contract, a token every market API knows. */
  usdc: string;
};

/** The six probes, in the order the feed lists them. */
export function upstreamProbes(s: UpstreamProbeSettings): UpstreamProbe[] {
  const json = (upstream: string, url: string, init: { method?: "POST"; body?: unknown } = {}) =>
    fetchUpstreamJson({ upstream, url, timeoutMs: s.timeoutMs, ...init });
  const expect = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`unexpected answer: ${what}`);
  };
  const page = (base: string, params: Record<string, string>) => {
    const url = new URL(base);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.href;
  };
  return [
    {
      name: "DexScreener",
      probe: async () => {
        const { body } = await json(
          "dexscreener",
          `${s.dexscreenerUrl ?? DEXSCREENER_DEFAULT_URL}/token-pairs/v1/base/${s.usdc.toLowerCase()}`,
        );
        expect(Array.isArray(body), "no list of pairs");
      },
    },
    {
      name: "DefiLlama TVL",
      probe: async () => {
        const { body } = await json("defillama", `${s.defillamaUrl ?? DEFILLAMA_DEFAULT_URL}/tvl/aave-v3`);
        expect(typeof body === "number", "no TVL number");
      },
    },
    {
      name: "DefiLlama prices",
      probe: async () => {
        const { body } = await json(
          "defillama-coins",
          `${s.defillamaCoinsUrl ?? DEFILLAMA_COINS_DEFAULT_URL}/prices/current/base:${s.usdc}`,
        );
        expect(typeof body === "object" && body !== null && "coins" in body, "no coins object");
      },
    },
    {
      name: "Hyperliquid",
      probe: async () => {
        const { body } = await json("hyperliquid", `${s.hyperliquidUrl ?? HYPERLIQUID_DEFAULT_URL}/info`, {
          method: "POST",
          body: { type: "metaAndAssetCtxs" },
        });
        expect(Array.isArray(body), "no meta and asset contexts");
      },
    },
    {
      name: "CDP Bazaar directory",
      probe: async (signal) => {
        await fetchDirectoryJson("cdp_bazaar", page(s.cdpDiscoveryUrl, { type: "http", limit: "1", offset: "0" }), { signal });
      },
    },
    {
      name: "x402 List directory",
      probe: async (signal) => {
        await fetchDirectoryJson("x402_list", page(s.x402ListUrl, { page: "1", per_page: "1" }), { signal });
      },
    },
  ];
}
