/**
 * The runtime code of src/local/contracts/TokenRiskSimulator.sol, which the honeypot check places at a
 * throwaway address by state override. `npm run build` compiles it to
 * `.generated/token-risk-simulator.json` before the Astro build; it is read from there.
 */
import { readFileSync } from "node:fs";
import type { Hex } from "viem";

const FILE = "../../.generated/token-risk-simulator.json";

type Compiled = { deployedBytecode: Hex };

function load(): Compiled | undefined {
  try {
    return JSON.parse(readFileSync(new URL(FILE, import.meta.url), "utf8")) as Compiled;
  } catch {
    return undefined;
  }
}

const compiled = load();

/** The simulator's runtime code; throws when the build has not compiled it. */
export function simulatorCode(): Hex {
  const code = compiled?.deployedBytecode;
  if (!code || !/^0x[0-9a-f]+$/i.test(code)) {
    throw new Error("The token-risk simulator is not compiled: run `npm run build` (it writes .generated/token-risk-simulator.json).");
  }
  return code;
}
