/**
 * Paid calls per second with 8 buyers on the local chain, side by side with a minimal
 * `@x402/express` seller on the same chain in the same run: the x402 library's own resource
 * server and in-process facilitator (viem wallet client, viem's nonce manager, receipts polled
 * every 20 ms), one priced route answering a small JSON. Both are loaded the same way: 8 buyers
 * (devnet accounts 2-9), each paying one call after another with authorisations signed
 * beforehand, so signing is not counted. Rounds alternate between the two sellers; the table
 * shows each round and the median. Settle times: ours from the service's own step timings,
 * the reference's around its facilitator's settle.
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
import { createWalletClient, http, publicActions, toHex } from "viem";
import { generatePrivateKey, nonceManager, privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { ensureBuild } from "../src/build-stamp.ts";
import { signPayment } from "../src/buyer/sign-payment.ts";
import { loadConfig } from "../src/config.ts";
import { startDevnet } from "../src/devnet/devnet.ts";
import { createLogger } from "../src/log.ts";
import { startService } from "../src/server/service.ts";
import { paidLineSink, percentile } from "./bench-paid.ts";

const QUICK = process.env.BENCH_QUICK === "1";
const BUYERS = 8;
const CALLS_PER_BUYER = Number(process.env.BENCH_SETTLE_CALLS ?? (QUICK ? 12 : 30));
const ROUNDS = Number(process.env.BENCH_SETTLE_ROUNDS ?? (QUICK ? 1 : 3));
const PAID_PATH = "/api/payment-verify";
const BODY = JSON.stringify({ tx_hash: `0x${"ab".repeat(32)}` });
/** What the landed main measured before settlement was reworked (issue figures, same machine class). */
const BEFORE = { callsPerSecond: "9.3–10.9", settleP50: "950–1,050 ms" };

interface Round {
  callsPerSecond: number;
  clientP50: number;
  settle: number[];
}

/** The minimal seller: what the @x402/express quick start looks like with an in-process facilitator on this chain. */
async function startMinimalSeller(
  rpcUrl: string,
  payTo: `0x${string}`,
): Promise<{ url: string; settles: number[]; close(): Promise<void> }> {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key, { nonceManager });
  // Its own gas key, funded with ETH on the devnet.
  await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [account.address, toHex(10n ** 20n)] }),
  });
  const chain = { ...base, rpcUrls: { default: { http: [rpcUrl] } } };
  const wallet = createWalletClient({ account, chain, transport: http(rpcUrl), pollingInterval: 20 }).extend(publicActions);
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, {
    signer: toFacilitatorEvmSigner({ ...wallet, address: account.address } as never),
    networks: "eip155:8453",
  });
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
      { [`POST ${PAID_PATH}`]: { accepts: { scheme: "exact", price: "$0.10", network: "eip155:8453", payTo }, description: "bench" } },
      new x402ResourceServer(client).register("eip155:8453", new ExactEvmScheme()),
    ),
  );
  app.post(PAID_PATH, (_req, res) => {
    res.json({ tx_hash: `0x${"ab".repeat(32)}`, found: false });
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
async function load(baseUrl: string, buyerKeys: `0x${string}`[], calls: number): Promise<{ callsPerSecond: number; client: number[] }> {
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
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`a paid call to ${baseUrl} answered ${res.status}`);
        client.push(performance.now() - t);
      }
    }),
  );
  return { callsPerSecond: (buyerKeys.length * calls) / ((performance.now() - started) / 1000), client };
}

const median = (xs: number[]) => percentile(xs, 50);

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
  const keys = devnet.buyers.slice(0, BUYERS).map((b) => b.privateKey);
  try {
    // Warm-up (JIT, connections, first nonce reads) of both.
    await load(minimal.url, keys, 2);
    await load(service.url, keys, 2);
    const ours: Round[] = [];
    const theirs: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      minimal.settles.length = 0;
      const ref = await load(minimal.url, keys, CALLS_PER_BUYER);
      theirs.push({ callsPerSecond: ref.callsPerSecond, clientP50: median(ref.client), settle: [...minimal.settles] });
      lines.length = 0;
      const own = await load(service.url, keys, CALLS_PER_BUYER);
      await new Promise((resolve) => setTimeout(resolve, 50)); // the last log lines
      const settle = lines.filter((l) => l.msg === "paid call").map((l) => l.settle as number);
      ours.push({ callsPerSecond: own.callsPerSecond, clientP50: median(own.client), settle });
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
      };
    }
    const oursRate = median(ours.map((r) => r.callsPerSecond));
    const refRate = median(theirs.map((r) => r.callsPerSecond));
    const oursSettle = median(ours.flatMap((r) => r.settle));
    const refSettle = median(theirs.flatMap((r) => r.settle));
    console.log(
      `\nPaid POST ${PAID_PATH}, ${BUYERS} buyers x ${CALLS_PER_BUYER} calls, local chain, ${ROUNDS} alternating round(s); ` +
        "reference: minimal @x402/express seller, in-process x402 facilitator (viem, receipts polled every 20 ms)",
    );
    console.table(rows);
    console.log(
      `paid calls/s (median): ours ${fmt(oursRate)} vs minimal seller ${fmt(refRate)} = ${((100 * oursRate) / refRate).toFixed(0)}% (target >= 90%; ` +
        `before this change: ${BEFORE.callsPerSecond} calls/s, so >= 5x means >= ~50)`,
    );
    console.log(
      `settle p50: ours ${fmt(oursSettle)} ms vs minimal seller ${fmt(refSettle)} ms (target < 100 ms; before this change: ${BEFORE.settleP50})`,
    );
  } finally {
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
