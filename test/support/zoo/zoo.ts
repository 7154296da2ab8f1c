/**
 * The seller zoo: every library seller (./library-sellers.ts) and hand-made seller
 * (./hand-made-sellers.ts) with the answers the checker must give it: payable, conformant,
 * discoverable, and the trust verdict when its payTo is well paid on Base (the best the
 * reputation can do, so the verdict shows what the seller's own answer allows). Written by hand
 * from the libraries' output and the rules; a change to either fails a row.
 */
import type { ConformanceReport } from "../../../src/intel/conformance.ts";
import { notMeasured, type Reputation } from "../../../src/intel/reputation.ts";
import { assessTrust, type TrustAssessment, type Verdict } from "../../../src/intel/trust-score.ts";
import { base } from "../../../src/networks/base.ts";
import type { Stub } from "../stub-server.ts";
import { startZooFacilitator } from "./facilitator.ts";
import { solanaOption, startHandMade, v1Challenge, v1Option, v2Challenge, v2Option } from "./hand-made-sellers.ts";
import {
  dexterSeller,
  faremeterSeller,
  x402ExpressQuickStart,
  x402ExpressV1QuickStart,
  x402HonoQuickStart,
  type ZooSeller,
} from "./library-sellers.ts";

/** What the checker must answer for a row. */
export interface ZooExpectation {
  payable: boolean | null;
  conformant: boolean;
  discoverable: boolean;
  verdict: Verdict;
}

/** One animal of the zoo. */
export interface ZooRow {
  id: string;
  /** A library's quick start, set up as its README shows. */
  quickStart: boolean;
  start(facilitatorUrl: string): Promise<ZooSeller>;
  expected: ZooExpectation;
}

const row = (id: string, start: ZooRow["start"], expected: ZooExpectation, quickStart = false): ZooRow => ({
  id,
  quickStart,
  start,
  expected,
});
const hand = (spec: Parameters<typeof startHandMade>[0]) => () => startHandMade(spec);
const v2 =
  (change: Record<string, unknown> = {}) =>
  (url: string) =>
    v2Challenge(url, [v2Option(change)]);

/** Every row. */
export const ZOO: readonly ZooRow[] = [
  // Libraries, as their READMEs show.
  row(
    "@x402/express 2.27.0 quick start",
    x402ExpressQuickStart,
    { payable: true, conformant: true, discoverable: false, verdict: "pay" },
    true,
  ),
  row("@x402/hono 2.27.0 quick start", x402HonoQuickStart, { payable: true, conformant: true, discoverable: false, verdict: "pay" }, true),
  row(
    "x402-express 1.2.0 quick start (x402 v1)",
    x402ExpressV1QuickStart,
    { payable: true, conformant: true, discoverable: false, verdict: "pay" },
    true,
  ),
  row(
    "@faremeter/middleware 0.22.0, defaults (v1 only; writes a CAIP-2 network into its v1 challenge)",
    (f) => faremeterSeller(f, { v2: false }),
    { payable: false, conformant: false, discoverable: false, verdict: "avoid" },
    true,
  ),
  row("@faremeter/middleware 0.22.0 with x402 v2 on", (f) => faremeterSeller(f, { v2: true }), {
    payable: true,
    conformant: true,
    discoverable: false,
    verdict: "pay",
  }),
  row(
    "@dexterai/x402 2.0.0 quick start (Solana)",
    (f) => dexterSeller(f, { chain: "solana" }),
    { payable: true, conformant: true, discoverable: false, verdict: "pay_with_caution" },
    true,
  ),
  row(
    "@dexterai/x402 2.0.0 multi-chain EVM example (quotes the Solana USDC mint as the asset on Base)",
    (f) => dexterSeller(f, { chain: "evm" }),
    { payable: false, conformant: false, discoverable: false, verdict: "avoid" },
  ),
  // Hand-made references.
  row("hand-made v2 reference with discovery", hand({ challenge: v2() }), {
    payable: true,
    conformant: true,
    discoverable: true,
    verdict: "pay",
  }),
  row("hand-made v1 reference with discovery", hand({ challenge: (url) => v1Challenge([v1Option(url)]) }), {
    payable: true,
    conformant: true,
    discoverable: true,
    verdict: "pay",
  }),
  row("hand-made v2 on Solana", hand({ challenge: (url) => v2Challenge(url, [solanaOption()]) }), {
    payable: true,
    conformant: true,
    discoverable: true,
    verdict: "pay_with_caution",
  }),
  row(
    "hand-made v2 with a Solana and a broken Base option (the Solana option pays, the Base one fails)",
    hand({ challenge: (url) => v2Challenge(url, [solanaOption(), v2Option({ extra: undefined })]) }),
    { payable: true, conformant: false, discoverable: true, verdict: "pay" },
  ),
  row(
    "hand-made v2 on Solana with a wrong mint (Base's USDC contract as the asset)",
    hand({ challenge: (url) => v2Challenge(url, [solanaOption({ asset: base.usdc.address })]) }),
    { payable: false, conformant: false, discoverable: true, verdict: "avoid" },
  ),
  row(
    "hand-made v2 on Solana without a fee payer",
    hand({ challenge: (url) => v2Challenge(url, [solanaOption({ extra: {} })]) }),
    // The challenge's fields are all well formed; the stock client cannot build the transaction without a fee payer.
    { payable: false, conformant: true, discoverable: true, verdict: "avoid" },
  ),
  row(
    "hand-made v2 on Solana priced in another mint (its token program is read from an RPC the checker has not)",
    hand({ challenge: (url) => v2Challenge(url, [solanaOption({ asset: "So11111111111111111111111111111111111111112" })]) }),
    // The default client pays default assets only (USDC on Solana), as on EVM.
    { payable: false, conformant: true, discoverable: true, verdict: "avoid" },
  ),
  // One broken rule each.
  row("v2 network written as the v1 name base", hand({ challenge: v2({ network: "base" }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 option with maxAmountRequired and no amount", hand({ challenge: v2({ amount: undefined, maxAmountRequired: "10000" }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 amount as a decimal", hand({ challenge: v2({ amount: "0.01" }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 amount as a JSON number", hand({ challenge: v2({ amount: 10000 }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 asset on Base that is not an EVM address", hand({ challenge: v2({ asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 Base USDC without the EIP-712 domain", hand({ challenge: v2({ extra: undefined }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 Base USDC with the wrong EIP-712 domain name", hand({ challenge: v2({ extra: { name: "USDC", version: "2" } }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 without payTo", hand({ challenge: v2({ payTo: undefined }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 without maxTimeoutSeconds", hand({ challenge: v2({ maxTimeoutSeconds: undefined }) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 with an empty accepts", hand({ challenge: (url) => v2Challenge(url, []) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row("v2 challenge only in the body", hand({ challenge: v2(), header: false }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row(
    "v2 body quoting another amount than the header",
    hand({ challenge: v2(), body: (url) => v2Challenge(url, [v2Option({ amount: "20000" })]) }),
    { payable: true, conformant: false, discoverable: true, verdict: "pay_with_caution" },
  ),
  row("v1 challenge with a CAIP-2 network", hand({ challenge: (url) => v1Challenge([v1Option(url, { network: base.id })]) }), {
    payable: false,
    conformant: false,
    discoverable: true,
    verdict: "avoid",
  }),
  row(
    "v1 challenge with the v2 amount field",
    hand({ challenge: (url) => v1Challenge([v1Option(url, { maxAmountRequired: undefined, amount: "10000" })]) }),
    { payable: false, conformant: false, discoverable: true, verdict: "avoid" },
  ),
  row("answers 200 without payment", hand({}), { payable: false, conformant: false, discoverable: false, verdict: "avoid" }),
  row("drops every connection", hand({ dead: true }), { payable: false, conformant: false, discoverable: false, verdict: "avoid" }),
  // Discovery only: never a reason to refuse payment.
  row("catch-all 200 {error: not found} for discovery documents", hand({ challenge: v2(), discovery: "catch_all" }), {
    payable: true,
    conformant: true,
    discoverable: false,
    verdict: "pay",
  }),
  row("OpenAPI listing the route without a price", hand({ challenge: v2(), discovery: "unpriced_openapi" }), {
    payable: true,
    conformant: true,
    discoverable: false,
    verdict: "pay",
  }),
  row("slow /openapi.json (5 s)", hand({ challenge: v2(), discovery: "slow_openapi" }), {
    payable: true,
    conformant: true,
    discoverable: false,
    verdict: "pay",
  }),
];

/** The reputation of a well-paid payTo on Base; elsewhere not measured, as the crawl reads it. */
export function zooReputation(report: Pick<ConformanceReport, "network" | "pay_to">): Reputation {
  if (report.network !== base.id || !report.pay_to) return notMeasured("payTo not on Base");
  return {
    measured: true,
    transfers: 25,
    distinct_payers: 12,
    newest_age_hours: 0.5,
    oldest_age_hours: 20,
    window_blocks: 43_200,
    note: "25 incoming USDC transfers from 12 distinct payers",
  };
}

/** The trust assessment of a zoo report. */
export function zooAssessment(report: ConformanceReport): TrustAssessment {
  return assessTrust(report, zooReputation(report));
}

/** A running zoo. */
export interface RunningZoo {
  facilitator: Stub;
  sellers: { row: ZooRow; seller: ZooSeller }[];
  close(): Promise<void>;
}

/** Start the facilitator stand-in and every row's seller. */
export async function startZoo(rows: readonly ZooRow[] = ZOO): Promise<RunningZoo> {
  const facilitator = await startZooFacilitator();
  const sellers = await Promise.all(rows.map(async (r) => ({ row: r, seller: await r.start(facilitator.url) })));
  return {
    facilitator,
    sellers,
    close: async () => {
      await Promise.all(sellers.map((s) => s.seller.close()));
      await facilitator.close();
    },
  };
}
