/**
 * CLI: compiles src/local/contracts/*.sol into dist/contracts.json (or argv[2]); no-op when up to date.
 * Usage: `npx node scripts/compile-contracts.ts [outFile]`.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { compileContracts, DEFAULT_CONTRACTS_FILE } from "../src/local/devnet/contracts.ts";

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const outFile = process.argv[2] ?? DEFAULT_CONTRACTS_FILE;
  const started = performance.now();
  const { sourceHash } = compileContracts(outFile);
  const ms = Math.round(performance.now() - started);
  console.log(`contracts: ${outFile} (sourceHash ${sourceHash.slice(0, 12)}, ${ms} ms)`);
}
