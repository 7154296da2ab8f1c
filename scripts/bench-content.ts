/**
 * Benchmarks of the content: how long the compiler takes on the real `content/`, and how fast
 * `kb/ask` ranks questions over the 15 curated entries (at 1,000 entries: bench-search.ts).
 */

import { KbIndex } from "../src/content/kb-index.ts";
import { percentile } from "./bench-paid.ts";
import { reportTarget } from "./bench-report.ts";
import { compileContent } from "./content/compile.ts";

const QUESTIONS = [
  "how do I verify a USDC payment on chain",
  "what headers does x402 use for the payment",
  "who pays the gas for settlement",
  "eth_getLogs block range too large on base",
  "how should an agent limit what it spends",
];

function timeAsks(index: KbIndex, rounds: number): { perSecond: number; p50us: number; p99us: number } {
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    index.ask(QUESTIONS[i % QUESTIONS.length] as string);
    samples.push((performance.now() - t) * 1000);
  }
  return { perSecond: rounds / ((performance.now() - started) / 1000), p50us: percentile(samples, 50), p99us: percentile(samples, 99) };
}

/** Run the content benchmarks and print their table. */
export async function benchContent(): Promise<void> {
  const compileTimes: number[] = [];
  let content: Awaited<ReturnType<typeof compileContent>> | undefined;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    content = await compileContent(process.cwd(), { outFile: null });
    compileTimes.push(performance.now() - t);
  }
  const a = timeAsks(new KbIndex(content?.kb.entries ?? []), 2000);
  console.log("\nContent");
  console.table({
    "compile content/ (13 playbooks, 4 SOPs, 15 KB)": { "p50 ms": +percentile(compileTimes, 50).toFixed(1) },
  });
  console.table({
    "kb/ask ranking, 15 entries": { "asks/s": Math.round(a.perSecond), "p50 µs": Math.round(a.p50us), "p99 µs": Math.round(a.p99us) },
  });
  reportTarget({
    target: "- (kb/ask on the real knowledge base)",
    figure: `p99 ${Math.round(a.p99us)} µs on the 15 entries`,
    reference: "the search part: kb/ask at 1,000 realistic entries",
    ok: null,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchContent().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
