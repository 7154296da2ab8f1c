import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSolanaDevnet } from "../src/local/solana/devnet.ts";
import type { RunningService } from "../src/server/service.ts";
import { bundleForPage, launchBrowser, servePage, skipBrowserTests } from "./support/browser.ts";
import { startSolanaSite, usdcOn } from "./support/solana.ts";

const PRICE = 100_000n; // POST /v1/dinalibrium: 0.10 USDC
const ORIGIN = "http://buyer.example";

let chain: LocalSolanaDevnet;
let service: RunningService;
let site: string;
beforeAll(async () => {
  ({ chain, service, site } = await startSolanaSite());
});
afterAll(async () => {
  await service?.close();
  await chain?.stop();
});

describe("the local Solana RPC answers browsers", () => {
  it("answers a preflight 204 for any origin, allowing POST and the headers asked for, and its answers name any origin", async () => {
    const preflight = await fetch(chain.rpcUrl, {
      method: "OPTIONS",
      headers: { Origin: ORIGIN, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,solana-client" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type,solana-client");
    const answer = await fetch(chain.rpcUrl, {
      method: "POST",
      headers: { Origin: ORIGIN, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getHealth" }),
    });
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
    expect(await answer.json()).toEqual({ jsonrpc: "2.0", id: 1, result: "ok" });
  });
});

/** The page's script: @x402/fetch, @x402/svm's client scheme and kit's key import, bundled for the browser. */
const buyerBundle = () =>
  bundleForPage(`
    import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
    import { ExactSvmScheme } from "@x402/svm/exact/client";
    import { toClientSvmSigner } from "@x402/svm";
    import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
    globalThis.x402 = { wrapFetchWithPayment, x402Client, ExactSvmScheme, toClientSvmSigner, createKeyPairSignerFromBytes, getBase58Encoder };`);

describe.skipIf(skipBrowserTests())("a page on another origin pays the Solana site in Chromium", () => {
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

  it("reads the 402, signs with the SVM client through the local RPC, and reads PAYMENT-RESPONSE; exactly the price moves", async () => {
    const buyer = chain.scenario.buyers[0] as LocalSolanaDevnet["scenario"]["buyers"][number];
    const before = { buyer: await usdcOn(chain.rpcUrl, buyer.address), payTo: await usdcOn(chain.rpcUrl, chain.scenario.payTo) };
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
      expect(new URL(tab.url()).origin).not.toBe(new URL(site).origin);
      const seen = await tab.evaluate(
        async ({ url, rpcUrl, secret }) => {
          const x = (globalThis as unknown as { x402: Record<string, (...args: unknown[]) => unknown> }).x402 as unknown as {
            wrapFetchWithPayment: (f: typeof fetch, client: unknown) => typeof fetch;
            x402Client: new () => { register(network: string, scheme: unknown): void };
            ExactSvmScheme: new (signer: unknown, options: { rpcUrl: string }) => unknown;
            toClientSvmSigner: (signer: unknown) => unknown;
            createKeyPairSignerFromBytes: (bytes: Uint8Array) => Promise<unknown>;
            getBase58Encoder: () => { encode(text: string): Uint8Array };
          };
          const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: "SOL" }) };
          const unpaid = await fetch(url, init);
          const challenge = unpaid.headers.get("payment-required");
          const signer = await x.createKeyPairSignerFromBytes(x.getBase58Encoder().encode(secret));
          const client = new x.x402Client();
          client.register("solana:*", new x.ExactSvmScheme(x.toClientSvmSigner(signer), { rpcUrl }));
          try {
            const paid = await x.wrapFetchWithPayment(fetch, client)(url, init);
            return {
              unpaidStatus: unpaid.status,
              challenge,
              status: paid.status,
              body: (await paid.json()) as unknown,
              paymentResponse: paid.headers.get("payment-response"),
            };
          } catch (error) {
            return { unpaidStatus: unpaid.status, challenge, error: String(error) };
          }
        },
        { url: `${site}/v1/dinalibrium`, rpcUrl: chain.rpcUrl, secret: buyer.secretKey },
      );
      expect(failures).toEqual([]);
      expect(seen).not.toHaveProperty("error");
      expect(seen.unpaidStatus).toBe(402);
      expect(decodePaymentRequiredHeader(seen.challenge as string).accepts).toEqual([
        {
          scheme: "exact",
          network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
          amount: "100000",
          asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
          payTo: chain.scenario.payTo,
          maxTimeoutSeconds: 300,
          extra: { feePayer: chain.scenario.feePayer.address },
        },
      ]);
      expect(seen.status).toBe(200);
      // SOL on the DexScreener stand-in's three venues: (150 x 5M + 150.3 x 3M + 149.7 x 2M) / 10M.
      expect(seen.body).toMatchObject({ tokens: [{ symbol: "SOL", weighted_price_usd: 150.03 }] });
      expect(decodePaymentResponseHeader(seen.paymentResponse as string)).toMatchObject({
        success: true,
        network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
        payer: buyer.address,
      });
      expect(await usdcOn(chain.rpcUrl, buyer.address)).toBe(before.buyer - PRICE);
      expect(await usdcOn(chain.rpcUrl, chain.scenario.payTo)).toBe(before.payTo + PRICE);
    } finally {
      await context.close();
    }
  });
});
