/**
 * The built-in chat engine: no model, no network beyond the service's own data sources. It
 * reads what a message asks (question.ts), fetches the live figures it needs at request time
 * (facts.ts) and answers in plain sentences; every figure it writes is in `sources`, every
 * knowledge-base entry it draws on is cited, and what it cannot answer is named, never guessed.
 *
 * A message it cannot answer (off topic, an unknown asset or protocol, a how-to no
 * knowledge-base entry answers) gets no reply: `answerBuiltin` throws a 400 `invalid_request`
 * naming `body.message` that says what it can answer, so the call is never charged (the gate
 * settles only a 2xx, and a balance is debited only after an answer).
 *
 * Upstream failures: a question is answered in parts (one per asset and topic). When every
 * part failed on an upstream, the first `UpstreamError` is thrown as is (the route answers
 * 502/503/504 and charges nothing). When some parts were answered, the answer gives them and
 * says which figures could not be fetched, without a number for those.
 */
import { KB_ASK_MATCHES, KB_CONFIDENCE } from "../content/kb-index.ts";
import { ServiceError, UpstreamError } from "../errors.ts";
import { base } from "../networks/base.ts";
import type { ChatDeps } from "./deps.ts";
import {
  type AssetRef,
  gasFact,
  gasFigures,
  MissingFigure,
  marketFigures,
  type PriceFact,
  perpFact,
  perpFigures,
  priceFact,
  priceFigures,
  protocolsNamed,
  resolveAsset,
  tvlFact,
  tvlFigures,
  WATCHED_SYMBOLS,
} from "./facts.ts";
import { grouped, signedPct, signedRate, usd } from "./format.ts";
import { type AssetMention, type ChatQuestion, readQuestion } from "./question.ts";
import { type ChatFigure, type ChatSource, type EngineAnswer, uniqueSources } from "./sources.ts";

/** The disclaimer every reply carries, exactly once. */
export const NOT_ADVICE = "Not financial advice.";

/** What the assistant can answer, said when it cannot answer something. */
export const CAPABILITIES =
  "I can answer: the price of a token (ETH, BTC, cbETH, AERO, USDC, any Base token by its 0x address, or a Hyperliquid perpetual such as SOL), " +
  "its 24 h move, a comparison of two assets, perpetual funding and open interest on Hyperliquid, gas on Base right now and what a transfer costs, " +
  "a DeFi protocol's TVL and its 24 h change (DefiLlama), the watched markets, and how-to questions about x402 payments on Base from the knowledge base.";

/** The field the "cannot answer" 400 names. */
const MESSAGE_FIELD = "body.message";

/**
 * The 400 for a message the engine cannot answer: what it found (`said`), that nothing was
 * charged, and what it can answer; `details.closest` lists the nearest knowledge-base entries.
 */
export function cannotAnswer(said: readonly string[], closest: readonly { id: string; title: string }[] = []): ServiceError {
  const message = `${[...said, "This message was not charged."].join(" ")} ${CAPABILITIES}`;
  return new ServiceError("invalid_request", message, {
    details: {
      fields: [{ field: MESSAGE_FIELD, expected: `a question the assistant can answer. ${CAPABILITIES}` }],
      closest_entries: closest.map(({ id, title }) => ({ id, title })),
    },
  });
}

/**
 * Least search score for a knowledge-base entry to be offered as "closest" to a question no
 * entry answers confidently: below it a match shares only a common word ("base", "how") with
 * the question ("how do I get rich" scores 6 against the getLogs entry; "what is x402?" 10).
 */
export const KB_CLOSEST_MIN_SCORE = 8;

const SOURCE_NAMES: Record<string, string> = { dexscreener: "DexScreener", defillama: "DefiLlama", hyperliquid: "Hyperliquid" };
const sourceName = (source: string) => SOURCE_NAMES[source] ?? source;

/** One answered part of a question. */
interface Part {
  sentences: string[];
  sources: ChatSource[];
  /** The price fact, when the part priced an asset (comparisons read it). */
  price?: { name: string; fact: PriceFact };
  /** The word, when the part found no asset by that name. */
  unknown?: string;
}

/** A part to answer, with what it is about (for the sentence naming it when its upstream fails). */
interface PartTask {
  about: string;
  run(): Promise<Part>;
}

/** Answer `message` with the built-in engine. Throws an `UpstreamError` when no part of the question could be fetched. */
export async function answerBuiltin(message: string, deps: ChatDeps): Promise<EngineAnswer> {
  const question = readQuestion(message);
  const cached = memoized(deps);
  const kb = deps.kb.ask(message);
  const { topics } = question;
  // Gas and transfer costs asked as a how-to ("who pays the gas in x402?") are knowledge-base questions, unless asked for now.
  const liveGas = (topics.gas || topics.transferCost) && (question.live || !question.howTo);
  const marketTopic =
    topics.price || topics.move || topics.compare || topics.funding || topics.openInterest || topics.markets || topics.tvl || liveGas;

  if (question.help && !marketTopic && question.mentions.length === 0) return finish([CAPABILITIES], []);
  // "eth", "btc?", "$AERO and SOL": a message of asset names alone asks their prices; the knowledge base
  // would otherwise answer on the shared word ("eth" is in the title of the entry on who pays the gas).
  if (namesOnlyAssets(message, question.mentions)) return marketReply(question, cached);
  // A confident knowledge-base match wins unless live figures are asked for: "how do I verify a USDC payment" names USDC but wants no price.
  // Unless phrased as a question about how things work, the entry must also match what the message says besides
  // its asset names: "convert 100 usdc to eth" matches the entry on who pays the gas only by "usdc" and "eth".
  if (
    kb.best &&
    !marketTopic &&
    !question.advice &&
    (question.howTo || matchesBesidesAssets(message, question.mentions, kb.best.id, deps))
  ) {
    return kbReply(kb.best);
  }
  if (marketTopic || topics.gas || topics.transferCost || question.mentions.length > 0 || question.advice) {
    return marketReply(question, cached);
  }
  const closest = kb.matches.filter((m) => m.score >= KB_CLOSEST_MIN_SCORE).slice(0, 3);
  if (question.howTo && closest.length > 0) {
    throw cannotAnswer(
      [`No entry of the knowledge base clearly answers that. The closest are ${listOf(closest.map((m) => `“${m.title}” (${m.id})`))}.`],
      closest,
    );
  }
  throw cannotAnswer(["I can't answer that: it is not about prices, funding, gas, TVL, the watched markets or the knowledge base."]);
}

/** `message` without the asset words of `mentions`. */
function withoutAssets(message: string, mentions: readonly AssetMention[]): string {
  let rest = message;
  for (const { word } of mentions) rest = rest.replace(new RegExp(`\\$?\\b${word}\\b`, "gi"), " ");
  return rest;
}

/** Whether `message` is only the asset words of `mentions` (with "and", "vs" or punctuation between them). */
function namesOnlyAssets(message: string, mentions: readonly AssetMention[]): boolean {
  if (mentions.length === 0) return false;
  return !/[\p{L}\p{N}]/u.test(withoutAssets(message, mentions).replace(/\b(and|or|vs|versus)\b/gi, " "));
}

/** Whether entry `id` matches `message` with its asset names left out as well as a confident match must (`KB_CONFIDENCE.minScore`). */
function matchesBesidesAssets(message: string, mentions: readonly AssetMention[], id: string, deps: ChatDeps): boolean {
  if (mentions.length === 0) return true;
  const hit = deps.kb.search(withoutAssets(message, mentions), KB_ASK_MATCHES).find((h) => h.id === id);
  return hit !== undefined && hit.score >= KB_CONFIDENCE.minScore;
}

function finish(sentences: string[], sources: ChatSource[]): EngineAnswer {
  return { reply: [...sentences, NOT_ADVICE].join(" "), sources };
}

/** Each data source read at most once per answer, so two parts quoting ETH quote the same fetch. */
function memoized(deps: ChatDeps): ChatDeps {
  const once = <T>(load: () => Promise<T>): (() => Promise<T>) => {
    let pending: Promise<T> | undefined;
    return () => {
      pending ??= load();
      return pending;
    };
  };
  return { ...deps, markets: once(deps.markets), perps: once(deps.perps), gas: once(deps.gas), protocols: once(deps.protocols) };
}

function kbReply(entry: { id: string; title: string; answer: string }): EngineAnswer {
  return finish(
    [`From the knowledge base, “${entry.title}”: ${excerpt(entry.answer)} (entry ${entry.id})`],
    [{ kind: "kb", id: entry.id, title: entry.title, source: "knowledge-base" }],
  );
}

/** The opening paragraphs of a Markdown answer as plain text, cut at a sentence end near 600 characters. */
export function excerpt(markdown: string, limit = 600): string {
  // Whole paragraphs (code blocks left out) until there is enough to answer with.
  const paragraphs: string[] = [];
  for (const paragraph of markdown.split(/\n\s*\n/)) {
    if (paragraph.trim() === "" || paragraph.trim().startsWith("```")) continue;
    paragraphs.push(paragraph);
    if (paragraphs.join(" ").length >= 200) break;
  }
  const text = paragraphs
    .join(" ")
    .replace(/^\s*(?:[-*]|\d+\.)\s+/gm, "")
    .replace(/\*\*|__/g, "")
    .replace(/\[([^\]]+)\]\([^)]+\)/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
  if (text.length <= limit) return text;
  const cut = text.slice(0, limit);
  const end = cut.lastIndexOf(". ");
  return end > 0 ? cut.slice(0, end + 1) : `${cut.trimEnd()}…`;
}

/** "a, b and c": British English puts no comma before the "and". */
const listOf = (items: readonly string[]) => new Intl.ListFormat("en-GB", { type: "conjunction" }).format(items);

async function marketReply(question: ChatQuestion, deps: ChatDeps): Promise<EngineAnswer> {
  const { topics } = question;
  const tasks: PartTask[] = [];
  const lead: string[] = [];
  if (question.advice) {
    lead.push("I can't tell you whether to buy or sell, or where a price goes next; here is what the figures say now.");
  }

  const perpTopic = topics.funding || topics.openInterest;
  // "How has Aave's TVL changed?" asks about the TVL's move, "gas today" about gas; "the cost to send USDC" names USDC but asks no price.
  const move = topics.move && !topics.tvl && !topics.gas && !topics.transferCost;
  const otherTopic = perpTopic || topics.gas || topics.transferCost || topics.markets || topics.tvl;
  // "compare aave and uniswap tvl" compares TVLs: the protocols it names are not assets to price.
  const comparePrices = topics.compare && !topics.tvl;
  const priceTopic = topics.price || move || comparePrices || !otherTopic;
  const mentions = question.mentions;

  if (topics.transferCost) tasks.push({ about: "gas on Base", run: () => transferPart(deps) });
  else if (topics.gas) tasks.push({ about: "gas on Base", run: () => gasPart(deps) });
  if (topics.tvl) tasks.push(...(await tvlTasks(deps, question.text)));
  if (topics.markets || (mentions.length === 0 && (topics.price || move) && !topics.gas && !topics.transferCost && !topics.tvl)) {
    tasks.push({ about: "the watched markets", run: () => marketsPart(deps) });
  }
  for (const mention of mentions) {
    if (priceTopic) tasks.push({ about: `the price of ${mention.word.toUpperCase()}`, run: () => pricePart(deps, mention) });
    if (perpTopic) tasks.push({ about: `${mention.word.toUpperCase()}'s perpetual`, run: () => perpPart(deps, mention, topics) });
  }
  if (perpTopic && mentions.length === 0) {
    for (const name of ["ETH", "BTC"]) {
      const mention = { word: name, known: { kind: "perp", asked: name, name } as const };
      tasks.push({ about: `${name}'s perpetual`, run: () => perpPart(deps, mention, topics) });
    }
  }
  if (tasks.length === 0) throw cannotAnswer(lead);

  const settled = await Promise.allSettled(tasks.map((t) => t.run()));
  const sentences = [...lead];
  const sources: ChatSource[] = [];
  const failures: { about: string; error: UpstreamError }[] = [];
  const priced: { name: string; fact: PriceFact }[] = [];
  // "PLAIN 0x4557…" names one token twice: a word that is the symbol of a token priced by its
  // address is that token's label, not a second, unknown asset.
  const symbolsByAddress = new Set(
    settled.flatMap((r) => (r.status === "fulfilled" && r.value.price?.fact.address ? [r.value.price.fact.symbol.toUpperCase()] : [])),
  );
  settled.forEach((result, i) => {
    const task = tasks[i] as PartTask;
    if (result.status === "fulfilled") {
      if (result.value.unknown && symbolsByAddress.has(result.value.unknown.toUpperCase())) return;
      sentences.push(...result.value.sentences);
      sources.push(...result.value.sources);
      if (result.value.price) priced.push(result.value.price);
      return;
    }
    if (!(result.reason instanceof UpstreamError)) throw result.reason;
    failures.push({ about: task.about, error: result.reason });
  });
  if (failures.length === tasks.length) throw (failures[0] as (typeof failures)[number]).error;
  for (const { about, error } of failures) {
    sentences.push(`I could not get ${about} just now: ${error.upstream} did not answer properly (${error.code}); ask again shortly.`);
  }

  if (comparePrices || (topics.compare && priced.length > 0)) sentences.push(...comparison(priced, mentions.length));
  // Not one figure: nothing was answered (an unknown asset or protocol), so nothing is charged.
  if (sources.length === 0 && failures.length === 0) throw cannotAnswer(sentences);
  return finish(sentences, uniqueSources(sources));
}

function comparison(priced: readonly { name: string; fact: PriceFact }[], named: number): string[] {
  if (named < 2) return ["Name two assets to compare them (for example “compare ETH and BTC”)."];
  const withChange = priced.filter((p) => p.fact.change_24h_pct !== null);
  const [a, b] = withChange;
  if (withChange.length < 2 || !a || !b) return ["I can't compare their 24 h moves: I have the 24 h change of fewer than two of them."];
  // "btc vs eth vs sol": every asset named is ranked, not only the first two.
  if (withChange.length > 2) {
    const ranked = [...withChange].sort((x, y) => (y.fact.change_24h_pct as number) - (x.fact.change_24h_pct as number));
    return [`Over 24 h, from best to worst: ${listOf(ranked.map((p) => `${p.name} (${signedPct(p.fact.change_24h_pct as number)})`))}.`];
  }
  const ca = a.fact.change_24h_pct as number;
  const cb = b.fact.change_24h_pct as number;
  if (signedPct(ca) === signedPct(cb)) return [`${a.name} and ${b.name} moved the same over 24 h (${signedPct(ca)}).`];
  const [better, worse] = ca > cb ? [a, b] : [b, a];
  return [
    `Over 24 h ${better.name} did better than ${worse.name} (${signedPct(better.fact.change_24h_pct as number)} against ${signedPct(worse.fact.change_24h_pct as number)}).`,
  ];
}

function unknownAsset(word: string): string {
  const name = word.toUpperCase();
  return (
    `I don't know ${name}: it is not one of the watched Base tokens (${listOf(WATCHED_SYMBOLS)}) and Hyperliquid lists no perpetual named ${name}. ` +
    "Ask with the token's Base contract address (0x…) to price it from its deepest DEX pair."
  );
}

async function pricePart(deps: ChatDeps, mention: AssetMention): Promise<Part> {
  const ref = await resolveAsset(deps, mention.word);
  if (!ref) return { sentences: [unknownAsset(mention.word)], sources: [], unknown: mention.word };
  let fact: PriceFact;
  try {
    fact = await priceFact(deps, ref);
  } catch (error) {
    if (error instanceof MissingFigure)
      return { sentences: [`I have no price for ${mention.word.toUpperCase()}: ${error.message}.`], sources: [] };
    // The price source reports a token without any pair as `upstream_error` from "prices": that is an answer, not an outage.
    if (error instanceof UpstreamError && error.upstream === "prices" && ref.kind === "token") {
      return { sentences: [`I have no price for ${ref.address}: neither DexScreener nor DefiLlama lists it on Base.`], sources: [] };
    }
    throw error;
  }
  const where =
    fact.basis === "perp_mark"
      ? "Hyperliquid perpetual mark price"
      : fact.venue
        ? `${sourceName(fact.source)}, ${fact.venue} pair`
        : sourceName(fact.source);
  const change =
    fact.change_24h_pct === null
      ? `; ${sourceName(fact.source)} gives no 24 h change for it`
      : `, ${signedPct(fact.change_24h_pct)} over 24 h`;
  return {
    sentences: [`${fact.label} is at ${usd(fact.price_usd)} (${where})${change}.`],
    sources: priceFigures(fact),
    price: { name: comparedName(ref, fact), fact },
  };
}

/**
 * How a comparison names an asset, as its price sentence does: "cbETH" (not "CBETH"), "PLAIN" for a
 * token asked by address, "BTC" for the perpetual "wbtc" is priced by.
 */
function comparedName(ref: AssetRef, fact: PriceFact): string {
  if (ref.kind === "watched") {
    const asked = ref.asked.replace(/^\$/, "").toUpperCase();
    return asked === ref.symbol.toUpperCase() ? ref.symbol : asked;
  }
  return fact.symbol;
}

async function perpPart(deps: ChatDeps, mention: AssetMention, topics: ChatQuestion["topics"]): Promise<Part> {
  const ref = await resolveAsset(deps, mention.word);
  if (!ref) return { sentences: [unknownAsset(mention.word)], sources: [], unknown: mention.word };
  const name = ref.kind === "perp" ? ref.name : ref.kind === "watched" ? ref.perp : null;
  const fact = name ? await perpFact(deps, name) : null;
  if (!fact) {
    const asked = ref.kind === "token" ? ref.address : mention.word.toUpperCase();
    return { sentences: [`Hyperliquid lists no perpetual for ${asked}, so I have no funding or open interest for it.`], sources: [] };
  }
  const funding = topics.funding || !topics.openInterest;
  const oi = topics.openInterest;
  const sentences: string[] = [];
  if (funding) {
    const rate = Number(fact.funding_1h_pct);
    const who = rate > 0 ? "longs pay shorts" : rate < 0 ? "shorts pay longs" : "neither side pays";
    sentences.push(
      `${fact.name} funding on Hyperliquid is ${signedRate(fact.funding_1h_pct)} per hour (${signedRate(fact.funding_8h_pct)} per 8 h): ${who}.`,
    );
  }
  if (oi) {
    sentences.push(
      `${fact.name} open interest on Hyperliquid is ${grouped(fact.open_interest)} ${fact.name}, about ${usd(fact.open_interest_usd)} at the mark price ${usd(fact.mark_px)}.`,
    );
  }
  return { sentences, sources: perpFigures(fact, { funding, oi }) };
}

async function gasPart(deps: ChatDeps): Promise<Part> {
  const gas = await gasFact(deps);
  const chain = gas.chain_id === base.chainId ? base.name : `chain ${gas.chain_id}`;
  const fees = gas.priority_fee_gwei;
  return {
    sentences: [
      `Gas on ${chain} (block ${gas.block_number}): the next block's base fee is ${grouped(gas.base_fee_gwei)} gwei; priority fees are ` +
        `${grouped(fees.low)} gwei (low), ${grouped(fees.medium)} gwei (medium) and ${grouped(fees.high)} gwei (high).`,
      `At ETH ${usd(gas.eth_price_usd)} (${sourceName(gas.price_source)}), a plain ETH transfer (21,000 gas) costs about ${usd(gas.usd_estimate.transfer_21000)} ` +
        `and an ERC-20 transfer (65,000 gas) about ${usd(gas.usd_estimate.erc20_transfer_65000)} with the medium tip, before Base's L1 data fee.`,
    ],
    sources: gasFigures(gas),
  };
}

/** What sending a token costs now: the gas reading, the ERC-20 transfer first. */
async function transferPart(deps: ChatDeps): Promise<Part> {
  const gas = await gasFact(deps);
  const chain = gas.chain_id === base.chainId ? base.name : `chain ${gas.chain_id}`;
  return {
    sentences: [
      `Sending USDC or another ERC-20 token on ${chain} (about 65,000 gas) costs about ${usd(gas.usd_estimate.erc20_transfer_65000)} right now, ` +
        `and a plain ETH transfer (21,000 gas) about ${usd(gas.usd_estimate.transfer_21000)}: the next block's base fee is ${grouped(gas.base_fee_gwei)} gwei ` +
        `plus a medium priority fee of ${grouped(gas.priority_fee_gwei.medium)} gwei (block ${gas.block_number}), at ETH ${usd(gas.eth_price_usd)} (${sourceName(gas.price_source)}), before Base's L1 data fee.`,
    ],
    sources: gasFigures(gas),
  };
}

/** One part per protocol the message names; a sentence saying none is known when it names none. */
async function tvlTasks(deps: ChatDeps, message: string): Promise<PartTask[]> {
  const slugs = await protocolsNamed(deps, message);
  if (slugs.length === 0) {
    return [
      {
        about: "the protocol",
        run: async () => ({
          sentences: [
            "I found no DefiLlama protocol in that message: name one as DefiLlama lists it (for example aave, aave-v3, uniswap, morpho-blue or moonwell).",
          ],
          sources: [],
        }),
      },
    ];
  }
  return slugs.slice(0, 3).map((slug) => ({ about: `the TVL of ${slug}`, run: () => tvlPart(deps, slug) }));
}

async function tvlPart(deps: ChatDeps, slug: string): Promise<Part> {
  const fact = await tvlFact(deps, slug);
  const change = fact.change_24h_pct === null ? "; DefiLlama gives no 24 h change for it" : `, ${signedPct(fact.change_24h_pct)} over 24 h`;
  const members = fact.members ? ` (all its versions: ${listOf(fact.members)})` : "";
  return {
    sentences: [`${fact.name}'s TVL on DefiLlama is ${usd(Math.round(fact.tvl_usd))}${members}${change}.`],
    sources: tvlFigures(fact),
  };
}

async function marketsPart(deps: ChatDeps): Promise<Part> {
  const { pairs } = await deps.markets();
  const rows = pairs.map((row) => {
    const change = row.change_24h_pct === null ? "no 24 h change" : signedPct(row.change_24h_pct);
    const from = row.source === "dexscreener" ? "" : `, ${sourceName(row.source)}`;
    return `${row.symbol} ${usd(row.price_usd)} (${change}${from})`;
  });
  const missing = WATCHED_SYMBOLS.filter((s) => !pairs.some((p) => p.symbol === s));
  const sentences = [`The watched Base markets, with 24 h changes: ${listOf(rows)}; prices from DexScreener unless marked.`];
  if (missing.length > 0) sentences.push(`${listOf(missing)} had no price from DexScreener or DefiLlama just now.`);
  const figures: ChatFigure[] = marketFigures(pairs);
  return { sentences, sources: figures };
}
