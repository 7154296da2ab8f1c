import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodePaymentResponseHeader, decodePaymentSignatureHeader } from "@x402/core/http";
import { eip3009ABI } from "@x402/evm";
import { type Hex, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { base } from "../src/networks/base.ts";
import { apiGroup, instanceLabel } from "../src/operations/status-feed.ts";
import { openStore, type Store } from "../src/store/store.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
import { freshDatabase } from "./support/postgres.ts";
import { freePort, type ServiceProcess, startServiceProcess } from "./support/production-process.ts";
import { chainClient, challengeOf, devnet, signPayment, usdcBalance } from "./support/service.ts";

const databaseUrl = inject("databaseUrl");
const HEARTBEAT_MS = 400;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Wait until `check` holds, failing after `timeoutMs`. */
async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

interface Child extends ServiceProcess {
  url: string;
}

/** The service as a production process on `dbUrl`, settling with `gasKey`; resolves once it serves. */
async function startChild(dbUrl: string, gasKey: Hex, dataDir: string): Promise<Child> {
  const port = await freePort();
  const d = devnet();
  const started = await startServiceProcess(
    {
      RPC_URL: d.rpcUrl,
      PAY_TO: d.payTo,
      FACILITATOR_PRIVATE_KEY: gasKey,
      DATABASE_URL: dbUrl,
      HOST: "127.0.0.1",
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      INSTANCE_HEARTBEAT_MS: String(HEARTBEAT_MS),
    },
    120_000,
  );
  return { ...started, url: `http://127.0.0.1:${port}` };
}

const TX = (i: number) => `0x${i.toString(16).padStart(64, "0")}`;

function paidCall(url: string, header: string, i: number) {
  return fetch(`${url}/api/payment-verify`, {
    method: "POST",
    headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": header },
    body: JSON.stringify({ tx_hash: TX(i) }),
  });
}

async function used(header: string): Promise<boolean> {
  const { payload } = decodePaymentSignatureHeader(header) as unknown as { payload: { authorization: { from: Hex; nonce: Hex } } };
  return chainClient().readContract({
    address: base.usdc.address,
    abi: eip3009ABI,
    functionName: "authorizationState",
    args: [payload.authorization.from, payload.authorization.nonce],
  });
}

describe.runIf(databaseUrl)("a paused instance whose settlement key another instance took over", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let store: Store;
  let dataDir: string;
  const children: Child[] = [];
  const gasKey = generatePrivateKey();
  const gas = privateKeyToAccount(gasKey).address;

  beforeAll(async () => {
    db = await freshDatabase(databaseUrl as string);
    store = await openStore({ kind: "postgres", url: db.url });
    dataDir = mkdtempSync(path.join(tmpdir(), "x402-settler-"));
    // A gas key of its own, so that no other test's settlements share its nonces.
    await chainClient().request({ method: "anvil_setBalance" as never, params: [gas, `0x${parseEther("10").toString(16)}`] as never });
  }, 30_000);
  afterAll(async () => {
    for (const c of children) {
      c.proc.kill("SIGCONT");
      c.proc.kill("SIGKILL");
    }
    await store?.close();
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("stops settling after SIGCONT, before its next settlement, and says so; the other instance settles", {
    timeout: 300_000,
  }, async () => {
    const buyer = await freshBuyer(3n * 100_000n);
    const c = await startChild(db.url, gasKey, path.join(dataDir, "c"));
    children.push(c);
    const challenge = await challengeOf(`${c.url}/api/payment-verify`, { method: "POST" });

    // C settles while it is the only settler.
    const first = await signPayment(challenge, buyer);
    const settled = await paidCall(c.url, first, 1);
    expect(settled.status).toBe(200);
    const receipt = await chainClient().getTransactionReceipt({
      hash: decodePaymentResponseHeader(settled.headers.get("payment-response") as string).transaction as Hex,
    });
    expect(receipt.from.toLowerCase()).toBe(gas.toLowerCase());

    // Paused: its heartbeat stands still, and D, started during the pause, takes the key over.
    c.proc.kill("SIGSTOP");
    const d = await startChild(db.url, gasKey, path.join(dataDir, "d"));
    children.push(d);
    expect(d.output()).toContain("watching its heartbeat before starting");
    await sleep(3 * HEARTBEAT_MS);
    c.proc.kill("SIGCONT");

    // C's first paid call after the pause: refused before sending, never charged.
    const second = await signPayment(challenge, buyer);
    const refused = await paidCall(c.url, second, 2);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { code: string; details: unknown } }).error).toMatchObject({
      code: "settlement_failed",
      details: { reason: "settlement_stopped" },
    });
    expect(await used(second)).toBe(false);
    // The log line is written when C refuses; the pipe may deliver it a moment after the answer.
    await until(() => c.output().includes("this instance stops settling"), 10_000);

    // And later ones too, after C's heartbeat runs again.
    await sleep(3 * HEARTBEAT_MS);
    const third = await signPayment(challenge, buyer);
    expect((await paidCall(c.url, third, 3)).status).toBe(402);
    expect(await used(third)).toBe(false);

    // D settles the payment C refused, with the same key.
    const atD = await paidCall(d.url, second, 2);
    expect(atD.status).toBe(200);
    const dReceipt = await chainClient().getTransactionReceipt({
      hash: decodePaymentResponseHeader(atD.headers.get("payment-response") as string).transaction as Hex,
    });
    expect(dReceipt.from.toLowerCase()).toBe(gas.toLowerCase());
    expect(await used(second)).toBe(true);
    expect(d.output()).not.toContain("this instance stops settling");
    // Two payments of 0.10 settled in all (C's first, and the one C refused, at D); the third never.
    expect(await usdcBalance(buyer.address)).toBe(100_000n);

    // The status feed: C is live and degraded, named as stopped settling; D is operational.
    const rows = await store.query<{ id: string; started_at: Date }>("select id, started_at from instances order by started_at");
    expect(rows.length).toBe(2);
    const [older, newer] = rows as unknown as [{ id: string }, { id: string }];
    const group = await apiGroup(store, new Date());
    const checkOf = (id: string) => group.checks.find((ch) => ch.name === instanceLabel(id));
    expect(checkOf(older.id)).toMatchObject({ status: "degraded" });
    expect(checkOf(older.id)?.detail).toContain(`stopped settling: ${instanceLabel(newer.id)} settles with the same key`);
    expect(checkOf(newer.id)).toMatchObject({ status: "operational" });
  });
});
