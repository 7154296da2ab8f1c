/**
 * Which sponsored placements are active: decided at the moment of each request from the
 * compiled placements (`content/ads/`), so one that expires at noon is gone at noon without a
 * rebuild. A placement shows from `starts_at` (inclusive) until `expires_at` (exclusive).
 */
import type { Ad, AdPlacement } from "../../spec/content-schema.ts";
import { catalog } from "./catalog.ts";

/** The placements active at `now`, in the compiled order (slot, then start). */
export function activeAds(now: Date): Ad[] {
  const t = now.getTime();
  return catalog.ads.filter((ad) => Date.parse(ad.starts_at) <= t && t < Date.parse(ad.expires_at));
}

/**
 * For a free page rendered per request: the placement of its `slot` at `now` (windows in one slot
 * never overlap: the build refuses it), with the page's `Cache-Control` set so that no cache
 * outlives the placement: until the slot's next start or expiry, at most `maxAge` seconds.
 */
export function sponsoredSlot(slot: AdPlacement, now: Date, headers: Headers, maxAge = 300): Ad | undefined {
  const t = now.getTime();
  const changes = catalog.ads
    .filter((ad) => ad.placement === slot)
    .flatMap((ad) => [Date.parse(ad.starts_at), Date.parse(ad.expires_at)])
    .filter((at) => at > t);
  const next = Math.min(...changes, t + maxAge * 1000);
  headers.set("Cache-Control", `public, max-age=${Math.max(0, Math.floor((next - t) / 1000))}`);
  return activeAds(now).find((ad) => ad.placement === slot);
}
