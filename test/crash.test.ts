/**
 * Killing the service between verify and settle and restarting it loses no ledger row and
 * never settles twice. The service runs as a real child process (`src/server/main.ts`, in
 * production mode against the devnet through an RPC proxy that can hold one call open), is
 * killed with SIGKILL while the paid function is running, and restarted on the same data.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openStore } from "../src/store/store.ts";
import { ledgerRowsOf } from "./support/ledger.ts";
import { freePort, startServiceProcess } from "./support/production-process.ts";
import { authorizationOf, buyerAccount, chainClient, challengeOf, devnet, signPayment, usdcBalance } from "./support/service.ts";
import { forwardRpc, type Stub, startStub } from "./support/stub-server.ts";

const target = `0x${"c7".repeat(32)}`;
let proxy: Stub;
let hold = true;
let reached: () => void = () => {};
const functionReached = new Promise<void>((resolve) => {
  reached = resolve;
});
let dataDir: string;
let child: ChildProcess | undefined;

async function startChild(port: number): Promise<ChildProcess> {
  const d = devnet();
  const started = await startServiceProcess(
    {
      // Production binds sign-ins to its public origin.
      PUBLIC_URL: "https://api.example.test",
      RPC_URL: proxy.url,
      PAY_TO: d.payTo,
      FACILITATOR_PRIVATE_KEY: d.facilitator.privateKey,
      HOST: "127.0.0.1",
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
    },
    90_000,
  );
  return started.proc;
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "x402-crash-"));
  proxy = await startStub(async (_req, res, body) => {
    const calls = (Array.isArray(body) ? body : [body]) as { method: string; params?: unknown[] }[];
    if (hold && calls.some((c) => c.method === "eth_getTransactionReceipt" && c.params?.[0] === target)) {
      reached();
      return; // never answered: the function hangs here until the process is killed
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(await forwardRpc(devnet().rpcUrl, body)));
  });
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await proxy.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it("keeps the pending row across SIGKILL and settles exactly once when the buyer retries", { timeout: 240_000 }, async () => {
  const buyer = buyerAccount(6);
  const before = await usdcBalance(buyer.address);
  const txs = await chainClient().getTransactionCount({ address: devnet().facilitator.address });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api/payment-verify`;
  const body = JSON.stringify({ tx_hash: target });

  child = await startChild(port);
  const header = await signPayment(await challengeOf(url, { method: "POST" }), buyer);
  const doomed = fetch(url, { method: "POST", headers: { "content-type": "application/json", "X-Payment": header }, body }).catch(
    (e: unknown) => e,
  );
  await functionReached;
  child.kill("SIGKILL");
  await new Promise((resolve) => child?.once("exit", resolve));
  expect(await doomed).toBeInstanceOf(Error);
  expect(await usdcBalance(buyer.address)).toBe(before);

  hold = false;
  child = await startChild(port);
  const retry = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "X-Payment": header }, body });
  expect(retry.status).toBe(200);
  const settlement = decodePaymentResponseHeader(retry.headers.get("payment-response") as string);
  expect(settlement.success).toBe(true);
  expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
  expect(await chainClient().getTransactionCount({ address: devnet().facilitator.address })).toBe(txs + 1);

  child.kill("SIGTERM");
  await new Promise((resolve) => child?.once("exit", resolve));
  child = undefined;
  const store = await openStore({ kind: "sqlite", file: path.join(dataDir, "store.sqlite") });
  try {
    const rows = await ledgerRowsOf(store, buyer.address, authorizationOf(header).nonce);
    expect(rows.map((r) => [r.route, r.amount_atomic, r.outcome, r.status, r.reason, r.settlement_tx])).toEqual([
      // The killed attempt's authorisation was still valid: it stayed open until the retry settled it once.
      ["POST /api/payment-verify", "100000", "not_charged", null, "same_payment_settled_once", null],
      ["POST /api/payment-verify", "100000", "settled", 200, null, settlement.transaction],
    ]);
  } finally {
    await store.close();
  }
});
