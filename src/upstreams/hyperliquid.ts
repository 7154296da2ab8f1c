/**
 * Hyperliquid (keyless): perpetual funding, open interest and mark prices from
 * `POST /info {"type":"metaAndAssetCtxs"}`, a 2-tuple of the universe and per-asset contexts
 * aligned by index (/work/shared/reference/upstream-apis.md §3). Numbers arrive as decimal
 * strings and are kept as strings until used.
 */
import { Type } from "@sinclair/typebox";
import { UpstreamError } from "../errors.ts";
import { expectShape, fetchUpstreamJson } from "./http-json.ts";
import { type Cached, TtlCache } from "./ttl-cache.ts";

const UPSTREAM = "hyperliquid";
/** The public API. */
export const HYPERLIQUID_DEFAULT_URL = "https://api.hyperliquid.xyz";
/** Funding and open interest are reused for 15 s (the call weighs 20 of 1200 per minute). */
export const HYPERLIQUID_TTL_MS = 15_000;

const Decimal = Type.String({ pattern: "^-?[0-9]+(\\.[0-9]+)?$" });

const MetaAndAssetCtxs = Type.Tuple([
  Type.Object({
    universe: Type.Array(Type.Object({ name: Type.String(), szDecimals: Type.Number(), isDelisted: Type.Optional(Type.Boolean()) })),
  }),
  Type.Array(
    Type.Object({
      funding: Decimal,
      openInterest: Decimal,
      prevDayPx: Decimal,
      markPx: Decimal,
      dayNtlVlm: Type.Optional(Decimal),
      oraclePx: Type.Optional(Decimal),
      midPx: Type.Optional(Type.Union([Decimal, Type.Null()])),
    }),
  ),
]);

/** One listed perpetual with its current context. */
export interface PerpAsset {
  name: string;
  /** Hourly funding rate as a fraction, e.g. "0.0000125" (0.00125 % per hour). */
  funding_1h: string;
  /** Open interest in coin units. */
  open_interest: string;
  mark_px: string;
  prev_day_px: string;
}

/** The Hyperliquid adapter. */
export class Hyperliquid {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #cache = new TtlCache<Map<string, PerpAsset>>(HYPERLIQUID_TTL_MS, { maxEntries: 1 });

  constructor(baseUrl: string, timeoutMs: number) {
    this.#baseUrl = baseUrl.replace(/\/+$/, "");
    this.#timeoutMs = timeoutMs;
  }

  /** Every listed (not delisted) perpetual by upper-case name, with when it was fetched. */
  perps(): Promise<Cached<Map<string, PerpAsset>>> {
    return this.#cache.get("metaAndAssetCtxs", async () => {
      const { body } = await fetchUpstreamJson({
        upstream: UPSTREAM,
        url: `${this.#baseUrl}/info`,
        method: "POST",
        body: { type: "metaAndAssetCtxs" },
        timeoutMs: this.#timeoutMs,
      });
      const [meta, contexts] = expectShape(UPSTREAM, MetaAndAssetCtxs, body);
      if (meta.universe.length !== contexts.length) {
        throw new UpstreamError("upstream_error", UPSTREAM, `${UPSTREAM} answered with a universe and contexts of different lengths.`);
      }
      const perps = new Map<string, PerpAsset>();
      meta.universe.forEach((asset, i) => {
        const ctx = contexts[i];
        if (!ctx || asset.isDelisted) return;
        perps.set(asset.name.toUpperCase(), {
          name: asset.name,
          funding_1h: ctx.funding,
          open_interest: ctx.openInterest,
          mark_px: ctx.markPx,
          prev_day_px: ctx.prevDayPx,
        });
      });
      return perps;
    });
  }
}
