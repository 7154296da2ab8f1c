/**
 * The seller zoo (test/support/zoo/zoo.ts): sellers built with @x402/express, @x402/hono,
 * x402-express 1.x, @faremeter/middleware and @dexterai/x402 as their READMEs show, and
 * hand-made sellers breaking one rule each. Every row gets its expected payable, conformant,
 * discoverable and verdict; no unpayable seller is ever pay or pay_with_caution; the libraries'
 * quick starts are conformant; a catch-all 200 is no discovery document; a slow /openapi.json
 * does not hold up the answer past the unpaid call's budget. Then sellers that really take
 * payments on a local chain (WETH asset, $5, zero payTo, an expired timeout, a wrong domain
 * version, and three that answer 402 after payment), each judged against what the default
 * @x402/fetch client got from it there.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, erc20Abi, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WETH_ADDRESS } from "../src/chain/addresses.ts";
import { rpcTransport } from "../src/chain/client.ts";
import { type ConformanceReport, checkConformance } from "../src/intel/conformance.ts";
import { eip3009Probe } from "../src/intel/eip3009-probe.ts";
import { type PurchaseRecord, PurchaseRun } from "../src/intel/purchase.ts";
import { assessTrust } from "../src/intel/trust-score.ts";
import { type Devnet, startDevnet } from "../src/local/devnet/devnet.ts";
import { base } from "../src/networks/base.ts";
import { createSafeFetcher } from "../src/outbound/safe-fetch.ts";
import { createSelfFacilitator } from "../src/payments/facilitator.ts";
import { LOCAL_TIMING } from "../src/payments/settlement-sender.ts";
import { v2Challenge, v2Option } from "./support/zoo/hand-made-sellers.ts";
import { type PayingMode, type PayingSeller, startPayingSeller } from "./support/zoo/paying-sellers.ts";
import { type RunningZoo, startZoo, ZOO, type ZooRow, zooAssessment, zooReputation } from "./support/zoo/zoo.ts";

/** The default client's refusal of an asset that is not one of its scheme's defaults, in its own words. */
const SPEND_CONTROLS_ASSETS =
  "All payment requirements were rejected by spendControls: only default assets or entries in spendControls.allowedAssets are allowed. Add an allowedAssets entry for non-default tokens, set allowedAssets: true, or set spendControls: false.";

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
    // The default client's spend controls refuse a mint that is not a default asset before anything else;
    // with them off, the client refuses it as no Solana mint at all.
    expect([wrongMint.payable, wrongMint.payable_reason, wrongMint.payable_with_loosened_controls]).toEqual([
      false,
      SPEND_CONTROLS_ASSETS,
      false,
    ]);
  });

  it("refuses a Solana option in another mint as the default client does", () => {
    const report = reportOf(ZOO.find((r) => r.id.startsWith("hand-made v2 on Solana priced in another mint")) as ZooRow);
    expect([report.payable, report.payable_reason]).toEqual([false, SPEND_CONTROLS_ASSETS]);
  });
});

/*
 * Sellers that really take payments, on a local chain of their own (Base's chain id, USDC and
 * WETH at their Base addresses), each settling through a real facilitator. Every row is first
 * paid by the default @x402/fetch client (the quick start: wrapFetchWithPayment with
 * registerExactEvmScheme, spend controls untouched) from one buyer; what that buyer got
 * (served or not, charged or not, on chain) gives the expected verdict. Then the checker
 * judges the seller, and a trust run's purchase (from another buyer) verifies the ones it
 * judges payable.
 */
describe("sellers that take payments, judged against what the default @x402/fetch client gets on a local chain", () => {
  const PRICE = 10_000n;
  const ZERO = "0x0000000000000000000000000000000000000000";
  /** A row quotes one option (`option`'s changes to the reference one) or several (`options`, in order). */
  type PaidRow = { id: string; mode: PayingMode; option: Record<string, unknown>; options?: Record<string, unknown>[] };
  const PAID_ROWS: PaidRow[] = [
    { id: "reference seller that serves", mode: "serve", option: {} },
    {
      id: "valid challenge, asset a non-USDC ERC-20 (WETH) on Base",
      mode: "serve",
      option: { asset: WETH_ADDRESS, extra: { name: "Wrapped Ether", version: "1" } },
    },
    { id: "valid challenge at $5", mode: "serve", option: { amount: "5000000" } },
    { id: "payTo is the zero address", mode: "serve", option: { payTo: ZERO } },
    { id: "maxTimeoutSeconds 0", mode: "serve", option: { maxTimeoutSeconds: 0 } },
    { id: "wrong extra.version (domain present but wrong)", mode: "serve", option: { extra: { name: "USD Coin", version: "1" } } },
    { id: "takes a valid payment, settles it, answers 402 again", mode: "settle_then_402", option: {} },
    { id: "ignores the payment header and answers 402 again", mode: "ignore_payment", option: {} },
    { id: "reads only X-PAYMENT, so a v2 payment is ignored and 402 comes again", mode: "x_payment_only", option: {} },
    // The client pays the first option its spend controls let through, not the first a facilitator would settle.
    { id: "two options: the first pays the zero address, the second is valid", mode: "serve", option: {}, options: [{ payTo: ZERO }, {}] },
    {
      id: "two options: the first expires on arrival, the second is valid",
      mode: "serve",
      option: {},
      options: [{ maxTimeoutSeconds: 0 }, {}],
    },
    {
      id: "two options: the first in WETH, the second valid",
      mode: "serve",
      option: {},
      options: [{ asset: WETH_ADDRESS, extra: { name: "Wrapped Ether", version: "1" } }, {}],
    },
    {
      id: "two options: the first in WETH, the second at $5",
      mode: "serve",
      option: {},
      options: [{ asset: WETH_ADDRESS, extra: { name: "Wrapped Ether", version: "1" } }, { amount: "5000000" }],
    },
  ];
  type Truth = { threw: string | null; status: number | null; served: boolean; charged: bigint; refusal: string | null; payable: boolean };
  type Judged = { report: ConformanceReport; purchase: PurchaseRecord | null; verdict: string; penalties: string[] };

  let chainDir: string;
  let chain: Devnet;
  let client: PublicClient;
  const sellers = new Map<string, PayingSeller>();
  const truth = new Map<string, Truth>();
  const judged = new Map<string, Judged>();
  let verifier: PurchaseRun;

  const usdcOf = (address: `0x${string}`) =>
    client.readContract({ address: base.usdc.address, abi: erc20Abi, functionName: "balanceOf", args: [address] });

  /** What the default @x402/fetch client gets from `url`, paying from `key`. */
  async function defaultClientRun(url: string, key: `0x${string}`, seller: PayingSeller, loosen = false): Promise<Truth> {
    const account = privateKeyToAccount(key);
    const x = new x402Client();
    registerExactEvmScheme(x, { signer: account });
    if (loosen) x.setSpendControls(false);
    const before = await usdcOf(account.address);
    let threw: string | null = null;
    let status: number | null = null;
    let served = false;
    try {
      const res = await wrapFetchWithPayment(fetch, x)(url);
      status = res.status;
      served = res.status === 200 && (await res.text()).length > 0;
    } catch (error) {
      threw = error instanceof Error ? error.message : String(error);
    }
    const charged = before - (await usdcOf(account.address));
    return { threw, status, served, charged, refusal: seller.lastRefusal(), payable: served && charged > 0n };
  }

  beforeAll(async () => {
    chainDir = mkdtempSync(path.join(tmpdir(), "x402-zoo-chain-"));
    chain = await startDevnet({ dataDir: chainDir, port: 0, persist: false });
    client = createPublicClient({ chain: base.chainAt([chain.rpcUrl]), transport: http(chain.rpcUrl) }) as PublicClient;
    const facilitator = createSelfFacilitator(
      chain.facilitator.privateKey,
      base.chainAt([chain.rpcUrl]),
      rpcTransport([chain.rpcUrl]),
      base.id,
      {
        timing: LOCAL_TIMING,
      },
    );
    for (const row of PAID_ROWS) {
      sellers.set(
        row.id,
        await startPayingSeller({
          challenge: (url) =>
            v2Challenge(
              url,
              (row.options ?? [row.option]).map((o) => v2Option({ payTo: chain.payTo, ...o })),
            ),
          mode: row.mode,
          facilitator,
        }),
      );
    }
    // Ground truth, one row after the other from the same buyer, so each balance change is the row's own.
    const truthBuyer = chain.buyers[0]?.privateKey as `0x${string}`;
    for (const row of PAID_ROWS) {
      const seller = sellers.get(row.id) as PayingSeller;
      truth.set(row.id, await defaultClientRun(seller.url, truthBuyer, seller));
    }
    // The checker, then a trust run's purchase from another buyer for what it judges payable.
    verifier = new PurchaseRun({
      buyer: privateKeyToAccount(chain.buyers[1]?.privateKey as `0x${string}`),
      chain: client,
      network: base.id,
      usdc: base.usdc.address,
      budget: { per_origin_usd: 0.05, per_run_usd: 1, price_cap_usd: 0.05 },
      fetcher,
      settleGraceMs: 300,
    });
    const probe = eip3009Probe(client, base.id);
    for (const row of PAID_ROWS) {
      const seller = sellers.get(row.id) as PayingSeller;
      const report = await checkConformance(fetcher, {
        url: seller.url,
        method: "GET",
        probeTimeoutMs: PROBE_MS,
        discoveryTimeoutMs: DISCOVERY_MS,
        eip3009Probe: probe,
      });
      const purchase = await verifier.buy({ origin: seller.origin, url: seller.url, method: "GET" }, report);
      const assessment = assessTrust(report, zooReputation(report), purchase);
      judged.set(row.id, { report, purchase, verdict: assessment.verdict, penalties: assessment.penalties });
    }
  }, 120_000);
  afterAll(async () => {
    for (const seller of sellers.values()) await seller.close();
    await chain?.stop();
    if (chainDir) rmSync(chainDir, { recursive: true, force: true });
  });

  it.each(PAID_ROWS.map((r) => [r.id]))("%s: the verdict is what the default client got", (id) => {
    const t = truth.get(id) as Truth;
    const j = judged.get(id) as Judged;
    // What a buyer got decides: pay only when the default client was served and charged once, else avoid.
    const expected = t.payable && t.charged === PRICE ? "pay" : "avoid";
    expect([id, j.verdict]).toEqual([id, expected]);
    // A seller a buyer cannot pay is never bought from; one that is bought from got what the buyer got.
    if (j.purchase) {
      expect(j.purchase.outcome).toBe(t.served ? "served" : t.charged > 0n ? "charged_without_service" : "refused_after_signing");
      expect(BigInt(j.purchase.charged_atomic)).toBe(t.charged);
    } else expect(j.report.payable).toBe(false);
  });

  it("reports WETH as refused by the default client's asset allowlist, and unsettleable even with the controls off", () => {
    const t = truth.get("valid challenge, asset a non-USDC ERC-20 (WETH) on Base") as Truth;
    const j = judged.get("valid challenge, asset a non-USDC ERC-20 (WETH) on Base") as Judged;
    expect(t.threw).toContain("rejected by spendControls: only default assets");
    expect(t.threw).toContain(j.report.payable_reason);
    expect([j.report.payable, j.report.payable_with_default_client, j.report.refused_by_control, j.report.payable_refused_by]).toEqual([
      false,
      false,
      "spendControls.allowedAssets",
      "spend_controls",
    ]);
    // WETH has no EIP-3009 transfer: the chain says so, and a loosened client gets nothing either.
    expect(j.report.payable_with_loosened_controls).toBe(false);
    expect(j.report.payable_options[0]?.payable_with_loosened_controls).toBe(false);
    expect(j.penalties).toContain("refused_by_spend_controls");
  });

  it("reports $5 as refused by the default $1 cap, and payable by a client with the cap off (checked by paying it)", async () => {
    const id = "valid challenge at $5";
    const t = truth.get(id) as Truth;
    const j = judged.get(id) as Judged;
    expect(t.threw).toContain("rejected by spendControls.maxAmountPerPayment ($1");
    expect(t.threw).toContain(j.report.payable_reason);
    expect([j.report.payable, j.report.refused_by_control, j.report.payable_with_loosened_controls]).toEqual([
      false,
      "spendControls.maxAmountPerPayment",
      true,
    ]);
    const seller = sellers.get(id) as PayingSeller;
    const loosened = await defaultClientRun(seller.url, chain.buyers[2]?.privateKey as `0x${string}`, seller, true);
    expect([loosened.served, loosened.charged]).toEqual([true, 5_000_000n]);
  });

  it("names the facilitator's refusal of a zero payTo and of an expired timeout, as the facilitator gave it", () => {
    const zero = judged.get("payTo is the zero address") as Judged;
    expect(truth.get("payTo is the zero address")?.threw).toBeNull();
    expect(truth.get("payTo is the zero address")?.refusal).not.toBeNull();
    expect([zero.report.payable, zero.report.payable_with_default_client, zero.report.payable_refused_by]).toEqual([
      false,
      true,
      "facilitator",
    ]);
    expect(zero.report.payable_reason).toContain("the zero address");
    const expired = judged.get("maxTimeoutSeconds 0") as Judged;
    const refusal = truth.get("maxTimeoutSeconds 0")?.refusal as string;
    expect(refusal).toBe("invalid_exact_evm_payload_authorization_valid_before");
    expect(expired.report.payable_reason).toContain("a facilitator refuses the payment as expired");
    expect(expired.report.payable_reason).toContain(refusal);
    expect(expired.report.payable_reason).not.toContain("not a valid x402 payment");
  });

  it("judges a seller by the option the client pays, the first it accepts, not by a later one it never tries", () => {
    const zeroFirst = judged.get("two options: the first pays the zero address, the second is valid") as Judged;
    expect(truth.get("two options: the first pays the zero address, the second is valid")?.served).toBe(false);
    expect([zeroFirst.report.payable, zeroFirst.report.payable_refused_by, zeroFirst.purchase]).toEqual([false, "facilitator", null]);
    expect(zeroFirst.report.payable_options.map((o) => o.payable)).toEqual([false, true]);
    expect(zeroFirst.report.payable_reason).toBe(
      "the default client pays the first option it accepts, option 0, and never tries option 1: a facilitator refuses it: payTo is the zero address, and the token refuses a transfer to the zero address, so the payment never settles",
    );
    expect(zeroFirst.penalties).toContain("facilitator_refuses");
    // A WETH option first is passed over by the spend controls, so the client pays the second.
    const wethFirst = judged.get("two options: the first in WETH, the second valid") as Judged;
    expect([truth.get("two options: the first in WETH, the second valid")?.charged, wethFirst.report.payable]).toEqual([PRICE, true]);
    expect(wethFirst.purchase?.outcome).toBe("served");
  });

  it("says a client with its spend controls off pays the first option, so a WETH option before a $5 one leaves it unpaid (checked by paying it)", async () => {
    const id = "two options: the first in WETH, the second at $5";
    const seller = sellers.get(id) as PayingSeller;
    const loosened = await defaultClientRun(seller.url, chain.buyers[3]?.privateKey as `0x${string}`, seller, true);
    expect([loosened.served, loosened.charged]).toEqual([false, 0n]);
    const j = judged.get(id) as Judged;
    expect([j.report.payable, j.report.payable_with_loosened_controls]).toEqual([false, false]);
    // Each option alone: the WETH one never settles, the $5 one would with the controls off.
    expect(j.report.payable_options.map((o) => o.payable_with_loosened_controls)).toEqual([false, true]);
  });

  it("says a wrong extra.version is present but wrong, not missing", () => {
    const j = judged.get("wrong extra.version (domain present but wrong)") as Judged;
    expect(truth.get("wrong extra.version (domain present but wrong)")?.refusal).not.toBeNull();
    expect(j.penalties).toContain("wrong_eip712_domain");
    expect(j.penalties).not.toContain("no_eip712_domain");
    expect(j.report.failures.find((f) => f.check === "eip712_domain")?.message).toContain(
      'Option 0 names the domain name "USD Coin", version "1"; the token signs with name "USD Coin", version "2".',
    );
  });

  it("finds the sellers that answer 402 after payment payable by their challenge, and avoid once bought from", () => {
    for (const id of [
      "takes a valid payment, settles it, answers 402 again",
      "ignores the payment header and answers 402 again",
      "reads only X-PAYMENT, so a v2 payment is ignored and 402 comes again",
    ]) {
      const j = judged.get(id) as Judged;
      expect([id, j.report.payable, assessTrust(j.report, zooReputation(j.report)).verdict]).toEqual([id, true, "pay"]);
      expect([id, j.verdict]).toEqual([id, "avoid"]);
    }
    expect(judged.get("takes a valid payment, settles it, answers 402 again")?.purchase?.outcome).toBe("charged_without_service");
    expect(judged.get("ignores the payment header and answers 402 again")?.purchase?.outcome).toBe("refused_after_signing");
  });
});
