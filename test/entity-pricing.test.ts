/**
 * How many tokens one entity answer prices, and how many market-API calls that costs: against
 * the market-data stub server (a fresh one, so its request log is this file's own), with tokens
 * made up for the purpose besides the fixtures' real ones.
 */
import { type Address, getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PriceSource } from "../src/analytics/price-source.ts";
import type { TransferLog } from "../src/chain/log-scanner.ts";
import { cappedPrices, MAX_PRICED_TOKENS, tokensToPrice } from "../src/entity-intel/pricing.ts";
import { startUpstreamStubs, type UpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { DefiLlama } from "../src/upstreams/defillama.ts";
import { DexScreener } from "../src/upstreams/dexscreener.ts";

const USDC = base.usdc.address as Address;
const WETH = "0x4200000000000000000000000000000000000006" as Address;
/** The fixtures price this token on DefiLlama only (ENTB of the scenario). */
const LLAMA_ONLY = getAddress("0xb9052d0f8c36e337795188dc08e0b805d0ea46d9");

/** Made-up token `i` (no market API knows it): 0x…0001, 0x…0002, … */
const fake = (i: number) => getAddress(`0x${"ab".repeat(10)}${i.toString(16).padStart(20, "0")}`);

/** `n` transfers of `token` (only the token matters here). */
function transfers(token: Address, n: number): TransferLog[] {
  return Array.from({ length: n }, (_, i) => ({
    token,
    blockNumber: 100 + i,
    logIndex: 0,
    txHash: `0x${"00".repeat(32)}`,
    from: WETH,
    to: USDC,
    value: 1n,
  }));
}

let stubs: UpstreamStubs;
beforeAll(async () => {
  stubs = await startUpstreamStubs();
});
afterAll(() => stubs.close());

const priceSource = () =>
  new PriceSource(
    new DexScreener(stubs.urls.dexscreener, 5_000),
    new DefiLlama(stubs.urls.defillama, stubs.urls.defillamaCoins, 5_000),
    createLogger("silent"),
  );

/** The coins a DefiLlama coins request asked for. */
const coinsOf = (path: string) => decodeURIComponent(path.split("?")[0]?.split("/").at(-1) ?? "").split(",");

describe("the tokens an answer prices", () => {
  it("are the ones it always needs, then the most transfers, ties by address, up to the cap", () => {
    const logs = [
      ...transfers(fake(3), 2),
      ...transfers(fake(1), 5),
      ...transfers(fake(2), 2),
      ...transfers(USDC, 1),
      ...transfers(fake(4), 9),
    ];
    expect(tokensToPrice(logs, 2)).toEqual({ priced: [fake(4), fake(1)], notLookedUp: [fake(2), fake(3), USDC] });
    // USDC and WETH first, moved or not; the rest by transfer count, ties broken by address.
    expect(tokensToPrice(logs, 4, [USDC, WETH])).toEqual({ priced: [USDC, WETH, fake(4), fake(1)], notLookedUp: [fake(2), fake(3)] });
    expect(tokensToPrice(logs, 10)).toEqual({ priced: [fake(4), fake(1), fake(2), fake(3), USDC], notLookedUp: [] });
  });

  it(`of a window touching 100 tokens, only ${MAX_PRICED_TOKENS} are asked for: two DexScreener calls, DefiLlama keys 30 to a call`, async () => {
    expect(MAX_PRICED_TOKENS).toBe(60);
    // USDC and WETH the most active, 98 spam tokens with one transfer each, one of them priced by DefiLlama only.
    const spam = Array.from({ length: 97 }, (_, i) => fake(i + 1));
    const logs = [...transfers(USDC, 5), ...transfers(WETH, 4), ...transfers(LLAMA_ONLY, 3), ...spam.flatMap((t) => transfers(t, 1))];
    const before = stubs.requests.length;
    const { priced, notLookedUp } = await cappedPrices(priceSource(), logs);
    const sent = stubs.requests.slice(before);
    expect(sent.filter((r) => r.upstream === "dexscreener")).toHaveLength(2);
    const llama = sent.filter((r) => r.upstream === "defillama-coins");
    // 57 of the 60 have no DexScreener pair (the spam and LLAMA_ONLY): asked from DefiLlama in two calls of 30 and 28.
    expect(llama.map((r) => coinsOf(r.path).length)).toEqual([30, 28]);
    expect([...priced.keys()].sort()).toEqual([USDC, WETH, LLAMA_ONLY].sort());
    expect(priced.get(LLAMA_ONLY)).toMatchObject({ source: "defillama", price_usd: "0.045" });
    expect(priced.get(USDC)).toMatchObject({ source: "dexscreener", price_usd: "1.0001" });
    // The 40 least active spam tokens, by address: never sent to a price API.
    expect(notLookedUp).toEqual(spam.slice(57));
    const asked = new Set(sent.flatMap((r) => r.path.toLowerCase().match(/0x[0-9a-f]{40}/g) ?? []));
    for (const token of notLookedUp) expect(asked.has(token.toLowerCase())).toBe(false);
  });
});

describe("DefiLlama's coins API", () => {
  it("is asked for at most 30 coins a call, the answers merged", async () => {
    const usdcKey = `base:${USDC.toLowerCase()}`;
    const keys = [...Array.from({ length: 68 }, (_, i) => `base:${fake(i + 1).toLowerCase()}`), usdcKey];
    const llama = new DefiLlama(stubs.urls.defillama, stubs.urls.defillamaCoins, 5_000);
    const before = stubs.requests.length;
    const prices = await llama.coinPrices(keys);
    const changes = await llama.coinChanges24h(keys);
    const sent = stubs.requests.slice(before);
    expect(sent.map((r) => [r.path.split("/")[1], coinsOf(r.path).length])).toEqual([
      ["prices", 30],
      ["prices", 30],
      ["prices", 9],
      ["percentage", 30],
      ["percentage", 30],
      ["percentage", 9],
    ]);
    expect(new Set(sent.flatMap((r) => coinsOf(r.path))).size).toBe(69);
    expect(prices.value).toEqual({ [usdcKey]: expect.objectContaining({ price: 0.9999 }) });
    expect(Object.keys(changes.value)).toEqual([usdcKey]);
  });
});
