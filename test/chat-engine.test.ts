/**
 * The trading-assistant chat engine (src/chat/) on the shared market-data stubs, the shared
 * devnet and the compiled knowledge base. Every expected figure is written out by hand from
 * the fixtures in fixtures/upstreams/ (or the seeded fee blocks), never computed by the code
 * under test; every reply says "Not financial advice" exactly once, and `sources` lists every
 * figure it wrote. The LLM engine is driven by a local stand-in of an OpenAI-compatible API
 * that issues tool calls, and falls back to the built-in engine when that API fails or stalls.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { markets } from "../spec/routes/analytics.ts";
import type { AnalyticsSettings } from "../src/analytics/services.ts";
import { CAPABILITIES } from "../src/chat/builtin.ts";
import { type ChatLlmConfig, chatConfigFromEnv } from "../src/chat/config.ts";
import { chatDepsFromContext } from "../src/chat/deps.ts";
import { answerChat, type ChatAnswer, type ChatSource } from "../src/chat/engine.ts";
import type { FunctionContext } from "../src/context.ts";
import { ServiceError, UpstreamError } from "../src/errors.ts";
import { type StubFault, type StubUpstream, startUpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { mineFeeBlocks } from "./support/scenario.ts";
import { chainClient, devnet, testStore } from "./support/service.ts";

const USDC = base.usdc.address;
const PLAIN = "0x4557687c966Db5302e0d37A22dEA406BfA30d9b0";
const started = Date.now();

type StubUrls = { dexscreener: string; defillama: string; defillamaCoins: string; hyperliquid: string };

/** A function context as the dispatcher builds it, on the shared devnet and `urls` (the shared stubs by default). */
async function context(urls: StubUrls = inject("stubs"), timeoutMs = 5_000): Promise<FunctionContext> {
  const analytics: AnalyticsSettings = {
    mode: "local",
    upstreams: {
      dexscreenerUrl: urls.dexscreener,
      defillamaUrl: urls.defillama,
      defillamaCoinsUrl: urls.defillamaCoins,
      hyperliquidUrl: urls.hyperliquid,
      timeoutMs,
    },
  };
  return {
    config: {
      mode: "local",
      network: base.id,
      chainId: base.chainId,
      usdc: USDC,
      payTo: devnet().payTo,
      publicUrl: undefined,
      version: "test",
      validateResponses: true,
    },
    chain: chainClient(),
    log: createLogger("silent"),
    store: await testStore(),
    analytics,
    requestId: "chat-engine-test",
    payment: null,
    route: markets,
    now: () => new Date(),
  };
}

/** Occurrences of the disclaimer in a reply, in any case. */
function disclaimers(reply: string): number {
  return reply.match(/not financial advice/gi)?.length ?? 0;
}

/** The sources without their fetch times, after checking each time is an ISO instant within this test run. */
function withoutTimes(sources: readonly ChatSource[]): Record<string, unknown>[] {
  return sources.map((source) => {
    const { fetched_at, ...rest } = source as ChatSource & { fetched_at?: string };
    if (source.kind !== "kb") {
      expect(fetched_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const at = Date.parse(fetched_at as string);
      expect(at).toBeGreaterThanOrEqual(started - 1_000);
      expect(at).toBeLessThanOrEqual(Date.now());
    }
    return rest;
  });
}

// Figures of the fixtures, as sources list them.
const WETH_PRICE = [
  { kind: "price", symbol: "WETH", value: "3120.45", source: "dexscreener" },
  { kind: "change_24h", symbol: "WETH", value: 1.84, source: "dexscreener" },
];
const CBBTC_PRICE = [
  { kind: "price", symbol: "cbBTC", value: "97250.12", source: "dexscreener" },
  { kind: "change_24h", symbol: "cbBTC", value: 0.85, source: "dexscreener" },
];
const SOL_PRICE = [
  { kind: "price", symbol: "SOL", value: "171.2", source: "hyperliquid" },
  // (171.2 / 180.5 - 1) x 100 = -5.1523...
  { kind: "change_24h", symbol: "SOL", value: -5.15, source: "hyperliquid" },
];
const USDC_PRICE = [
  { kind: "price", symbol: "USDC", value: "1.0001", source: "dexscreener" },
  { kind: "change_24h", symbol: "USDC", value: 0.01, source: "dexscreener" },
];
const MARKETS = [
  ...WETH_PRICE,
  ...CBBTC_PRICE,
  { kind: "price", symbol: "cbETH", value: "3405.1", source: "dexscreener" },
  { kind: "change_24h", symbol: "cbETH", value: 1.72, source: "dexscreener" },
  { kind: "price", symbol: "AERO", value: "0.7211", source: "dexscreener" },
  { kind: "change_24h", symbol: "AERO", value: 4.02, source: "dexscreener" },
  { kind: "price", symbol: "USDC", value: "1.0001", source: "dexscreener" },
  { kind: "change_24h", symbol: "USDC", value: 0.01, source: "dexscreener" },
];
const funding = (symbol: string, perHour: string, per8h: string) => [
  { kind: "funding", symbol, value: perHour, source: "hyperliquid" },
  { kind: "funding_8h", symbol, value: per8h, source: "hyperliquid" },
];
const openInterest = (symbol: string, coins: string, usd: number, mark: string) => [
  { kind: "open_interest", symbol, value: coins, source: "hyperliquid" },
  { kind: "open_interest_usd", symbol, value: usd, source: "hyperliquid" },
  { kind: "price", symbol, value: mark, source: "hyperliquid" },
];

/** [question, text the reply must contain, the sources it must list (fetch times checked apart)]. */
const TABLE: [string, string[], Record<string, unknown>[]][] = [
  ["What is ETH at?", ["ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h."], WETH_PRICE],
  ["price of SOL", ["SOL is at $171.2 (Hyperliquid perpetual mark price), -5.15% over 24 h."], SOL_PRICE],
  ["What's the price of BTC right now?", ["BTC (cbBTC on Base) is at $97,250.12", "+0.85% over 24 h"], CBBTC_PRICE],
  [
    "How much is cbETH?",
    ["$3,405.1 (DexScreener, uniswap cbETH/WETH pair), +1.72% over 24 h"],
    [
      { kind: "price", symbol: "cbETH", value: "3405.1", source: "dexscreener" },
      { kind: "change_24h", symbol: "cbETH", value: 1.72, source: "dexscreener" },
    ],
  ],
  [
    "AERO price",
    // The deepest AERO pair is the aerodrome AERO/USDC one (5.4 M liquidity against 1.0 M).
    ["AERO on Base is at $0.7211 (DexScreener, aerodrome AERO/USDC pair), +4.02% over 24 h."],
    [
      { kind: "price", symbol: "AERO", value: "0.7211", source: "dexscreener" },
      { kind: "change_24h", symbol: "AERO", value: 4.02, source: "dexscreener" },
    ],
  ],
  [
    "What is USDC trading at?",
    ["USDC on Base is at $1.0001", "+0.01% over 24 h"],
    [
      { kind: "price", symbol: "USDC", value: "1.0001", source: "dexscreener" },
      { kind: "change_24h", symbol: "USDC", value: 0.01, source: "dexscreener" },
    ],
  ],
  [
    `price of ${PLAIN}`,
    ["PLAIN (0x4557…d9b0) is at $0.312045 (DexScreener, uniswap PLAIN/WETH pair), -3.20% over 24 h."],
    [
      { kind: "price", symbol: "PLAIN", id: PLAIN, value: "0.312045", source: "dexscreener" },
      { kind: "change_24h", symbol: "PLAIN", id: PLAIN, value: -3.2, source: "dexscreener" },
    ],
  ],
  ["How did ETH move in the last 24h?", ["+1.84% over 24 h"], WETH_PRICE],
  ["How is SOL doing today?", ["-5.15% over 24 h"], SOL_PRICE],
  [
    "Is HYPE up or down today?",
    // (27.35 / 24.1 - 1) x 100 = 13.4854...
    ["HYPE is at $27.35 (Hyperliquid perpetual mark price), +13.49% over 24 h."],
    [
      { kind: "price", symbol: "HYPE", value: "27.35", source: "hyperliquid" },
      { kind: "change_24h", symbol: "HYPE", value: 13.49, source: "hyperliquid" },
    ],
  ],
  ["Compare ETH and BTC", ["Over 24 h ETH did better than BTC (+1.84% against +0.85%)."], [...WETH_PRICE, ...CBBTC_PRICE]],
  ["SOL vs ETH: which one moved better?", ["Over 24 h ETH did better than SOL (+1.84% against -5.15%)."], [...SOL_PRICE, ...WETH_PRICE]],
  [
    "What is the ETH funding rate?",
    // Hourly 0.0000125 = 0.00125 %; eight hours: 0.01 %.
    ["ETH funding on Hyperliquid is +0.00125% per hour (+0.01% per 8 h): longs pay shorts."],
    funding("ETH", "0.00125", "0.01"),
  ],
  [
    "funding for BTC",
    ["BTC funding on Hyperliquid is -0.00034% per hour (-0.00272% per 8 h): shorts pay longs."],
    funding("BTC", "-0.00034", "-0.00272"),
  ],
  [
    "SOL funding",
    ["SOL funding on Hyperliquid is -0.0035% per hour (-0.028% per 8 h): shorts pay longs."],
    funding("SOL", "-0.0035", "-0.028"),
  ],
  [
    "open interest on ETH",
    // 612,345.12 x 3,121.3 = 1,911,312,823.056
    ["ETH open interest on Hyperliquid is 612,345.12 ETH, about $1,911,312,823 at the mark price $3,121.3."],
    openInterest("ETH", "612345.12", 1_911_312_823, "3121.3"),
  ],
  [
    "What's the open interest for HYPE?",
    // 10,212,330.2 x 27.35 = 279,307,230.97
    ["HYPE open interest on Hyperliquid is 10,212,330.2 HYPE, about $279,307,231 at the mark price $27.35."],
    openInterest("HYPE", "10212330.2", 279_307_231, "27.35"),
  ],
  [
    "BTC funding and open interest",
    // 28,150.2231 x 97,240 = 2,737,327,694.244
    ["BTC funding on Hyperliquid is -0.00034% per hour", "28,150.2231 BTC, about $2,737,327,694 at the mark price $97,240."],
    [...funding("BTC", "-0.00034", "-0.00272"), ...openInterest("BTC", "28150.2231", 2_737_327_694, "97240")],
  ],
  [
    "Show me the watched markets",
    [
      "The watched Base markets, with 24 h changes: WETH $3,120.45 (+1.84%), cbBTC $97,250.12 (+0.85%), cbETH $3,405.1 (+1.72%), " +
        "AERO $0.7211 (+4.02%) and USDC $1.0001 (+0.01%); prices from DexScreener unless marked.",
    ],
    MARKETS,
  ],
  ["Should I buy ETH?", ["I can't tell you whether to buy or sell", "ETH (WETH on Base) is at $3,120.45"], WETH_PRICE],
  [
    "Who pays the gas in an x402 payment, and does the buyer need ETH on Base?",
    ["From the knowledge base, “Who pays the gas in an x402 payment, and does the buyer need ETH on Base?”: The facilitator pays the gas."],
    [
      {
        kind: "kb",
        id: "who-pays-gas-x402",
        title: "Who pays the gas in an x402 payment, and does the buyer need ETH on Base?",
        source: "knowledge-base",
      },
    ],
  ],
  [
    "check with viem that a transaction hash sent USDC to my address",
    ["Fetch the transaction receipt and look for a USDC `Transfer` event to the expected recipient", "(entry verify-usdc-payment-onchain)"],
    [
      {
        kind: "kb",
        id: "verify-usdc-payment-onchain",
        title: "How do I verify on chain that an x402 payment in USDC on Base really happened?",
        source: "knowledge-base",
      },
    ],
  ],
  [
    "how do I set up a facilitator",
    ["“Which facilitator can verify and settle x402 payments on Base mainnet?”: Three practical options exist for Base mainnet"],
    [
      {
        kind: "kb",
        id: "x402-facilitators-base",
        title: "Which facilitator can verify and settle x402 payments on Base mainnet?",
        source: "knowledge-base",
      },
    ],
  ],
];

let ctx: FunctionContext;
beforeAll(async () => {
  ctx = await context();
});

describe("the built-in engine on the stubs' figures", () => {
  it("has a table of more than 20 questions", () => {
    expect(TABLE.length).toBe(23);
  });

  it.each(TABLE)("%s", async (question, contains, sources) => {
    const answer = await answerChat(question, chatDepsFromContext(ctx));
    expect(answer.engine).toBe("builtin");
    expect(answer.fallback).toBeUndefined();
    for (const text of contains) expect(answer.reply).toContain(text);
    expect(disclaimers(answer.reply)).toBe(1);
    expect(answer.reply.endsWith("Not financial advice.")).toBe(true);
    expect(withoutTimes(answer.sources)).toEqual(sources);
  });

  it("takes a symbol written beside a token's address as that token's label, not a second asset to look up", async () => {
    const expected = "PLAIN (0x4557…d9b0) is at $0.312045 (DexScreener, uniswap PLAIN/WETH pair), -3.20% over 24 h.";
    for (const question of [`price of PLAIN ${PLAIN}`, `What is ${PLAIN} (PLAIN) trading at?`, `PLAIN: ${PLAIN} price`]) {
      const answer = await answerChat(question, chatDepsFromContext(ctx));
      expect([question, answer.reply]).toEqual([question, `${expected} Not financial advice.`]);
    }
  });

  it("answers gas now from the last 20 blocks and the fixture ETH price, listing every figure", async () => {
    const plan = await mineFeeBlocks(devnet().rpcUrl);
    const pending = await chainClient().getBlock({ blockTag: "pending" });
    const baseFee = pending.baseFeePerGas as bigint;
    // Five transfers per seeded block: medians of the tips are 2.5 M, 12 M and 100 M wei (src/local/devnet/scenario.ts).
    const cost = (gas: bigint, tip: bigint) => {
      const scaled = gas * (baseFee + tip) * 312_045n; // wei x (USD x 100) per ETH
      const unit = 10n ** 12n;
      return Number((scaled * 2n + unit) / (2n * unit)) / 1e8;
    };
    const answer = await answerChat("How much is gas right now?", chatDepsFromContext(ctx));
    const baseFeeGwei = Number(baseFee) / 1e9;
    expect(answer.reply).toContain(
      `Gas on Base (block ${plan.blocks.at(-1)}): the next block's base fee is ${baseFeeGwei} gwei; ` +
        "priority fees are 0.0025 gwei (low), 0.012 gwei (medium) and 0.1 gwei (high).",
    );
    expect(answer.reply).toContain("At ETH $3,120.45 (DexScreener), a plain ETH transfer (21,000 gas) costs about $");
    expect(disclaimers(answer.reply)).toBe(1);
    const at = { source: "chain" };
    expect(withoutTimes(answer.sources)).toEqual([
      { kind: "gas", id: "base_fee_gwei", value: baseFeeGwei, ...at },
      { kind: "gas", id: "priority_fee_low_gwei", value: 0.0025, ...at },
      { kind: "gas", id: "priority_fee_medium_gwei", value: 0.012, ...at },
      { kind: "gas", id: "priority_fee_high_gwei", value: 0.1, ...at },
      { kind: "gas", id: "transfer_21000_usd", value: cost(21_000n, 12_000_000n), ...at },
      { kind: "gas", id: "erc20_transfer_65000_usd", value: cost(65_000n, 12_000_000n), ...at },
      { kind: "price", symbol: "WETH", value: "3120.45", source: "dexscreener" },
    ]);
  });

  /** The 400 a message the engine cannot answer gets: what it found, that nothing was charged, and what it can answer. */
  async function refusal(question: string): Promise<ServiceError> {
    const error = await answerChat(question, chatDepsFromContext(ctx)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    const refused = error as ServiceError;
    expect(refused.code).toBe("invalid_request");
    expect(refused.status).toBe(400);
    expect(refused.details?.fields).toEqual([{ field: "body.message", expected: `a question the assistant can answer. ${CAPABILITIES}` }]);
    return refused;
  }

  it("names an unknown symbol instead of guessing a price, in a 400", async () => {
    const error = await refusal("price of DOGE");
    expect(error.message).toBe(
      "I don't know DOGE: it is not one of the watched Base tokens (WETH, cbBTC, cbETH, AERO and USDC) and Hyperliquid lists no perpetual named DOGE. " +
        `Ask with the token's Base contract address (0x…) to price it from its deepest DEX pair. This message was not charged. ${CAPABILITIES}`,
    );
    expect(error.details?.closest_entries).toEqual([]);
  });

  it("answers the known asset of a comparison and names the unknown one", async () => {
    const answer = await answerChat("compare ETH and PEPE", chatDepsFromContext(ctx));
    expect(answer.reply).toContain("ETH (WETH on Base) is at $3,120.45");
    expect(answer.reply).toContain("I don't know PEPE");
    expect(answer.reply).toContain("I can't compare their 24 h moves: I have the 24 h change of fewer than two of them.");
    expect(withoutTimes(answer.sources)).toEqual(WETH_PRICE);
  });

  // The entry on who pays the gas ("needs USDC, no ETH") is the knowledge base's confident match for
  // "eth and usdc", so that message got the entry's answer, charged, instead of the two prices.
  it.each([
    [
      "eth and usdc",
      [
        "ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h.",
        "USDC on Base is at $1.0001 (DexScreener, aerodrome USDC/USDbC pair), +0.01% over 24 h.",
      ],
      [...WETH_PRICE, ...USDC_PRICE],
    ],
    ["eth", ["ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h."], WETH_PRICE],
    ["ETH?", ["ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h."], WETH_PRICE],
    [
      "$eth and sol 🚀",
      [
        "ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h.",
        "SOL is at $171.2 (Hyperliquid perpetual mark price), -5.15% over 24 h.",
      ],
      [...WETH_PRICE, ...SOL_PRICE],
    ],
  ] as const)("prices the assets of a message that only names them: %j", async (question, sentences, sources) => {
    const answer = await answerChat(question, chatDepsFromContext(ctx));
    expect(answer.reply).toBe(`${sentences.join(" ")} Not financial advice.`);
    expect(withoutTimes(answer.sources)).toEqual(sources);
  });

  // The entry on who pays the gas matched these only by "usdc" and "eth" (its answer: "needs USDC, no ETH"),
  // and answered them, charged, instead of the two prices.
  it.each(["convert 100 usdc to eth", "swap eth to usdc"])(
    "prices the assets of %j rather than answer with a knowledge-base entry",
    async (question) => {
      const answer = await answerChat(question, chatDepsFromContext(ctx));
      const [first, second] = question.startsWith("convert") ? [USDC_PRICE, WETH_PRICE] : [WETH_PRICE, USDC_PRICE];
      expect(withoutTimes(answer.sources)).toEqual([...first, ...second]);
      expect(answer.reply).toContain("ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h.");
      expect(answer.reply).toContain("USDC on Base is at $1.0001 (DexScreener, aerodrome USDC/USDbC pair), +0.01% over 24 h.");
    },
  );

  it.each([
    ["do I need to hold ETH in my agent's wallet", "who-pays-gas-x402"],
    ["does x402 work on solana", "x402-v2-challenge-fields"],
    ["what name and version go in the EIP-712 domain when signing for USDC", "base-usdc-contract"],
  ])("still answers %j from the knowledge base (%s)", async (question, id) => {
    const answer = await answerChat(question, chatDepsFromContext(ctx));
    expect(answer.sources.map((s) => s.kind === "kb" && s.id)).toEqual([id]);
  });

  // The comparison named each asset by the word typed, in capitals: "ETH did better than CBETH", "than
  // 0X4557687C966DB5302E0D37A22DEA406BFA30D9B0", and "WBTC" after a sentence pricing it as "BTC".
  it.each([
    ["cbeth vs eth", "Over 24 h ETH did better than cbETH (+1.84% against +1.72%)."],
    [`compare eth and ${PLAIN}`, "Over 24 h ETH did better than PLAIN (+1.84% against -3.20%)."],
    // Hyperliquid's BTC: 97,240 against 96,110 a day before, +1.1757%.
    ["wbtc vs cbbtc", "Over 24 h BTC did better than cbBTC (+1.18% against +0.85%)."],
  ])("names the assets of %j in its comparison as their price sentences do", async (question, sentence) => {
    const answer = await answerChat(question, chatDepsFromContext(ctx));
    expect(answer.reply.endsWith(`${sentence} Not financial advice.`)).toBe(true);
  });

  // The word before "vs" or "against" was taken for an asset: "I don't know PERFORM: it is not one of the
  // watched Base tokens...", in a charged reply about ETH and BTC.
  it.each(["how does eth perform against btc", "eth strength vs btc"])("takes no word of %j for an unknown asset", async (question) => {
    const answer = await answerChat(question, chatDepsFromContext(ctx));
    expect(answer.reply).toBe(
      "ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h. " +
        "BTC (cbBTC on Base) is at $97,250.12 (DexScreener, aerodrome cbBTC/USDC pair), +0.85% over 24 h. " +
        "Over 24 h ETH did better than BTC (+1.84% against +0.85%). Not financial advice.",
    );
    expect(withoutTimes(answer.sources)).toEqual([...WETH_PRICE, ...CBBTC_PRICE]);
  });

  it('takes no "about" for an asset in the follow-up "how about vs sol"', async () => {
    const answer = await answerChat("how about vs sol", chatDepsFromContext(ctx));
    expect(answer.reply).toBe(
      "SOL is at $171.2 (Hyperliquid perpetual mark price), -5.15% over 24 h. " +
        "Name two assets to compare them (for example “compare ETH and BTC”). Not financial advice.",
    );
    expect(withoutTimes(answer.sources)).toEqual(SOL_PRICE);
  });

  // "compare X and Y" made AAVE and UNISWAP assets to price: the reply gave both TVLs, then said it
  // did not know AAVE or UNISWAP and could not compare them.
  it("compares two protocols' TVLs without taking the protocols for unknown assets", async () => {
    const answer = await answerChat("compare aave and uniswap tvl", chatDepsFromContext(ctx));
    expect(answer.reply).toBe(
      "Aave's TVL on DefiLlama is $27,710,000,000 (all its versions: aave-v2 and aave-v3), -0.87% over 24 h. " +
        "Uniswap's TVL on DefiLlama is $5,581,720,331 (all its versions: uniswap-v2 and uniswap-v3), -0.21% over 24 h. Not financial advice.",
    );
    // Uniswap: its two versions in the list, 4,101,220,330.2 + 1,480,500,000.5.
    expect(answer.sources.map((s) => (s.kind === "tvl" ? [s.id, s.value] : [s.kind, s.id]))).toEqual([
      ["aave", 27_710_000_000],
      ["tvl_change_24h", "aave"],
      ["uniswap", 5_581_720_330.7],
      ["tvl_change_24h", "uniswap"],
    ]);
  });

  // With a capital X the address was not read at all: the reply listed the watched markets, charged, instead of AERO.
  it("prices a token whose address is pasted with a capital 0X", async () => {
    const answer = await answerChat("price of 0X940181A94A35A4569E4529A3CDFB74E38FD98631", chatDepsFromContext(ctx));
    expect(answer.reply).toBe(
      "AERO (0x9401…8631) is at $0.7211 (DexScreener, aerodrome AERO/USDC pair), +4.02% over 24 h. Not financial advice.",
    );
    const AERO = "0x940181a94A35A4569E4529A3CDfB74e38FD98631";
    expect(withoutTimes(answer.sources)).toEqual([
      { kind: "price", symbol: "AERO", id: AERO, value: "0.7211", source: "dexscreener" },
      { kind: "change_24h", symbol: "AERO", id: AERO, value: 4.02, source: "dexscreener" },
    ]);
  });

  // Only the first two were compared: "ETH did better than BTC", with SOL priced but left out.
  it("ranks every asset of a comparison of three", async () => {
    const answer = await answerChat("btc vs eth vs sol", chatDepsFromContext(ctx));
    expect(answer.reply).toBe(
      "BTC (cbBTC on Base) is at $97,250.12 (DexScreener, aerodrome cbBTC/USDC pair), +0.85% over 24 h. " +
        "ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h. " +
        "SOL is at $171.2 (Hyperliquid perpetual mark price), -5.15% over 24 h. " +
        "Over 24 h, from best to worst: ETH (+1.84%), BTC (+0.85%) and SOL (-5.15%). Not financial advice.",
    );
    expect(withoutTimes(answer.sources)).toEqual([...CBBTC_PRICE, ...WETH_PRICE, ...SOL_PRICE]);
  });

  it("names the closest knowledge-base entries in a 400 when none answers", async () => {
    const error = await refusal("what is x402?");
    const title = "What are /.well-known/x402 and /openapi.json for an x402 service, and what goes in them?";
    expect(error.message).toBe(
      `No entry of the knowledge base clearly answers that. The closest are “${title}” (x402-discovery-documents). This message was not charged. ${CAPABILITIES}`,
    );
    expect(error.details?.closest_entries).toEqual([{ id: "x402-discovery-documents", title }]);
  });

  it("says in a 400 that a watched token without a perpetual has no funding", async () => {
    const error = await refusal("AERO funding rate");
    expect(error.message).toBe(
      `Hyperliquid lists no perpetual for AERO, so I have no funding or open interest for it. This message was not charged. ${CAPABILITIES}`,
    );
  });

  it.each(["tell me a joke", "What's the weather in Paris tomorrow?", "how do I get rich"])(
    "answers %j with a 400 saying what it can do",
    async (question) => {
      const error = await refusal(question);
      expect(error.message).toBe(
        `I can't answer that: it is not about prices, funding, gas, TVL, the watched markets or the knowledge base. This message was not charged. ${CAPABILITIES}`,
      );
    },
  );

  it('answers "what can you do?" with what it can do', async () => {
    const answer = await answerChat("what can you do?", chatDepsFromContext(ctx));
    expect(answer.reply).toBe(`${CAPABILITIES} Not financial advice.`);
    expect(answer.sources).toEqual([]);
    expect(answer.engine).toBe("builtin");
  });
});

describe("the built-in engine when an upstream fails", () => {
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function faultyContext(faults: Partial<Record<StubUpstream, StubFault>>): Promise<FunctionContext> {
    const stubs = await startUpstreamStubs({ faults, slowMs: 3_000 });
    servers.push(stubs);
    return context(stubs.urls, 300);
  }

  it("throws Hyperliquid's 502 for a funding question: no figure is made up", async () => {
    const failing = await faultyContext({ hyperliquid: "error" });
    const error = await answerChat("What is the ETH funding rate?", chatDepsFromContext(failing)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: "upstream_error", status: 502, upstream: "hyperliquid" });
  });

  it("throws a 504 when Hyperliquid is too slow", async () => {
    const slow = await faultyContext({ hyperliquid: "slow" });
    const error = await answerChat("price of SOL", chatDepsFromContext(slow)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "upstream_timeout", status: 504, upstream: "hyperliquid" });
  });

  it("throws a 503 when DexScreener and DefiLlama coins are both rate-limiting", async () => {
    const down = await faultyContext({ dexscreener: "rate_limited", "defillama-coins": "rate_limited" });
    const error = await answerChat("What is ETH at?", chatDepsFromContext(down)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "unavailable", status: 503, upstream: "dexscreener" });
  });

  it("prices from DefiLlama when DexScreener fails, and says so", async () => {
    const fallback = await faultyContext({ dexscreener: "error" });
    const answer = await answerChat("What is ETH at?", chatDepsFromContext(fallback));
    expect(answer.reply).toBe("ETH (WETH on Base) is at $3,119.87 (DefiLlama), +1.79% over 24 h. Not financial advice.");
    expect(withoutTimes(answer.sources)).toEqual([
      { kind: "price", symbol: "WETH", value: "3119.87", source: "defillama" },
      { kind: "change_24h", symbol: "WETH", value: 1.79, source: "defillama" },
    ]);
  });

  it("answers the part it can and names the part whose upstream is down", async () => {
    const partial = await faultyContext({ hyperliquid: "error" });
    const answer = await answerChat("compare ETH and SOL", chatDepsFromContext(partial));
    expect(answer.reply).toBe(
      "ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h. " +
        "I could not get the price of SOL just now: hyperliquid did not answer properly (upstream_error); ask again shortly. " +
        "I can't compare their 24 h moves: I have the 24 h change of fewer than two of them. Not financial advice.",
    );
    expect(withoutTimes(answer.sources)).toEqual(WETH_PRICE);
  });
});

/** A scripted stand-in of an OpenAI-compatible chat-completions API. */
interface StandIn {
  url: string;
  requests: { headers: IncomingMessage["headers"]; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

async function standIn(
  respond: (body: Record<string, unknown>, turn: number, res: ServerResponse) => void,
): Promise<StandIn & { server: Server }> {
  const requests: StandIn["requests"] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(text) as Record<string, unknown>;
      requests.push({ headers: req.headers, body });
      respond(body, requests.length, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function completion(res: ServerResponse, message: Record<string, unknown>): void {
  res.writeHead(200, { "content-type": "application/json" }).end(
    JSON.stringify({
      id: "chatcmpl-test",
      object: "chat.completion",
      model: "stand-in",
      choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "stop" }],
    }),
  );
}

function llmConfig(url: string, overrides: Partial<ChatLlmConfig> = {}): ChatLlmConfig {
  return { url, model: "stand-in-model", apiKey: "test-key", timeoutMs: 5_000, maxRounds: 4, ...overrides };
}

describe("the LLM engine against a local stand-in", () => {
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it("runs the tool call the model asks for on the live data and answers with the model's final message", async () => {
    const api = await standIn((body, turn, res) => {
      if (turn === 1) {
        completion(res, {
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_price", arguments: JSON.stringify({ asset: "ETH" }) } }],
        });
        return;
      }
      // The final message quotes what the tool returned, as a model would.
      const messages = body.messages as { role: string; tool_call_id?: string; content: string }[];
      const tool = messages.find((m) => m.role === "tool" && m.tool_call_id === "call_1");
      const result = JSON.parse(tool?.content ?? "{}") as { price_usd: string; change_24h_pct: number; source: string };
      completion(res, {
        content: `ETH is at $${result.price_usd}, ${result.change_24h_pct}% over 24 h (${result.source}). This is not financial advice.`,
      });
    });
    servers.push(api);

    const answer: ChatAnswer = await answerChat("what is ETH doing?", chatDepsFromContext(ctx), llmConfig(api.url));
    expect(answer.engine).toBe("llm");
    expect(answer.fallback).toBeUndefined();
    expect(answer.reply).toBe("ETH is at $3120.45, 1.84% over 24 h (dexscreener). Not financial advice.");
    expect(withoutTimes(answer.sources)).toEqual(WETH_PRICE);

    expect(api.requests).toHaveLength(2);
    const [first, second] = api.requests as [StandIn["requests"][number], StandIn["requests"][number]];
    expect(first.headers.authorization).toBe("Bearer test-key");
    expect(first.body.model).toBe("stand-in-model");
    expect(first.body.tool_choice).toBe("auto");
    expect((first.body.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual([
      "get_price",
      "get_markets",
      "get_funding",
      "get_gas",
      "get_tvl",
      "search_knowledge_base",
    ]);
    expect((first.body.messages as { role: string; content: string }[]).at(-1)).toEqual({ role: "user", content: "what is ETH doing?" });
    const toolMessage = (second.body.messages as { role: string; tool_call_id?: string; content: string }[]).at(-1);
    expect(toolMessage?.role).toBe("tool");
    expect(toolMessage?.tool_call_id).toBe("call_1");
    expect(JSON.parse(toolMessage?.content ?? "{}")).toMatchObject({
      symbol: "WETH",
      price_usd: "3120.45",
      change_24h_pct: 1.84,
      basis: "spot",
      source: "dexscreener",
      venue: "aerodrome WETH/USDC",
    });
  });

  it("runs several tool calls (funding and the knowledge base) and cites every figure and entry returned", async () => {
    const api = await standIn((_body, turn, res) => {
      if (turn === 1) {
        completion(res, {
          content: null,
          tool_calls: [
            { id: "a", type: "function", function: { name: "get_funding", arguments: JSON.stringify({ asset: "SOL" }) } },
            {
              id: "b",
              type: "function",
              function: { name: "search_knowledge_base", arguments: JSON.stringify({ query: "who pays the gas in an x402 payment" }) },
            },
          ],
        });
        return;
      }
      completion(res, { content: "SOL funding is -0.0035% per hour; the facilitator pays the gas (who-pays-gas-x402)." });
    });
    servers.push(api);

    const answer = await answerChat("SOL funding, and who pays gas?", chatDepsFromContext(ctx), llmConfig(api.url));
    expect(answer.engine).toBe("llm");
    expect(answer.reply).toBe("SOL funding is -0.0035% per hour; the facilitator pays the gas (who-pays-gas-x402). Not financial advice.");
    expect(withoutTimes(answer.sources)).toEqual([
      ...funding("SOL", "-0.0035", "-0.028"),
      // 3,012,345.6 x 171.2 = 515,713,566.72
      ...openInterest("SOL", "3012345.6", 515_713_567, "171.2"),
      {
        kind: "kb",
        id: "who-pays-gas-x402",
        title: "Who pays the gas in an x402 payment, and does the buyer need ETH on Base?",
        source: "knowledge-base",
      },
    ]);
  });

  it("falls back to the built-in engine when the API answers 500, and says so", async () => {
    const api = await standIn((_body, _turn, res) => {
      res.writeHead(500, { "content-type": "application/json" }).end('{"error":"boom"}');
    });
    servers.push(api);
    const answer = await answerChat("What is ETH at?", chatDepsFromContext(ctx), llmConfig(api.url));
    expect(answer.engine).toBe("builtin");
    expect(answer.fallback).toEqual({
      from: "llm",
      reason: "llm_unavailable",
      message: "The LLM API answered HTTP 500. The built-in engine answered instead.",
    });
    expect(answer.reply).toBe(
      "ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h. Not financial advice.",
    );
    expect(withoutTimes(answer.sources)).toEqual(WETH_PRICE);
  });

  it("falls back within its time budget when the API stalls", async () => {
    const api = await standIn(() => {
      // Never answers: the engine's budget must end the wait.
    });
    servers.push(api);
    const begin = Date.now();
    const answer = await answerChat("price of SOL", chatDepsFromContext(ctx), llmConfig(api.url, { timeoutMs: 400 }));
    const elapsed = Date.now() - begin;
    expect(answer.engine).toBe("builtin");
    expect(answer.fallback).toEqual({
      from: "llm",
      reason: "llm_timeout",
      message: "The LLM gave no answer within 400 ms. The built-in engine answered instead.",
    });
    expect(answer.reply).toBe("SOL is at $171.2 (Hyperliquid perpetual mark price), -5.15% over 24 h. Not financial advice.");
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeLessThan(3_000);
  });

  it("falls back when the API answers something that is not a chat completion", async () => {
    const api = await standIn((_body, _turn, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end('{"choices": []}');
    });
    servers.push(api);
    const answer = await answerChat("SOL funding", chatDepsFromContext(ctx), llmConfig(api.url));
    expect(answer.engine).toBe("builtin");
    expect(answer.fallback?.reason).toBe("llm_bad_answer");
    expect(answer.reply).toBe("SOL funding on Hyperliquid is -0.0035% per hour (-0.028% per 8 h): shorts pay longs. Not financial advice.");
  });

  it("forbids more tool calls after maxRounds, and takes the final message", async () => {
    const api = await standIn((body, _turn, res) => {
      if (body.tool_choice === "none") return completion(res, { content: "Gas data was fetched twice." });
      completion(res, { content: null, tool_calls: [{ id: "g", type: "function", function: { name: "get_markets", arguments: "{}" } }] });
    });
    servers.push(api);
    const answer = await answerChat("markets?", chatDepsFromContext(ctx), llmConfig(api.url, { maxRounds: 2 }));
    expect(api.requests.map((r) => r.body.tool_choice)).toEqual(["auto", "auto", "none"]);
    expect(answer.engine).toBe("llm");
    expect(answer.reply).toBe("Gas data was fetched twice. Not financial advice.");
    expect(withoutTimes(answer.sources)).toEqual(MARKETS);
  });
});

describe("chatConfigFromEnv", () => {
  it("uses the built-in engine when no LLM is configured", () => {
    const problems: string[] = [];
    expect(chatConfigFromEnv({}, problems)).toBeNull();
    expect(problems).toEqual([]);
  });

  it("reads the LLM settings with their defaults", () => {
    const problems: string[] = [];
    expect(
      chatConfigFromEnv({ CHAT_LLM_URL: "https://api.example.com/v1/", CHAT_LLM_MODEL: "m", CHAT_LLM_API_KEY: "k" }, problems),
    ).toEqual({ url: "https://api.example.com/v1", model: "m", apiKey: "k", timeoutMs: 15_000, maxRounds: 4 });
    expect(problems).toEqual([]);
  });

  it("lists every problem at once", () => {
    const problems: string[] = [];
    chatConfigFromEnv({ CHAT_LLM_URL: "ftp://x", CHAT_LLM_TIMEOUT_MS: "5", CHAT_LLM_MAX_ROUNDS: "99" }, problems);
    expect(problems).toEqual([
      'CHAT_LLM_TIMEOUT_MS must be an integer 1000-120000, got "5"',
      'CHAT_LLM_MAX_ROUNDS must be an integer 1-10, got "99"',
      'CHAT_LLM_URL must be an http(s) URL, got "ftp://x"',
      "CHAT_LLM_MODEL is required with CHAT_LLM_URL (e.g. gpt-4o-mini)",
    ]);
  });
});
