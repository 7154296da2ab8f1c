/**
 * Which sponsored placements are active: decided at the moment of each request from the
 * compiled placements (`content/ads/`), so one that expires at noon is gone at noon without a
 * rebuild. A placement shows from `starts_at` (inclusive) until `expires_at` (exclusive).
 */
import type { Ad, AdPlacement } from "../../spec/content-schema.ts";
import { catalog } from "./catalog.ts";

/** The placements of `ads` active at `now`, in the compiled order (slot, then start). */
export function activeAds(now: Date, ads: readonly Ad[] = catalog.ads): Ad[] {
  const t = now.getTime();
  return ads.filter((ad) => Date.parse(ad.starts_at) <= t && t < Date.parse(ad.expires_at));
}

/** The placement that fills `slot` at `now`, if any (windows in one slot never overlap: the build refuses it). */
export function activeAdFor(slot: AdPlacement, now: Date, ads: readonly Ad[] = catalog.ads): Ad | undefined {
  return activeAds(now, ads).find((ad) => ad.placement === slot);
}

/**
 * Seconds a page showing `slot` at `now` may be cached: until the slot's next start or expiry,
 * at most `max`, so no cache keeps showing a placement after it ended.
 */
export function slotCacheSeconds(slot: AdPlacement, now: Date, max: number, ads: readonly Ad[] = catalog.ads): number {
  const t = now.getTime();
  const changes = ads
    .filter((ad) => ad.placement === slot)
    .flatMap((ad) => [Date.parse(ad.starts_at), Date.parse(ad.expires_at)])
    .filter((at) => at > t);
  const next = Math.min(...changes, t + max * 1000);
  return Math.max(0, Math.floor((next - t) / 1000));
}

/**
 * For a free page rendered per request: the placement of its `slot` at `now`, with the page's
 * `Cache-Control` set so that no cache outlives the placement (at most `maxAge` seconds).
 */
export function sponsoredSlot(slot: AdPlacement, now: Date, headers: Headers, maxAge = 300): Ad | undefined {
  headers.set("Cache-Control", `public, max-age=${slotCacheSeconds(slot, now, maxAge)}`);
  return activeAdFor(slot, now);
}
