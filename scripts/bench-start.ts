/**
 * How long `npm start` takes until the service answers, on a fresh clone and on a restart.
 * The committed tree (git HEAD) is exported to a temporary folder that shares this checkout's
 * node_modules, so the first start builds, creates the chain and the embedded database like a
 * fresh clone does; the second start finds all of them in place (a warm restart). Each start
 * is timed from spawning `node src/server/main.ts` to the first 200 from `/api/health`, next
 * to a bare `node -e` start on the same machine in the same run as the reference.
 */
import { execSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { reportTarget } from "./bench-report.ts";

const PORT = Number(process.env.BENCH_START_PORT ?? 4155);
const ANVIL_PORT = Number(process.env.BENCH_START_ANVIL_PORT ?? PORT + 1000);

/** Spawn `args` in `cwd`, wait until `ready()` resolves true, return the ms taken and a stop function. */
async function timedStart(cwd: string, args: string[], ready: () => Promise<boolean>, env: Record<string, string> = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  child.stderr.on("data", (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  let exited = false;
  child.once("exit", () => (exited = true));
  for (;;) {
    if (exited) throw new Error(`start exited early:\n${output}`);
    if (await ready()) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const ms = performance.now() - started;
  const stop = async () => {
    if (exited) return;
    child.kill("SIGINT");
    await new Promise((resolve) => child.once("exit", resolve));
  };
  // The service logs when each step of its start ended (src/server/main.ts); it is written just
  // after it starts answering, so give the line a moment.
  let phases: Record<string, number> | undefined;
  for (let i = 0; i < 50 && !phases; i++) {
    const line = output.split("\n").find((l) => l.includes('"msg":"started"'));
    if (line) phases = (JSON.parse(line) as { ms_since_process_start: Record<string, number> }).ms_since_process_start;
    else await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { ms, stop, phases };
}

const answers = (url: string) => async () => {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
};

/** Run the start benchmark and print its table. */
export async function benchStart(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "x402-bench-start-"));
  try {
    execSync(`git archive HEAD | tar -x -C ${JSON.stringify(dir)}`, { stdio: "inherit" });
    symlinkSync(path.resolve("node_modules"), path.join(dir, "node_modules"), "dir");
    // --quick: the checkout's build goes along (the first start still checks it against the
    // sources, and builds if they differ), so the first start is a new chain and database, not
    // the build's 15 s; the fresh clone's full figure is the full run's.
    const quick = process.env.BENCH_QUICK === "1";
    if (quick) for (const built of ["dist", ".generated"]) if (existsSync(built)) cpSync(built, path.join(dir, built), { recursive: true });
    const env = { PORT: String(PORT), ANVIL_PORT: String(ANVIL_PORT), CRAWL_INTERVAL_MINUTES: "0" };
    const health = answers(`http://127.0.0.1:${PORT}/api/health`);
    // Reference: the same machine starting a bare node:http server, to put the figures in context.
    const bare = await timedStart(
      dir,
      ["-e", `require("node:http").createServer((q,s)=>s.end("ok")).listen(${PORT})`],
      answers(`http://127.0.0.1:${PORT}/`),
    );
    await bare.stop();
    const cold = await timedStart(dir, ["src/server/main.ts"], health, env);
    await cold.stop();
    // Warm restarts, interleaved with the same restart without Node's compile cache (src/server/main.ts)
    // as the reference for that choice.
    const noCache = { ...env, NODE_DISABLE_COMPILE_CACHE: "1" };
    // --quick: one warm restart, with the cache only.
    const warm = await timedStart(dir, ["src/server/main.ts"], health, env);
    await warm.stop();
    const warmNoCache = quick ? undefined : await timedStart(dir, ["src/server/main.ts"], health, noCache);
    await warmNoCache?.stop();
    const again = quick ? warm : await timedStart(dir, ["src/server/main.ts"], health, env);
    await again.stop();
    const againNoCache = quick ? undefined : await timedStart(dir, ["src/server/main.ts"], health, noCache);
    await againNoCache?.stop();
    console.log(`\nStart until /api/health answers (local mode: chain, embedded database, build check), port ${PORT}`);
    console.table({
      "bare node:http (reference)": { s: +(bare.ms / 1000).toFixed(2) },
      [quick
        ? "first start, new chain and database (--quick: the checkout's build)"
        : "npm start on a fresh clone (builds, new chain and database)"]: {
        s: +(cold.ms / 1000).toFixed(2),
      },
      "warm restart": { s: +(warm.ms / 1000).toFixed(2) },
      ...(warmNoCache && againNoCache
        ? {
            "warm restart without the compile cache": { s: +(warmNoCache.ms / 1000).toFixed(2) },
            "warm restart, again": { s: +(again.ms / 1000).toFixed(2) },
            "warm restart without the compile cache, again": { s: +(againNoCache.ms / 1000).toFixed(2) },
          }
        : {}),
    });
    console.log(`warm restart ${(Math.min(warm.ms, again.ms) / 1000).toFixed(2)} s (target < 2 s)`);
    reportTarget({
      target: "warm restart until /api/health answers < 2 s",
      figure: `${(Math.min(warm.ms, again.ms) / 1000).toFixed(2)} s`,
      reference: `${warmNoCache ? `without the compile cache ${(warmNoCache.ms / 1000).toFixed(2)} s, ` : ""}bare node:http ${(bare.ms / 1000).toFixed(2)} s`,
      ok: Math.min(warm.ms, again.ms) < 2_000,
    });
    // Each step's own duration, from the milliseconds since process start at which it ended.
    const steps = (phases: Record<string, number> | undefined) => {
      let previous = 0;
      return Object.fromEntries(
        Object.entries(phases ?? {}).map(([step, at]) => {
          const row = [step, { "ends at ms": at, "takes ms": at - previous }] as const;
          previous = at;
          return row;
        }),
      );
    };
    console.log("\nWhere the warm restart's time goes (ms since the process started; `imports` includes Node's own start):");
    console.table(steps(again.phases ?? warm.phases));
    if (warmNoCache) {
      console.log("Without the compile cache:");
      console.table(steps(againNoCache?.phases ?? warmNoCache.phases));
    }
    console.log(quick ? "The first start (--quick: the checkout's build):" : "The fresh clone's start:");
    console.table(steps(cold.phases));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchStart().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
