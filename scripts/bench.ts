/**
 * `npm run bench`: every benchmark of the service, each part in a process of its own (no
 * pool, timer, nonce or memory left over from one part skews the next), one after another,
 * each printing its figures next to their reference from the same run. A part that fails is
 * reported and the others still run; the exit code says whether all passed.
 *
 *   npm run bench                      every part, full size
 *   npm run bench -- --quick           every part, smaller (under 2 minutes on a quiet machine)
 *   npm run bench -- settle analytics  only these parts (with or without --quick)
 *
 * Speed and memory targets live here, not in timed tests. To add a part: a scripts/bench-*.ts
 * module exporting an async function, one entry in PARTS, and a `reportTarget` call per target
 * (scripts/bench-report.ts), which the table printed at the end collects. Parts read
 * BENCH_QUICK=1 to shrink themselves.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PART_ENV, REPORT_FILE_ENV, readTargets, targetTable } from "./bench-report.ts";

/** One benchmark: `run` is the name of the async function `file` exports. */
export interface BenchPart {
  name: string;
  file: string;
  run: string;
}

export const PARTS: BenchPart[] = [
  { name: "spine", file: "./bench-spine.ts", run: "benchSpine" },
  { name: "settle", file: "./bench-settle.ts", run: "benchSettle" },
  { name: "content", file: "./bench-content.ts", run: "benchContent" },
  { name: "analytics", file: "./bench-analytics.ts", run: "benchAnalytics" },
  { name: "entity", file: "./bench-entity.ts", run: "benchEntity" },
  { name: "store", file: "./bench-store.ts", run: "benchStore" },
  { name: "crawl", file: "./bench-crawl.ts", run: "benchCrawl" },
  { name: "chat", file: "./bench-chat.ts", run: "benchChat" },
  { name: "balance", file: "./bench-balance.ts", run: "benchBalance" },
  { name: "secondary", file: "./bench-secondary.ts", run: "benchSecondary" },
  { name: "solana", file: "./bench-solana.ts", run: "benchSolana" },
  { name: "free", file: "./bench-free.ts", run: "benchFree" },
  { name: "search", file: "./bench-search.ts", run: "benchSearch" },
  { name: "memory", file: "./bench-memory.ts", run: "benchMemory" },
  { name: "start", file: "./bench-start.ts", run: "benchStart" },
];

const PART_FLAG = "--part";

/** In a child: run one part here. */
async function runPart(name: string): Promise<void> {
  const part = PARTS.find((p) => p.name === name);
  if (!part) throw new Error(`no bench part ${name}`);
  const mod = (await import(part.file)) as Record<string, () => Promise<void>>;
  const run = mod[part.run];
  if (!run) throw new Error(`${part.file} exports no ${part.run}`);
  await run();
}

/** In the parent: each selected part in its own process, then a summary. */
async function runAll(args: string[]): Promise<boolean> {
  const quick = args.includes("--quick");
  const names = args.filter((a) => !a.startsWith("--"));
  const unknown = names.filter((n) => !PARTS.some((p) => p.name === n));
  if (unknown.length > 0) throw new Error(`unknown bench part(s): ${unknown.join(", ")}; parts: ${PARTS.map((p) => p.name).join(", ")}`);
  const selected = names.length > 0 ? PARTS.filter((p) => names.includes(p.name)) : PARTS;
  // The parts append their target lines here; the table at the end reads them.
  const reportDir = mkdtempSync(path.join(tmpdir(), "bench-report-"));
  const reportFile = path.join(reportDir, "targets.jsonl");
  const env = { ...process.env, ...(quick ? { BENCH_QUICK: "1" } : {}), [REPORT_FILE_ENV]: reportFile };
  const results: { part: string; seconds: number; ok: boolean }[] = [];
  const started = performance.now();
  for (const part of selected) {
    console.log(`\n=== bench ${part.name}${quick ? " (quick)" : ""} ===`);
    const t = performance.now();
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), PART_FLAG, part.name], {
        stdio: "inherit",
        env: { ...env, [PART_ENV]: part.name },
      });
      child.once("exit", (c, signal) => resolve(signal ? 1 : c));
      child.once("error", (error) => {
        console.error(`bench ${part.name} did not start: ${error.message}`);
        resolve(1);
      });
    });
    results.push({ part: part.name, seconds: (performance.now() - t) / 1000, ok: code === 0 });
  }
  console.log(`\nBench${quick ? " (quick)" : ""}: ${((performance.now() - started) / 1000).toFixed(0)} s in all`);
  console.table(Object.fromEntries(results.map((r) => [r.part, { result: r.ok ? "ok" : "FAILED", seconds: +r.seconds.toFixed(1) }])));
  const failed = results.filter((r) => !r.ok).map((r) => r.part);
  console.log(
    `\nTargets${quick ? " (quick: sizes and repeats are smaller, read the full run for the targets)" : ""}, each figure next to its reference from this run:\n`,
  );
  console.log(targetTable(readTargets(reportFile), failed));
  rmSync(reportDir, { recursive: true, force: true });
  return results.every((r) => r.ok);
}

const argv = process.argv.slice(2);
const partIndex = argv.indexOf(PART_FLAG);
const main = partIndex >= 0 ? runPart(argv[partIndex + 1] as string).then(() => true) : runAll(argv);
main.then(
  // Benchmarks leave pools and timers behind; the run is over.
  (ok) => process.exit(ok ? 0 : 1),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
