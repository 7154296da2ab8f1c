/**
 * `npm run bench`: every benchmark of the service, one after another, each printing its own
 * tables. Speed and memory targets live here, not in timed tests.
 */
import { existsSync } from "node:fs";
import { benchSpine } from "./bench-spine.ts";

const only = process.argv[2];

async function main(): Promise<void> {
  if (!only || only === "spine") await benchSpine();
  for (const [name, file, fn] of [
    ["content", "./bench-content.ts", "benchContent"],
    ["analytics", "./bench-analytics.ts", "benchAnalytics"],
    ["store", "./bench-store.ts", "benchStore"],
    ["crawl", "./bench-crawl.ts", "benchCrawl"],
    ["chat", "./bench-chat.ts", "benchChat"],
    ["secondary", "./bench-secondary.ts", "benchSecondary"],
  ] as const) {
    if (only && only !== name) continue;
    if (!existsSync(new URL(file, import.meta.url))) continue;
    const mod = (await import(file)) as Record<string, () => Promise<void>>;
    const run = mod[fn];
    if (run) await run();
  }
}

main().then(
  // Benchmarks leave pools and timers behind; the run is over.
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
