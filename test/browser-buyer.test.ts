/**
 * Browsers as buyers: CORS on every answer of the real service, checked over plain HTTP
 * (preflight, allowed request headers, exposed payment headers, held documents included), and a
 * page on another origin in a real headless Chromium that pays a route end to end with a viem
 * account and @x402/fetch bundled into the page, read back on the chain; then docs/payments.md's
 * browser block, as printed, paying per call and from a balance through an EIP-1193 wallet.
 */
import { readFileSync } from "node:fs";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { Browser } from "playwright-core";
import { erc20Abi, type Hex, numberToHex, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { bundleForPage, launchBrowser, servePage, skipBrowserTests } from "./support/browser.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
import { chainClient, devnet, startTestService, usdcBalance } from "./support/service.ts";

const ORIGIN = "http://buyer.example";
const PRICE = 100_000n; // POST /api/payment-verify: 0.10 USDC
const TX = `0x${"ab".repeat(32)}`;
const OTHER_TX = `0x${"cd".repeat(32)}`;

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.close());

const list = (value: string | null) => (value ?? "").split(",").map((v) => v.trim().toLowerCase());

describe("CORS on every answer", () => {
  it("answers a preflight of a paid route 204, allowing POST and the payment and sign-in headers", async () => {
    const res = await fetch(`${service.url}/api/payment-verify`, {
      method: "OPTIONS",
      headers: {
        Origin: ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,payment-signature",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(list(res.headers.get("access-control-allow-methods"))).toEqual(["get", "head", "post"]);
    expect(list(res.headers.get("access-control-allow-headers"))).toEqual(
      expect.arrayContaining(["content-type", "payment-signature", "x-payment", "sign-in-with-x"]),
    );
    expect(res.headers.get("access-control-max-age")).toBe("86400");
  });

  it("answers a preflight of /mcp and of a page the same way (OPTIONS was a 405)", async () => {
    for (const path of ["/mcp", "/openapi.json", "/api/health", "/"]) {
      const res = await fetch(`${service.url}${path}`, {
        method: "OPTIONS",
        headers: { Origin: ORIGIN, "Access-Control-Request-Method": "POST" },
      });
      expect([path, res.status]).toEqual([path, 204]);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  it("exposes PAYMENT-REQUIRED on a 402 and lets any origin read free answers, held documents included", async () => {
    const unpaid = await fetch(`${service.url}/api/payment-verify`, { method: "POST", headers: { Origin: ORIGIN } });
    expect(unpaid.status).toBe(402);
    expect(unpaid.headers.get("access-control-allow-origin")).toBe("*");
    expect(list(unpaid.headers.get("access-control-expose-headers"))).toEqual(
      expect.arrayContaining(["payment-required", "payment-response"]),
    );
    for (const path of ["/openapi.json", "/api/pricing", "/.well-known/x402"]) {
      const res = await fetch(`${service.url}${path}`, { headers: { Origin: ORIGIN } });
      expect([path, res.status, res.headers.get("access-control-allow-origin")]).toEqual([path, 200, "*"]);
    }
  });
});

/** The page's script: @x402/fetch, its EVM scheme and viem's accounts, bundled for the browser. */
const buyerBundle = () =>
  bundleForPage(`
    import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
    import { registerExactEvmScheme } from "@x402/evm/exact/client";
    import { privateKeyToAccount } from "viem/accounts";
    globalThis.x402 = { wrapFetchWithPayment, x402Client, registerExactEvmScheme, privateKeyToAccount };`);

describe.skipIf(skipBrowserTests())("a page on another origin pays in Chromium", () => {
  let browser: Browser;
  let page: Awaited<ReturnType<typeof servePage>>;
  let pageOrigin: string;
  beforeAll(async () => {
    page = await servePage(await buyerBundle());
    pageOrigin = page.origin;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await page?.close();
  });

  it("reads the 402, signs with a viem account, sends PAYMENT-SIGNATURE and reads PAYMENT-RESPONSE", async () => {
    const buyer = await freshBuyer(PRICE);
    const key = buyer.privateKey;
    const context = await browser.newContext();
    const tab = await context.newPage();
    const failures: string[] = [];
    // A 402 is logged by Chromium as a failed resource; a blocked request is not expected at all.
    tab.on("console", (m) => {
      if (m.type() === "error" && !m.text().includes("status of 402")) failures.push(m.text());
    });
    tab.on("requestfailed", (r) => failures.push(`${r.url()}: ${r.failure()?.errorText}`));
    try {
      await tab.goto(`${pageOrigin}/`);
      expect(new URL(tab.url()).origin).not.toBe(new URL(service.url).origin);
      const seen = await tab.evaluate(
        async ({ url, key, tx }) => {
          const x = (globalThis as unknown as { x402: Record<string, (...args: unknown[]) => unknown> }).x402;
          const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ tx_hash: tx }) };
          // What a page sees of the unpaid answer: the challenge header is readable.
          const unpaid = await fetch(url, init);
          const challenge = unpaid.headers.get("payment-required");
          const client = new (x.x402Client as unknown as new () => object)();
          x.registerExactEvmScheme?.(client, { signer: x.privateKeyToAccount?.(key) });
          const payFetch = x.wrapFetchWithPayment?.(fetch, client) as typeof fetch;
          const paid = await payFetch(url, init);
          return {
            unpaidStatus: unpaid.status,
            challenge,
            status: paid.status,
            body: (await paid.json()) as unknown,
            paymentResponse: paid.headers.get("payment-response"),
          };
        },
        { url: `${service.url}/api/payment-verify`, key, tx: TX },
      );
      expect(failures).toEqual([]);
      expect(seen.unpaidStatus).toBe(402);
      expect(seen.challenge).toBeTruthy();
      expect(seen.status).toBe(200);
      expect(seen.body).toMatchObject({ tx_hash: TX, verified: false, reason: "tx_not_found" });
      const settlement = decodePaymentResponseHeader(seen.paymentResponse as string);
      expect(settlement).toMatchObject({ success: true, network: base.id, payer: buyer.address });
      // On the chain: the settlement moved exactly the price from the page's account to payTo.
      const receipt = await chainClient().getTransactionReceipt({ hash: settlement.transaction as `0x${string}` });
      const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((t) => [
        t.args.from,
        t.args.to,
        t.args.value,
      ]);
      expect(transfers).toEqual([[buyer.address, devnet().payTo, PRICE]]);
      expect(await usdcBalance(buyer.address)).toBe(0n);
    } finally {
      await context.close();
    }
  });
});

/** The fenced ts block under docs/payments.md's browser heading, exactly as a reader copies it. */
function documentedBrowserBuyer(): string {
  const doc = readFileSync(new URL("../docs/payments.md", import.meta.url), "utf8");
  const section = doc.split("## In a browser, with the reader's wallet")[1] ?? "";
  const block = /```ts\n([\s\S]*?)\n```/.exec(section)?.[1];
  if (!block) throw new Error("docs/payments.md has no ts block under its browser heading");
  return block;
}

/** The documented block bundled as the page's module script, its exports put on globalThis.buyer. */
function documentedBundle(): Promise<string> {
  return bundleForPage('import * as buyer from "documented-buyer"; globalThis.buyer = buyer;', {
    plugins: [
      {
        name: "documented-buyer",
        setup(b) {
          b.onResolve({ filter: /^documented-buyer$/ }, () => ({ path: "documented-buyer", namespace: "doc" }));
          b.onLoad({ filter: /.*/, namespace: "doc" }, () => ({
            // The block names window.ethereum as a page does; only its type is declared here.
            contents: `declare const window: { ethereum: any };\n${documentedBrowserBuyer()}`,
            loader: "ts",
            resolveDir: process.cwd(),
          }));
        },
      },
    ],
    format: "esm",
    target: "es2022",
  });
}

describe.skipIf(skipBrowserTests())("docs/payments.md's browser block pays through the reader's wallet", () => {
  let browser: Browser;
  let page: Awaited<ReturnType<typeof servePage>>;
  let pageOrigin: string;
  beforeAll(async () => {
    page = await servePage(await documentedBundle(), "module");
    pageOrigin = page.origin;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await page?.close();
  });

  it("pays a route per call, tops up, then pays from the balance with a sign-in and no transfer", async () => {
    const TOPUP = 1_000_000n;
    const buyer = await freshBuyer(PRICE + TOPUP);
    const context = await browser.newContext();
    // The wallet: an EIP-1193 provider in the page whose requests the reader's key answers here,
    // as an extension's background page would. Each method the page asked for is recorded.
    const asked: string[] = [];
    await context.exposeFunction("walletRequest", async ({ method, params }: { method: string; params?: unknown[] }) => {
      asked.push(method);
      if (method === "eth_requestAccounts" || method === "eth_accounts") return [buyer.address];
      if (method === "eth_chainId") return numberToHex(base.chainId);
      if (method === "eth_signTypedData_v4") {
        const { domain, types, primaryType, message } = JSON.parse(params?.[1] as string);
        const { EIP712Domain: _derived, ...rest } = types;
        return buyer.signTypedData({ domain, types: rest, primaryType, message });
      }
      if (method === "personal_sign") return buyer.signMessage({ message: { raw: params?.[0] as Hex } });
      throw Object.assign(new Error(`${method} is not supported`), { code: 4200 });
    });
    await context.addInitScript(() => {
      const call = (globalThis as unknown as { walletRequest: (args: unknown) => Promise<unknown> }).walletRequest;
      (globalThis as unknown as { ethereum: unknown }).ethereum = { request: (args: unknown) => call(args) };
    });
    const tab = await context.newPage();
    const failures: string[] = [];
    tab.on("console", (m) => {
      if (m.type() === "error" && !m.text().includes("status of 402")) failures.push(m.text());
    });
    tab.on("pageerror", (e) => failures.push(e.message));
    try {
      await tab.goto(`${pageOrigin}/`);
      await tab.waitForFunction(() => "buyer" in globalThis);
      const seen = await tab.evaluate(
        async ({ origin, tx, other_tx }) => {
          const { pay, payFromBalance } = (globalThis as unknown as { buyer: Record<string, typeof fetch> }).buyer as {
            pay: typeof fetch;
            payFromBalance: typeof fetch;
          };
          const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ tx_hash: tx }) };
          const perCall = await pay(`${origin}/api/payment-verify`, init);
          const topup = await pay(`${origin}/api/balance/topup?amount=1`, { method: "POST" });
          // Another transaction: the same request signed in would get the kept answer, not a debit.
          const other = { ...init, body: JSON.stringify({ tx_hash: other_tx }) };
          const fromBalance = await payFromBalance(`${origin}/api/payment-verify`, other);
          return {
            perCall: { status: perCall.status, settlement: perCall.headers.get("payment-response"), body: await perCall.json() },
            topup: { status: topup.status, settlement: topup.headers.get("payment-response") },
            fromBalance: {
              status: fromBalance.status,
              settlement: fromBalance.headers.get("payment-response"),
              debited: fromBalance.headers.get("balance-debited"),
              remaining: fromBalance.headers.get("balance-remaining"),
              body: await fromBalance.json(),
            },
          };
        },
        { origin: service.url, tx: TX, other_tx: OTHER_TX },
      );
      expect(failures).toEqual([]);
      expect(seen.perCall.status).toBe(200);
      expect(seen.perCall.body).toMatchObject({ tx_hash: TX, verified: false, reason: "tx_not_found" });
      const perCall = decodePaymentResponseHeader(seen.perCall.settlement as string);
      expect(perCall).toMatchObject({ success: true, network: base.id, payer: buyer.address });
      const receipt = await chainClient().getTransactionReceipt({ hash: perCall.transaction as `0x${string}` });
      expect(
        parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((t) => [t.args.from, t.args.to, t.args.value]),
      ).toEqual([[buyer.address, devnet().payTo, PRICE]]);
      expect(seen.topup.status).toBe(200);
      expect(decodePaymentResponseHeader(seen.topup.settlement as string)).toMatchObject({ success: true, payer: buyer.address });
      // The balance paid the second call: no settlement, 0.10 debited, and not a unit more left the wallet.
      expect(seen.fromBalance).toMatchObject({ status: 200, settlement: null, debited: "0.1", remaining: "0.9" });
      expect(seen.fromBalance.body).toMatchObject({ tx_hash: OTHER_TX, verified: false, reason: "tx_not_found" });
      expect(await usdcBalance(buyer.address)).toBe(0n);
      // Two typed-data signatures (the two transfers) and one signed message (the sign-in).
      expect(asked.filter((m) => m === "eth_signTypedData_v4")).toHaveLength(2);
      expect(asked.filter((m) => m === "personal_sign")).toHaveLength(1);
    } finally {
      await context.close();
    }
  });
});
