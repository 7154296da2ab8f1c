/**
 * A group's status over the last 24 hours as inline SVG, drawn on the server (the page has no
 * script): 96 bars of 15 minutes, each coloured by the worst status any document generated in
 * it recorded, grey where none was generated (the service was not running). The colours are
 * CSS classes, so the page's light and dark themes decide them.
 */
import type { HealthStatus, StatusGroupId } from "../../spec/routes/status.ts";
import type { StatusPoint } from "./status-feed.ts";

/** Bars drawn: one per 15 minutes. */
export const CHART_SLOTS = 96;
const SLOT_MS = (24 * 3600_000) / CHART_SLOTS;
/** The drawing's size in CSS pixels (scaled down on narrow screens). */
export const CHART_WIDTH = 960;
export const CHART_HEIGHT = 40;

const RANK: Record<HealthStatus, number> = { operational: 0, degraded: 1, down: 2 };

/** One bar: its start and the worst status seen in it, or null when no document was generated. */
export interface ChartSlot {
  from: Date;
  status: HealthStatus | null;
}

/** The 96 slots ending at `now` for `group`. */
export function chartSlots(points: readonly StatusPoint[], group: StatusGroupId | "overall", now: Date): ChartSlot[] {
  const start = now.getTime() - CHART_SLOTS * SLOT_MS;
  const slots: ChartSlot[] = Array.from({ length: CHART_SLOTS }, (_, i) => ({ from: new Date(start + i * SLOT_MS), status: null }));
  for (const point of points) {
    const status = point.statuses[group];
    const index = Math.floor((point.at.getTime() - start) / SLOT_MS);
    const slot = slots[index];
    if (!status || !slot) continue;
    if (slot.status === null || RANK[status] > RANK[slot.status]) slot.status = status;
  }
  return slots;
}

/** How much of the measured time was operational, in words, e.g. "operational in 95 of 96 quarter-hours measured". */
export function chartSummary(slots: readonly ChartSlot[]): string {
  const measured = slots.filter((s) => s.status !== null);
  if (measured.length === 0) return "no status recorded in the last 24 hours";
  const counts = { operational: 0, degraded: 0, down: 0 };
  for (const s of measured) counts[s.status as HealthStatus]++;
  return `of ${measured.length} quarter-hours measured in the last 24 hours: ${counts.operational} operational, ${counts.degraded} degraded, ${counts.down} down`;
}

const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The SVG markup of one group's chart; `label` names it for screen readers. */
export function statusChartSvg(slots: readonly ChartSlot[], label: string): string {
  const bar = CHART_WIDTH / CHART_SLOTS;
  const rects = slots
    .map((s, i) => {
      const cls = s.status ?? "none";
      const when = `${s.from.toISOString().slice(11, 16)} UTC: ${s.status ?? "no data"}`;
      return `<rect class="bar ${cls}" x="${(i * bar).toFixed(1)}" y="0" width="${(bar - 2).toFixed(1)}" height="${CHART_HEIGHT}" rx="1.5"><title>${when}</title></rect>`;
    })
    .join("");
  return `<svg class="status-chart" role="img" aria-label="${escapeXml(label)}" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg"><title>${escapeXml(label)}</title>${rects}</svg>`;
}
