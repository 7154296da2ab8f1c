/**
 * `npm run bench` ends with one table of targets: each part reports its lines with
 * `reportTarget` in its own process, and the runner collects them through a file.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readTargets, reportTarget, targetTable } from "../scripts/bench-report.ts";

const root = path.resolve(import.meta.dirname, "..");
const dirs: string[] = [];
const tempFile = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-report-test-"));
  dirs.push(dir);
  return path.join(dir, "targets.jsonl");
};
afterEach(() => {
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the bench's target lines", () => {
  it("are printed, and appended with their part to the file the runner names", () => {
    const printed: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void printed.push(line));
    const file = tempFile();
    const env = { BENCH_REPORT_FILE: file, BENCH_PART: "settle" };
    reportTarget({ target: "settle p50 < 100 ms", figure: "45.8 ms", reference: "minimal seller 80.5 ms", ok: true }, env);
    reportTarget(
      { target: "paid calls/s >= 90% of a minimal seller", figure: "80 calls/s = 85%", reference: "94 calls/s", ok: false },
      env,
    );
    expect(printed).toEqual([
      "  target: settle p50 < 100 ms: 45.8 ms; reference minimal seller 80.5 ms: holds",
      "  target: paid calls/s >= 90% of a minimal seller: 80 calls/s = 85%; reference 94 calls/s: MISSED",
    ]);
    expect(readTargets(file)).toEqual([
      { part: "settle", target: "settle p50 < 100 ms", figure: "45.8 ms", reference: "minimal seller 80.5 ms", ok: true },
      { part: "settle", target: "paid calls/s >= 90% of a minimal seller", figure: "80 calls/s = 85%", reference: "94 calls/s", ok: false },
    ]);
  });

  it("are only printed when the part runs on its own", () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const file = tempFile();
    reportTarget({ target: "t", figure: "f", reference: "r", ok: null }, {});
    expect(readTargets(file)).toEqual([]);
  });

  it("make one Markdown table, with a row for each part that failed", () => {
    const table = targetTable(
      [
        { part: "free", target: "free GET /api/kb >= 60% of bare node:http", figure: "72.2%", reference: "bare 30,307 req/s", ok: true },
        { part: "chat", target: "- (chat)", figure: "a | b", reference: "-", ok: null },
      ],
      ["memory"],
    );
    expect(table.split("\n")).toEqual([
      "| part   | target                                           | figure | reference (same run) | ok     |",
      "| ------ | ------------------------------------------------ | ------ | -------------------- | ------ |",
      "| free   | free GET /api/kb >= 60% of bare node:http        | 72.2%  | bare 30,307 req/s    | holds  |",
      "| chat   | - (chat)                                         | a \\| b | -                    | -      |",
      "| memory | (the part failed: its other figures are missing) | -      | -                    | FAILED |",
    ]);
  });
});

describe("npm run bench", () => {
  it("ends with the table of the lines its parts reported, each from its own process", () => {
    const out = execFileSync(process.execPath, ["scripts/bench.ts", "content", "--quick"], {
      cwd: root,
      encoding: "utf8",
      timeout: 240_000,
    });
    const table = out.slice(out.indexOf("\nTargets"));
    const rows = table.split("\n").filter((l) => l.startsWith("| content "));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(
      /^\| content \| - \(kb\/ask on the real knowledge base\) \| p99 \d+ µs on the 15 entries +\| p99 \d+ µs on 10,000 generated entries \| - +\|$/,
    );
  }, 300_000);
});
