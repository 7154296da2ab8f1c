/**
 * Benchmarks of the content: how long the compiler takes on the real `content/`,
 * and how fast `kb/ask` ranks questions over the 15 curated entries and over 10,000
 * generated ones (to see how the MiniSearch index scales).
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
  const entries = content?.kb.entries ?? [];
  const words = entries.flatMap((e) => e.answer.split(/\s+/)).filter((w) => /^[a-z]{4,}$/i.test(w));
  const generated = Array.from({ length: 10_000 }, (_, i) => {
    const base = entries[i % entries.length] as (typeof entries)[number];
    const pick = (n: number) => Array.from({ length: n }, (_, k) => words[(i * 31 + k * 17) % words.length]).join(" ");
    return { ...base, id: `gen-${i}`, title: `${pick(6)}?`, answer: pick(180) };
  });
  const small = new KbIndex(entries);
  const t = performance.now();
  const large = new KbIndex(generated);
  const indexMs = performance.now() - t;
  const a = timeAsks(small, 2000);
  const b = timeAsks(large, 200);
  console.log("\nContent");
  console.table({
    "compile content/ (13 playbooks, 4 SOPs, 15 KB)": { "p50 ms": +percentile(compileTimes, 50).toFixed(1) },
    "build the KB index, 10,000 entries": { "p50 ms": +indexMs.toFixed(1) },
  });
  console.table({
    "kb/ask ranking, 15 entries": { "asks/s": Math.round(a.perSecond), "p50 µs": Math.round(a.p50us), "p99 µs": Math.round(a.p99us) },
    "kb/ask ranking, 10,000 entries": { "asks/s": Math.round(b.perSecond), "p50 µs": Math.round(b.p50us), "p99 µs": Math.round(b.p99us) },
  });
  reportTarget({
    target: "- (kb/ask on the real knowledge base)",
    figure: `p99 ${Math.round(a.p99us)} µs on the 15 entries`,
    reference: `p99 ${Math.round(b.p99us)} µs on 10,000 generated entries`,
    ok: null,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchContent().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
