/**
 * The seller zoo (test/support/zoo/zoo.ts): sellers built with @x402/express, @x402/hono,
 * x402-express 1.x, @faremeter/middleware and @dexterai/x402 as their READMEs show, and
 * hand-made sellers breaking one rule each. Every row gets its expected payable, conformant,
 * discoverable and verdict; no unpayable seller is ever pay or pay_with_caution; the libraries'
 * quick starts are conformant; a catch-all 200 is no discovery document; a slow /openapi.json
 * does not hold up the answer past the unpaid call's budget.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConformanceReport, checkConformance } from "../src/intel/conformance.ts";
import { PENALTIES } from "../src/intel/trust-score.ts";
import { base } from "../src/networks/base.ts";
import { createSafeFetcher } from "../src/outbound/safe-fetch.ts";
import { type RunningZoo, startZoo, ZOO, type ZooRow, zooAssessment } from "./support/zoo/zoo.ts";

const PROBE_MS = 1_500;
const DISCOVERY_MS = 400;
const fetcher = createSafeFetcher({ allowLoopback: true, connectTimeoutMs: 500, totalTimeoutMs: 2_000 });
const check = (url: string) =>
  checkConformance(fetcher, { url, method: "GET", probeTimeoutMs: PROBE_MS, discoveryTimeoutMs: DISCOVERY_MS });

let zoo: RunningZoo;
const reports = new Map<string, ConformanceReport>();
const elapsed = new Map<string, number>();

beforeAll(async () => {
  zoo = await startZoo();
  await Promise.all(
    zoo.sellers.map(async ({ row, seller }) => {
      const started = performance.now();
      reports.set(row.id, await check(seller.url));
      elapsed.set(row.id, performance.now() - started);
    }),
  );
}, 30_000);
afterAll(() => zoo?.close());

const reportOf = (row: ZooRow) => reports.get(row.id) as ConformanceReport;

describe("the zoo's table", () => {
  it.each(ZOO.map((r) => [r.id, r]))("%s", (_id, row) => {
    const report = reportOf(row);
    expect({
      payable: report.payable,
      conformant: report.conformant,
      discoverable: report.discoverable,
      verdict: zooAssessment(report).verdict,
    }).toEqual(row.expected);
    // The three answers are what their checks say.
    expect(report.failed_checks).toEqual(report.failures.map((f) => f.check));
    expect(report.payable === true).toBe(report.payable_reason === null);
  });
});

describe("the rules the zoo proves", () => {
  it("never gives pay or pay_with_caution to a seller no standard client can pay", () => {
    const unpayable = ZOO.filter((row) => reportOf(row).payable === false);
    expect(unpayable.length).toBe(ZOO.filter((row) => row.expected.payable === false).length);
    for (const row of unpayable) expect([row.id, zooAssessment(reportOf(row)).verdict]).toEqual([row.id, "avoid"]);
  });

  it("finds the libraries' quick-start sellers that use the library's default v2 setup conformant and payable", () => {
    const quickStarts = ZOO.filter((r) => r.quickStart && r.id.startsWith("@x402/"));
    expect(quickStarts.map((r) => r.id)).toEqual(["@x402/express 2.27.0 quick start", "@x402/hono 2.27.0 quick start"]);
    for (const row of quickStarts) {
      const report = reportOf(row);
      expect(report.failed_checks).toEqual(["bazaar_metadata", "well_known_x402", "openapi"]);
      expect([report.conformant, report.payable, report.price_usd, report.x402Version, report.challenge_source]).toEqual([
        true,
        true,
        0.1,
        2,
        "header",
      ]);
      expect(report.clients).toEqual([
        { family: "@x402/core", accepts: true, reason: null },
        {
          family: "x402@1",
          accepts: false,
          reason: "v1 clients read the challenge from the JSON body, which lists no payment options (accepts)",
        },
      ]);
    }
  });

  it("finds the x402 v1 quick start payable by both client families", () => {
    const report = reportOf(ZOO.find((r) => r.id.startsWith("x402-express 1.2.0")) as ZooRow);
    expect(report.clients).toEqual([
      { family: "@x402/core", accepts: true, reason: null },
      { family: "x402@1", accepts: true, reason: null },
    ]);
    expect([report.x402Version, report.network, report.price_usd, report.checks.bazaar_metadata]).toEqual([1, base.id, 0.1, true]);
  });

  it("quotes the client's own reason when it cannot pay", () => {
    const reason = (id: string) => reportOf(ZOO.find((r) => r.id === id) as ZooRow).payable_reason;
    expect(reason("v2 challenge only in the body")).toBe("Invalid payment required response");
    expect(reason("v2 Base USDC without the EIP-712 domain")).toBe(
      `EIP-712 domain parameters (name, version) are required in payment requirements for asset ${base.usdc.address}`,
    );
    expect(reason("v2 network written as the v1 name base")).toBe(
      "No network/scheme registered for x402 version: 2 which comply with the payment requirements.",
    );
    expect(reason("v2 amount as a decimal")).toBe("Cannot convert 0.01 to a BigInt");
    expect(reason("v2 Base USDC with the wrong EIP-712 domain name")).toBe(
      'the token\'s EIP-712 domain is name "USD Coin", version "2"; a signature over name "USDC", version "2" is refused by the token contract',
    );
    expect(reason("v2 amount as a JSON number")).toBe(
      "the payment the client produced is not a valid x402 payment: accepted.amount: Expected string, received number",
    );
  });

  it("names each broken rule with its sentence", () => {
    const report = reportOf(ZOO.find((r) => r.id === "v2 network written as the v1 name base") as ZooRow);
    expect(report.failures).toEqual([
      {
        check: "network_id",
        message: `Every network is written as its version requires: a CAIP-2 id for v2 (${base.id}, not base), a v1 network name for v1 (base, not ${base.id}). Option 0 fails it (network "base").`,
      },
    ]);
    expect(zooAssessment(report).penalties).toEqual(["not_payable", "bad_network_id"]);
  });

  it("does not take a catch-all 200 for a discovery document", () => {
    const report = reportOf(ZOO.find((r) => r.id.startsWith("catch-all 200")) as ZooRow);
    expect([report.checks.well_known_x402, report.checks.openapi, report.checks.bazaar_metadata, report.discovery]).toEqual([
      false,
      false,
      true,
      "complete",
    ]);
    expect(zooAssessment(report)).toEqual({ score: 94, verdict: "pay", penalties: ["no_well_known", "no_openapi"] });
  });

  it("answers a seller with a slow /openapi.json within the unpaid call's budget, saying discovery timed out", () => {
    const row = ZOO.find((r) => r.id.startsWith("slow /openapi.json")) as ZooRow;
    const report = reportOf(row);
    expect(elapsed.get(row.id)).toBeLessThan(PROBE_MS);
    expect(elapsed.get(row.id)).toBeGreaterThanOrEqual(DISCOVERY_MS - 5);
    expect([report.discovery, report.payable, report.conformant, report.checks.well_known_x402, report.checks.openapi]).toEqual([
      "timeout",
      true,
      true,
      true,
      false,
    ]);
    expect(report.failures).toEqual([
      {
        check: "openapi",
        message: `The origin serves /openapi.json as a valid OpenAPI 3 document (openapi, info.title, info.version, paths) that lists this route and method with a price in x-payment-info. It did not answer within ${DISCOVERY_MS} ms.`,
      },
    ]);
  });

  it("keeps an unreachable seller an answer: not payable, every protocol check failed", () => {
    const report = reportOf(ZOO.find((r) => r.id === "drops every connection") as ZooRow);
    expect([report.reachable, report.status, report.payable, report.payable_reason]).toEqual([
      false,
      null,
      false,
      "the endpoint did not answer",
    ]);
    expect(zooAssessment(report)).toEqual({ score: 0, verdict: "avoid", penalties: ["unreachable"] });
  });

  it("pays a Solana seller with the stock SVM client, and says why a Solana option is unpayable in the client's words", () => {
    const report = reportOf(ZOO.find((r) => r.id === "hand-made v2 on Solana") as ZooRow);
    expect([report.payable, report.payable_reason]).toEqual([true, null]);
    expect(zooAssessment(report).penalties).toEqual(["reputation_not_measured"]);
    const noFeePayer = reportOf(ZOO.find((r) => r.id === "hand-made v2 on Solana without a fee payer") as ZooRow);
    expect([noFeePayer.payable, noFeePayer.payable_reason]).toEqual([
      false,
      "feePayer is required in paymentRequirements.extra for SVM transactions",
    ]);
    const wrongMint = reportOf(ZOO.find((r) => r.id.startsWith("hand-made v2 on Solana with a wrong mint")) as ZooRow);
    expect([wrongMint.payable, wrongMint.payable_reason]).toEqual([false, `the asset "${base.usdc.address}" is not a Solana mint address (base58 of 32 bytes)`]);
  });

  it("cannot measure a Solana option in a mint it has no RPC to read, and never says pay for it", () => {
    const report = reportOf(ZOO.find((r) => r.id.startsWith("hand-made v2 on Solana priced in another mint")) as ZooRow);
    expect([report.payable, report.payable_reason]).toEqual([
      null,
      "no option is on a network this checker runs a client for (EVM, eip155:*)",
    ]);
    // Priced in another token than USDC, its price in USD is not known either.
    expect(zooAssessment(report).penalties).toEqual(["payability_not_measured", "reputation_not_measured", "price_unknown"]);
    expect(PENALTIES.payability_not_measured.points).toBe(0);
  });
});
