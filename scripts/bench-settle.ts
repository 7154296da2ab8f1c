/**
 * Paid calls per second with 8 buyers on the local chain, side by side with a minimal
 * `@x402/express` seller on the same chain in the same run: the x402 library's own resource
 * server and in-process facilitator (viem wallet client, viem's nonce manager, receipts polled
 * every 20 ms), one priced route answering a small JSON after the same two chain reads as ours.
 * Both are loaded the same way: 8 buyers (devnet accounts 2-9), each paying one call after
 * another with authorisations signed beforehand, so signing is not counted. Rounds alternate
 * between the two sellers; the table shows each round and the median. Settle times: ours from
 * the service's own step timings, the reference's around its facilitator's settle. A third row
 * runs the same service with the facilitator as it was built before settlement was reworked (viem's process-wide nonce manager,
 * receipts waited for at viem's default pace for Base), once, as the "before" of the same run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { x402Facilitator } from "@x402/core/facilitator";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { SupportedResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import express from "express";
import {
  createPublicClient,
  createWalletClient,
  http,
  isAddressEqual,
  publicActions,
  recoverTypedDataAddress,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  toHex,
} from "viem";
import { generatePrivateKey, nonceManager, privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { ensureBuild } from "../src/build-stamp.ts";
import { rpcTransport } from "../src/chain/client.ts";
import { loadConfig } from "../src/config.ts";
import { startDevnet } from "../src/local/devnet/devnet.ts";
import { createLogger } from "../src/log.ts";
import { base as baseNetwork } from "../src/networks/base.ts";
import { startService } from "../src/server/service.ts";
import { openStore } from "../src/store/store.ts";
import { paidLineSink, percentile } from "./bench-paid.ts";
import { reportTarget } from "./bench-report.ts";
import { signPayment } from "./buyer/sign-payment.ts";

const QUICK = process.env.BENCH_QUICK === "1";
const BUYERS = 8;
const CALLS_PER_BUYER = Number(process.env.BENCH_SETTLE_CALLS ?? (QUICK ? 12 : 30));
const ROUNDS = Number(process.env.BENCH_SETTLE_ROUNDS ?? (QUICK ? 1 : 3));
const PAID_PATH = "/api/payment-verify";
const BODY = JSON.stringify({ tx_hash: `0x${"ab".repeat(32)}` });
const BEFORE_CALLS_PER_BUYER = QUICK ? 6 : 12;
/**
 * The issue's "today": paid calls/s with 8 buyers on the service as it was, median of its three
 * runs (9.3 / 10.5 / 10.9), measured in another run under another load. The in-run "before"
 * row does not reproduce its one-second settlements (viem now reads a receipt once before it
 * starts polling), so both are printed.
 */
const ISSUE_TODAY = 10.5;

interface Round {
  callsPerSecond: number;
  clientP50: number;
  settle: number[];
}

/**
 * A new gas key with ETH on the devnet, so no two facilitators of the bench share a key. Its
 * nonce starts at 1, as any key that has sent a transaction: viem's nonce manager cannot tell a
 * remembered nonce 0 from none and hands nonce 0 out twice to settlements racing at the start.
 */
async function fundedKey(rpcUrl: string): Promise<`0x${string}`> {
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  for (const [method, params] of [
    ["anvil_setBalance", [address, toHex(10n ** 20n)]],
    ["anvil_setNonce", [address, "0x1"]],
  ] as const) {
    await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
  }
  return key;
}

/** An in-process x402 facilitator as the library's examples build it, on a viem wallet client polling every `pollingInterval` ms. */
function libraryFacilitator(key: `0x${string}`, rpcUrl: string, pollingInterval: number): x402Facilitator {
  const account = privateKeyToAccount(key, { nonceManager });
  const chain = { ...base, rpcUrls: { default: { http: [rpcUrl] } } };
  const wallet = createWalletClient({ account, chain, transport: http(rpcUrl), pollingInterval }).extend(publicActions);
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, {
    signer: toFacilitatorEvmSigner({ ...wallet, address: account.address } as never),
    networks: baseNetwork.id,
  });
  return facilitator;
}

/**
 * The facilitator as the service built it before: viem's process-wide nonce manager and
 * `waitForTransactionReceipt` at the client's default polling for Base (one second).
 */
function previousFacilitator(key: `0x${string}`, rpcUrl: string): FacilitatorClient {
  const account = privateKeyToAccount(key, { nonceManager });
  const wallet = createWalletClient({ account, chain: baseNetwork.chainAt([rpcUrl]), transport: rpcTransport([rpcUrl]) }).extend(
    publicActions,
  );
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => wallet.readContract(args as never),
    verifyTypedData: async (args) => {
      const { address, ...typed } = args as { address: `0x${string}` } & Parameters<typeof recoverTypedDataAddress>[0];
      const recovered = await recoverTypedDataAddress(typed).catch(() => null);
      return recovered !== null && isAddressEqual(recovered, address) ? true : wallet.verifyTypedData(args as never);
    },
    writeContract: (args) => wallet.writeContract(args as never),
    sendTransaction: (args) => wallet.sendTransaction(args as never),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
    getCode: (args) => wallet.getCode(args),
  });
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, { signer, networks: baseNetwork.id });
  return {
    verify: (p, r) => facilitator.verify(p, r),
    settle: (p, r) => facilitator.settle(p, r),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

/**
 * The minimal seller: what the @x402/express quick start looks like with an in-process
 * facilitator on this chain, selling the same answer: its handler reads the chain as the
 * service's route does for an unknown hash (the receipt, then the transaction), with viem's
 * default client, so the ratio compares the payment paths, not a chain read against none.
 */
async function startMinimalSeller(
  rpcUrl: string,
  payTo: `0x${string}`,
): Promise<{ url: string; settles: number[]; close(): Promise<void> }> {
  const facilitator = libraryFacilitator(await fundedKey(rpcUrl), rpcUrl, 20);
  const settles: number[] = [];
  const client: FacilitatorClient = {
    verify: (p, r) => facilitator.verify(p, r),
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
      { [`POST ${PAID_PATH}`]: { accepts: { scheme: "exact", price: "$0.10", network: baseNetwork.id, payTo }, description: "bench" } },
      new x402ResourceServer(client).register(baseNetwork.id, new ExactEvmScheme()),
    ),
  );
  const chain = createPublicClient({ chain: { ...base, rpcUrls: { default: { http: [rpcUrl] } } }, transport: http(rpcUrl) });
  const hash = `0x${"ab".repeat(32)}` as const;
  app.post(PAID_PATH, async (_req, res) => {
    const absent = (kind: abstract new (...args: never[]) => Error) => (error: unknown) => {
      if (error instanceof kind) return null;
      throw error;
    };
    const found =
      (await chain.getTransactionReceipt({ hash }).catch(absent(TransactionReceiptNotFoundError))) ??
      (await chain.getTransaction({ hash }).catch(absent(TransactionNotFoundError)));
    res.json({ tx_hash: hash, found: found !== null });
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    settles,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** 8 buyers, each paying `calls` calls one after another; returns calls per second and client latencies. */
async function load(
  baseUrl: string,
  buyerKeys: `0x${string}`[],
  calls: number,
  rpcUrl: string,
): Promise<{ callsPerSecond: number; client: number[] }> {
  const challengeRes = await fetch(`${baseUrl}${PAID_PATH}`, { method: "POST" });
  const challenge = decodePaymentRequiredHeader(challengeRes.headers.get("payment-required") as string);
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 600);
  const headers = await Promise.all(
    buyerKeys.map(async (key) => {
      const account = privateKeyToAccount(key);
      const out: string[] = [];
      for (let i = 0; i < calls; i++) out.push(await signPayment(challenge, account, { validBefore }));
      return out;
    }),
  );
  const client: number[] = [];
  const started = performance.now();
  await Promise.all(
    headers.map(async (own) => {
      for (const header of own) {
        const t = performance.now();
        const res = await fetch(`${baseUrl}${PAID_PATH}`, {
          method: "POST",
          headers: { "content-type": "application/json", "payment-signature": header },
          body: BODY,
          signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        }).catch(async (error: unknown) => {
          if (!(error instanceof DOMException && error.name === "TimeoutError")) throw error;
          const pool = await fetch(rpcUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "txpool_status", params: [] }),
          }).then((r) => r.json() as Promise<{ result?: { pending: string; queued: string } }>);
          throw new Error(
            `a paid call to ${baseUrl} had no answer after ${CALL_TIMEOUT_MS / 1000} s; anvil's pool: ${JSON.stringify(pool.result)} ` +
              "(transactions left queued by anvil after arriving out of nonce order strand the minimal seller's facilitator; run the part again)",
          );
        });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`a paid call to ${baseUrl} answered ${res.status}: ${text}`);
        client.push(performance.now() - t);
      }
    }),
  );
  return { callsPerSecond: (buyerKeys.length * calls) / ((performance.now() - started) / 1000), client };
}

const median = (xs: number[]) => percentile(xs, 50);

/**
 * A paid call still unanswered after this long ends the part with a reason instead of a hang.
 * Anvil now and then strands a sender's transactions in its queue when they arrive out of nonce
 * order (they stay "queued" though the next is due, a block mined or not); the minimal seller's
 * stock facilitator then waits for a receipt for viem's three minutes. The service's sender
 * reports a stuck nonce within seconds (src/payments/settlement-sender.ts).
 */
const CALL_TIMEOUT_MS = 30_000;

/** Run the paid-throughput benchmark and print its table. */
export async function benchSettle(): Promise<void> {
  await ensureBuild();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-bench-settle-"));
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const lines: Record<string, unknown>[] = [];
  const service = await startService({
    config: loadConfig({ PORT: "0", LOG_LEVEL: "info", DATA_DIR: dataDir }),
    devnet,
    log: createLogger("info", {}, paidLineSink(lines)),
    maintenance: false,
  });
  const minimal = await startMinimalSeller(devnet.rpcUrl, devnet.payTo);
  const beforeLines: Record<string, unknown>[] = [];
  const previous = await startService({
    config: loadConfig({ PORT: "0", LOG_LEVEL: "info", DATA_DIR: dataDir }),
    devnet,
    store: service.services.store,
    facilitator: previousFacilitator(await fundedKey(devnet.rpcUrl), devnet.rpcUrl),
    log: createLogger("info", {}, paidLineSink(beforeLines)),
    maintenance: false,
  });
  // The same service on PostgreSQL when one is at hand (npm run bench starts one): the embedded
  // database's share of the cost of a paid call.
  const pgUrl = process.env.TEST_DATABASE_URL;
  const pgLines: Record<string, unknown>[] = [];
  const pgStore = pgUrl ? await openStore({ kind: "postgres", url: pgUrl }) : undefined;
  const onPostgres = pgStore
    ? await startService({
        config: loadConfig({ PORT: "0", LOG_LEVEL: "info", DATA_DIR: dataDir }),
        devnet,
        store: pgStore,
        log: createLogger("info", {}, paidLineSink(pgLines)),
        maintenance: false,
      })
    : undefined;
  const keys = devnet.buyers.slice(0, BUYERS).map((b) => b.privateKey);
  try {
    // Warm-up (JIT, connections, first nonce reads) of both.
    await load(minimal.url, keys, 2, devnet.rpcUrl);
    await load(service.url, keys, 2, devnet.rpcUrl);
    await load(previous.url, keys, 1, devnet.rpcUrl);
    if (onPostgres) await load(onPostgres.url, keys, 2, devnet.rpcUrl);
    beforeLines.length = 0;
    const before = await load(previous.url, keys, BEFORE_CALLS_PER_BUYER, devnet.rpcUrl);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const beforeSettles = beforeLines.filter((l) => l.msg === "paid call").map((l) => l.settle as number);
    const beforeSettle = median(beforeSettles);
    const ours: Round[] = [];
    const theirs: Round[] = [];
    const pg: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      minimal.settles.length = 0;
      const ref = await load(minimal.url, keys, CALLS_PER_BUYER, devnet.rpcUrl);
      theirs.push({ callsPerSecond: ref.callsPerSecond, clientP50: median(ref.client), settle: [...minimal.settles] });
      lines.length = 0;
      const own = await load(service.url, keys, CALLS_PER_BUYER, devnet.rpcUrl);
      await new Promise((resolve) => setTimeout(resolve, 50)); // the last log lines
      const settle = lines.filter((l) => l.msg === "paid call").map((l) => l.settle as number);
      ours.push({ callsPerSecond: own.callsPerSecond, clientP50: median(own.client), settle });
      if (onPostgres) {
        pgLines.length = 0;
        const onPg = await load(onPostgres.url, keys, CALLS_PER_BUYER, devnet.rpcUrl);
        await new Promise((resolve) => setTimeout(resolve, 50));
        const pgSettle = pgLines.filter((l) => l.msg === "paid call").map((l) => l.settle as number);
        pg.push({ callsPerSecond: onPg.callsPerSecond, clientP50: median(onPg.client), settle: pgSettle });
      }
    }
    const fmt = (n: number) => +n.toFixed(1);
    const rows: Record<string, Record<string, number | string>> = {};
    for (let i = 0; i < ROUNDS; i++) {
      const o = ours[i] as Round;
      const t = theirs[i] as Round;
      rows[`round ${i + 1}`] = {
        "ours calls/s": fmt(o.callsPerSecond),
        "minimal seller calls/s": fmt(t.callsPerSecond),
        "ours / minimal": `${((100 * o.callsPerSecond) / t.callsPerSecond).toFixed(0)}%`,
        "ours settle p50 ms": fmt(median(o.settle)),
        "minimal settle p50 ms": fmt(median(t.settle)),
        "ours client p50 ms": fmt(o.clientP50),
        "minimal client p50 ms": fmt(t.clientP50),
        ...(pg[i] ? { "ours on PostgreSQL calls/s": fmt((pg[i] as Round).callsPerSecond) } : {}),
      };
    }
    const oursRate = median(ours.map((r) => r.callsPerSecond));
    const refRate = median(theirs.map((r) => r.callsPerSecond));
    // The target is the median of the rounds' own ratios (steadier on a shared machine than a ratio of medians).
    const ratios = ours.map((o, i) => o.callsPerSecond / (theirs[i] as Round).callsPerSecond);
    const ratio = median(ratios);
    const range = `rounds ${ratios.map((r) => (100 * r).toFixed(0)).join(", ")}%`;
    const oursSettle = median(ours.flatMap((r) => r.settle));
    const refSettle = median(theirs.flatMap((r) => r.settle));
    console.log(
      `\nPaid POST ${PAID_PATH}, ${BUYERS} buyers x ${CALLS_PER_BUYER} calls, local chain, ${ROUNDS} alternating round(s); ` +
        "reference: minimal @x402/express seller, in-process x402 facilitator (viem, receipts polled every 20 ms)",
    );
    console.table(rows);
    console.table({
      [`before (previous facilitator), ${BUYERS} buyers x ${BEFORE_CALLS_PER_BUYER} calls`]: {
        "calls/s": fmt(before.callsPerSecond),
        "settle p50 ms": fmt(beforeSettle),
        "settle p90 ms": fmt(percentile(beforeSettles, 90)),
        "client p50 ms": fmt(median(before.client)),
      },
    });
    console.log(
      `paid calls/s (median): ours ${fmt(oursRate)} vs minimal seller ${fmt(refRate)}; median of the rounds' ratios ${(100 * ratio).toFixed(0)}% (target >= 90%); ` +
        `vs before (same run) ${fmt(before.callsPerSecond)} = ${(oursRate / before.callsPerSecond).toFixed(1)}x; ` +
        `vs the issue's "today" ${ISSUE_TODAY} = ${(oursRate / ISSUE_TODAY).toFixed(1)}x (target >= 5x; another run, another load)`,
    );
    reportTarget({
      target: "paid calls/s with 8 buyers >= 90% of a minimal @x402/express seller",
      figure: `${fmt(oursRate)} calls/s = ${(100 * ratio).toFixed(0)}% (${range})`,
      reference: `minimal seller ${fmt(refRate)} calls/s`,
      ok: ratio >= 0.9,
    });
    reportTarget({
      target: `paid calls/s >= 5x the issue's ${ISSUE_TODAY} (another run, another load)`,
      figure: `${(oursRate / ISSUE_TODAY).toFixed(1)}x`,
      reference: `before (previous facilitator) ${fmt(before.callsPerSecond)} calls/s`,
      ok: oursRate >= 5 * ISSUE_TODAY,
    });
    if (pg.length > 0) {
      const pgRate = median(pg.map((r) => r.callsPerSecond));
      console.log(
        `on PostgreSQL instead of the embedded database: ${fmt(pgRate)} calls/s = ${((100 * pgRate) / refRate).toFixed(0)}% of the minimal seller`,
      );
    }
    console.log(
      `settle p50: ours ${fmt(oursSettle)} ms vs minimal seller ${fmt(refSettle)} ms, before ${fmt(beforeSettle)} ms (target < 100 ms)`,
    );
    reportTarget({
      target: "settle p50 < 100 ms",
      figure: `${fmt(oursSettle)} ms`,
      reference: `minimal seller ${fmt(refSettle)} ms`,
      ok: oursSettle < 100,
    });
  } finally {
    await onPostgres?.close();
    await pgStore?.close();
    await previous.close();
    await minimal.close();
    await service.close();
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchSettle().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
