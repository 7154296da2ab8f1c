/**
 * Paid calls per second on the Solana site, side by side with a minimal `@x402/express` seller
 * with the SVM scheme on the same local Solana in the same run: the library's resource server
 * with `ExactSvmScheme` and an in-process `@x402/svm` facilitator as the library's quick start
 * builds it (its own fee payer, the same JSON-RPC through kit's stock `createSolanaRpc`), one
 * priced route answering a small JSON. The Solana site's route is
 * `POST /v1/dinalibrium {"token":"SOL"}` (its DexScreener read is cached after the warm-up), so
 * both answers cost little next to the payment.
 *
 * Measured as a deployment looks, and the same way for both sellers:
 * - the chain (litesvm, its JSON-RPC server, its blocks) runs in a worker thread of its own
 *   (scripts/bench-solana-chain.ts): a real Solana RPC is another machine;
 * - the buyers run in another worker thread (scripts/bench-load.ts): 8 buyers, each paying one
 *   call after another with transactions signed beforehand by the stock SVM client scheme
 *   (signing is not counted);
 * - both sellers share the main thread, each warmed up first; rounds alternate, the table shows
 *   each round and the median of the rounds' calls per second;
 * - each facilitator runs where its seller runs it: the quick start's on its main thread, the
 *   Solana site's on a thread of its own (src/solana/facilitator-thread.ts). The busy column is
 *   the main thread's time per call; the CPU column, every thread's of the process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance as perfHooks } from "node:perf_hooks";
import { createSolanaRpc } from "@solana/kit";
import { x402HTTPClient } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { SupportedResponse } from "@x402/core/types";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { registerExactSvmScheme } from "@x402/svm/exact/facilitator";
import { ExactSvmScheme } from "@x402/svm/exact/server";
import express from "express";
import { ensureBuild } from "../src/build-stamp.ts";
import { loadConfig } from "../src/config.ts";
import { startDevnet } from "../src/local/devnet/devnet.ts";
import { scenarioKeys } from "../src/local/solana/scenario.ts";
import { startUpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { createLogger } from "../src/log.ts";
import { solana } from "../src/networks/solana.ts";
import { startService } from "../src/server/service.ts";
import { localKey, type SolanaKey } from "../src/solana/keys.ts";
import { svmClient } from "../src/solana/x402.ts";
import { runLoad } from "./bench-load.ts";
import { percentile } from "./bench-paid.ts";
import { reportTarget } from "./bench-report.ts";
import { startBenchChain } from "./bench-solana-chain.ts";

const QUICK = process.env.BENCH_QUICK === "1";
const BUYERS = 8;
const CALLS_PER_BUYER = Number(process.env.BENCH_SOLANA_CALLS ?? (QUICK ? 10 : 25));
const ROUNDS = Number(process.env.BENCH_SOLANA_ROUNDS ?? (QUICK ? 1 : 5));
/**
 * Calls per buyer made first and not counted, so both sellers are measured past their JIT
 * warm-up: as many as a round, since the Solana site's facilitator thread is an isolate of its
 * own that compiles the SVM scheme's code from scratch (64 calls left its first rounds 20% slower).
 */
const WARM_CALLS = QUICK ? 3 : 25;
const PAID_PATH = "/v1/dinalibrium";
const BODY = JSON.stringify({ token: "SOL" });
const median = (xs: number[]) => percentile(xs, 50);
const MINIMAL_FEE_PAYER = "bench-minimal-fee-payer";

/** The minimal seller: what the @x402/express quick start looks like with the SVM scheme and an in-process facilitator on this chain. */
async function startMinimalSeller(rpcUrl: string, payTo: string, feePayer: SolanaKey) {
  // The library's facilitator as its quick start builds it, on kit's stock RPC client (fetch).
  const facilitator = new x402Facilitator();
  registerExactSvmScheme(facilitator, {
    signer: toFacilitatorSvmSigner(feePayer.signer, { [solana.id]: createSolanaRpc(rpcUrl) } as never),
    networks: solana.id,
  });
  const settles: number[] = [];
  const verifies: number[] = [];
  const client: FacilitatorClient = {
    verify: async (p, r) => {
      const t = performance.now();
      const result = await facilitator.verify(p, r);
      verifies.push(performance.now() - t);
      return result;
    },
    settle: async (p, r) => {
      const t = performance.now();
      const result = await facilitator.settle(p, r);
      settles.push(performance.now() - t);
      return result;
    },
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
  const app = express();
  app.use(express.json());
  app.use(
    paymentMiddleware(
      { [`POST ${PAID_PATH}`]: { accepts: { scheme: "exact", price: "$0.10", network: solana.id, payTo }, description: "bench" } },
      new x402ResourceServer(client).register(solana.id, new ExactSvmScheme()),
    ),
  );
  app.post(PAID_PATH, (_req, res) => {
    res.json({ network: solana.id, tokens: [{ symbol: "SOL", weighted_price_usd: 150.03 }] });
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    settles,
    verifies,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** 8 buyers, each paying `calls` calls one after another with transactions signed beforehand, from the load worker. */
async function load(baseUrl: string, buyers: SolanaKey[], rpcUrl: string, calls: number) {
  const challengeRes = await fetch(`${baseUrl}${PAID_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: BODY,
  });
  const challenge = decodePaymentRequiredHeader(challengeRes.headers.get("payment-required") as string);
  const prepared = await Promise.all(
    buyers.map(async (buyer) => {
      const http = new x402HTTPClient(svmClient(buyer.signer, rpcUrl, solana.id));
      const out: Record<string, string>[] = [];
      for (let i = 0; i < calls; i++)
        out.push({ "payment-signature": encodePaymentSignatureHeader(await http.createPaymentPayload(challenge)) });
      return out;
    }),
  );
  // The service's own step timings (verify, function, settle) come from its Server-Timing header.
  // The main thread's busy time (both sellers live there; the chain and the buyers do not), per call.
  const elu = perfHooks.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const result = await runLoad({ url: `${baseUrl}${PAID_PATH}`, method: "POST", body: BODY, calls: prepared, status: 200 });
  const busyMs = perfHooks.eventLoopUtilization(elu).active / result.client.length;
  const used = process.cpuUsage(cpu);
  // Every thread of the process (the chain's and the buyers' included, the same for both sellers).
  const cpuMs = (used.user + used.system) / 1000 / result.client.length;
  return { callsPerSecond: result.perSecond, client: result.client, steps: result.steps, busyMs, cpuMs };
}

/** Run the Solana paid-throughput benchmark and print its table. */
export async function benchSolana(): Promise<void> {
  await ensureBuild();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-bench-solana-"));
  const buyerLabels = Array.from({ length: BUYERS }, (_, i) => `bench-buyer-${i}`);
  // The chain in its own thread, as a real RPC is another machine; blocks every minute, so
  // transactions signed before a round stay valid through it.
  const chain = await startBenchChain({ buyers: buyerLabels, feePayers: [MINIMAL_FEE_PAYER], blockMs: 60_000 });
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const stubs = await startUpstreamStubs();
  const k = await scenarioKeys();
  const buyers = await Promise.all(buyerLabels.map((label) => localKey(label)));
  const minimalFeePayer = await localKey(MINIMAL_FEE_PAYER);
  const service = await startService({
    config: loadConfig({
      PORT: "0",
      LOG_LEVEL: "silent",
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: "0",
      DEXSCREENER_URL: stubs.urls.dexscreener,
      DEFILLAMA_URL: stubs.urls.defillama,
      DEFILLAMA_COINS_URL: stubs.urls.defillamaCoins,
      HYPERLIQUID_URL: stubs.urls.hyperliquid,
    }),
    devnet,
    solana: {
      rpcUrl: chain.rpcUrl,
      network: chain.network,
      usdcMint: chain.usdcMint,
      payTo: chain.payTo,
      feePayer: k.feePayer.signer,
    },
    log: createLogger("silent"),
    maintenance: false,
    statusFeed: false,
  });
  const minimal = await startMinimalSeller(chain.rpcUrl, chain.payTo, minimalFeePayer);
  const site = service.solanaUrl as string;
  try {
    await load(minimal.url, buyers, chain.rpcUrl, WARM_CALLS);
    await load(site, buyers, chain.rpcUrl, WARM_CALLS);
    const ours: { callsPerSecond: number; clientP50: number; busyMs: number; cpuMs: number; steps: Record<string, number[]> }[] = [];
    const theirs: { callsPerSecond: number; clientP50: number; busyMs: number; cpuMs: number; verify: number; settle: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      minimal.settles.length = 0;
      minimal.verifies.length = 0;
      const ref = await load(minimal.url, buyers, chain.rpcUrl, CALLS_PER_BUYER);
      theirs.push({
        callsPerSecond: ref.callsPerSecond,
        clientP50: median(ref.client),
        busyMs: ref.busyMs,
        cpuMs: ref.cpuMs,
        verify: median(minimal.verifies),
        settle: median(minimal.settles),
      });
      const own = await load(site, buyers, chain.rpcUrl, CALLS_PER_BUYER);
      ours.push({
        callsPerSecond: own.callsPerSecond,
        clientP50: median(own.client),
        busyMs: own.busyMs,
        cpuMs: own.cpuMs,
        steps: own.steps,
      });
    }
    const fmt = (n: number) => +n.toFixed(1);
    const rows: Record<string, Record<string, number | string>> = {};
    for (let i = 0; i < ROUNDS; i++) {
      const o = ours[i] as (typeof ours)[number];
      const t = theirs[i] as (typeof theirs)[number];
      rows[`round ${i + 1}`] = {
        "Solana site calls/s": fmt(o.callsPerSecond),
        "minimal SVM seller calls/s": fmt(t.callsPerSecond),
        "ours / minimal": `${((100 * o.callsPerSecond) / t.callsPerSecond).toFixed(0)}%`,
        "ours client p50 ms": fmt(o.clientP50),
        "minimal client p50 ms": fmt(t.clientP50),
        "ours verify / fn / settle p50 ms": `${fmt(median(o.steps.verify ?? []))} / ${fmt(median(o.steps.fn ?? []))} / ${fmt(median(o.steps.settle ?? []))}`,
        "minimal verify / settle p50 ms": `${fmt(t.verify)} / ${fmt(t.settle)}`,
        "main thread busy ms/call ours / minimal": `${fmt(o.busyMs)} / ${fmt(t.busyMs)}`,
        "process CPU ms/call ours / minimal": `${fmt(o.cpuMs)} / ${fmt(t.cpuMs)}`,
      };
    }
    const oursRate = median(ours.map((r) => r.callsPerSecond));
    const refRate = median(theirs.map((r) => r.callsPerSecond));
    // Each round compares two runs seconds apart; on a shared machine the median of the rounds' ratios is steadier than the ratio of medians.
    const ratio = median(ours.map((o, i) => o.callsPerSecond / (theirs[i] as (typeof theirs)[number]).callsPerSecond));
    console.log(
      `\nPaid POST ${PAID_PATH} on Solana, ${BUYERS} buyers x ${CALLS_PER_BUYER} calls, local litesvm chain over its JSON-RPC, ${ROUNDS} alternating round(s); ` +
        "reference: minimal @x402/express seller with ExactSvmScheme and an in-process @x402/svm facilitator",
    );
    console.table(rows);
    console.log(
      `paid calls/s (medians): Solana site ${fmt(oursRate)} vs minimal SVM seller ${fmt(refRate)}; median of the rounds' ratios ${(100 * ratio).toFixed(0)}% (target >= 90%)`,
    );
    reportTarget({
      target: `Solana paid calls/s >= 90% of a minimal @x402/express SVM seller, ${BUYERS} buyers, POST ${PAID_PATH}`,
      figure: `${fmt(oursRate)} calls/s (${(100 * ratio).toFixed(0)}%)`,
      reference: `minimal SVM seller ${fmt(refRate)} calls/s`,
      ok: ratio >= 0.9,
    });
    if (ratio < 0.9) process.exitCode = 1;
  } finally {
    await minimal.close();
    await service.close();
    await stubs.close();
    await devnet.stop();
    await chain.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchSolana();
}
