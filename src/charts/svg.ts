/**
 * Small charts as inline SVG markup, drawn on the server (no client JavaScript): a histogram
 * and a sparkline. Colours come from the page's CSS variables (`--fg`, `--muted`, `--accent`,
 * `--line` of src/layouts/Base.astro), so a chart follows the light or dark scheme like the
 * text around it. Each chart is an `img` with a title that says in words what it shows.
 */

/** Escape text for SVG/HTML content and attributes. */
function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Options of `histogramSvg`. */
export interface HistogramOptions {
  /** One count per bar. */
  counts: readonly number[];
  /** One label per bar, under it. */
  labels: readonly string[];
  /** What the chart shows, in words (its title, read by screen readers). */
  title: string;
  width?: number;
  height?: number;
}

/** A bar chart of `counts`, each bar labelled below and its count above. */
export function histogramSvg({ counts, labels, title, width = 560, height = 180 }: HistogramOptions): string {
  const top = 18;
  const bottom = 22;
  const plot = height - top - bottom;
  const max = Math.max(1, ...counts);
  const slot = width / counts.length;
  const bar = slot * 0.78;
  const bars = counts.map((n, i) => {
    const h = round((n / max) * plot);
    const x = round(i * slot + (slot - bar) / 2);
    const y = round(top + plot - h);
    const cx = round(i * slot + slot / 2);
    return (
      `<rect x="${x}" y="${y}" width="${round(bar)}" height="${h}" data-count="${n}" style="fill: var(--accent)"><title>${esc(labels[i] ?? "")}: ${n}</title></rect>` +
      `<text x="${cx}" y="${round(y - 4)}" text-anchor="middle">${n}</text>` +
      `<text x="${cx}" y="${height - 6}" text-anchor="middle">${esc(labels[i] ?? "")}</text>`
    );
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(title)}" data-chart="histogram" style="color: var(--fg); max-width: 100%; height: auto; font: 11px system-ui, sans-serif; fill: currentColor">` +
    `<title>${esc(title)}</title>` +
    `<line x1="0" y1="${top + plot + 0.5}" x2="${width}" y2="${top + plot + 0.5}" style="stroke: var(--muted)" />` +
    `${bars.join("")}</svg>`
  );
}

/** Options of `sparklineSvg`. */
export interface SparklineOptions {
  /** Values oldest first; null is a gap. */
  values: readonly (number | null)[];
  /** What the line shows, in words. */
  title: string;
  /** The value range drawn (default 0-100, a score). */
  min?: number;
  max?: number;
  width?: number;
  height?: number;
}

/** A sparkline: one line through the values (broken at gaps), the last value marked with a dot. */
export function sparklineSvg({ values, title, min = 0, max = 100, width = 120, height = 24 }: SparklineOptions): string {
  const pad = 3;
  const step = values.length > 1 ? (width - 2 * pad) / (values.length - 1) : 0;
  const point = (v: number, i: number) =>
    [round(values.length > 1 ? pad + i * step : width / 2), round(pad + (1 - (v - min) / (max - min || 1)) * (height - 2 * pad))] as const;
  const runs: string[][] = [];
  let current: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (current.length > 0) runs.push(current);
      current = [];
      return;
    }
    current.push(point(v, i).join(","));
  });
  if (current.length > 0) runs.push(current);
  const lines = runs
    .filter((r) => r.length > 1)
    .map(
      (r) => `<polyline points="${r.join(" ")}" fill="none" style="stroke: var(--accent)" stroke-width="1.5" stroke-linejoin="round" />`,
    );
  const lastIndex = values.findLastIndex((v) => v !== null);
  const last = lastIndex >= 0 ? point(values[lastIndex] as number, lastIndex) : undefined;
  const dot = last ? `<circle cx="${last[0]}" cy="${last[1]}" r="2.5" style="fill: var(--accent)" />` : "";
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(title)}" data-chart="sparkline" data-points="${values.filter((v) => v !== null).length}">` +
    `<title>${esc(title)}</title>` +
    `<line x1="0" y1="${height - 0.5}" x2="${width}" y2="${height - 0.5}" style="stroke: var(--line)" />` +
    `${lines.join("")}${dot}</svg>`
  );
}
