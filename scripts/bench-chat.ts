/**
 * `npm run bench -- chat`: chat messages per second paid from a prepaid balance (a signed-in
 * debit, no settlement) against the same messages paid per call with x402 (a transfer each),
 * side by side on the local chain with 8 clients, and the time the Sign-In-With-X check adds
 * (parse, origin and age, EIP-191 signature, single-use nonce), p50.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { ensureBuild } from "../src/build-stamp.ts";
import { loadConfig } from "../src/config.ts";
import { startDevnet } from "../src/local/devnet/devnet.ts";
import { startUpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";
import { createLogger } from "../src/log.ts";
import { DEFAULT_NETWORK } from "../src/networks/index.ts";
import { checkSignIn, isRefusal, useSignIn } from "../src/payments/sign-in.ts";
import { startService } from "../src/server/service.ts";
import { openStore } from "../src/store/store.ts";
import { percentile } from "./bench-paid.ts";
import { reportTarget } from "./bench-report.ts";
import { signInHeader } from "./buyer/sign-in.ts";

const MESSAGES = Number(process.env.BENCH_CHAT_MESSAGES ?? (process.env.BENCH_QUICK === "1" ? 24 : 80));
const CLIENTS = 8;
const QUESTION = "What is WETH at?";

type Account = ReturnType<typeof privateKeyToAccount>;

/** A paying fetch without x402's default $1 cap per payment (a top-up is larger). */
function payingFetch(account: Account): typeof fetch {
  const client = new x402Client().setSpendControls({ maxAmountPerPayment: false });
  registerExactEvmScheme(client, { signer: account });
  return wrapFetchWithPayment(fetch, client) as typeof fetch;
}

/** Messages per second for `send` run MESSAGES times by CLIENTS clients at once. */
async function throughput(send: () => Promise<Response>): Promise<number> {
  let left = MESSAGES;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (left-- > 0) {
        const res = await send();
        const text = await res.text();
        if (res.status !== 200) {
          const required = res.headers.get("payment-required");
          const reason = required ? (JSON.parse(Buffer.from(required, "base64").toString()) as { error?: string }).error : undefined;
          throw new Error(`a chat message answered ${res.status}: ${text.slice(0, 300)}${reason ? ` (${reason})` : ""}`);
        }
      }
    }),
  );
  return MESSAGES / ((performance.now() - started) / 1000);
}

export async function benchChat(): Promise<void> {
  await ensureBuild();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-bench-chat-"));
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const stubs = await startUpstreamStubs();
  const store = await openStore({ kind: "sqlite", file: path.join(dataDir, "store.sqlite") });
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
  const service = await startService({ config: loadConfig(env), devnet, store, maintenance: false, log: createLogger("silent") });
  try {
    const [first, second] = devnet.buyers as { privateKey: `0x${string}` }[];
    const fromBalance = privateKeyToAccount((first as { privateKey: `0x${string}` }).privateKey);
    const perCall = privateKeyToAccount((second as { privateKey: `0x${string}` }).privateKey);
    const chatUrl = `${service.url}/api/chat`;
    const topUp = await payingFetch(fromBalance)(`${service.url}/api/balance/topup?amount=100`, { method: "POST" });
    if (topUp.status !== 200) throw new Error(`the top-up answered ${topUp.status}`);

    // Sign-ins are made before the clock starts: a client signs once per message either way.
    const headers = await Promise.all(Array.from({ length: MESSAGES }, () => signInHeader(fromBalance, chatUrl)));
    const balanceBody = JSON.stringify({ message: QUESTION, user_id: fromBalance.address });
    const balanceRate = await throughput(() =>
      fetch(chatUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "SIGN-IN-WITH-X": headers.pop() as string },
        body: balanceBody,
      }),
    );
    const pay = payingFetch(perCall);
    const perCallRate = await throughput(() =>
      pay(chatUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: QUESTION }) }),
    );

    const checks: number[] = [];
    for (let i = 0; i < 200; i++) {
      const header = await signInHeader(fromBalance, chatUrl);
      const started = performance.now();
      const signed = await checkSignIn(header, { origin: service.url, chains: [DEFAULT_NETWORK.id], path: "/api/chat" });
      if (isRefusal(signed) || !(await useSignIn(store, signed))) throw new Error("sign-in refused");
      checks.push(performance.now() - started);
    }
    console.log(`\nChat: ${MESSAGES} messages by ${CLIENTS} clients on the local chain, SQLite`);
    console.table({
      "from a prepaid balance (signed in, no transfer)": { "messages/s": +balanceRate.toFixed(1) },
      "per call with x402 (a transfer each)": { "messages/s": +perCallRate.toFixed(1) },
    });
    reportTarget({
      target: "- (chat paid from a prepaid balance)",
      figure: `${balanceRate.toFixed(1)} messages/s = ${(balanceRate / perCallRate).toFixed(2)}x; sign-in check p50 ${percentile(checks, 50).toFixed(2)} ms`,
      reference: `per call with x402 ${perCallRate.toFixed(1)} messages/s`,
      ok: null,
    });
    console.log(
      `balance / per call: ${(balanceRate / perCallRate).toFixed(2)}x; Sign-In-With-X check p50 ${percentile(checks, 50).toFixed(2)} ms, p90 ${percentile(checks, 90).toFixed(2)} ms`,
    );
  } finally {
    await service.close();
    await store.close();
    await stubs.close();
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchChat().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
