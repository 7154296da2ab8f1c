/**
 * The bench's summary: each part reports its targets with `reportTarget` (the figure, the
 * reference measured in the same run, whether the target holds); `npm run bench` gathers the
 * lines of every part, each run in its own process, through a file named in the environment,
 * and prints them as one table at the end.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

/** The environment variable naming the file the parts append their lines to. */
export const REPORT_FILE_ENV = "BENCH_REPORT_FILE";
/** The environment variable naming the part a child process runs. */
export const PART_ENV = "BENCH_PART";

/** One line of the summary. */
export interface TargetReport {
  /** What must hold, e.g. "paid calls/s >= 90% of a minimal @x402/express seller"; "-" for a figure without a target. */
  target: string;
  /** The figure measured, with its unit. */
  figure: string;
  /** The reference measured in the same run ("-" when the target is an absolute bound). */
  reference: string;
  /** Whether the target holds; null for a figure without a target. */
  ok: boolean | null;
}

/** A line as the summary reads it back: with the part that reported it. */
export interface PartTarget extends TargetReport {
  part: string;
}

/** Print one target line and, under `npm run bench`, hand it to the summary. */
export function reportTarget(report: TargetReport, env: NodeJS.ProcessEnv = process.env): void {
  console.log(`  target: ${report.target}: ${report.figure}; reference ${report.reference}: ${verdict(report.ok)}`);
  const file = env[REPORT_FILE_ENV];
  if (!file) return;
  const line: PartTarget = { part: env[PART_ENV] ?? "-", ...report };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/** The lines the parts wrote to `file`, in order (none when no part wrote). */
export function readTargets(file: string): PartTarget[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as PartTarget);
}

/** What the "ok" column says. */
function verdict(ok: boolean | null): string {
  return ok === null ? "-" : ok ? "holds" : "MISSED";
}

/**
 * The summary as a Markdown table (it reads as a table on a terminal and pastes into
 * docs/benchmarks.md as it is): one row per reported line, and one per part that failed, so a
 * missing figure is never silent.
 */
export function targetTable(lines: readonly PartTarget[], failedParts: readonly string[] = []): string {
  const cell = (text: string) => text.replaceAll("|", "\\|");
  const rows = [
    ...lines.map((l) => [l.part, l.target, l.figure, l.reference, verdict(l.ok)]),
    ...failedParts.map((part) => [part, "(the part failed: its other figures are missing)", "-", "-", "FAILED"]),
  ].map((r) => r.map(cell));
  const header = ["part", "target", "figure", "reference (same run)", "ok"];
  const widths = header.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
