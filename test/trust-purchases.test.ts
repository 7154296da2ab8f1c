/**
 * Verified by purchase: trust runs with purchases on, against a local catalogue mixing sellers
 * that serve after payment with sellers that never serve (one takes the payment and answers
 * 402 again, one ignores the payment), and one quoting above the price cap, every seller
 * really verifying and settling through a facilitator on a local chain of this file's own.
 * The never-serving sellers end avoid; what was bought stays within the budget, read on chain
 * as the buyer's USDC balance; every purchase is in the ledger of our own purchases, apart
 * from income; the leaderboard and x402-trust say when each origin was last verified by
 * purchase, and x402-trust never buys.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import type { PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createPublicClient, erc20Abi, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerReport, purchasesReport } from "../scripts/ledger-report.ts";
import { rpcTransport } from "../src/chain/client.ts";
import { ConfigError, loadConfig } from "../src/config.ts";
import { createCatalogue } from "../src/intel/catalogue.ts";
import { checkConformance } from "../src/intel/conformance.ts";
import { type CrawlResult, runCrawl } from "../src/intel/crawl.ts";
import { lastVerifiedByPurchase } from "../src/intel/leaderboard.ts";
import { type PurchaseBudget, PurchaseRun } from "../src/intel/purchase.ts";
import { assessTrust } from "../src/intel/trust-score.ts";
import { type Devnet, startDevnet } from "../src/local/devnet/devnet.ts";
import { cdpItems, type LocalDirectories, startLocalDirectories, x402ListItems } from "../src/local/stubs/directory-stubs.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import { createSafeFetcher } from "../src/outbound/safe-fetch.ts";
import { createSelfFacilitator } from "../src/payments/facilitator.ts";
import { LOCAL_TIMING } from "../src/payments/settlement-sender.ts";
import type { RunningService } from "../src/server/service.ts";
import type { OurPurchaseRow } from "../src/store/ledger.ts";
import type { Store } from "../src/store/store.ts";
import { cdpBazaarDirectory } from "../src/upstreams/directory-cdp.ts";
import { x402ListDirectory } from "../src/upstreams/directory-x402-list.ts";
import { purchasesOfRun } from "./support/ledger.ts";
import { buyerAccount, freshSqliteStore, payingFetch, startTestService } from "./support/service.ts";
import { solanaOption, v2Challenge, v2Option } from "./support/zoo/hand-made-sellers.ts";
import { type PayingMode, type PayingSeller, startPayingSeller } from "./support/zoo/paying-sellers.ts";

const SELLERS: { name: string; mode: PayingMode; amount: string }[] = [
  { name: "good a", mode: "serve", amount: "10000" },
  { name: "good b", mode: "serve", amount: "20000" },
  { name: "good c", mode: "serve", amount: "5000" },
  { name: "takes payment, answers 402 again", mode: "settle_then_402", amount: "10000" },
  { name: "ignores the payment", mode: "ignore_payment", amount: "10000" },
  { name: "above the price cap", mode: "serve", amount: "30000" },
];
const NEVER_SERVING = ["takes payment, answers 402 again", "ignores the payment"];
const log = createLogger("silent");
const fetcher = createSafeFetcher({ allowLoopback: true, connectTimeoutMs: 1_000, totalTimeoutMs: 5_000 });

let dir: string;
let chain: Devnet;
let client: PublicClient;
let store: Store;
let directories: LocalDirectories;
const sellers = new Map<string, PayingSeller>();
let buyer: ReturnType<typeof privateKeyToAccount>;
/**
 * The one facilitator of every seller here: one nonce manager for the facilitator's key, which
 * several would fight over. No two sellers settle at the same time.
 */
let facilitator: ReturnType<typeof createSelfFacilitator>;
const balance = () => client.readContract({ address: base.usdc.address, abi: erc20Abi, functionName: "balanceOf", args: [buyer.address] });

const crawl = (budget: PurchaseBudget) =>
  runCrawl({
    store,
    catalogue: createCatalogue([cdpBazaarDirectory(directories.cdpUrl), x402ListDirectory(directories.x402ListUrl)]),
    fetcher,
    chain: { client, network: base.id, usdc: base.usdc.address },
    concurrency: 4,
    originTimeoutMs: 4_000,
    trigger: "test",
    log,
    purchases: { buyer, chain: client, network: base.id, usdc: base.usdc.address, budget, settleGraceMs: 300 },
  });

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "x402-trust-purchases-"));
  chain = await startDevnet({ dataDir: dir, port: 0, persist: false });
  client = createPublicClient({ chain: base.chainAt([chain.rpcUrl]), transport: http(chain.rpcUrl) }) as PublicClient;
  buyer = privateKeyToAccount(chain.buyers[7]?.privateKey as `0x${string}`);
  facilitator = createSelfFacilitator(chain.facilitator.privateKey, base.chainAt([chain.rpcUrl]), rpcTransport([chain.rpcUrl]), base.id, {
    timing: LOCAL_TIMING,
  });
  for (const s of SELLERS) {
    sellers.set(
      s.name,
      await startPayingSeller({
        challenge: (url) => v2Challenge(url, [v2Option({ payTo: chain.payTo, amount: s.amount })]),
        mode: s.mode,
        facilitator,
      }),
    );
  }
  const listed = SELLERS.map((s) => ({
    url: (sellers.get(s.name) as PayingSeller).url,
    method: "GET" as const,
    amount: s.amount,
    payTo: chain.payTo,
    description: s.name,
    name: s.name,
  }));
  directories = await startLocalDirectories({ cdp: cdpItems(listed), x402List: x402ListItems(listed.slice(0, 2)) });
  store = await freshSqliteStore();
}, 60_000);
afterAll(async () => {
  await directories?.close();
  for (const s of sellers.values()) await s.close();
  await store?.close();
  await chain?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const originOf = (name: string) => (sellers.get(name) as PayingSeller).origin;

describe("a trust run that buys", () => {
  const budget: PurchaseBudget = { per_run_usd: 0.1, per_origin_usd: 0.02, price_cap_usd: 0.02 };
  let first: CrawlResult;
  let spentOnChain: bigint;
  let bought: OurPurchaseRow[];

  beforeAll(async () => {
    const before = await balance();
    first = await crawl(budget);
    spentOnChain = before - (await balance());
    bought = await purchasesOfRun(store, first.run_id);
  }, 60_000);

  it("buys once from each seller judged payable under the price cap, and records what it got", () => {
    const outcomes = Object.fromEntries(bought.map((p) => [p.origin, p.outcome]));
    expect(outcomes).toEqual({
      [originOf("good a")]: "served",
      [originOf("good b")]: "served",
      [originOf("good c")]: "served",
      [originOf("takes payment, answers 402 again")]: "charged_without_service",
      [originOf("ignores the payment")]: "refused_after_signing",
    });
    expect(bought.map((p) => p.origin)).not.toContain(originOf("above the price cap"));
  });

  it("ends the never-serving sellers avoid, and the serving ones not", async () => {
    const rows = await store.query<{ origin: string; verdict: string; penalties: unknown }>(
      "select origin, verdict, penalties from trust_rows where run_id = $1",
      [first.run_id],
    );
    const verdict = new Map(rows.map((r) => [r.origin, r.verdict]));
    for (const name of NEVER_SERVING) expect([name, verdict.get(originOf(name))]).toEqual([name, "avoid"]);
    for (const name of ["good a", "good b", "good c", "above the price cap"])
      expect([name, verdict.get(originOf(name))]).not.toEqual([name, "avoid"]);
  });

  it("stays within the budget, as read on chain, and every purchase is in the ledger of our purchases", async () => {
    const charged = bought.reduce((sum, p) => sum + BigInt(p.charged_atomic), 0n);
    // Served: 0.01 + 0.02 + 0.005; charged without service: 0.01; refused: nothing.
    expect(spentOnChain).toBe(45_000n);
    expect(charged).toBe(spentOnChain);
    expect(spentOnChain).toBeLessThanOrEqual(100_000n);
    expect(first.purchases).toEqual({ made: 5, signed_atomic: "55000", charged_atomic: "45000" });
    for (const p of bought) expect(BigInt(p.signed_atomic)).toBeLessThanOrEqual(20_000n);
    expect(bought.find((p) => p.outcome === "charged_without_service")?.settlement_tx).toMatch(/^0x[0-9a-f]{64}$/);
    // Spending is not income: the ledger of payments received holds none of it.
    const income = await ledgerReport(store);
    expect(income.byRoute).toEqual([]);
    const spent = await purchasesReport(store);
    expect([spent.purchases, spent.charged_atomic]).toEqual([5, "45000"]);
  });

  it("tells when each origin was last verified by purchase", async () => {
    const last = await lastVerifiedByPurchase(store, [
      originOf("good a"),
      originOf("ignores the payment"),
      originOf("above the price cap"),
    ]);
    expect(last.get(originOf("good a"))?.outcome).toBe("served");
    expect(last.get(originOf("ignores the payment"))?.outcome).toBe("refused_after_signing");
    expect(last.has(originOf("above the price cap"))).toBe(false);
  });

  it("never spends more than a smaller run budget, and keeps the earlier purchases' verdicts for origins it could not buy", async () => {
    const small: PurchaseBudget = { per_run_usd: 0.015, per_origin_usd: 0.02, price_cap_usd: 0.02 };
    const before = await balance();
    const second = await crawl(small);
    const spent = before - (await balance());
    const again = await purchasesOfRun(store, second.run_id);
    expect(spent).toBeLessThanOrEqual(15_000n);
    expect(BigInt(second.purchases?.signed_atomic ?? "0")).toBeLessThanOrEqual(15_000n);
    expect(again.reduce((sum, p) => sum + BigInt(p.charged_atomic), 0n)).toBe(spent);
    expect(again.length).toBeGreaterThan(0);
    expect(again.length).toBeLessThan(5);
    const rows = await store.query<{ origin: string; verdict: string }>("select origin, verdict from trust_rows where run_id = $1", [
      second.run_id,
    ]);
    const verdict = new Map(rows.map((r) => [r.origin, r.verdict]));
    for (const name of NEVER_SERVING) expect([name, verdict.get(originOf(name))]).toEqual([name, "avoid"]);
  }, 60_000);
});

describe("what callers see of the purchases", () => {
  let service: RunningService;
  beforeAll(async () => {
    // The same store the runs above wrote; purchases on, with the default budget, as local mode has them.
    service = await startTestService({ store, allowLoopbackTargets: true });
  });
  afterAll(() => service?.close());

  it("x402-trust says when the origin was verified by purchase and what it got, avoid for a seller that took payment, and buys nothing", async () => {
    const rowsBefore = await store.query<{ n: number }>("select cast(count(*) as integer) as n from our_purchases");
    const before = await balance();
    const res = await payingFetch(buyerAccount(6))(`${service.url}/api/x402-trust`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: (sellers.get("takes payment, answers 402 again") as PayingSeller).url }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      verdict: string;
      penalties: string[];
      check: { payable: boolean };
      verified_by_purchase: { at: string; outcome: string; summary: string; charged_usd: number } | null;
    };
    expect(body.check.payable).toBe(true);
    expect(body.verdict).toBe("avoid");
    expect(body.penalties).toContain("verified by purchase: took the payment and did not serve the answer");
    expect(body.verified_by_purchase?.outcome).toBe("charged_without_service");
    expect(body.verified_by_purchase?.charged_usd).toBe(0.01);
    expect(body.verified_by_purchase?.summary).toBe(`verified by purchase at ${body.verified_by_purchase?.at}: charged_without_service`);
    // Never buying on the caller's request: no purchase recorded, the buyer's balance untouched.
    expect(await store.query<{ n: number }>("select cast(count(*) as integer) as n from our_purchases")).toEqual(rowsBefore);
    expect(await balance()).toBe(before);
  });

  it("the free preview and the page say what verified by purchase means and what it costs, and when each origin was last verified", async () => {
    const preview = (await (await fetch(`${service.url}/api/trust-leaderboard/preview`)).json()) as {
      verified_by_purchase: { what_it_means: string; enabled: boolean; budget: unknown };
    };
    expect(preview.verified_by_purchase.what_it_means).toContain("charged_without_service");
    const html = await (await fetch(`${service.url}/leaderboard`)).text();
    expect(html).toContain("Verified by purchase");
    expect(html).toContain("When each origin was last verified by purchase");
    expect(html).toContain(originOf("takes payment, answers 402 again"));
    expect(html).toContain("charged without service");
    expect(html).toMatch(/purchases are <strong[^>]*>(on|off)<\/strong>/);
  });
});

describe("npm run crawl pointed at a local catalogue", () => {
  it("probes loopback sellers with ALLOW_LOOPBACK_TARGETS=1 in local mode, as the scheduled crawl does, and buys within the budget", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "x402-crawl-cli-"));
    try {
      writeFileSync(
        path.join(dataDir, "devnet.json"),
        JSON.stringify({ rpcUrl: chain.rpcUrl, payTo: chain.payTo, buyers: chain.buyers.map((b) => ({ privateKey: b.privateKey })) }),
      );
      const before = await balance();
      const child = spawn(process.execPath, ["scripts/crawl.ts"], {
        env: {
          ...process.env,
          DATA_DIR: dataDir,
          CDP_DISCOVERY_URL: directories.cdpUrl,
          X402_LIST_URL: directories.x402ListUrl,
          ALLOW_LOOPBACK_TARGETS: "1",
          TRUST_PURCHASE_RUN_BUDGET_USD: "0.03",
          CRAWL_ORIGIN_TIMEOUT_SECONDS: "5",
          LOG_LEVEL: "error",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code, `${stdout}\n${stderr}`).toBe(0);
      expect(stdout).toContain(`coverage  ${SELLERS.length} in the catalogue, ${SELLERS.length} scored, 0 unreachable`);
      expect(stdout).toContain(
        `Verified by purchase: buying once from each seller judged payable, from ${buyer.address}, at most $0.03 this run`,
      );
      const spent = before - (await balance());
      expect(spent).toBeLessThanOrEqual(30_000n);
      expect(stdout).toContain(`charged ${Number(spent) / 1e6} USDC on chain`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe("the operator's settings", () => {
  const production = {
    RPC_URL: "https://mainnet.base.org",
    PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    FACILITATOR_URL: "https://x402.org/facilitator",
    PUBLIC_URL: "https://api.example.com",
  };
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };

  it("keeps purchases off in production by default and on in local mode, with the default budget", () => {
    expect(loadConfig(production).intel.purchases).toEqual({
      enabled: false,
      budget: { per_run_usd: 0.1, per_origin_usd: 0.02, price_cap_usd: 0.02 },
      buyerPrivateKey: undefined,
    });
    expect(loadConfig({}).intel.purchases.enabled).toBe(true);
    expect(loadConfig({ TRUST_PURCHASES: "0" }).intel.purchases.enabled).toBe(false);
  });

  it("needs a buyer key to buy in production, and checks the budget", () => {
    expect(problemsOf({ ...production, TRUST_PURCHASES: "1" })).toEqual([
      "TRUST_PURCHASES=1 in production needs TRUST_BUYER_PRIVATE_KEY: the wallet the trust runs buy from, funded with USDC within the budget",
    ]);
    // A malformed key is one problem, named once: not also "needs TRUST_BUYER_PRIVATE_KEY".
    expect(problemsOf({ ...production, TRUST_PURCHASES: "1", TRUST_BUYER_PRIVATE_KEY: "0xsecretvalue" })).toEqual([
      "TRUST_BUYER_PRIVATE_KEY must be a 32-byte hex private key (64 hex digits); its value is not shown",
    ]);
    const key = chain.buyers[3]?.privateKey as string;
    expect(
      loadConfig({ ...production, TRUST_PURCHASES: "1", TRUST_BUYER_PRIVATE_KEY: key, TRUST_PURCHASE_RUN_BUDGET_USD: "0.5" }).intel
        .purchases,
    ).toEqual({ enabled: true, budget: { per_run_usd: 0.5, per_origin_usd: 0.02, price_cap_usd: 0.02 }, buyerPrivateKey: key });
    expect(problemsOf({ TRUST_PURCHASE_PRICE_CAP_USD: "-1", TRUST_PURCHASES: "yes" })).toEqual([
      'TRUST_PURCHASES must be 1 or 0, got "yes"',
      'TRUST_PURCHASE_PRICE_CAP_USD must be a USD amount 0-1000 with at most 6 decimals, got "-1"',
    ]);
  });
});

describe("a seller that takes a second payment for one call", () => {
  it("is recorded as settled twice, charged twice on chain, and avoid", async () => {
    // A second authorization of the same buyer that the seller holds (one it was given earlier).
    const challengeOf = (url: string) => v2Challenge(url, [v2Option({ payTo: chain.payTo, amount: "10000" })]);
    let url = "";
    const signer = new x402Client();
    registerExactEvmScheme(signer, { signer: buyer });
    const seller = await startPayingSeller({
      challenge: challengeOf,
      mode: "settle_twice",
      facilitator,
      second: () => signer.createPaymentPayload(challengeOf(url) as unknown as PaymentRequired),
    });
    url = seller.url;
    try {
      const run = new PurchaseRun({
        buyer,
        chain: client,
        network: base.id,
        usdc: base.usdc.address,
        budget: { per_run_usd: 0.1, per_origin_usd: 0.02, price_cap_usd: 0.02 },
        fetcher,
        settleGraceMs: 300,
      });
      const report = await checkConformance(fetcher, { url: seller.url, method: "GET" });
      const before = await balance();
      const purchase = await run.buy({ origin: seller.origin, url: seller.url, method: "GET" }, report);
      expect(seller.settled()).toBe(2);
      expect(before - (await balance())).toBe(20_000n);
      expect([purchase?.outcome, purchase?.status, purchase?.charged_atomic, purchase?.signed_atomic]).toEqual([
        "settled_twice",
        200,
        "20000",
        "10000",
      ]);
      expect(
        assessTrust(
          report,
          { measured: true, transfers: 25, distinct_payers: 12, newest_age_hours: 1, oldest_age_hours: 9, window_blocks: 1, note: "" },
          purchase,
        ).verdict,
      ).toBe("avoid");
    } finally {
      await seller.close();
    }
  }, 60_000);
});

describe("a purchase pays only the option the checker judged payable", () => {
  const BURN = "0x000000000000000000000000000000000000dEaD";
  const newRun = () =>
    new PurchaseRun({
      buyer,
      chain: client,
      network: base.id,
      usdc: base.usdc.address,
      budget: { per_run_usd: 0.1, per_origin_usd: 0.02, price_cap_usd: 0.02 },
      fetcher,
      settleGraceMs: 300,
    });

  it("does not buy from a seller whose Solana option pays and whose Base USDC option pays a burn address: nothing is signed", async () => {
    const seller = await startPayingSeller({
      challenge: (url) => v2Challenge(url, [solanaOption(), v2Option({ payTo: BURN, amount: "10000" })]),
      mode: "serve",
      facilitator,
    });
    try {
      const report = await checkConformance(fetcher, { url: seller.url, method: "GET" });
      // Payable as a whole (the Solana option), not on Base: the checker says so of each option.
      expect(report.payable).toBe(true);
      expect(report.payable_options.map((o) => [o.index, o.payable, o.refused_by])).toEqual([
        [0, true, null],
        [1, false, "facilitator"],
      ]);
      expect([report.pay_to, report.price_usd]).toEqual([BURN, 0.01]);
      const run = newRun();
      const before = await balance();
      expect(await run.buy({ origin: seller.origin, url: seller.url, method: "GET" }, report)).toBeNull();
      expect(run.reservedAtomic).toBe(0n);
      expect(seller.settled()).toBe(0);
      expect(await balance()).toBe(before);
    } finally {
      await seller.close();
    }
  }, 60_000);

  it("signs nothing when the seller pays another address at purchase than the one it quoted to the checker", async () => {
    const OTHER = "0x2222222222222222222222222222222222222222";
    let payTo: string = chain.payTo;
    const seller = await startPayingSeller({
      challenge: (url) => v2Challenge(url, [v2Option({ payTo, amount: "10000" })]),
      mode: "serve",
      facilitator,
    });
    try {
      const report = await checkConformance(fetcher, { url: seller.url, method: "GET" });
      expect([report.payable, report.pay_to]).toEqual([true, chain.payTo]);
      payTo = OTHER;
      const run = newRun();
      const before = await balance();
      const purchase = await run.buy({ origin: seller.origin, url: seller.url, method: "GET" }, report);
      expect([purchase?.outcome, purchase?.signed, purchase?.signed_atomic, purchase?.charged_atomic]).toEqual(["not_signed", 0, "0", "0"]);
      expect(run.reservedAtomic).toBe(0n);
      expect(seller.settled()).toBe(0);
      expect(await balance()).toBe(before);
    } finally {
      await seller.close();
    }
  }, 60_000);

  it("does not buy a Permit2 option, whose payment carries no authorization to read back", async () => {
    const seller = await startPayingSeller({
      challenge: (url) =>
        v2Challenge(url, [
          v2Option({ amount: "10000", payTo: chain.payTo, extra: { name: "USD Coin", version: "2", assetTransferMethod: "permit2" } }),
        ]),
      mode: "serve",
      facilitator,
    });
    try {
      const report = await checkConformance(fetcher, { url: seller.url, method: "GET" });
      expect(report.payable_options.map((o) => o.payable)).toEqual([true]);
      const run = newRun();
      expect(await run.buy({ origin: seller.origin, url: seller.url, method: "GET" }, report)).toBeNull();
      expect(run.reservedAtomic).toBe(0n);
      expect(seller.settled()).toBe(0);
    } finally {
      await seller.close();
    }
  }, 60_000);
});
