/**
 * Small charts as inline SVG markup, drawn on the server (no client JavaScript): a histogram
 * and a sparkline. Colours come from the page's CSS variables (`--fg`, `--muted`, `--accent`,
 * `--line` of src/layouts/Base.astro), so a chart follows the light or dark scheme like the
 * text around it. Each chart is an `img` with a title that says in words what it shows.
 */
import { escapeHtml as esc } from "../content/inline-markdown.ts";

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

/** One row of `movesSvg`. */
export interface MoveRow {
  /** The row's name, e.g. a token symbol. */
  label: string;
  /** The price as shown, e.g. `$3,120.50`. */
  price: string;
  /** The 24 h change in percent; null: not known (no bar). */
  changePct: number | null;
}

/** Options of `movesSvg`. */
export interface MovesOptions {
  rows: readonly MoveRow[];
  /** What the chart shows, in words. */
  title: string;
  width?: number;
}

/**
 * A diverging bar chart of 24 h moves: one row per pair with its name and price, a bar from the
 * zero line (right and green when up, left and red when down) scaled to the largest move, and
 * the move in percent beside the bar.
 */
export function movesSvg({ rows, title, width = 460 }: MovesOptions): string {
  const rowHeight = 30;
  const top = 6;
  const height = top * 2 + rows.length * rowHeight;
  const labelWidth = 150;
  const textRoom = 60;
  const plot = width - labelWidth - 2 * textRoom;
  const zero = round(labelWidth + textRoom + plot / 2);
  const largest = Math.max(0.01, ...rows.map((r) => Math.abs(r.changePct ?? 0)));
  const pct = (n: number) => `${n > 0 ? "+" : n < 0 ? "−" : ""}${Math.abs(n).toFixed(2)}%`;
  const marks = rows.map((r, i) => {
    const y = top + i * rowHeight;
    const mid = round(y + rowHeight / 2);
    const name =
      `<text x="0" y="${mid + 4}" style="font-weight: 600">${esc(r.label)}</text>` +
      `<text x="${labelWidth - 8}" y="${mid + 4}" text-anchor="end">${esc(r.price)}</text>`;
    if (r.changePct === null) {
      return `${name}<text x="${zero + 6}" y="${mid + 4}" data-symbol="${esc(r.label)}" data-change="">no 24 h change</text>`;
    }
    const length = round((Math.abs(r.changePct) / largest) * (plot / 2));
    const up = r.changePct >= 0;
    const x = up ? zero : round(zero - length);
    const colour = up ? "var(--ok)" : "var(--bad)";
    const valueX = up ? round(zero + length + 6) : round(zero - length - 6);
    return (
      name +
      `<rect x="${x}" y="${round(y + 7)}" width="${length}" height="${rowHeight - 14}" data-symbol="${esc(r.label)}" data-change="${r.changePct}" style="fill: ${colour}"><title>${esc(r.label)} ${esc(r.price)}, 24 h ${pct(r.changePct)}</title></rect>` +
      `<text x="${valueX}" y="${mid + 4}" text-anchor="${up ? "start" : "end"}">${pct(r.changePct)}</text>`
    );
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(title)}" data-chart="moves" style="color: var(--fg); max-width: 100%; height: auto; font: 13px system-ui, sans-serif; fill: currentColor">` +
    `<title>${esc(title)}</title>` +
    `<line x1="${zero}" y1="0" x2="${zero}" y2="${height}" style="stroke: var(--muted)" />` +
    `${marks.join("")}</svg>`
  );
}
