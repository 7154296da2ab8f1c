/**
 * Progress of long commands (scripts/progress.ts): off a terminal, plain lines (no carriage
 * returns, no escape codes) when it starts, every 10 s and when it ends; on a terminal one line
 * redrawn with a bar, rate and time left. And `npm run crawl` run without a terminal (its
 * output piped, as in CI) reports its progress that way on standard error.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createProgress, formatDuration } from "../scripts/progress.ts";
import { SELLER_KINDS } from "../src/local/sellers/demo-sellers.ts";
import { devnet } from "./support/service.ts";

function recorder(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 100, write: (text: string) => writes.push(text) } };
}

describe("the progress display", () => {
  it("off a terminal writes a plain line at the start, at most one per 10 s, and one at the end", () => {
    let now = 1_000_000;
    const { writes, stream } = recorder(false);
    const progress = createProgress({ label: "crawl", unit: "origins", total: 200, stream, now: () => now });
    now += 4_000;
    progress.update(40);
    now += 6_000;
    progress.update(50);
    now += 5_000;
    progress.tick();
    now += 5_000;
    progress.update(200);
    progress.finish();
    progress.finish();
    expect(writes).toEqual([
      "crawl: 0/200 origins (0%), 0.00 origins/s, unknown left\n",
      "crawl: 50/200 origins (25%), 5.00 origins/s, 30 s left\n",
      "crawl: 200/200 origins (100%), 10.0 origins/s, 0 s left\n",
      "crawl: 200/200 origins (100%), done in 20 s, 10.0 origins/s\n",
    ]);
  });

  it("on a terminal redraws one line with a bar, at most ten times a second, and ends it", () => {
    let now = 0;
    const { writes, stream } = recorder(true);
    const progress = createProgress({ label: "bench chain", unit: "blocks", total: 20_000, stream, now: () => now });
    now = 50;
    progress.update(100); // within 100 ms of the last drawing: skipped
    now = 2_000;
    progress.update(5_000);
    now = 8_000;
    progress.update(20_000);
    progress.finish();
    expect(writes).toEqual([
      "\r\x1b[2Kbench chain [------------------------------] 0/20000 blocks, 0.00/s, unknown left",
      "\r\x1b[2Kbench chain [########----------------------] 5000/20000 blocks, 2500/s, 6 s left",
      "\r\x1b[2Kbench chain [##############################] 20000/20000 blocks, 2500/s, 0 s left",
      "\r\x1b[2Kbench chain [##############################] 20000/20000 blocks, 2500/s, 0 s left\n",
    ]);
  });

  it("says durations in words", () => {
    expect([formatDuration(44.6), formatDuration(200), formatDuration(7_500), formatDuration(Number.POSITIVE_INFINITY)]).toEqual([
      "45 s",
      "3 min 20 s",
      "2 h 5 min",
      "unknown",
    ]);
  });
});

describe("npm run crawl without a terminal", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-crawl-progress-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("prints plain progress lines on standard error and the summary on standard output", async () => {
    const d = devnet();
    // The crawl uses the running local chain its devnet.json names: the shared test devnet.
    writeFileSync(path.join(dataDir, "devnet.json"), JSON.stringify({ rpcUrl: d.rpcUrl, payTo: d.payTo }));
    const child = spawn(process.execPath, ["scripts/crawl.ts"], {
      env: { ...process.env, DATA_DIR: dataDir, CRAWL_ORIGIN_TIMEOUT_SECONDS: "2", LOG_LEVEL: "error" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code, `${stdout}\n${stderr}`).toBe(0);

    const total = SELLER_KINDS.length;
    expect(stdout).toContain(`: ${total} origins in `);
    expect(stderr).not.toMatch(/[\r\x1b]/);
    const lines = stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(`crawl: 0/${total} origins (0%), 0.00 origins/s, unknown left`);
    expect(lines.at(-1)).toMatch(new RegExp(`^crawl: ${total}/${total} origins \\(100%\\), done in \\d+ s, [\\d.]+ origins/s$`));
    for (const line of lines) expect(line).toMatch(new RegExp(`^crawl: \\d+/${total} origins \\(\\d+%\\), `));
  }, 90_000);
});
