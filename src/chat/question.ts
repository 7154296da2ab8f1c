/**
 * Reading a chat message: which topics it asks about (a price, a 24 h move, a comparison,
 * funding, open interest, gas, the cost of a transfer, a protocol's TVL, the watched markets, a
 * how-to) and which assets it names, known
 * ones resolved on the spot and unknown ticker-like words kept so the answer can name them.
 * Plain keyword rules, no model: what they do not recognise is said, not guessed.
 */
import { type AssetRef, knownAsset } from "./facts.ts";

/** One asset-like word of the message, in order: a known asset, or a word to look up (maybe on Hyperliquid). */
export interface AssetMention {
  word: string;
  known: AssetRef | null;
}

/** The topics a message may ask about, each with the words that ask it. */
const TOPIC_RULES = {
  price: /\bprices?\b|\bpriced\b|\bworth\b|\btrading at\b|\bat\s*\??\s*$|\bat right now\b|\bhow much is\b|\bquote\b|\bvalue of\b/,
  move: /\b24 ?h(ours?|rs?)?\b|\btoday\b|\bday\b|\bmov(e|ed|es|ing|ement)\b|\bchang(e|ed|es)\b|\bdoing\b|\bperform|\bup or down\b|\bpump|\bdump|\bgain|\bdrop|\bfell\b|\brose\b|\btrend|\b(going|been|gone) (up|down)\b/,
  compare:
    /\bcompare|\bcomparison\b|\bvs\.?(?=\s|$)|\bversus\b|\boutperform|\bbetter\b|\bstronger\b|\bweaker\b|\bdifference between\b|\bwhich (one )?(is|has|did|moved)\b|\bagainst\b/,
  funding: /\bfunding\b|\b(longs|shorts) (are )?(paying|pay)\b/,
  openInterest: /\bopen[ -]interest\b|\boi\b/,
  gas: /\bgas\b|\bgwei\b|\bbase ?fee\b|\bpriority fees?\b|\b(tx|transaction|network) (fees?|costs?)\b/,
  /** What sending a token costs now (gas of a transfer, in USD). */
  transferCost:
    /\b(costs?|fees?|pay)\b[^.?!]{0,30}\b(to |for )?(send|sending|transfer|transferring|move|moving)\b|\b(send|sending|transfer|transferring|move|moving)\b[^.?!]{0,40}\b(cost|costs|fee|fees|cheap|expensive)\b/,
  /** A DeFi protocol's total value locked. */
  tvl: /\btvl\b|\btotal value locked\b|\bvalue locked\b|\blocked in\b/,
  markets:
    /\bmarkets?\b|\bwatch ?list\b|\bwatched\b|\bwatching\b|\bwhat (do|does) (you|it) (watch|track|follow)\b|\boverview\b|\ball (the )?(tokens|prices|assets|pairs|coins)\b|\bsnapshot\b/,
} satisfies Record<string, RegExp>;

/** The topics a message asks about. */
export type ChatTopics = Record<keyof typeof TOPIC_RULES, boolean>;

const HOW_TO =
  /^\s*(how (do|does|can|could|should|would|to|are|is the|many|long)\b|how to\b|why\b|where\b|who\b|explain\b|can (i|you|my|we)\b|do (i|we)\b|does (x402|the|my|a|an|it)\b|is it (safe|possible|ok)\b|what (is|are|does|do|happens|should|if)\b|what's\b|which (header|field|facilitator)\b|i (sent|got|want|need)\b|my\b)/;
const LIVE = /\b(now|current|currently|right now|today|at the moment|live|latest|gwei|how much|how high|how expensive|cheap|expensive)\b/;
const ADVICE =
  /\bshould i (buy|sell|long|short|hold|ape)|\bis (it|now) (a )?good (time|idea) to (buy|sell)|\bwill \S+ (go|pump|dump|moon|rise|fall|crash)|\bpredict|\bforecast|\bprice target|\bwhere is \S+ (going|headed)\b/;
const HELP = /^\s*(help|\?|what can you (do|answer|tell me)|what do you know|who are you|what are you)\b/;

// Words that look like tickers in capitals or after "price of" but name no asset.
const NOT_TICKERS = new Set(
  (
    "a an the it its this that these those i me my you your we our he she they them what which who how why when where is are was were " +
    "be do does did can could should would will now today current currently right here there and or vs versus with to of for on in at " +
    "by from price prices funding rate rates open interest oi gas fee fees market markets token tokens coin coins asset assets perp perps " +
    "perpetual perpetuals usd tvl api faq x402 eip erc rpc utc gmt am pm ok hi hello thanks please tell show give compare moved move about " +
    "doing trading worth value quote much many up down day 24h hour hours one two both all any some base chain l1 l2 dex cex nft " +
    "json http https url sdk cdp evm abi ai llm gpt usa eu uk"
  ).split(" "),
);

/** "X vs Y", "X against Y". */
const VERSUS = /\b\$?([a-z][a-z0-9]*) (?:vs\.?|versus|against) \$?([a-z][a-z0-9]*)/g;

const CAPTURES: RegExp[] = [
  /\bprice (?:of|for) \$?([a-z][a-z0-9]*)/g,
  /\b\$?([a-z][a-z0-9]*) price\b/g,
  /\bis \$?([a-z][a-z0-9]*) (?:at|trading|worth|doing)\b/g,
  /\bhow(?:'s| is) \$?([a-z][a-z0-9]*) doing\b/g,
  /\bmuch is \$?([a-z][a-z0-9]*)/g,
  /\bfunding (?:rate )?(?:for|of|on) \$?([a-z][a-z0-9]*)/g,
  /\b\$?([a-z][a-z0-9]*) funding\b/g,
  /\bopen interest (?:for|of|on|in) \$?([a-z][a-z0-9]*)/g,
  /\b\$?([a-z][a-z0-9]*) open interest\b/g,
  /\bcompare \$?([a-z][a-z0-9]*) (?:and|with|to|vs\.?|versus|against) \$?([a-z][a-z0-9]*)/g,
  VERSUS,
  /\b(?:did|has) \$?([a-z][a-z0-9]*) (?:move|moved|change|changed|do|done|go|gone)\b/g,
];

/** Ticker-like words of `text`: capitals, `$XYZ`, or the word in "price of X" and similar. */
function tickerWords(text: string): Set<string> {
  const found = new Set<string>();
  for (const word of text.match(/\$?[A-Za-z][A-Za-z0-9]*/g) ?? []) {
    const bare = word.replace(/^\$/, "");
    if (word.startsWith("$") || (bare.length >= 2 && bare.length <= 10 && bare === bare.toUpperCase() && /[A-Z]/.test(bare))) {
      found.add(bare.toLowerCase());
    }
  }
  const lower = text.toLowerCase();
  for (const rule of CAPTURES) {
    for (const match of lower.matchAll(rule)) {
      // "eth strength vs btc", "how does eth perform against btc": the word after an asset's name qualifies it.
      const qualifier = rule === VERSUS && knownAsset(lower.slice(0, match.index).match(/\$?([a-z0-9]+)\s*$/)?.[1] ?? "") !== undefined;
      for (const group of match.slice(qualifier ? 2 : 1)) if (group) found.add(group);
    }
  }
  for (const word of [...found]) if (NOT_TICKERS.has(word)) found.delete(word);
  return found;
}

function mentionKey(mention: AssetMention): string {
  const ref = mention.known;
  if (!ref) return `word:${mention.word.toUpperCase()}`;
  if (ref.kind === "watched") return `watched:${ref.symbol}:${ref.asked.toUpperCase()}`;
  if (ref.kind === "perp") return `perp:${ref.name}`;
  return `token:${ref.address}`;
}

/** What a message asks. */
export type ChatQuestion = ReturnType<typeof readQuestion>;

/** Read `message`: its topics, phrasing and the assets it names, in order of appearance. */
export function readQuestion(message: string) {
  const lower = message.toLowerCase().replace(/\s+/g, " ").trim();
  const topics = Object.fromEntries(Object.entries(TOPIC_RULES).map(([topic, rule]) => [topic, rule.test(lower)])) as unknown as ChatTopics;
  const tickers = tickerWords(message);

  const mentions: AssetMention[] = [];
  const seen = new Set<string>();
  // An address pasted as "0X9401…" (a capital X, as some explorers and spreadsheets write it) is the same address.
  for (const found of message.match(/0[xX][0-9a-fA-F]{40}\b|\$?[A-Za-z][A-Za-z0-9]*/g) ?? []) {
    const word = found.replace(/^0X/, "0x");
    const known = knownAsset(word) ?? null;
    if (!known && !tickers.has(word.replace(/^\$/, "").toLowerCase())) continue;
    const mention = { word: word.replace(/^\$/, ""), known };
    const key = mentionKey(mention);
    // "ETH" twice is one asset; "ETH" and "WETH" stay two words but price the same token.
    if (seen.has(key)) continue;
    seen.add(key);
    mentions.push(mention);
  }

  return {
    text: message,
    topics,
    // Phrased as a how/why/what-is question (a knowledge-base question unless it asks for live figures).
    howTo: HOW_TO.test(lower),
    // Says "now", "current", "today"...: wants live figures.
    live: LIVE.test(lower),
    // Asks for a recommendation or a prediction.
    advice: ADVICE.test(lower),
    // Asks what the assistant can do.
    help: HELP.test(lower),
    mentions,
  };
}
