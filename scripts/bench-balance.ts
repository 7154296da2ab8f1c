/**
 * `npm run bench -- balance`: paid calls per second and their p50 on one data route
 * (`POST /api/defi-sentiment`, 0.10) with 8 buyers at once, paid from a prepaid balance (a
 * sign-in and a debit, no transfer) against per call with x402 (a settlement each), in the same
 * run on the local chain, and the service's own time per balance-paid call (the access log's
 * total less the function's time).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { ensureBuild } from "../src/build-stamp.ts";
import { loadConfig } from "../src/config.ts";
import { startDevnet } from "../src/local/devnet/devnet.ts";
import { startUpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { createLogger } from "../src/log.ts";
import { startService } from "../src/server/service.ts";
import { openStore } from "../src/store/store.ts";
import { type LoadResult, runLoad } from "./bench-load.ts";
import { percentile } from "./bench-paid.ts";
import { reportTarget } from "./bench-report.ts";
import { signInHeader } from "./buyer/sign-in.ts";
import { signPayment } from "./buyer/sign-payment.ts";

const BUYERS = 8;
const QUICK = process.env.BENCH_QUICK === "1";
const CALLS = Number(process.env.BENCH_BALANCE_CALLS ?? (QUICK ? 240 : 1200));
/** Calls of each kind made first and not counted: the figures are the service's steady state, not its JIT warming up. */
const WARM = QUICK ? 40 : 200;
/** A data route whose answer comes from market data already fetched (the stubbed upstreams, cached): the payment is most of the call. */
const ROUTE = "/api/defi-sentiment";
const BODY = JSON.stringify({ asset: "ETH" });
const TARGET_RATIO = 5;
const TARGET_OWN_MS = 5;

/** Calls per second and each call's client-side time, `prepared[b]` sent in order by buyer b, all buyers at once, from a worker thread. */
function run(url: string, prepared: Record<string, string>[][], status = 200): Promise<LoadResult> {
  return runLoad({ url, method: "POST", body: BODY, calls: prepared, status });
}

export async function benchBalance(): Promise<void> {
  await ensureBuild();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-bench-balance-"));
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const stubs = await startUpstreamStubs();
  const store = await openStore({ kind: "sqlite", file: path.join(dataDir, "store.sqlite") });
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("info", {}, (line) => {
    if (line.includes('"msg":"balance call"') || (line.includes('"msg":"request"') && line.includes(ROUTE))) lines.push(JSON.parse(line));
  });
  const env = {
    PORT: "0",
    DATA_DIR: dataDir,
    // A benchmark measures the service, not the per-client limits one load generator would trip.
    RATE_LIMIT_PER_MINUTE: "0",
    DEXSCREENER_URL: stubs.urls.dexscreener,
    DEFILLAMA_URL: stubs.urls.defillama,
    DEFILLAMA_COINS_URL: stubs.urls.defillamaCoins,
    HYPERLIQUID_URL: stubs.urls.hyperliquid,
  };
  const service = await startService({ config: loadConfig(env), devnet, store, maintenance: false, log });
  try {
    const buyers: PrivateKeyAccount[] = devnet.buyers.slice(0, BUYERS).map((b) => privateKeyToAccount(b.privateKey));
    if (buyers.length < BUYERS) throw new Error(`the devnet has ${buyers.length} buyers, not ${BUYERS}`);
    const url = `${service.url}${ROUTE}`;
    const perBuyer = Math.ceil((CALLS + WARM) / BUYERS);
    // Each buyer tops up enough for its calls, paid with x402 like any buyer.
    for (const buyer of buyers) {
      const client = new x402Client().setSpendControls({ maxAmountPerPayment: false });
      registerExactEvmScheme(client, { signer: buyer });
      const top = await wrapFetchWithPayment(fetch, client)(`${service.url}/api/balance/topup?amount=${Math.ceil(perBuyer * 0.1) + 1}`, {
        method: "POST",
      });
      if (top.status !== 200) throw new Error(`a top-up answered ${top.status}`);
    }
    // Payments and sign-ins are signed before the clock starts: each is one signature per call.
    const challenge = decodePaymentRequiredHeader((await fetch(url, { method: "POST" })).headers.get("payment-required") as string);
    const validBefore = BigInt(Math.floor(Date.now() / 1000) + 900);
    const split = (n: number) => Array.from({ length: BUYERS }, (_v, b) => Math.floor(n / BUYERS) + (b < n % BUYERS ? 1 : 0));
    const signInsFor = (counts: number[]) =>
      Promise.all(
        buyers.map((b, i) =>
          Promise.all(Array.from({ length: counts[i] as number }, async () => ({ "SIGN-IN-WITH-X": await signInHeader(b, url) }))),
        ),
      );
    const paymentsFor = (counts: number[]) =>
      Promise.all(
        buyers.map((b, i) =>
          Promise.all(
            Array.from({ length: counts[i] as number }, async () => ({
              "PAYMENT-SIGNATURE": await signPayment(challenge, b, { validBefore }),
            })),
          ),
        ),
      );
    const counts = split(CALLS);
    const signIns = await signInsFor(counts);
    const payments = await paymentsFor(counts);
    const warmPayments = await paymentsFor(split(WARM));
    // Balance calls first: once a wallet paid per call for this very request, its sign-in reads that answer again instead of paying.
    await run(url, await signInsFor(split(WARM)));
    lines.length = 0;
    const balance = await run(url, signIns);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const fnOf = new Map(lines.filter((l) => l.msg === "balance call").map((l) => [l.request_id, l.fn as number]));
    const own = lines
      .filter((l) => l.msg === "request" && l.status === 200 && fnOf.has(l.request_id))
      .map((l) => (l.ms as number) - (fnOf.get(l.request_id) as number));
    const fn = [...fnOf.values()];
    if (own.length < CALLS * 0.9) throw new Error(`only ${own.length} of ${CALLS} balance calls were found in the log`);
    await run(url, warmPayments);
    const perCall = await run(url, payments);
    // The same route unpaid (its 402): what the HTTP path alone allows on this machine, for reading the two above.
    const ceiling = await run(
      url,
      counts.map((n) => Array.from({ length: n }, () => ({}))),
      402,
    );

    const ratio = balance.perSecond / perCall.perSecond;
    const ownP50 = percentile(own, 50);
    console.log(`\nBalance: ${CALLS} paid calls of POST ${ROUTE} (0.10) by ${BUYERS} buyers at once, local chain, SQLite`);
    console.table({
      "from a prepaid balance (sign-in + debit)": {
        "calls/s": +balance.perSecond.toFixed(1),
        "p50 ms": +percentile(balance.client, 50).toFixed(1),
      },
      "per call with x402 (a settlement each)": {
        "calls/s": +perCall.perSecond.toFixed(1),
        "p50 ms": +percentile(perCall.client, 50).toFixed(1),
      },
      "unpaid: the 402 challenge (no payment work)": {
        "calls/s": +ceiling.perSecond.toFixed(1),
        "p50 ms": +percentile(ceiling.client, 50).toFixed(1),
      },
    });
    console.log(`the function itself p50 ${percentile(fn, 50).toFixed(2)} ms`);
    reportTarget({
      target: `balance-paid calls/s >= ${TARGET_RATIO}x per-call x402, 8 buyers, POST ${ROUTE}`,
      figure: `${balance.perSecond.toFixed(1)} calls/s (${ratio.toFixed(2)}x)`,
      reference: `${perCall.perSecond.toFixed(1)} calls/s per call`,
      ok: ratio >= TARGET_RATIO,
    });
    reportTarget({
      target: `service's own time per balance-paid call p50 < ${TARGET_OWN_MS} ms`,
      figure: `${ownP50.toFixed(2)} ms (p90 ${percentile(own, 90).toFixed(2)} ms)`,
      reference: "-",
      ok: ownP50 < TARGET_OWN_MS,
    });
  } finally {
    await service.close();
    await store.close();
    await stubs.close();
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchBalance().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
