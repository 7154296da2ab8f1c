/**
 * The runtime code of src/contracts/TokenRiskSimulator.sol, which the honeypot check places at a
 * throwaway address by state override. `npm run build` compiles it to
 * `.generated/token-risk-simulator.json` before the Astro build; Vite inlines it here.
 */
import type { Hex } from "viem";

// A glob rather than a plain import: the file exists only after a build, and a glob keeps
// `tsc --noEmit` working on a fresh clone while still being bundled at build time.
const found = import.meta.glob<{ deployedBytecode: Hex }>("../../.generated/token-risk-simulator.json", {
  eager: true,
  import: "default",
});

/** The simulator's runtime code; throws when the build has not compiled it. */
export function simulatorCode(): Hex {
  const code = found["../../.generated/token-risk-simulator.json"]?.deployedBytecode;
  if (!code || !/^0x[0-9a-f]+$/i.test(code)) {
    throw new Error("The token-risk simulator is not compiled: run `npm run build` (it writes .generated/token-risk-simulator.json).");
  }
  return code;
}
