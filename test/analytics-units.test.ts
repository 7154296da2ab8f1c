/**
 * The pure parts of the chain analytics: exact USD arithmetic, the sentiment score, deepest
 * pair and price selection, DefiLlama's TVL series, the label file's checks, the shared cache,
 * and the methodology page rendering the same text the answers carry.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseLabelsFile } from "../src/analytics/labels.ts";
import { ENDPOINT_METHODS, METHOD_FACTS, methodologyFor } from "../src/analytics/methodology.ts";
import { priceFromPairs } from "../src/analytics/price-source.ts";
import { scoreSentiment } from "../src/analytics/sentiment.ts";
import { divideDecimals, exactTimes, parseDecimal, smallestWorth, usdOf, usdValue } from "../src/analytics/usd-value.ts";
import type { RunningService } from "../src/server/service.ts";
import { tvlFromSeries } from "../src/upstreams/defillama.ts";
import { type DexPair, pairsDeepestFirst } from "../src/upstreams/dexscreener.ts";
import { TtlCache } from "../src/upstreams/ttl-cache.ts";
import { startTestService } from "./support/service.ts";

describe("exact USD arithmetic", () => {
  it("compares thresholds on integers, with no rounding at the line", () => {
    const price = parseDecimal("1.0001");
    // An amount qualifies when it is at least the smallest amount worth the threshold, as the scans compare.
    const worth = (amount: bigint, decimals: number, at: ReturnType<typeof parseDecimal>, minUsd: number) => {
      const least = smallestWorth(minUsd, decimals, at);
      return least !== null && amount >= least;
    };
    expect(worth(99_990_000_999n, 6, price, 100_000)).toBe(false); // 99,990.000999 USDC = 99,999.9999990999 USD
    expect(worth(99_990_001_000n, 6, price, 100_000)).toBe(true); // 99,990.001 USDC = 100,000.0000001 USD
    expect(worth(10n ** 18n, 18, parseDecimal("3120.45"), 3120.45)).toBe(true);
    expect(worth(10n ** 18n - 1n, 18, parseDecimal("3120.45"), 3120.45)).toBe(false);
    expect(worth(1n, 6, price, 0)).toBe(true);
  });

  it("finds the fewest units worth a threshold, as pricing each amount would decide", () => {
    expect(smallestWorth(100_000, 6, parseDecimal("1.0001"))).toBe(99_990_001_000n);
    expect(smallestWorth(3120.45, 18, parseDecimal("3120.45"))).toBe(10n ** 18n);
    expect(smallestWorth(5, 6, parseDecimal("0"))).toBeNull();
    expect(smallestWorth(0, 6, parseDecimal("0"))).toBe(0n);
    // Random thresholds, prices and decimals: the units just below the threshold are worth less, the threshold itself enough.
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let i = 0; i < 2_000; i++) {
      const decimals = next() % 19;
      const price = parseDecimal(`${next() % 100_000}.${String(next() % 1_000_000).padStart(6, "0")}`);
      const minUsd = (next() % 10_000_000) / 100;
      const least = smallestWorth(minUsd, decimals, price);
      if (least === null) {
        expect(price.isZero()).toBe(true);
        continue;
      }
      expect(usdOf(least, decimals, price).gte(minUsd)).toBe(true);
      if (least > 0n) expect(usdOf(least - 1n, decimals, price).lt(minUsd)).toBe(true);
    }
  });

  it("values amounts to the cent, half up", () => {
    expect(usdValue(480_000_500_000n, 6, parseDecimal("1.0001"))).toBe(480048.5); // 480,048.50005
    expect(usdValue(150n * 10n ** 18n, 18, parseDecimal("3120.45"))).toBe(468067.5);
    expect(usdValue(5n, 6, parseDecimal("1"))).toBe(0); // 0.000005 USD
    expect(usdValue(5_000n, 6, parseDecimal("1"))).toBe(0.01); // 0.005 USD rounds up
  });

  it("parses and formats decimals exactly, exponents included", () => {
    expect(parseDecimal("0.0000125").toFixed()).toBe("0.0000125");
    expect(parseDecimal(1e-7).toFixed()).toBe("0.0000001");
    expect(parseDecimal(2e21).toFixed()).toBe("2000000000000000000000");
    expect(parseDecimal("3120.45").toFixed()).toBe("3120.45");
    expect(parseDecimal("3120.450").toFixed()).toBe("3120.45");
    expect(parseDecimal("-0.005").toFixed()).toBe("-0.005");
    expect(divideDecimals(parseDecimal("3120.45"), parseDecimal("3120.45"))).toBe("1");
    expect(divideDecimals(parseDecimal("0.7207"), parseDecimal("0.0002853"))).toBe("2526.11286365");
    expect(() => parseDecimal("1,5")).toThrow();
  });

  it("scales a zero by a power of ten to a plain zero (a funding rate of exactly 0 was written 000)", () => {
    expect(exactTimes("0.0", 1n, 2)).toBe("0");
    expect(exactTimes("0", 8n, 2)).toBe("0");
    expect(exactTimes("-0.0000035", 8n, 2)).toBe("-0.0028");
    expect(exactTimes("5", 1n, 2)).toBe("500");
  });
});

describe("the sentiment score", () => {
  it("scales, weights and labels its inputs as stated", () => {
    expect(scoreSentiment({ price_change_24h: 5, funding_rate_8h: 0.035, tvl_change_24h: 10 })).toEqual({
      score: 65, // 100 x (0.4 x 0.5 + 0.3 x 0.5 + 0.3 x 1)
      sentiment: "bullish",
      inputs: [
        { name: "price_change_24h", value: 5, normalized: 0.5, weight: 0.4, contribution: 20 },
        { name: "funding_rate_8h", value: 0.035, normalized: 0.5, weight: 0.3, contribution: 15 },
        { name: "tvl_change_24h", value: 10, normalized: 1, weight: 0.3, contribution: 30 },
      ],
    });
    expect(scoreSentiment({ price_change_24h: -50, funding_rate_8h: null, tvl_change_24h: null })).toMatchObject({
      score: -100,
      sentiment: "bearish",
    });
    expect(scoreSentiment({ price_change_24h: 1.99, funding_rate_8h: 0.01, tvl_change_24h: null }).sentiment).toBe("neutral");
    expect(scoreSentiment({ price_change_24h: null, funding_rate_8h: null, tvl_change_24h: null })).toEqual({
      score: null,
      sentiment: "unknown",
      inputs: [],
    });
  });
});

const pair = (over: Partial<DexPair> & { base: string; quote: string }): DexPair => ({
  chainId: "base",
  dexId: "uniswap",
  pairAddress: `0x${Math.random().toString(16).slice(2).padEnd(40, "0")}`,
  baseToken: { address: over.base, name: "B", symbol: "B" },
  quoteToken: { address: over.quote, name: "Q", symbol: "Q" },
  priceNative: "1",
  priceUsd: "1",
  ...over,
});

describe("price selection", () => {
  const T = "0x1111111111111111111111111111111111111111";
  const U = "0x2222222222222222222222222222222222222222";
  it("orders Base pairs by liquidity, then 24 h volume, ignoring other chains and unrelated pairs", () => {
    const deep = pair({ base: T, quote: U, liquidity: { usd: 100 }, volume: { h24: 1 } });
    const tie = pair({ base: T, quote: U, liquidity: { usd: 100 }, volume: { h24: 5 } });
    const other = pair({ base: T, quote: U, chainId: "ethereum", liquidity: { usd: 1e9 } });
    const unrelated = pair({ base: U, quote: U, liquidity: { usd: 1e9 } });
    const none = pair({ base: T, quote: U, liquidity: null });
    expect(pairsDeepestFirst([none, deep, other, unrelated, tie], T.toUpperCase().replace("0X", "0x"))).toEqual([tie, deep, none]);
  });

  it("prices a token as the base of its deepest such pair, else derives it from a pair quoting it", () => {
    const asQuote = pair({ base: U, quote: T, priceUsd: "3000", priceNative: "1500", liquidity: { usd: 1000 } });
    expect(priceFromPairs(T, [asQuote], 0)).toMatchObject({ price_usd: "2", method: "derived_from_quote", change_24h_pct: null });
    const asBase = pair({ base: T, quote: U, priceUsd: "2.01", liquidity: { usd: 10 }, priceChange: { h24: -1.5 } });
    expect(priceFromPairs(T, [asQuote, asBase], 0)).toMatchObject({ price_usd: "2.01", method: "base_token_price", change_24h_pct: -1.5 });
    expect(priceFromPairs(T, [pair({ base: T, quote: U, priceUsd: null })], 0)).toBeUndefined();
  });
});

describe("DefiLlama TVL series", () => {
  it("sums chain TVL without borrowed and staking keys, and compares with the point a day earlier", () => {
    expect(
      tvlFromSeries({
        name: "X",
        tvl: [
          { date: 1_000_000, totalLiquidityUSD: 200 },
          { date: 1_050_000, totalLiquidityUSD: 180 },
          { date: 1_100_000, totalLiquidityUSD: 150 },
        ],
        currentChainTvls: { Base: 100, Ethereum: 50, borrowed: 70, "Base-borrowed": 60, staking: 5 },
      }),
    ).toEqual({ tvl_usd: 150, change_24h_pct: -25 });
    expect(tvlFromSeries({ name: "X", tvl: [{ date: 1, totalLiquidityUSD: 3 }] })).toEqual({ tvl_usd: 3, change_24h_pct: null });
  });
});

describe("the label file", () => {
  it("is valid, and a bad one is refused with every problem named", () => {
    expect(() => parseLabelsFile({ description: "x", labels: [] })).not.toThrow();
    const entry = { address: "0x4200000000000000000000000000000000000010", name: "A", category: "bridge", networks: ["base"], source: "s" };
    expect(() => parseLabelsFile({ description: "x", labels: [entry, entry] })).toThrow(/labelled twice on base \(first at \/labels\/0\)/);
    expect(() => parseLabelsFile({ description: "x", labels: [{ ...entry, category: "casino" }] }, "labels.json")).toThrow(
      /labels\.json is invalid:\n {2}\/labels\/0\/category/,
    );
    expect(() => parseLabelsFile({ description: "x", labels: [{ ...entry, networks: [] }] })).toThrow(/\/labels\/0\/networks/);
  });
});

describe("the shared cache", () => {
  it("shares one load between concurrent misses, keeps values for their TTL and never caches failures", async () => {
    let now = 1;
    let loads = 0;
    const cache = new TtlCache<number>(1_000, { now: () => now });
    const load = async () => ++loads;
    const [a, b] = await Promise.all([cache.get("k", load), cache.get("k", load)]);
    expect([a.value, b.value, loads]).toEqual([1, 1, 1]);
    now = 1_001;
    expect((await cache.get("k", load)).value).toBe(1);
    now = 1_002;
    expect((await cache.get("k", load)).value).toBe(2);
    await expect(cache.get("x", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect((await cache.get("x", load)).value).toBe(3);
  });
});

describe("the methodology page", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("shows every fact, step and limit the answers carry, and the nav links to it", async () => {
    const res = await fetch(`${service.url}/methodology`);
    expect(res.status).toBe(200);
    const html = (await res.text())
      .replaceAll("&#39;", "'")
      .replaceAll("&quot;", '"')
      .replaceAll("&amp;", "&")
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">");
    for (const [endpoint, method] of Object.entries(ENDPOINT_METHODS)) {
      for (const text of [method.title, method.summary, ...method.steps, ...method.notChecked]) expect(html, endpoint).toContain(text);
      expect(methodologyFor(endpoint as keyof typeof ENDPOINT_METHODS).not_checked).toEqual(method.notChecked);
    }
    for (const fact of Object.values(METHOD_FACTS)) expect(html).toContain(fact);
    const home = await (await fetch(`${service.url}/`)).text();
    expect(home).toContain('href="/methodology"');
  });
});
