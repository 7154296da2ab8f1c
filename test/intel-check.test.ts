/**
 * The checker on local fake sellers of every kind gives the expected checks, payability,
 * price and payTo; our own service passes our own checker on every paid route; and the paid
 * `x402-check` and `x402-trust` routes answer the same through real x402 payments, with the
 * payTo reputation read from real USDC transfers (or 'NOT measured' when the RPC refuses).
 */
import { createPublicClient, http, type PublicClient } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paidRoutes } from "../spec/routes.ts";
import { CHECK_NAMES, checkConformance } from "../src/intel/conformance.ts";
import { payToReputation } from "../src/intel/reputation.ts";
import { PENALTIES } from "../src/intel/trust-score.ts";
import { type RunningSeller, SELLER_KINDS, type SellerKind, startSeller } from "../src/local/sellers/demo-sellers.ts";
import { base } from "../src/networks/base.ts";
import { createSafeFetcher } from "../src/outbound/safe-fetch.ts";
import type { RunningService } from "../src/server/service.ts";
import { EXPECTED_CHECKS, EXPECTED_PAYABLE, EXPECTED_SHAPE, freshAddress, payUsdc } from "./support/fake-sellers.ts";
import { contractOf } from "./support/price-contract.ts";
import { startRpcProxy } from "./support/rpc-proxy.ts";
import { buyerAccount, devnet, payingFetch, startTestService, testConfig, usdcBalance } from "./support/service.ts";
import { type Stub, startStub } from "./support/stub-server.ts";

const quietPayTo = freshAddress();
const fundedPayTo = freshAddress();
const sellers = new Map<SellerKind, RunningSeller>();
let funded: RunningSeller;
// Directories on a closed port: x402-trust finds nothing listed, at once and offline.
const noDirectories = ((c) => ({
  ...c,
  intel: { ...c.intel, cdpDiscoveryUrl: "http://127.0.0.1:1/cdp", x402ListUrl: "http://127.0.0.1:1/list" },
}))(testConfig());
const fetcher = createSafeFetcher({ allowLoopback: true, connectTimeoutMs: 500, totalTimeoutMs: 1_000 });
// Our own service answers every paid route at once (and reads the chain for each): on a loaded
// machine that takes longer than the second the fake sellers get.
const ownFetcher = createSafeFetcher({ allowLoopback: true, connectTimeoutMs: 2_000, totalTimeoutMs: 15_000 });

beforeAll(async () => {
  // Each kind on its own loopback address, ports chosen by the system.
  for (const [i, kind] of SELLER_KINDS.entries()) {
    sellers.set(kind, await startSeller({ kind, host: `127.0.0.${20 + i}`, payTo: quietPayTo, slowMs: 5_000 }));
  }
  funded = await startSeller({ kind: "conforming_v2", host: "127.0.0.40", payTo: fundedPayTo });
  await payUsdc(fundedPayTo, [
    { buyer: 4, usdc: "0.01" },
    { buyer: 4, usdc: "0.02" },
    { buyer: 5, usdc: "0.03" },
  ]);
});
afterAll(async () => {
  await Promise.all([...sellers.values(), funded].map((s) => s.close()));
});

describe("the checker on fake sellers", () => {
  it.each(SELLER_KINDS.map((k) => [k]))("%s", async (kind) => {
    const seller = sellers.get(kind) as RunningSeller;
    const report = await checkConformance(fetcher, { url: seller.url, method: "GET" });
    expect(report.checks).toEqual(EXPECTED_CHECKS[kind]);
    expect(report.failed_checks).toEqual(CHECK_NAMES.filter((n) => !EXPECTED_CHECKS[kind][n]));
    expect(report.conformant).toBe(kind === "conforming_v2" || kind === "v1_only" || kind === "expensive");
    expect(report.payable).toBe(EXPECTED_PAYABLE[kind]);
    expect(report.discoverable).toBe(kind !== "v1_only" && EXPECTED_CHECKS[kind].bazaar_metadata);
    expect({
      reachable: report.reachable,
      status: report.status,
      x402Version: report.x402Version,
      challenge_source: report.challenge_source,
      price_usd: report.price_usd,
    }).toEqual(EXPECTED_SHAPE[kind]);
    const quotesPayTo = report.reachable && report.status === 402 && kind !== "missing_pay_to";
    expect(report.pay_to).toBe(quotesPayTo ? quietPayTo : null);
    expect(report.network).toBe(report.status === 402 ? base.id : null);
    if (!report.reachable) expect(report.error).toMatch(kind === "slow" ? /^timeout: / : /^connect: /);
  });

  it("gives up on the slow seller within the time limit", async () => {
    const started = Date.now();
    await checkConformance(fetcher, { url: (sellers.get("slow") as RunningSeller).url, method: "GET" });
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});

describe("a challenge in both the header and the body", () => {
  const option = {
    scheme: "exact",
    network: base.id,
    asset: base.usdc.address,
    amount: "10000",
    payTo: `0x${"1".repeat(40)}`,
    maxTimeoutSeconds: 60,
    extra: { name: "USD Coin", version: "2" },
  };
  /** A seller sending `header` as PAYMENT-REQUIRED and `body` as the JSON body of its 402. */
  const both = (header: unknown, body: unknown) =>
    startStub((_req, res) => {
      res.writeHead(402, {
        "content-type": "application/json",
        "payment-required": Buffer.from(JSON.stringify(header)).toString("base64"),
      });
      res.end(JSON.stringify(body));
    });

  it("matches when the body carries the same options, keys in another order, and not when it quotes another amount", async () => {
    const header = { x402Version: 2, accepts: [option] };
    const reordered = { accepts: [Object.fromEntries(Object.entries(option).reverse())], x402Version: 2 };
    const cheaper = { x402Version: 2, accepts: [{ ...option, amount: "1000" }] };
    const same = await both(header, reordered);
    const differs = await both(header, cheaper);
    try {
      const matching = await checkConformance(fetcher, { url: `${same.url}/x`, method: "GET" });
      expect(matching.challenge_source).toBe("both");
      expect(matching.checks.body_matches_header).toBe(true);
      const mismatch = await checkConformance(fetcher, { url: `${differs.url}/x`, method: "GET" });
      expect(mismatch.challenge_source).toBe("both");
      expect(mismatch.checks.body_matches_header).toBe(false);
      expect(mismatch.failed_checks).toContain("body_matches_header");
    } finally {
      await Promise.all([same.close(), differs.close()]);
    }
  });
});

describe("a v1 challenge naming a network by a name every object has", () => {
  // Keys of every JavaScript object, never network names.
  it.each([["constructor"], ["toString"]])("%s is not a v1 network name, and is reported as written", async (network) => {
    const option = {
      scheme: "exact",
      network,
      asset: base.usdc.address,
      maxAmountRequired: "10000",
      payTo: `0x${"1".repeat(40)}`,
      maxTimeoutSeconds: 60,
      resource: "https://seller.example/x",
      description: "",
      mimeType: "application/json",
    };
    const seller = await startStub((_req, res) => {
      res.writeHead(402, { "content-type": "application/json" }).end(JSON.stringify({ x402Version: 1, accepts: [option] }));
    });
    try {
      const report = await checkConformance(fetcher, { url: `${seller.url}/x`, method: "GET" });
      expect(report.checks.network_id).toBe(false);
      expect(report.network).toBe(network);
      expect(report.failures.find((f) => f.check === "network_id")?.message).toMatch(
        new RegExp(`Option 0 fails it \\(network "${network}"\\)\\.$`),
      );
    } finally {
      await seller.close();
    }
  });
});

describe("payTo reputation behind a provider that caps eth_getLogs ranges", () => {
  it("narrows its range when the provider refuses it in QuickNode's or dRPC's words, and measures", async () => {
    const wordings = [(n: number) => `eth_getLogs is limited to a ${n} range`, (n: number) => `ranges over ${n} blocks are not supported`];
    for (const refusalMessage of wordings) {
      const proxy = await startRpcProxy(devnet().rpcUrl, { maxLogRange: 500, refusalMessage });
      try {
        const chain = createPublicClient({ chain: base.chainAt([proxy.url]), transport: http(proxy.url) }) as PublicClient;
        const reputation = await payToReputation(fundedPayTo, base.id, { chain, network: base.id, usdc: base.usdc.address });
        expect(reputation).toMatchObject({ measured: true, transfers: 3, distinct_payers: 2 });
        expect(proxy.getLogs.filter((r) => r.refused).length).toBeGreaterThan(0);
      } finally {
        await proxy.close();
      }
    }
  });
});

describe("our own service", () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it(`passes our own checker on every paid route (${paidRoutes.length})`, async () => {
    const reports = await Promise.all(
      paidRoutes.map((route) =>
        checkConformance(ownFetcher, {
          url: `${service.url}${route.path}`,
          method: route.method,
          ...(route.method === "POST" ? { body: {} } : {}),
        }),
      ),
    );
    for (const [i, report] of reports.entries()) {
      const route = paidRoutes[i] as (typeof paidRoutes)[number];
      // The price the contract states (test/support/price-contract.ts), not the route table's.
      const contract = contractOf(route.method, route.path);
      expect([report.status, report.error, report.failed_checks], route.path).toEqual([402, null, []]);
      // A route quoting more than $1 (a balance top-up's default) is refused by the default client's per-payment cap.
      const capped = (contract.usd ?? 0) > 1;
      expect([report.payable, report.conformant, report.discoverable, report.discovery], route.path).toEqual([
        !capped,
        true,
        true,
        "complete",
      ]);
      expect([report.payable_with_loosened_controls, report.refused_by_control], route.path).toEqual([
        true,
        capped ? "spendControls.maxAmountPerPayment" : null,
      ]);
      expect(report.challenge_source).toBe("both");
      expect(report.price_usd).toBe(contract.usd);
      expect(report.pay_to).toBe(devnet().payTo);
      expect(report.accepts).toEqual([
        {
          scheme: "exact",
          network: base.id,
          asset: base.usdc.address,
          amount: contract.atomic,
          payTo: devnet().payTo,
          maxTimeoutSeconds: 300,
          // src/payments/requirements.ts names the EIP-712 primary type as well.
          extra: { name: "USD Coin", version: "2", primaryType: "TransferWithAuthorization" },
        },
      ]);
    }
  });
});

describe("paid x402-check and x402-trust", () => {
  let service: RunningService;
  let refusingRpc: Stub;
  let noRpcService: RunningService;
  const post = (s: RunningService, path: string, body: unknown, buyer = 5) =>
    payingFetch(buyerAccount(buyer))(`${s.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    // The explicit test option: the fake sellers live on loopback.
    service = await startTestService({ allowLoopbackTargets: true, config: noDirectories });
    refusingRpc = await startStub((_req, res) => {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32000, message: "method not allowed" } }));
    });
    noRpcService = await startTestService({
      allowLoopbackTargets: true,
      config: noDirectories,
      readTransport: http(refusingRpc.url, { retryCount: 0 }),
    });
  });
  afterAll(async () => {
    await service.close();
    await noRpcService.close();
    await refusingRpc.close();
  });

  it("x402-check reports a conforming seller and charges 0.10", async () => {
    const buyer = buyerAccount(5);
    const before = await usdcBalance(buyer.address);
    const seller = sellers.get("conforming_v2") as RunningSeller;
    const res = await post(service, "/api/x402-check", { url: seller.url, method: "GET" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      url: seller.url,
      method: "GET",
      final_url: seller.url,
      reachable: true,
      status: 402,
      error: null,
      payable: true,
      payable_reason: null,
      payable_options: [{ index: 0, payable: true, reason: null }],
      clients: [
        { family: "@x402/core", accepts: true, reason: null },
        { family: "x402@1", accepts: false, reason: "v1 clients pay x402Version 1; the body says 2" },
      ],
      conformant: true,
      discoverable: true,
      x402Version: 2,
      challenge_source: "both",
      price_usd: 0.01,
      pay_to: quietPayTo,
      network: base.id,
      failed_checks: [],
      failures: [],
      checks: EXPECTED_CHECKS.conforming_v2,
      discovery: "complete",
      discovery_urls: { well_known_url: `${seller.origin}/.well-known/x402`, openapi_url: `${seller.origin}/openapi.json` },
      rules_version: 3,
    });
    expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
  });

  it("x402-check answers an unreachable seller (charged: it is an answer) and lists every check as failed", async () => {
    const res = await post(service, "/api/x402-check", { url: (sellers.get("dead") as RunningSeller).url });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { reachable: boolean; status: null; failed_checks: string[]; method: string };
    expect(body).toMatchObject({
      reachable: false,
      status: null,
      method: "POST",
      payable: false,
      payable_reason: "the endpoint did not answer",
      conformant: false,
      discoverable: false,
      failed_checks: [...CHECK_NAMES],
    });
  });

  it("x402-check refuses a body with GET as a bad request, not charged", async () => {
    const buyer = buyerAccount(5);
    const before = await usdcBalance(buyer.address);
    const res = await post(service, "/api/x402-check", {
      url: (sellers.get("conforming_v2") as RunningSeller).url,
      method: "GET",
      body: { a: 1 },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("x402-trust scores a seller whose payTo has 3 transfers from 2 payers: 95, pay", async () => {
    const buyer = buyerAccount(4);
    const before = await usdcBalance(buyer.address);
    const res = await post(service, "/api/x402-trust", { url: funded.url }, 4);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      origin: funded.origin,
      endpoint: funded.url,
      method: "GET",
      in_catalogue: false,
      endpoints: 0,
      score: 95,
      verdict: "pay",
      penalties: [PENALTIES.few_payers.text],
      reputation: { measured: true, transfers: 3, distinct_payers: 2 },
      leaderboard: null,
      history: [],
    });
    expect((body.check as { conformant: boolean }).conformant).toBe(true);
    expect(await usdcBalance(buyer.address)).toBe(before - 50_000n);
  });

  it("x402-trust says 'NOT measured' when the RPC refuses, and never gives pay then", async () => {
    const res = await post(noRpcService, "/api/x402-trust", { url: funded.url }, 4);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      score: number;
      verdict: string;
      penalties: string[];
      reputation: { measured: boolean; note: string };
    };
    expect(body.reputation.measured).toBe(false);
    expect(body.reputation.note).toMatch(/^NOT measured: the RPC refused or failed the log query/);
    expect(body.penalties).toEqual([PENALTIES.reputation_not_measured.text]);
    expect(body.score).toBe(100);
    expect(body.verdict).toBe("pay_with_caution");
  });

  it("x402-trust tries POST when GET answers 405", async () => {
    const ours = `${service.url}/api/payment-verify`;
    const res = await post(service, "/api/x402-trust", { url: ours }, 4);
    const body = (await res.json()) as { method: string; score: number; check: { conformant: boolean; price_usd: number } };
    expect(body.method).toBe("POST");
    expect(body.check.conformant).toBe(true);
    expect(body.check.price_usd).toBe(0.1);
  });
});
