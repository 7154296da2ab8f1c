/**
 * DefiLlama (keyless): protocol TVL from api.llama.fi and token prices from coins.llama.fi,
 * the price source's fallback. Shapes follow /work/shared/reference/upstream-apis.md §2.
 */
import { type Static, Type } from "@sinclair/typebox";
import type { defiSentiment } from "../../spec/routes/analytics.ts";
import { NotFoundError } from "../errors.ts";
import { expectShape, fetchUpstreamJson } from "./http-json.ts";
import { type Cached, readInBatches, TtlCache } from "./ttl-cache.ts";

/** The public TVL API. */
export const DEFILLAMA_DEFAULT_URL = "https://api.llama.fi";
/** The public coins (prices) API. */
export const DEFILLAMA_COINS_DEFAULT_URL = "https://coins.llama.fi";
/** TVL moves slowly and `/protocols` is several megabytes: reuse it for five minutes. */
export const DEFILLAMA_TVL_TTL_MS = 5 * 60_000;
/** Prices are reused for one minute. */
export const DEFILLAMA_COINS_TTL_MS = 60_000;
/** Coins per coins-API call: every key is in the URL's path, which servers and proxies cap at a few kilobytes. */
export const COINS_PER_CALL = 30;

const OptionalNumber = Type.Optional(Type.Union([Type.Number(), Type.Null()]));

/** One entry of `GET /protocols` (only the fields the service reads are checked). */
export const LlamaProtocolSummary = Type.Object({
  name: Type.String(),
  slug: Type.String(),
  tvl: OptionalNumber,
  change_1d: OptionalNumber,
  category: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** `"parent#aave"` on each version of a protocol that has several (Aave V2, Aave V3). */
  parentProtocol: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type LlamaProtocolSummary = Static<typeof LlamaProtocolSummary>;

const ProtocolList = Type.Array(LlamaProtocolSummary);

/** `GET /protocol/{slug}`: the TVL series and the current TVL per chain. */
export const LlamaProtocolDetail = Type.Object({
  name: Type.String(),
  tvl: Type.Array(Type.Object({ date: Type.Number(), totalLiquidityUSD: Type.Number() })),
  currentChainTvls: Type.Optional(Type.Record(Type.String(), Type.Number())),
});
export type LlamaProtocolDetail = Static<typeof LlamaProtocolDetail>;

const CoinPrices = Type.Object({
  coins: Type.Record(
    Type.String(),
    Type.Object({
      price: Type.Number(),
      symbol: Type.Optional(Type.String()),
      decimals: Type.Optional(Type.Number()),
      timestamp: Type.Optional(Type.Number()),
      confidence: Type.Optional(Type.Number()),
    }),
  ),
});

const CoinPercentages = Type.Object({ coins: Type.Record(Type.String(), Type.Number()) });

/** A token price from the coins API. */
export interface LlamaCoinPrice {
  price: number;
}

/** TVL of one protocol and its change over 24 h, as `POST /api/defi-sentiment` answers it. */
export type ProtocolTvl = NonNullable<Static<typeof defiSentiment.response>["protocol_tvl"]>;

// Keys of currentChainTvls that are not chain TVL (double counting or borrowed funds): DefiLlama's own convention.
const NON_TVL_KEY = /-|^(staking|pool2|borrowed|vesting|treasury|offers)$/i;

/** The TVL now and 24 h earlier from a protocol's series; null change when the series is too short. */
export function tvlFromSeries(detail: LlamaProtocolDetail): { tvl_usd: number; change_24h_pct: number | null } {
  const chainTvls = Object.entries(detail.currentChainTvls ?? {}).filter(([key]) => !NON_TVL_KEY.test(key));
  const series = [...detail.tvl].sort((a, b) => a.date - b.date);
  const last = series.at(-1);
  const tvl = chainTvls.length > 0 ? chainTvls.reduce((sum, [, v]) => sum + v, 0) : (last?.totalLiquidityUSD ?? 0);
  if (!last) return { tvl_usd: tvl, change_24h_pct: null };
  const dayBefore = series.filter((p) => p.date <= last.date - 86_400).at(-1);
  if (!dayBefore || dayBefore.totalLiquidityUSD === 0) return { tvl_usd: tvl, change_24h_pct: null };
  return { tvl_usd: tvl, change_24h_pct: (last.totalLiquidityUSD / dayBefore.totalLiquidityUSD - 1) * 100 };
}

/** `tvlFromSeries` with where the change came from (none without a series: TVL 0, no change). */
function fromSeries(detail: LlamaProtocolDetail | null) {
  const { tvl_usd, change_24h_pct } = detail ? tvlFromSeries(detail) : { tvl_usd: 0, change_24h_pct: null };
  return { tvl_usd, change_24h_pct, change_source: change_24h_pct === null ? ("unavailable" as const) : ("tvl_series" as const) };
}

/** The words the names of a parent's versions start with ("Uniswap V2", "Uniswap V3" → "Uniswap"), or null. */
export function commonName(names: readonly string[]): string | null {
  const split = names.map((n) => n.split(/\s+/));
  const first = split[0] ?? [];
  let n = 0;
  while (n < first.length && split.every((words) => words[n] === first[n])) n++;
  return n > 0 ? first.slice(0, n).join(" ") : null;
}

/** The DefiLlama adapter. */
export class DefiLlama {
  readonly #tvlUrl: string;
  readonly #coinsUrl: string;
  readonly #timeoutMs: number;
  readonly #protocols = new TtlCache<Map<string, LlamaProtocolSummary>>(DEFILLAMA_TVL_TTL_MS, { maxEntries: 1 });
  readonly #details = new TtlCache<LlamaProtocolDetail | null>(DEFILLAMA_TVL_TTL_MS, { maxEntries: 200 });
  readonly #prices = new TtlCache<Record<string, LlamaCoinPrice>>(DEFILLAMA_COINS_TTL_MS, { maxEntries: 500 });
  readonly #percentages = new TtlCache<Record<string, number>>(DEFILLAMA_COINS_TTL_MS, { maxEntries: 500 });

  constructor(tvlUrl: string, coinsUrl: string, timeoutMs: number) {
    this.#tvlUrl = tvlUrl.replace(/\/+$/, "");
    this.#coinsUrl = coinsUrl.replace(/\/+$/, "");
    this.#timeoutMs = timeoutMs;
  }

  /** Every protocol by slug (`GET /protocols`), reduced to the fields read, with when it was fetched. */
  protocols(): Promise<Cached<Map<string, LlamaProtocolSummary>>> {
    return this.#protocols.get("protocols", async () => {
      const { body } = await this.#get("defillama", `${this.#tvlUrl}/protocols`);
      const list = expectShape("defillama", ProtocolList, body);
      return new Map(
        list.map((p) => [
          p.slug.toLowerCase(),
          { name: p.name, slug: p.slug, tvl: p.tvl ?? null, change_1d: p.change_1d ?? null, parentProtocol: p.parentProtocol ?? null },
        ]),
      );
    });
  }

  /** One protocol's TVL series (`GET /protocol/{slug}`); null when DefiLlama does not know the slug. */
  protocolDetail(slug: string): Promise<Cached<LlamaProtocolDetail | null>> {
    const key = slug.toLowerCase();
    return this.#details.get(key, async () => {
      const { status, body } = await this.#get("defillama", `${this.#tvlUrl}/protocol/${encodeURIComponent(key)}`, true);
      if (status === 404) return null;
      const detail = expectShape("defillama", LlamaProtocolDetail, body);
      return { name: detail.name, tvl: detail.tvl, ...(detail.currentChainTvls ? { currentChainTvls: detail.currentChainTvls } : {}) };
    });
  }

  /**
   * TVL and 24 h change of `slug`: from the `/protocols` list, computing the change from the
   * protocol's series when the list has none. Unknown slugs are a 404 naming close matches.
   */
  async protocolTvl(slug: string): Promise<Cached<ProtocolTvl>> {
    const list = await this.protocols();
    const summary = list.value.get(slug.toLowerCase());
    const members = summary
      ? []
      : [...list.value.values()].filter((p) => p.parentProtocol?.toLowerCase() === `parent#${slug.toLowerCase()}`);
    if (!summary && members.length > 0) return this.#parentTvl(slug.toLowerCase(), members, list.fetchedAt);
    if (!summary) {
      const wanted = slug.toLowerCase();
      const close = [...list.value.keys()].filter((s) => s.includes(wanted) || wanted.includes(s)).slice(0, 10);
      throw new NotFoundError(`DefiLlama lists no protocol with slug "${slug}"; slugs look like "aave-v3" or "aerodrome".`, {
        protocol: slug,
        similar_slugs: close,
      });
    }
    if (typeof summary.change_1d === "number" && typeof summary.tvl === "number") {
      return {
        value: {
          slug: summary.slug,
          name: summary.name,
          tvl_usd: summary.tvl,
          change_24h_pct: summary.change_1d,
          change_source: "protocols_list",
        },
        fetchedAt: list.fetchedAt,
      };
    }
    // No series (DefiLlama has no detail for the slug): the list's TVL, and no change.
    const detail = await this.protocolDetail(summary.slug);
    const series = fromSeries(detail.value);
    return {
      value: { slug: summary.slug, name: summary.name, ...series, tvl_usd: summary.tvl ?? series.tvl_usd },
      fetchedAt: detail.value ? Math.min(list.fetchedAt, detail.fetchedAt) : list.fetchedAt,
    };
  }

  /**
   * A parent protocol's aggregate: DefiLlama answers `/protocol/{parent}` with the combined TVL
   * series and chain TVLs of its versions; when it does not, the versions' entries of the list are
   * summed (their 24 h changes weighted by TVL, when every version has one).
   */
  async #parentTvl(slug: string, members: LlamaProtocolSummary[], listFetchedAt: number): Promise<Cached<ProtocolTvl>> {
    const memberSlugs = members.map((m) => m.slug).sort();
    const detail = await this.protocolDetail(slug);
    if (detail.value) {
      return {
        value: { slug, name: detail.value.name, ...fromSeries(detail.value), members: memberSlugs },
        fetchedAt: Math.min(listFetchedAt, detail.fetchedAt),
      };
    }
    const tvl = members.reduce((sum, m) => sum + (m.tvl ?? 0), 0);
    const withChange = members.every((m) => typeof m.change_1d === "number" && typeof m.tvl === "number");
    const before = members.reduce((sum, m) => sum + (m.tvl ?? 0) / (1 + (m.change_1d ?? 0) / 100), 0);
    const change = withChange && before > 0 ? (tvl / before - 1) * 100 : null;
    return {
      value: {
        slug,
        name: commonName(members.map((m) => m.name)) ?? slug,
        tvl_usd: tvl,
        change_24h_pct: change,
        change_source: change === null ? "unavailable" : "protocols_list",
        members: memberSlugs,
      },
      fetchedAt: listFetchedAt,
    };
  }

  /**
   * Current prices of `base:0x...` coins (`GET /prices/current/{coins}`); keys echo the request.
   * At most {@link COINS_PER_CALL} coins per call, the calls made together.
   */
  async coinPrices(coins: readonly string[]): Promise<Cached<Record<string, LlamaCoinPrice>>> {
    const answers = await readInBatches(coins, COINS_PER_CALL, (list) =>
      this.#prices.get(list, async () => {
        const { body } = await this.#get("defillama-coins", `${this.#coinsUrl}/prices/current/${list}?searchWidth=4h`);
        const parsed = expectShape("defillama-coins", CoinPrices, body);
        return Object.fromEntries(Object.entries(parsed.coins).map(([key, c]) => [key.toLowerCase(), { price: c.price }]));
      }),
    );
    return { value: Object.assign({}, ...answers.value), fetchedAt: answers.fetchedAt };
  }

  /** 24 h price change in percent of `base:0x...` coins (`GET /percentage/{coins}?period=24h`), batched as `coinPrices`. */
  async coinChanges24h(coins: readonly string[]): Promise<Cached<Record<string, number>>> {
    const answers = await readInBatches(coins, COINS_PER_CALL, (list) =>
      this.#percentages.get(list, async () => {
        const { body } = await this.#get("defillama-coins", `${this.#coinsUrl}/percentage/${list}?period=24h`);
        const parsed = expectShape("defillama-coins", CoinPercentages, body);
        return Object.fromEntries(Object.entries(parsed.coins).map(([key, v]) => [key.toLowerCase(), v]));
      }),
    );
    return { value: Object.assign({}, ...answers.value), fetchedAt: answers.fetchedAt };
  }

  /** GET `url` of the TVL (`defillama`) or coins (`defillama-coins`) API within the time limit. */
  #get(upstream: "defillama" | "defillama-coins", url: string, allowNotFound = false) {
    return fetchUpstreamJson({ upstream, url, timeoutMs: this.#timeoutMs }, allowNotFound);
  }
}
