/**
 * A graceful stop of the real `npm start` entry point (src/server/main.ts, production mode on
 * the test devnet, its own embedded database): SIGTERM during 20 concurrent paid calls stops
 * new connections at once, and every call still settles and answers; the ledger is left with
 * 20 settled rows and none pending. A second signal exits at once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstreamStubs, type UpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { openStore } from "../src/store/store.ts";
import { startDirectoryStub } from "./support/operations.ts";
import { buyerAccount, challengeOf, devnet, signPayment, usdcBalance } from "./support/service.ts";
import type { Stub } from "./support/stub-server.ts";

const root = path.resolve(import.meta.dirname, "..");
const PRICE = 100_000n; // defi-sentiment: 0.10 USDC
/** How long the Hyperliquid stand-in takes to answer: the window in which the calls are in flight. */
const SLOW_MS = 2_500;

interface Child {
  process: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Start `node src/server/main.ts` as `npm start` does (or `npm start` itself, in a process group
 * of its own so that whatever it leaves behind can be killed), in production mode against the
 * test devnet.
 */
async function startChild(dataDir: string, stubs: UpstreamStubs, directories: Stub, through: "node" | "npm" = "node"): Promise<Child> {
  const d = devnet();
  const [command, args] = through === "npm" ? ["npm", ["start", "--silent"]] : [process.execPath, ["src/server/main.ts"]];
  const child = spawn(command, args, {
    cwd: root,
    detached: through === "npm",
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      // Production binds sign-ins to its public origin.
      PUBLIC_URL: "https://api.example.test",
      RPC_URL: d.rpcUrl,
      PAY_TO: d.payTo,
      FACILITATOR_PRIVATE_KEY: d.facilitator.privateKey,
      HOST: "127.0.0.1",
      PORT: "0",
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      DEXSCREENER_URL: stubs.urls.dexscreener,
      DEFILLAMA_URL: stubs.urls.defillama,
      DEFILLAMA_COINS_URL: stubs.urls.defillamaCoins,
      HYPERLIQUID_URL: stubs.urls.hyperliquid,
      CDP_DISCOVERY_URL: `${directories.url}/cdp`,
      X402_LIST_URL: `${directories.url}/x402-list`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  for (let i = 0; i < 300; i++) {
    const url = /Service\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    if (url) return { process: child, url, output: () => output, exited };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`the service did not start:\n${output}`);
}

/** Resolves once the Hyperliquid stand-in has received more than `count` requests. */
async function hyperliquidRequestsAbove(stubs: UpstreamStubs, count: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (stubs.requests.filter((r) => r.upstream === "hyperliquid").length > count) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("no call reached the Hyperliquid stand-in");
}

describe("SIGTERM to npm start", () => {
  let stubs: UpstreamStubs;
  let directories: Stub;
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    stubs = await startUpstreamStubs({ slowMs: SLOW_MS, faults: { hyperliquid: "slow" } });
    directories = await startDirectoryStub();
  });
  const groups: number[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    for (const group of groups) {
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // The group is gone: nothing was left behind.
      }
    }
    await stubs?.close();
    await directories?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const fresh = () => {
    const dir = mkdtempSync(path.join(tmpdir(), "x402-shutdown-"));
    dirs.push(dir);
    return dir;
  };

  it("during 20 concurrent paid calls: no new connection is accepted, all 20 settle and answer, none is left pending", async () => {
    const dataDir = fresh();
    const child = await startChild(dataDir, stubs, directories);
    children.push(child.process);
    // The status document probes Hyperliquid at start; wait for that probe to be answered first.
    await hyperliquidRequestsAbove(stubs, 0);
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS + 200));
    const buyers = [0, 1, 2, 3].map(buyerAccount);
    const before = await Promise.all(buyers.map((b) => usdcBalance(b.address)));
    const payToBefore = await usdcBalance(devnet().payTo);
    const url = `${child.url}/api/defi-sentiment`;
    const challenge = await challengeOf(url, { method: "POST" });
    const headers = await Promise.all(Array.from({ length: 20 }, (_, i) => signPayment(challenge, buyers[i % 4] as (typeof buyers)[0])));
    const seen = stubs.requests.filter((r) => r.upstream === "hyperliquid").length;
    const calls = headers.map((header) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "payment-signature": header },
        body: JSON.stringify({ asset: "ETH" }),
      }).then(async (res) => ({ status: res.status, paid: res.headers.get("payment-response"), body: await res.text() })),
    );
    // Every call has verified its payment and waits on the slow upstream when the signal arrives.
    await hyperliquidRequestsAbove(stubs, seen);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const signalled = Date.now();
    child.process.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await fetch(`${child.url}/api/health`).then(
      (res) => `answered ${res.status}`,
      (error: Error) => (error.cause as { code?: string } | undefined)?.code ?? error.message,
    );
    expect(refused).toBe("ECONNREFUSED");

    const answers = await Promise.all(calls);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    for (const a of answers) expect(a.paid).toBeTruthy();
    expect(await child.exited).toBe(0);
    // The calls waited for the upstream, then settled; the stop waited for them, not for its 30 s limit.
    expect(Date.now() - signalled).toBeLessThan(15_000);
    expect(child.output()).toContain('"msg":"stopping: no new connections; calls in flight get up to 30 s to finish"');
    expect(child.output()).not.toContain("stopped with calls still in flight");

    const after = await Promise.all(buyers.map((b) => usdcBalance(b.address)));
    expect(after.map((a, i) => (before[i] as bigint) - a)).toEqual([5n * PRICE, 5n * PRICE, 5n * PRICE, 5n * PRICE]);
    expect((await usdcBalance(devnet().payTo)) - payToBefore).toBe(20n * PRICE);

    const store = await openStore({ kind: "sqlite", file: path.join(dataDir, "store.sqlite") });
    try {
      const rows = await store.query<{ outcome: string; n: number }>(
        "select outcome, cast(count(*) as integer) as n from ledger group by outcome order by outcome",
      );
      expect(rows).toEqual([{ outcome: "settled", n: 20 }]);
      // The instance removed its heartbeat on the way out.
      expect(await store.query("select id from instances")).toEqual([]);
    } finally {
      await store.close();
    }
  }, 90_000);

  it("sent to the npm process itself, reaches the service: it stops gracefully and nothing is left running", async () => {
    // What a supervisor or a shell's `kill <pid of npm start>` does. Through a shell that stayed
    // between npm and node, npm passed the signal to the shell only, and the service ran on.
    const child = await startChild(fresh(), stubs, directories, "npm");
    groups.push(child.process.pid as number);
    await fetch(`${child.url}/api/health`).then((res) => expect(res.status).toBe(200));
    child.process.kill("SIGTERM");
    await child.exited;
    expect(child.output()).toContain('"msg":"stopped"');
    const after = await fetch(`${child.url}/api/health`).then(
      (res) => `answered ${res.status}`,
      (error: Error) => (error.cause as { code?: string } | undefined)?.code ?? error.message,
    );
    expect(after).toBe("ECONNREFUSED");
  }, 60_000);

  it("exits at once on a second signal, without waiting for calls in flight", async () => {
    const child = await startChild(fresh(), stubs, directories);
    children.push(child.process);
    await hyperliquidRequestsAbove(stubs, 0);
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS + 200));
    const url = `${child.url}/api/defi-sentiment`;
    const header = await signPayment(await challengeOf(url, { method: "POST" }), buyerAccount(4));
    const seen = stubs.requests.filter((r) => r.upstream === "hyperliquid").length;
    // A paid call waiting on the slow upstream is in flight.
    const pending = fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "payment-signature": header },
      body: JSON.stringify({ asset: "ETH" }),
    }).catch(() => null);
    await hyperliquidRequestsAbove(stubs, seen);
    const signalled = Date.now();
    child.process.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 100));
    child.process.kill("SIGTERM");
    expect(await child.exited).toBe(130);
    expect(Date.now() - signalled).toBeLessThan(SLOW_MS);
    expect(child.output()).toContain('"msg":"second signal: exiting at once"');
    // The connection died with the process: the call got no answer (and its payment was never settled).
    expect(await pending).toBeNull();
  }, 60_000);
});
