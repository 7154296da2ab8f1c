/**
 * When the sponsored placements change: the instants at which one starts or expires. Between two
 * such instants the set of active placements (src/content/ads.ts) is fixed, so a page that
 * depends only on the build and its slot renders the same bytes for the whole interval and can
 * be served from memory until the next instant (src/server/middleware/document-cache.ts).
 *
 * The server reads the windows from `dist/ad-windows.json`, written by the build from the
 * compiled placements: outside the Astro bundle the compiled catalogue cannot be imported.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Ad, AdPlacement } from "../../spec/content-schema.ts";

/** What the schedule needs of a placement. */
export type AdWindow = Pick<Ad, "id" | "placement" | "starts_at" | "expires_at">;

/** The file the build writes the windows to, under the build folder. */
export const AD_WINDOWS_FILE = "ad-windows.json";

/** The placements' windows of the build in `distDir`, or undefined when that build has no such file. */
export function loadAdWindows(distDir: string): AdWindow[] | undefined {
  const file = path.join(distDir, AD_WINDOWS_FILE);
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, "utf8")) as { windows: AdWindow[] }).windows;
}

/** The instants of change of a set of placements. */
export interface AdSchedule {
  /**
   * Which interval between two changes `t` (epoch ms) falls in: the number of changes at or
   * before it. Two instants with the same number see the same placements.
   */
  interval(t: number): number;
  /** The first start or expiry of a placement in `slot` after `t` (epoch ms), or Infinity. */
  nextChange(slot: AdPlacement, t: number): number;
}

/** Count of the sorted `times` at or before `t`. */
function countUpTo(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The schedule of `windows`: a placement shows from `starts_at` (inclusive) until `expires_at` (exclusive). */
export function adSchedule(windows: readonly AdWindow[]): AdSchedule {
  const changesOf = (list: readonly AdWindow[]) =>
    [...new Set(list.flatMap((w) => [Date.parse(w.starts_at), Date.parse(w.expires_at)]))].sort((a, b) => a - b);
  const all = changesOf(windows);
  const bySlot = new Map<AdPlacement, number[]>();
  for (const w of windows) bySlot.set(w.placement, changesOf(windows.filter((x) => x.placement === w.placement)));
  return {
    interval: (t) => countUpTo(all, t),
    nextChange(slot, t) {
      const times = bySlot.get(slot);
      if (!times) return Number.POSITIVE_INFINITY;
      return times[countUpTo(times, t)] ?? Number.POSITIVE_INFINITY;
    },
  };
}
