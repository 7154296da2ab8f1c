/**
 * A seller whose 402 lists hundreds of payment options, each in a token nobody knows on the
 * service's own network (v1 "base"), gets a bounded check: the first 20 options are assessed,
 * the rest are reported as not assessed, at most 3 tokens are read on chain, and a chain read
 * that never answers does not hold the check past its budget. Options the default and the
 * loosened client both refuse whatever the token cost no chain read at all. A seller whose only
 * payable option comes after the first 20 is not called unpayable.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkConformance } from "../src/intel/conformance.ts";
import type { Eip3009Probe } from "../src/intel/x402-clients.ts";
import { base } from "../src/networks/base.ts";
import { createSafeFetcher } from "../src/outbound/safe-fetch.ts";
import { type Stub, startStub } from "./support/stub-server.ts";

const OPTIONS = 500;
const PAY_TO = "0x1111111111111111111111111111111111111111";
/** Option i's token: 500 different addresses, none a token the EVM scheme knows. */
const tokenOf = (i: number) => `0xabcdef${i.toString(16).padStart(34, "0")}`;
const NOT_ASSESSED = "not assessed: the challenge lists more than 20 payment options, and only the first 20 are assessed";

/** A v1 challenge in the JSON body listing OPTIONS options in unknown tokens, with or without a signing domain in extra. */
function manyOptions(url: string, withDomain: boolean): Record<string, unknown> {
  return {
    x402Version: 1,
    error: "payment required",
    accepts: Array.from({ length: OPTIONS }, (_, i) => ({
      scheme: "exact",
      network: "base",
      maxAmountRequired: "10000",
      resource: url,
      description: "one of many",
      mimeType: "application/json",
      payTo: PAY_TO,
      maxTimeoutSeconds: 60,
      asset: tokenOf(i),
      ...(withDomain ? { extra: { name: "Token", version: "1" } } : {}),
    })),
  };
}

/**
 * A v2 challenge listing 20 options on a network family no client is run for here, then a Base
 * USDC option a client pays: the 21st, not assessed.
 */
function farFirst(): Record<string, unknown> {
  const bitcoin = {
    scheme: "exact",
    network: "bip122:000000000019d6689c085ae165831e93",
    amount: "1000",
    asset: "btc",
    payTo: "bc1q",
    maxTimeoutSeconds: 60,
  };
  const usdc = {
    scheme: "exact",
    network: base.id,
    amount: "10000",
    asset: base.usdc.address,
    payTo: PAY_TO,
    maxTimeoutSeconds: 60,
    extra: { name: "USD Coin", version: "2" },
  };
  return { x402Version: 2, resource: { url: "/far" }, accepts: [...Array.from({ length: 20 }, () => bitcoin), usdc] };
}

const fetcher = createSafeFetcher({ allowLoopback: true, connectTimeoutMs: 1_000, totalTimeoutMs: 5_000 });
let seller: Stub;

beforeAll(async () => {
  seller = await startStub((req, res) => {
    const path = req.url ?? "/";
    if (path === "/far") {
      res.writeHead(402, {
        "content-type": "application/json",
        "payment-required": Buffer.from(JSON.stringify(farFirst())).toString("base64"),
      });
      res.end("{}");
      return;
    }
    if (path !== "/with-domain" && path !== "/without-domain") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    res.writeHead(402, { "content-type": "application/json" });
    res.end(JSON.stringify(manyOptions(`${seller.url}${path}`, path === "/with-domain")));
  });
});
afterAll(() => seller?.close());

/** A probe recording every token it is asked about and answering `answer` (a promise that may never settle). */
function countingProbe(answer: () => Promise<boolean | null>): { probe: Eip3009Probe; asked: string[][] } {
  const asked: string[][] = [];
  return {
    asked,
    probe: (network, asset) => {
      asked.push([network, asset]);
      return answer();
    },
  };
}

describe("a 402 listing 500 options in 500 unknown tokens", () => {
  it("reads 3 tokens on chain, assesses the first 20 options and says the other 480 were not assessed", async () => {
    const { probe, asked } = countingProbe(async () => false);
    const report = await checkConformance(fetcher, {
      url: `${seller.url}/with-domain`,
      method: "GET",
      probeTimeoutMs: 5_000,
      discoveryTimeoutMs: 1_000,
      eip3009Probe: probe,
    });
    expect(report.status).toBe(402);
    expect(report.accepts).toHaveLength(500);
    expect(asked).toEqual([
      [base.id, "0xabcdef0000000000000000000000000000000000"],
      [base.id, "0xabcdef0000000000000000000000000000000001"],
      [base.id, "0xabcdef0000000000000000000000000000000002"],
    ]);
    expect(report.payable_options).toHaveLength(500);
    const assessed = report.payable_options.slice(0, 20);
    expect(assessed.map((o) => [o.index, o.payable, o.refused_by, o.control])).toEqual(
      Array.from({ length: 20 }, (_, i) => [i, false, "spend_controls", "spendControls.allowedAssets"]),
    );
    // The three tokens read have no EIP-3009 transfer: a loosened client's payment would move nothing.
    expect(assessed.slice(0, 3).map((o) => o.payable_with_loosened_controls)).toEqual([false, false, false]);
    for (const option of report.payable_options.slice(20)) {
      expect(option).toEqual({
        index: option.index,
        payable: null,
        reason: NOT_ASSESSED,
        refused_by: null,
        control: null,
        payable_with_loosened_controls: null,
      });
    }
    expect(report.payable_options.slice(20).map((o) => o.index)).toEqual(Array.from({ length: 480 }, (_, i) => 20 + i));
    // The cause, in the default client's words, and that the options after the first 20 say nothing.
    expect(report.payable_reason).toBe(
      "All payment requirements were rejected by spendControls: only default assets or entries in spendControls.allowedAssets are allowed. Add an allowedAssets entry for non-default tokens, set allowedAssets: true, or set spendControls: false; the options after the first 20 were not assessed (480 of 500)",
    );
    expect([report.payable, report.payable_refused_by, report.refused_by_control]).toEqual([
      false,
      "spend_controls",
      "spendControls.allowedAssets",
    ]);
  });

  it("answers within the check's budget when the chain read never answers", async () => {
    const { probe, asked } = countingProbe(() => new Promise<boolean | null>(() => {}));
    const started = performance.now();
    const report = await checkConformance(fetcher, {
      url: `${seller.url}/with-domain`,
      method: "GET",
      probeTimeoutMs: 1_500,
      discoveryTimeoutMs: 500,
      eip3009Probe: probe,
    });
    const elapsed = performance.now() - started;
    // Only the budget ends the wait: the first read never answers, and no other is asked after it.
    expect(elapsed).toBeGreaterThanOrEqual(1_400);
    expect(elapsed).toBeLessThan(2_500);
    expect(asked).toEqual([[base.id, "0xabcdef0000000000000000000000000000000000"]]);
    expect(report.payable_options).toHaveLength(500);
    expect([report.payable, report.payable_refused_by]).toEqual([false, "spend_controls"]);
    expect(report.payable_options[20]?.reason).toBe(NOT_ASSESSED);
  }, 20_000);

  it("reads no token on chain when no client can sign the options (no signing domain), whatever the token", async () => {
    const { probe, asked } = countingProbe(async () => false);
    const report = await checkConformance(fetcher, {
      url: `${seller.url}/without-domain`,
      method: "GET",
      probeTimeoutMs: 5_000,
      discoveryTimeoutMs: 1_000,
      eip3009Probe: probe,
    });
    expect(asked).toEqual([]);
    expect(report.payable_options.slice(0, 20).map((o) => [o.payable, o.refused_by, o.payable_with_loosened_controls])).toEqual(
      Array.from({ length: 20 }, () => [false, "spend_controls", false]),
    );
    expect(report.payable).toBe(false);
  });
});

describe("a 402 whose only option a client pays is the 21st", () => {
  it("does not call it unpayable: payable null, and the reason says the options after the first 20 were not assessed", async () => {
    const report = await checkConformance(fetcher, {
      url: `${seller.url}/far`,
      method: "GET",
      probeTimeoutMs: 5_000,
      discoveryTimeoutMs: 1_000,
    });
    expect(report.payable_options).toHaveLength(21);
    expect(report.payable_options.map((o) => o.payable)).toEqual(Array.from({ length: 21 }, () => null));
    expect(report.payable_options[20]?.reason).toBe(NOT_ASSESSED);
    expect([report.payable, report.payable_reason]).toEqual([
      null,
      "no assessed option is on a network this checker runs a client for (EVM, or USDC on Solana); the options after the first 20 were not assessed (1 of 21)",
    ]);
  });
});
