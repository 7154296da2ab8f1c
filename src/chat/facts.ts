/**
 * The live facts both chat engines quote, read through `ChatDeps` at request time, each
 * with the figures it contributes to an answer's `sources`. The built-in engine writes
 * sentences from them; the LLM engine hands them to the model as tool results.
 */
import { type Address, getAddress, isAddress } from "viem";
import type { MarketPair } from "../../spec/routes/analytics.ts";
import { exactTimes, parseDecimal, rounded } from "../analytics/usd-value.ts";
import { WATCHLIST } from "../analytics/watchlist.ts";
import type { ChatDeps } from "./deps.ts";
import type { ChatFigure } from "./sources.ts";

/** An asset a question names, resolved to where its figures come from. */
export type AssetRef =
  /** One of the watched Base tokens; `perp` is the Hyperliquid perpetual of the same asset, if any. */
  | { kind: "watched"; asked: string; symbol: string; perp: string | null }
  /** Listed on Hyperliquid only: priced by its perpetual's mark price. */
  | { kind: "perp"; asked: string; name: string }
  /** Any Base token by contract address. */
  | { kind: "token"; asked: string; address: Address };

// Names people use for the watched tokens and the Hyperliquid perpetual of each asset.
const LEXICON: Record<string, { watched?: string; perp?: string }> = {
  ETH: { watched: "WETH", perp: "ETH" },
  ETHER: { watched: "WETH", perp: "ETH" },
  ETHEREUM: { watched: "WETH", perp: "ETH" },
  WETH: { watched: "WETH", perp: "ETH" },
  BTC: { watched: "cbBTC", perp: "BTC" },
  BITCOIN: { watched: "cbBTC", perp: "BTC" },
  CBBTC: { watched: "cbBTC", perp: "BTC" },
  WBTC: { perp: "BTC" },
  CBETH: { watched: "cbETH", perp: "ETH" },
  AERO: { watched: "AERO" },
  AERODROME: { watched: "AERO" },
  USDC: { watched: "USDC" },
  SOL: { perp: "SOL" },
  SOLANA: { perp: "SOL" },
  HYPE: { perp: "HYPE" },
};

/** The watched symbols, in display order. */
export const WATCHED_SYMBOLS: readonly string[] = WATCHLIST.map((t) => t.symbol);

/** The asset `word` names without asking any upstream: a known name or a Base contract address. */
export function knownAsset(word: string): AssetRef | undefined {
  if (isAddress(word, { strict: false })) return { kind: "token", asked: word, address: getAddress(word) };
  const entry = LEXICON[word.replace(/^\$/, "").toUpperCase()];
  if (!entry) return undefined;
  if (entry.watched) return { kind: "watched", asked: word, symbol: entry.watched, perp: entry.perp ?? null };
  return { kind: "perp", asked: word, name: entry.perp as string };
}

/** The asset `word` names: a known one, else a perpetual Hyperliquid lists under that name, else null. */
export async function resolveAsset(deps: ChatDeps, word: string): Promise<AssetRef | null> {
  const known = knownAsset(word);
  if (known) return known;
  const name = word.replace(/^\$/, "").toUpperCase();
  const perps = await deps.perps();
  return perps.value.has(name) ? { kind: "perp", asked: word, name } : null;
}

/** How an answer names an asset: `ETH (WETH on Base)`, `SOL`, `PLAIN (0x4557…d9b0)`. */
export function assetLabel(ref: AssetRef, symbol?: string): string {
  if (ref.kind === "perp") return ref.name;
  if (ref.kind === "token") return `${symbol ?? "the token"} (${ref.address.slice(0, 6)}…${ref.address.slice(-4)})`;
  const asked = ref.asked.replace(/^\$/, "").toUpperCase();
  return asked === ref.symbol.toUpperCase() ? `${ref.symbol} on Base` : `${asked} (${ref.symbol} on Base)`;
}

/** A price with its 24 h change and where both came from. */
export interface PriceFact {
  /** How the answer names the asset. */
  label: string;
  /** The symbol figures carry: the watched symbol, the perpetual's name or the pair's base symbol. */
  symbol: string;
  /** The token address for a Base token asked for by address. */
  address: string | null;
  price_usd: string;
  /** Percent; null when the source gives none. */
  change_24h_pct: number | null;
  source: "dexscreener" | "defillama" | "hyperliquid";
  /** What the price is: a Base spot price, or a perpetual's mark price. */
  basis: "spot" | "perp_mark";
  /** `aerodrome WETH/USDC` for a DexScreener price, null otherwise. */
  venue: string | null;
  fetched_at: string;
}

/** The 24 h change of a perpetual from its mark and previous-day prices, in percent rounded to 2 decimals. */
export function perpChange24h(markPx: string, prevDayPx: string): number | null {
  const prev = Number(prevDayPx);
  if (!(prev > 0)) return null;
  return Number(((Number(markPx) / prev - 1) * 100).toFixed(2));
}

/** The price of an asset: watched tokens from the markets rows, perpetuals from Hyperliquid, tokens by address from their deepest pair. */
export async function priceFact(deps: ChatDeps, ref: AssetRef): Promise<PriceFact> {
  if (ref.kind === "watched") {
    const { pairs } = await deps.markets();
    const row = pairs.find((p) => p.symbol === ref.symbol);
    if (row) {
      return {
        label: assetLabel(ref),
        symbol: row.symbol,
        address: null,
        price_usd: row.price_usd,
        change_24h_pct: row.change_24h_pct,
        source: row.source,
        basis: "spot",
        venue: row.dex_id && row.pair ? `${row.dex_id} ${row.pair}` : null,
        fetched_at: row.fetched_at,
      };
    }
    // The markets answer leaves out a token neither source priced; its perpetual may still have a price.
    if (!ref.perp) throw new MissingFigure(`neither DexScreener nor DefiLlama has a price for ${ref.symbol} right now`);
    return perpPrice(deps, { kind: "perp", asked: ref.asked, name: ref.perp });
  }
  if (ref.kind === "perp") return perpPrice(deps, ref);
  const price = await deps.tokenPrice(ref.address);
  const symbol = price.pair
    ? price.method === "base_token_price"
      ? price.pair.base_symbol
      : price.pair.quote_symbol
    : ref.address.slice(0, 10);
  return {
    label: assetLabel(ref, price.pair ? symbol : undefined),
    symbol,
    address: price.token,
    price_usd: price.price_usd,
    change_24h_pct: price.change_24h_pct,
    source: price.source,
    basis: "spot",
    venue: price.pair ? `${price.pair.dex_id} ${price.pair.base_symbol}/${price.pair.quote_symbol}` : null,
    fetched_at: new Date(price.fetchedAt).toISOString(),
  };
}

async function perpPrice(deps: ChatDeps, ref: Extract<AssetRef, { kind: "perp" }>): Promise<PriceFact> {
  const perp = await perpFact(deps, ref.name);
  if (!perp) throw new MissingFigure(`Hyperliquid lists no perpetual named ${ref.name}`);
  return {
    label: ref.name,
    symbol: perp.name,
    address: null,
    price_usd: perp.mark_px,
    change_24h_pct: perp.change_24h_pct,
    source: "hyperliquid",
    basis: "perp_mark",
    venue: null,
    fetched_at: perp.fetched_at,
  };
}

/** The figures a price fact (or a watched market's row) contributes. */
export function priceFigures(
  fact: Pick<PriceFact, "symbol" | "address" | "source" | "fetched_at" | "price_usd" | "change_24h_pct">,
): ChatFigure[] {
  const base = { symbol: fact.symbol, ...(fact.address ? { id: fact.address } : {}), source: fact.source, fetched_at: fact.fetched_at };
  const figures: ChatFigure[] = [{ kind: "price", ...base, value: fact.price_usd }];
  if (fact.change_24h_pct !== null) figures.push({ kind: "change_24h", ...base, value: fact.change_24h_pct });
  return figures;
}

/** Funding, open interest and mark price of the perpetual `name` on Hyperliquid, or null when it is not listed. */
export async function perpFact(deps: ChatDeps, name: string) {
  const perps = await deps.perps();
  const perp = perps.value.get(name.toUpperCase());
  if (!perp) return null;
  return {
    name: perp.name,
    // Percent per hour, exact.
    funding_1h_pct: exactTimes(perp.funding_1h, 1n, 2),
    // Percent per 8 hours (8 hourly payments), exact.
    funding_8h_pct: exactTimes(perp.funding_1h, 8n, 2),
    // Coin units.
    open_interest: parseDecimal(perp.open_interest).toFixed(),
    // USD at the mark price, rounded half up to whole dollars.
    open_interest_usd: rounded(parseDecimal(perp.open_interest).times(perp.mark_px), 0),
    mark_px: parseDecimal(perp.mark_px).toFixed(),
    change_24h_pct: perpChange24h(perp.mark_px, perp.prev_day_px),
    fetched_at: new Date(perps.fetchedAt).toISOString(),
  };
}

type PerpFact = NonNullable<Awaited<ReturnType<typeof perpFact>>>;

/** The figures of a perpetual's funding (`funding`), open interest (`oi`) or both. */
export function perpFigures(fact: PerpFact, parts: { funding: boolean; oi: boolean }): ChatFigure[] {
  const base = { symbol: fact.name, source: "hyperliquid", fetched_at: fact.fetched_at };
  const figures: ChatFigure[] = [];
  if (parts.funding) {
    figures.push({ kind: "funding", ...base, value: fact.funding_1h_pct }, { kind: "funding_8h", ...base, value: fact.funding_8h_pct });
  }
  if (parts.oi) {
    figures.push(
      { kind: "open_interest", ...base, value: fact.open_interest },
      { kind: "open_interest_usd", ...base, value: fact.open_interest_usd },
      { kind: "price", ...base, value: fact.mark_px },
    );
  }
  return figures;
}

/** Gas on the served chain now, stamped with when it was read. */
export async function gasFact(deps: ChatDeps) {
  const reading = await deps.gas();
  return { ...reading, fetched_at: deps.now().toISOString() };
}

/** The figures a gas answer contributes (the ETH price used for the USD costs among them). */
export function gasFigures(fact: Awaited<ReturnType<typeof gasFact>>): ChatFigure[] {
  const at = { source: "chain", fetched_at: fact.fetched_at };
  return [
    { kind: "gas", id: "base_fee_gwei", value: fact.base_fee_gwei, ...at },
    { kind: "gas", id: "priority_fee_low_gwei", value: fact.priority_fee_gwei.low, ...at },
    { kind: "gas", id: "priority_fee_medium_gwei", value: fact.priority_fee_gwei.medium, ...at },
    { kind: "gas", id: "priority_fee_high_gwei", value: fact.priority_fee_gwei.high, ...at },
    { kind: "gas", id: "transfer_21000_usd", value: fact.usd_estimate.transfer_21000, ...at },
    { kind: "gas", id: "erc20_transfer_65000_usd", value: fact.usd_estimate.erc20_transfer_65000, ...at },
    { kind: "price", symbol: "WETH", value: String(fact.eth_price_usd), source: fact.price_source, fetched_at: fact.fetched_at },
  ];
}

/** The figures of the watched markets' rows. */
export function marketFigures(pairs: readonly MarketPair[]): ChatFigure[] {
  return pairs.flatMap((row) => priceFigures({ ...row, address: null }));
}

// Words of a TVL question that name no protocol.
const NOT_PROTOCOLS = new Set(
  (
    "a an the of on in at to for and or vs versus is are was what whats what's how has have did does do much tvl total value locked " +
    "lock change changed changes move moved today now current currently right day 24h 24 hours hour protocol protocols defi its their " +
    "me tell show give compare with base chain usd dollars up down by"
  ).split(" "),
);

/**
 * The DefiLlama slugs a message names, in order: a word or two joined by "-" that is a slug
 * (`aave-v3`, `moonwell`), a parent protocol (`aave` for its versions), or the start of exactly
 * one slug (`morpho` for `morpho-blue`).
 */
export async function protocolsNamed(deps: ChatDeps, message: string): Promise<string[]> {
  const words = (
    message
      .toLowerCase()
      .replace(/['’]s\b/g, "")
      .match(/[a-z0-9][a-z0-9.]*/g) ?? []
  ).filter((w) => !NOT_PROTOCOLS.has(w));
  const { value: list } = await deps.protocols();
  const parents = new Set(
    [...list.values()].flatMap((p) => (p.parentProtocol ? [p.parentProtocol.toLowerCase().replace(/^parent#/, "")] : [])),
  );
  const resolve = (candidate: string): string | null => {
    if (list.has(candidate) || parents.has(candidate)) return candidate;
    const starting = [...list.keys()].filter((slug) => slug.startsWith(`${candidate}-`));
    return starting.length === 1 ? (starting[0] as string) : null;
  };
  const found: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const pair = i + 1 < words.length ? resolve(`${words[i]}-${words[i + 1]}`) : null;
    const slug = pair ?? resolve(words[i] as string);
    if (pair) i++;
    if (slug && !found.includes(slug)) found.push(slug);
  }
  return found;
}

/** A protocol's TVL now and its 24 h change, as DefiLlama gives them (`POST /api/defi-sentiment`'s `protocol_tvl`). */
export async function tvlFact(deps: ChatDeps, slug: string) {
  const { value, fetchedAt } = await deps.protocolTvl(slug);
  return {
    slug: value.slug,
    name: value.name,
    tvl_usd: value.tvl_usd,
    // Percent; null when DefiLlama gives none.
    change_24h_pct: value.change_24h_pct,
    // For a parent protocol: the slugs of the versions its figure covers.
    members: value.members ?? null,
    fetched_at: new Date(fetchedAt).toISOString(),
  };
}

/** The figures a TVL fact contributes. */
export function tvlFigures(fact: Awaited<ReturnType<typeof tvlFact>>): ChatFigure[] {
  const base = { id: fact.slug, source: "defillama", fetched_at: fact.fetched_at };
  const figures: ChatFigure[] = [{ kind: "tvl", ...base, value: fact.tvl_usd }];
  if (fact.change_24h_pct !== null) figures.push({ kind: "tvl_change_24h", ...base, value: fact.change_24h_pct });
  return figures;
}

/** A figure the question needs is not to be had, though every upstream answered (e.g. a token with no pair). */
export class MissingFigure extends Error {
  override name = "MissingFigure";
}
