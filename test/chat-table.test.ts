/**
 * The trading assistant on 40 questions in buyers' own words, each with the intent it must be
 * routed to and the figures it must quote, written out by hand from fixtures/upstreams/ and
 * the seeded fee blocks: prices, 24 h moves and comparisons; funding and open interest; gas
 * and what a USDC transfer costs; a protocol's TVL and its change; how-to questions; and
 * questions it cannot answer, which must be a 400 naming `body.message` (never charged; the
 * on-chain check is in test/chat-route.test.ts). At least 36 of the 40 must be routed right
 * with the figures exact; the questions a buyer's trial reported wrong must all be.
 */
import { isDeepStrictEqual } from "node:util";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { markets } from "../spec/routes/analytics.ts";
import type { AnalyticsSettings } from "../src/analytics/services.ts";
import { CAPABILITIES } from "../src/chat/builtin.ts";
import { chatDepsFromContext } from "../src/chat/deps.ts";
import { answerChat, type ChatSource } from "../src/chat/engine.ts";
import { runChatTool } from "../src/chat/tools.ts";
import type { FunctionContext } from "../src/context.ts";
import { ServiceError } from "../src/errors.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { mineFeeBlocks } from "./support/scenario.ts";
import { chainClient, devnet, testStore } from "./support/service.ts";

const PLAIN = "0x4557687c966Db5302e0d37A22dEA406BfA30d9b0";

async function context(): Promise<FunctionContext> {
  const urls = inject("stubs");
  const analytics: AnalyticsSettings = {
    mode: "local",
    upstreams: {
      dexscreenerUrl: urls.dexscreener,
      defillamaUrl: urls.defillama,
      defillamaCoinsUrl: urls.defillamaCoins,
      hyperliquidUrl: urls.hyperliquid,
      timeoutMs: 5_000,
    },
  };
  return {
    config: {
      mode: "local",
      network: base.id,
      chainId: base.chainId,
      usdc: base.usdc.address,
      payTo: devnet().payTo,
      publicUrl: undefined,
      version: "test",
      validateResponses: true,
    },
    chain: chainClient(),
    log: createLogger("silent"),
    store: await testStore(),
    analytics,
    requestId: "chat-table-test",
    payment: null,
    route: markets,
    now: () => new Date(),
  };
}

type Intent = "price" | "move" | "compare" | "markets" | "funding" | "open_interest" | "gas" | "transfer_cost" | "tvl" | "kb" | "none";

type Figure = Record<string, unknown>;
const price = (symbol: string, value: string, change: number, source = "dexscreener"): Figure[] => [
  { kind: "price", symbol, value, source },
  { kind: "change_24h", symbol, value: change, source },
];
const WETH = price("WETH", "3120.45", 1.84);
const CBBTC = price("cbBTC", "97250.12", 0.85);
const CBETH = price("cbETH", "3405.1", 1.72);
// (171.2 / 180.5 - 1) x 100 = -5.1523...; (27.35 / 24.1 - 1) x 100 = 13.4854...
const SOL = price("SOL", "171.2", -5.15, "hyperliquid");
const HYPE = price("HYPE", "27.35", 13.49, "hyperliquid");
const MARKETS = [...WETH, ...CBBTC, ...CBETH, ...price("AERO", "0.7211", 4.02), ...price("USDC", "1.0001", 0.01)];
const funding = (symbol: string, perHour: string, per8h: string): Figure[] => [
  { kind: "funding", symbol, value: perHour, source: "hyperliquid" },
  { kind: "funding_8h", symbol, value: per8h, source: "hyperliquid" },
];
const oi = (symbol: string, coins: string, usd: number, mark: string): Figure[] => [
  { kind: "open_interest", symbol, value: coins, source: "hyperliquid" },
  { kind: "open_interest_usd", symbol, value: usd, source: "hyperliquid" },
  { kind: "price", symbol, value: mark, source: "hyperliquid" },
];
const tvl = (slug: string, usd: number, change: number): Figure[] => [
  { kind: "tvl", id: slug, value: usd, source: "defillama" },
  { kind: "tvl_change_24h", id: slug, value: change, source: "defillama" },
];
// fixtures/upstreams/defillama-protocol-aave.json: chain TVLs without borrowed and staking
// (23.1 + 2.2 + 1.31 + 1.1 billion); the change from the last point a day before the current one.
const AAVE = tvl("aave", 27_710_000_000, (28_153 / 28_400 - 1) * 100);
// Moonwell has no change in the list: from its series, 320 M now against 328 M a day before.
const MOONWELL = tvl("moonwell", 320_000_000, (320 / 328 - 1) * 100);
// Uniswap has no /protocol answer in the fixtures: its two versions in the list, summed, and the change weighted by TVL.
const UNI_TVL = 4_101_220_330.2 + 1_480_500_000.5;
const UNISWAP = tvl("uniswap", UNI_TVL, (UNI_TVL / (4_101_220_330.2 / 1.0045 + 1_480_500_000.5 / 0.98) - 1) * 100);
const kb = (id: string, title: string): Figure[] => [{ kind: "kb", id, title, source: "knowledge-base" }];
/** Marks the rows whose figures are the gas reading of the moment they are asked. */
const GAS = "gas" as const;

/** [question, intent, the sources it must list (fetch times checked apart), text the reply must contain]. */
const TABLE: [string, Intent, Figure[] | typeof GAS | null, string[]][] = [
  // Prices.
  [
    "what's eth trading at",
    "price",
    WETH,
    ["ETH (WETH on Base) is at $3,120.45 (DexScreener, aerodrome WETH/USDC pair), +1.84% over 24 h."],
  ],
  ["btc price?", "price", CBBTC, ["BTC (cbBTC on Base) is at $97,250.12"]],
  ["how much is one SOL right now", "price", SOL, ["SOL is at $171.2 (Hyperliquid perpetual mark price)"]],
  ["where's aero at?", "price", price("AERO", "0.7211", 4.02), ["AERO on Base is at $0.7211"]],
  ["hype price pls", "price", HYPE, ["HYPE is at $27.35"]],
  [
    `price of ${PLAIN}`,
    "price",
    [
      { kind: "price", symbol: "PLAIN", id: PLAIN, value: "0.312045", source: "dexscreener" },
      { kind: "change_24h", symbol: "PLAIN", id: PLAIN, value: -3.2, source: "dexscreener" },
    ],
    ["$0.312045"],
  ],
  // 24 h moves.
  ["is eth up or down today", "move", WETH, ["+1.84% over 24 h"]],
  ["how did bitcoin do in the last 24 hours", "move", CBBTC, ["+0.85% over 24 h"]],
  ["how much did SOL drop today?", "move", SOL, ["-5.15% over 24 h"]],
  ["what moved the most in your watched markets today", "markets", MARKETS, ["AERO $0.7211 (+4.02%)"]],
  // Comparisons.
  ["eth vs btc today", "compare", [...WETH, ...CBBTC], ["Over 24 h ETH did better than BTC (+1.84% against +0.85%)."]],
  ["which did better today, SOL or HYPE?", "compare", [...SOL, ...HYPE], ["Over 24 h HYPE did better than SOL (+13.49% against -5.15%)."]],
  ["compare cbETH and ETH", "compare", [...CBETH, ...WETH], ["Over 24 h ETH did better than CBETH (+1.84% against +1.72%)."]],
  // Funding and open interest (hourly 0.0000125 = 0.00125 %, eight hours 0.01 %).
  [
    "what's the funding on ETH perps",
    "funding",
    funding("ETH", "0.00125", "0.01"),
    ["+0.00125% per hour (+0.01% per 8 h): longs pay shorts."],
  ],
  ["are btc longs paying shorts right now", "funding", funding("BTC", "-0.00034", "-0.00272"), ["shorts pay longs"]],
  ["sol funding rate", "funding", funding("SOL", "-0.0035", "-0.028"), ["-0.0035% per hour"]],
  // 28,150.2231 x 97,240 = 2,737,327,694.244
  [
    "how big is open interest on BTC",
    "open_interest",
    oi("BTC", "28150.2231", 2_737_327_694, "97240"),
    ["28,150.2231 BTC, about $2,737,327,694"],
  ],
  // 10,212,330.2 x 27.35 = 279,307,230.97
  ["HYPE OI?", "open_interest", oi("HYPE", "10212330.2", 279_307_231, "27.35"), ["about $279,307,231"]],
  [
    "eth funding and OI",
    "funding",
    [...funding("ETH", "0.00125", "0.01"), ...oi("ETH", "612345.12", 1_911_312_823, "3121.3")],
    ["612,345.12 ETH, about $1,911,312,823 at the mark price $3,121.3"],
  ],
  // Gas and the cost of a transfer.
  [
    "How much does it cost to send USDC on Base right now?",
    "transfer_cost",
    GAS,
    ["Sending USDC or another ERC-20 token on Base (about 65,000 gas) costs about $"],
  ],
  ["fee to transfer usdc", "transfer_cost", GAS, ["Sending USDC or another ERC-20 token on Base"]],
  ["what does an ETH transfer cost on base today", "transfer_cost", GAS, ["a plain ETH transfer (21,000 gas) about $"]],
  ["what is gas on base now?", "gas", GAS, ["priority fees are 0.0025 gwei (low), 0.012 gwei (medium) and 0.1 gwei (high)."]],
  ["is gas expensive right now", "gas", GAS, ["the next block's base fee is "]],
  ["how many gwei is the base fee", "gas", GAS, ["gwei; priority fees are"]],
  // Protocol TVL and its change.
  [
    "What's Aave's TVL",
    "tvl",
    AAVE,
    ["Aave's TVL on DefiLlama is $27,710,000,000 (all its versions: aave-v2 and aave-v3), -0.87% over 24 h."],
  ],
  ["aave tvl", "tvl", AAVE, ["Aave's TVL on DefiLlama is $27,710,000,000"]],
  [
    "how has aave v3 tvl changed in the last day",
    "tvl",
    tvl("aave-v3", 26_841_230_512.4, -1.2),
    ["Aave V3's TVL on DefiLlama is $26,841,230,512, -1.20% over 24 h."],
  ],
  [
    "total value locked in morpho",
    "tvl",
    tvl("morpho-blue", 3_902_110_330.6, 12.5),
    ["Morpho Blue's TVL on DefiLlama is $3,902,110,331, +12.50% over 24 h."],
  ],
  ["moonwell tvl", "tvl", MOONWELL, ["Moonwell's TVL on DefiLlama is $320,000,000, -2.44% over 24 h."]],
  ["uniswap TVL today", "tvl", UNISWAP, ["Uniswap's TVL on DefiLlama is $5,581,720,331 (all its versions: uniswap-v2 and uniswap-v3)"]],
  // How-to questions (the knowledge base).
  [
    "who pays gas when my agent pays with x402?",
    "kb",
    kb("who-pays-gas-x402", "Who pays the gas in an x402 payment, and does the buyer need ETH on Base?"),
    ["The facilitator pays the gas."],
  ],
  [
    "how do I verify a USDC payment on chain",
    "kb",
    kb("verify-usdc-payment-onchain", "How do I verify on chain that an x402 payment in USDC on Base really happened?"),
    ["(entry verify-usdc-payment-onchain)"],
  ],
  [
    "which facilitator works on base mainnet",
    "kb",
    kb("x402-facilitators-base", "Which facilitator can verify and settle x402 payments on Base mainnet?"),
    ["Three practical options exist for Base mainnet"],
  ],
  [
    "how do I stop my bot from overspending on paid APIs",
    "kb",
    kb("agent-spending-limits", "How should an AI agent budget and limit its x402 spending?"),
    ["Give the agent a dedicated wallet holding only its budget"],
  ],
  [
    "what's the usdc contract address on base",
    "kb",
    kb("base-usdc-contract", "Base USDC: contract address, decimals and EIP-712 domain for signing"),
    [base.usdc.address],
  ],
  // Questions it cannot answer: a 400 that says what it can answer.
  ["tell me a joke", "none", null, ["I can't answer that"]],
  ["what's the weather in Paris tomorrow", "none", null, ["I can't answer that"]],
  ["price of DOGE", "none", null, ["I don't know DOGE"]],
  ["what's the TVL of zzqprotocol", "none", null, ["I found no DefiLlama protocol in that message"]],
];

/** The intent an answer shows: its sources' kinds, or "none" for the 400 (a 24 h move is answered as a price with its change). */
function intentOf(reply: string, sources: readonly ChatSource[]): Intent {
  const kinds = new Set(sources.map((s) => s.kind));
  if (kinds.size === 0) return "none";
  if ([...kinds].every((k) => k === "kb")) return "kb";
  if (kinds.has("tvl")) return "tvl";
  if (kinds.has("gas")) return reply.startsWith("Sending") ? "transfer_cost" : "gas";
  if (kinds.has("funding")) return "funding";
  if (kinds.has("open_interest")) return "open_interest";
  if (reply.includes("The watched Base markets")) return "markets";
  if (/Over 24 h .* did better than|moved the same over 24 h/.test(reply)) return "compare";
  return "price";
}

/** The gas figures of the pending block, as the gas answer quotes them (medians of the seeded tips). */
async function gasFigures(): Promise<Figure[]> {
  const baseFee = (await chainClient().getBlock({ blockTag: "pending" })).baseFeePerGas as bigint;
  const cost = (gas: bigint, tip: bigint) => {
    const scaled = gas * (baseFee + tip) * 312_045n; // wei x (USD x 100) per ETH
    const unit = 10n ** 12n;
    return Number((scaled * 2n + unit) / (2n * unit)) / 1e8;
  };
  const at = { source: "chain" };
  return [
    { kind: "gas", id: "base_fee_gwei", value: Number(baseFee) / 1e9, ...at },
    { kind: "gas", id: "priority_fee_low_gwei", value: 0.0025, ...at },
    { kind: "gas", id: "priority_fee_medium_gwei", value: 0.012, ...at },
    { kind: "gas", id: "priority_fee_high_gwei", value: 0.1, ...at },
    { kind: "gas", id: "transfer_21000_usd", value: cost(21_000n, 12_000_000n), ...at },
    { kind: "gas", id: "erc20_transfer_65000_usd", value: cost(65_000n, 12_000_000n), ...at },
    { kind: "price", symbol: "WETH", value: "3120.45", source: "dexscreener" },
  ];
}

const withoutTimes = (sources: readonly ChatSource[]) =>
  sources.map((s) => {
    const { fetched_at: _, ...rest } = s as ChatSource & { fetched_at?: string };
    return rest;
  });

interface Outcome {
  question: string;
  want: Intent;
  got: Intent;
  figuresExact: boolean;
  textFound: boolean;
}

let ctx: FunctionContext;
const outcomes = new Map<string, Outcome>();

beforeAll(async () => {
  ctx = await context();
  await mineFeeBlocks(devnet().rpcUrl);
  for (const [question, want, figures, texts] of TABLE) {
    const expected = figures === GAS ? await gasFigures() : figures;
    try {
      const answer = await answerChat(question, chatDepsFromContext(ctx));
      const got = intentOf(answer.reply, answer.sources);
      const figuresExact = expected !== null && isDeepStrictEqual(withoutTimes(answer.sources), expected);
      const textFound = texts.every((t) => answer.reply.includes(t)) && (answer.reply.match(/not financial advice/gi)?.length ?? 0) === 1;
      outcomes.set(question, { question, want, got, figuresExact, textFound });
    } catch (error) {
      if (!(error instanceof ServiceError) || error.status !== 400) throw error;
      const textFound =
        texts.every((t) => error.message.includes(t)) &&
        error.message.includes("This message was not charged.") &&
        error.message.endsWith(CAPABILITIES) &&
        JSON.stringify(error.details?.fields) ===
          JSON.stringify([{ field: "body.message", expected: `a question the assistant can answer. ${CAPABILITIES}` }]);
      outcomes.set(question, { question, want, got: "none", figuresExact: expected === null, textFound });
    }
  }
}, 120_000);

const routedTo = (want: Intent): Intent => (want === "move" ? "price" : want);
const right = (o: Outcome) => o.got === routedTo(o.want) && o.figuresExact && o.textFound;

describe("the chat on 40 buyers' questions", () => {
  it("has at least 40 questions covering every intent", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
    expect(new Set(TABLE.map(([, intent]) => intent)).size).toBe(11);
  });

  it("routes at least 36 of them right with the figures exact", () => {
    const wrong = [...outcomes.values()].filter((o) => !right(o));
    expect(outcomes.size).toBe(TABLE.length);
    expect(wrong.length, JSON.stringify(wrong, null, 1)).toBeLessThanOrEqual(TABLE.length - 36);
  });

  it.each(["How much does it cost to send USDC on Base right now?", "What's Aave's TVL", "aave tvl", "tell me a joke"])(
    "answers %j right: a buyer's trial got it wrong",
    (question) => {
      const want = TABLE.find(([q]) => q === question)?.[1] as Intent;
      expect(outcomes.get(question)).toMatchObject({ got: routedTo(want), figuresExact: true, textFound: true });
    },
  );

  it("gives an LLM the same TVL through its get_tvl tool, and an error result for a protocol DefiLlama does not list", async () => {
    const deps = chatDepsFromContext(ctx);
    const aave = await runChatTool(deps, "get_tvl", { protocol: "Aave" });
    expect(aave.content).toMatchObject({
      slug: "aave",
      name: "Aave",
      tvl_usd: 27_710_000_000,
      members: ["aave-v2", "aave-v3"],
      source: "defillama",
    });
    expect(withoutTimes(aave.sources)).toEqual(AAVE);
    expect(await runChatTool(deps, "get_tvl", { protocol: "zzqprotocol" })).toEqual({
      content: { error: { code: "unknown_protocol", message: "DefiLlama lists no protocol named zzqprotocol." } },
      sources: [],
    });
  });
});
