import { request as httpRequest } from "node:http";
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { createPublicClient, erc20Abi, http, type PrivateKeyAccount, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { inject } from "vitest";
import { type Config, loadConfig } from "../../src/config.ts";
import { createLogger, type Logger, type LogLevel } from "../../src/log.ts";
import { base } from "../../src/networks/base.ts";
import { type RunningService, type StartServiceOptions, startService } from "../../src/server/service.ts";
import { testStore } from "./file-store.ts";

/** The shared devnet of this test run. */
export function devnet() {
  return inject("devnet");
}

/**
 * A local-mode configuration on a free port, quiet unless `LOG_LEVEL` is set. Tests send free
 * requests from one address far faster than any reader: the free budget is set high enough
 * that no test trips it, and still checked on every request (test/rate-limit.test.ts sets its own).
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    PORT: "0",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "silent",
    RATE_LIMIT_PER_MINUTE: "100000",
    ...stubUpstreamEnv(),
    ...env,
  });
}

/**
 * A production-mode configuration on a free port on the devnet, quiet, behind a loopback proxy
 * (production trusts a proxy on the host to forward each client's address); `env` adds to it.
 */
export function productionConfig(env: Record<string, string> = {}): Config {
  const d = devnet();
  return loadConfig({
    ...stubUpstreamEnv(),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    // Production binds sign-ins to its public origin.
    PUBLIC_URL: "https://api.example.test",
    RPC_URL: d.rpcUrl,
    PAY_TO: d.payTo,
    FACILITATOR_PRIVATE_KEY: d.facilitator.privateKey,
    ...env,
  });
}

/** Market-data URLs of the shared stub server (never the real APIs in tests). */
export function stubUpstreamEnv(): Record<string, string> {
  const stubs = inject("stubs");
  return {
    DEXSCREENER_URL: stubs.dexscreener,
    DEFILLAMA_URL: stubs.defillama,
    DEFILLAMA_COINS_URL: stubs.defillamaCoins,
    HYPERLIQUID_URL: stubs.hyperliquid,
  };
}

/** A logger whose lines are kept in `lines` for assertions. */
export function capturingLogger(level: LogLevel = "debug"): Logger & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger(level, {}, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return Object.assign(log, { lines });
}

/** Start the service on the shared devnet (and this file's store unless one is given). */
export async function startTestService(options: Partial<StartServiceOptions> = {}): Promise<RunningService> {
  const d = devnet();
  return startService({
    config: testConfig(),
    devnet: { rpcUrl: d.rpcUrl, payTo: d.payTo, facilitator: d.facilitator },
    store: options.store ?? (await testStore()),
    maintenance: false,
    ...options,
  });
}

/** A public client on the shared devnet. */
export function chainClient(): PublicClient {
  const d = devnet();
  return createPublicClient({ chain: base.chainAt([d.rpcUrl]), transport: http(d.rpcUrl) }) as PublicClient;
}

/** The USDC balance (atomic) of `address`. */
export async function usdcBalance(address: `0x${string}`): Promise<bigint> {
  return chainClient().readContract({ address: devnet().usdc, abi: erc20Abi, functionName: "balanceOf", args: [address] });
}

/** Devnet buyer `index` (0-7: accounts 2-9 of the test mnemonic). */
export function buyerAccount(index: number): PrivateKeyAccount {
  const buyer = devnet().buyers[index];
  if (!buyer) throw new Error(`no devnet buyer ${index}`);
  return privateKeyToAccount(buyer.privateKey);
}

/** `fetch` that pays x402 challenges with `account`, as a real buyer's client does. */
export function payingFetch(account: PrivateKeyAccount): typeof fetch {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  return wrapFetchWithPayment(fetch, client) as typeof fetch;
}

/** The challenge of an unpaid call. */
export async function challengeOf(url: string, init: RequestInit = {}): Promise<PaymentRequired> {
  const res = await fetch(url, init);
  if (res.status !== 402) throw new Error(`expected 402 from ${url}, got ${res.status}`);
  return decodePaymentRequiredHeader(res.headers.get("payment-required") as string);
}

export { signPayment } from "../../scripts/buyer/sign-payment.ts";

/** The EIP-3009 authorisation an exact-EVM payment header carries (payer, nonce, validity). */
export function authorizationOf(header: string) {
  return (
    decodePaymentSignatureHeader(header).payload as {
      authorization: {
        from: `0x${string}`;
        to: `0x${string}`;
        value: string;
        validAfter: string;
        validBefore: string;
        nonce: `0x${string}`;
      };
    }
  ).authorization;
}
export { freshSqliteStore, testStore } from "./file-store.ts";

/** A raw HTTP/1.1 request with the path sent byte for byte (fetch would normalise it). */
export function rawRequest(
  baseUrl: string,
  method: string,
  rawPath: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: rawPath,
        headers: { ...headers, ...(body ? { "content-length": String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}
