/**
 * The Solana site on the seeded local Solana (litesvm in this process, its JSON-RPC on loopback):
 * challenges in USDC on Solana with the facilitator's fee payer, every route's answer against
 * the scenario's ground truth (src/local/solana/scenario.ts and the DexScreener stand-in's Solana
 * fixtures), and the payment path: exactly the price moves to payTo's token account, a failed
 * call is never charged, a replayed or tampered payment is refused, one payment sent twice at
 * once settles once, and a paid retry gets the kept answer. An MCP client pays a Solana tool
 * through `npm run mcp`'s server, and through the site's own `/mcp` with the payment in `_meta`.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type Address, createSolanaRpc, type Signature } from "@solana/kit";
import { getTokenDecoder, getTransferCheckedInstruction, TOKEN_2022_PROGRAM_ADDRESS } from "@solana-program/token-2022";
import { x402HTTPClient } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { wrapFetchWithPayment } from "@x402/fetch";
import { decodeHTML } from "entities";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SpendCaps } from "../scripts/mcp/spend-caps.ts";
import { createStdioServer } from "../scripts/mcp/stdio.ts";
import { baseToolsRoutes } from "../spec/routes/base-tools.ts";
import { solanaRoutes } from "../spec/routes/solana.ts";
import { routes } from "../spec/routes.ts";
import type { LocalSolanaDevnet } from "../src/local/solana/devnet.ts";
import { ataOf, type ScenarioMint, USDC_MINT } from "../src/local/solana/scenario.ts";
import { base } from "../src/networks/base.ts";
import { CHALLENGE_BUDGET } from "../src/payments/requirements.ts";
import type { RunningService } from "../src/server/service.ts";
import { localKey } from "../src/solana/keys.ts";
import { type MintRiskAnswer, mintRisk, solanaReads, transferFeeOn, verdictOf } from "../src/solana/reads.ts";
import { svmClient } from "../src/solana/x402.ts";
import { CAPABILITY, mcpRpc } from "./support/mcp.ts";
import { startRpcProxy } from "./support/rpc-proxy.ts";
import { startSolanaSite, usdcOn } from "./support/solana.ts";

const PRICE = 100_000n; // 0.10 USDC
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

const rpc = () => createSolanaRpc(chain.rpcUrl);
const usdcOf = (owner: string) => usdcOn(chain.rpcUrl, owner);
const buyer = (i: number) => chain.scenario.buyers[i] as LocalSolanaDevnet["scenario"]["buyers"][number];
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${site}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

/** A payment header for `path`'s challenge, signed by buyer `i` with the stock SVM client scheme. */
async function paymentFor(
  path: string,
  body: unknown,
  i = 0,
): Promise<{ header: string; payload: PaymentPayload; challenge: PaymentRequired }> {
  const res = await post(path, body);
  expect(res.status).toBe(402);
  const challenge = decodePaymentRequiredHeader(res.headers.get("payment-required") as string);
  const http = new x402HTTPClient(svmClient(buyer(i).signer, chain.rpcUrl, chain.scenario.network));
  const payload = await http.createPaymentPayload(challenge);
  return { header: encodePaymentSignatureHeader(payload), payload, challenge };
}

/** Solana reads of their own, through a proxy counting what the RPC is asked (no DexScreener). */
async function countedReads() {
  const proxy = await startRpcProxy(chain.rpcUrl);
  const reads = solanaReads({
    network: chain.scenario.network,
    rpcUrl: proxy.url,
    usdcMint: chain.scenario.usdcMint,
    dexscreenerUrl: "http://127.0.0.1:9",
    timeoutMs: 5_000,
  });
  return { proxy, reads };
}

/** A paid call (buyer `i`) to `on` (the site by default), with the payTo and buyer balances before and after. */
async function paidCall(path: string, body: unknown, i = 0, on = site) {
  const before = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer(i).address) };
  const pay = wrapFetchWithPayment(fetch, svmClient(buyer(i).signer, chain.rpcUrl, chain.scenario.network));
  const res = await pay(`${on}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const after = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer(i).address) };
  return { res, json: (await res.json()) as Record<string, unknown>, before, after };
}

describe("the Solana site's challenges", () => {
  it("asks x402 v2 exact on Solana mainnet's id, in USDC at the canonical mint, to payTo, with the fee payer, within the header budget", async () => {
    for (const path of ["/v1/meme-hunter", "/v1/defi-sentiment", "/v1/dinalibrium", "/v1/wallet-profile"]) {
      const res = await post(path, {});
      expect(res.status).toBe(402);
      const header = res.headers.get("payment-required") as string;
      // Within the header-block budget a 4 KB proxy buffer holds.
      expect(header.length).toBeLessThanOrEqual(CHALLENGE_BUDGET);
      const challenge = decodePaymentRequiredHeader(header);
      expect(challenge.x402Version).toBe(2);
      expect(challenge.accepts).toHaveLength(1);
      const [accept] = challenge.accepts;
      expect(accept).toMatchObject({
        scheme: "exact",
        network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
        asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        amount: "100000",
        payTo: chain.scenario.payTo,
      });
      expect(accept?.extra.feePayer).toBe(chain.scenario.feePayer.address);
      // No blockhash: the buyer's client reads one from its RPC (a challenge with one would pass the budget).
      expect(accept?.extra.recentBlockhash).toBeUndefined();
      // No EVM fields on a Solana quote.
      expect(accept?.extra.primaryType).toBeUndefined();
    }
  });

  it("serves its own discovery documents naming Solana and its mint", async () => {
    const wellKnown = (await (await fetch(`${site}/.well-known/x402`)).json()) as Record<string, unknown>;
    expect(wellKnown.network).toBe("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
    expect(wellKnown.asset).toBe("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
    expect((wellKnown.resources as string[]).sort()).toEqual([
      "POST /v1/defi-sentiment",
      "POST /v1/dinalibrium",
      "POST /v1/meme-hunter",
      "POST /v1/wallet-profile",
    ]);
    const openapi = (await (await fetch(`${site}/openapi.json`)).json()) as { info: { title: string }; paths: Record<string, unknown> };
    expect(openapi.info.title).toBe("Token-risk and market tools on Solana");
    expect(Object.keys(openapi.paths).sort()).toEqual(["/v1/defi-sentiment", "/v1/dinalibrium", "/v1/meme-hunter", "/v1/wallet-profile"]);
    const landing = await fetch(`${site}/`);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain("Token-risk and market tools on Solana");
    // The Base site's own routes are not answered here.
    expect((await post("/v1/honeypot-check", {})).status).toBe(404);
  });

  it("tells a Solana payer how to pay on Solana, in /openapi.json and on /errors, which every error body links to", async () => {
    const openapi = await (await fetch(`${site}/openapi.json`)).text();
    // Nothing in it says Base alone: the error texts it shares with the Base sites name both networks.
    expect(openapi).not.toContain("EIP-3009 authorisation for the quoted amount");
    expect(openapi).not.toContain(`network ${base.id} and`);
    expect(openapi).toContain("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp on the Solana site");
    // Its route groups are described as this site's, on its landing page too: no Base tools, no simulated honeypots.
    expect((JSON.parse(openapi) as { tags: { name: string; description: string }[] }).tags).toEqual([
      {
        name: "token risk",
        description:
          "Token-risk tools on Solana for traders deciding whether a token is safe to touch: each new mint's authorities and Token-2022 extensions read on chain, and price equilibrium across Raydium, Orca and Meteora.",
      },
      {
        name: "chain analytics",
        description: "Answers computed from public Solana chain data and market APIs: wallet profiles and DeFi sentiment.",
      },
    ]);
    const landing = await (await fetch(`${site}/`)).text();
    expect(landing).not.toMatch(/Token-risk tools on Base|public Base chain data|simulated honeypot/);
    expect(landing).toContain("Answers computed from public Solana chain data and market APIs: wallet profiles and DeFi sentiment.");
    expect(
      (JSON.parse(openapi) as { components: { securitySchemes: { x402: { description: string } } } }).components.securitySchemes.x402
        .description,
    ).toContain("a signed USDC transfer (TransferChecked) of the quoted amount");
    const bad = (await (await post("/v1/dinalibrium", { token: "BONK" })).json()) as { error: { docs: string } };
    expect(bad.error.docs).toBe("/errors#invalid_request");
    const errors = await fetch(`${site}/errors`);
    expect(errors.status).toBe(200);
    const page = await errors.text();
    // Its header links only what this site serves (the primary's reader pages are 404 here).
    const links = [...page.matchAll(/<nav[^>]*>([\s\S]*?)<\/nav>/g)].flatMap((m) =>
      [...(m[1] as string).matchAll(/href="([^"]+)"/g)].map((h) => h[1]),
    );
    expect(links).toEqual(["/", "/openapi.json", "/.well-known/x402", "/errors"]);
    for (const link of links) expect([link, (await fetch(`${site}${link}`)).status]).toEqual([link, 200]);
    const text = decodeHTML(page.replace(/<[^>]+>/g, " ")).replace(/\s+/g, " ");
    expect(text).toContain(`network (${base.id} on the Base sites, solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp on the Solana site`);
    expect(text).toContain(
      "on Solana, sign a USDC TransferChecked of the quoted amount to payTo's token account, which the fee payer named in extra.feePayer co-signs",
    );
    expect(text).toContain("Paid routes settle per call in USDC on Solana (solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp) with x402 v2.");
    expect(text).not.toContain("USDC on Base");
  });
});

describe("a paid call on Solana", () => {
  it("moves exactly the price from the buyer's USDC account to payTo's, and names the settlement", async () => {
    const { res, before, after } = await paidCall("/v1/wallet-profile", { address: chain.scenario.wallet.address }, 1);
    expect(res.status).toBe(200);
    expect(after.payTo - before.payTo).toBe(PRICE);
    expect(before.buyer - after.buyer).toBe(PRICE);
    const receipt = decodePaymentResponseHeader(res.headers.get("payment-response") as string);
    expect(receipt.success).toBe(true);
    expect(receipt.network).toBe("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
    expect(receipt.payer).toBe(buyer(1).address);
    const status = (
      await rpc()
        .getSignatureStatuses([receipt.transaction as never])
        .send()
    ).value[0];
    expect(status?.err).toBeNull();
  });
});

describe("answers against the scenario's ground truth", () => {
  it("wallet-profile: SOL and USDC balances, token accounts with USD values, activity, not a program", async () => {
    const w = chain.scenario.wallet;
    const { res, json } = await paidCall("/v1/wallet-profile", { address: w.address });
    expect(res.status).toBe(200);
    const safe = chain.scenario.mints.find((m) => m.symbol === "SAFE") as ScenarioMint;
    // SOL at the deepest SOL/USDC pair's price (150.00 on Raydium, 5,000,000 USD of liquidity); SAFE at 0.05.
    expect(json.sol).toEqual({ lamports: w.lamports, amount: 12, usd: 1800 });
    expect(json.usdc).toEqual({ atomic: w.usdc, amount: 245 });
    expect(json.is_program).toBe(false);
    const accounts = json.token_accounts as Record<string, unknown>[];
    expect(accounts.map((a) => [a.mint, a.symbol, a.atomic, a.amount, a.price_usd, a.usd, a.frozen])).toEqual([
      [safe.mint, "SAFE", "100000000000", 100000, 0.05, 5000, false],
      [USDC_MINT, "USDC", w.usdc, 245, 1, 245, false],
    ]);
    expect(json.total_usd).toBe(1800 + 5000 + 245);
    const activity = json.recent_activity as { transactions: number; latest: { failed: boolean }[] };
    expect(activity.transactions).toBe(w.transactions);
    expect(activity.latest.every((t) => t.failed === false)).toBe(true);
    expect(json.labels).toEqual([]);
  });

  it("wallet-profile: a program is labelled as one", async () => {
    const { json } = await paidCall("/v1/wallet-profile", { address: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" });
    expect(json.is_program).toBe(true);
    expect(json.labels).toEqual(["SPL Token program", "program"]);
  });

  it("meme-hunter: each mint's authorities, extensions, holder concentration and verdict", async () => {
    const { res, json } = await paidCall("/v1/meme-hunter", { limit: 20, min_liquidity_usd: 5000 });
    expect(res.status).toBe(200);
    // The stand-in lists the fifteen scenario mints (FEEDROP and PAUSE with no pair yet) and one Base profile, which is left out.
    expect(json.profiles_listed).toBe(15);
    const tokens = json.tokens as {
      mint: string;
      symbol: string;
      risk: Record<string, unknown>;
      verdict: string;
      verdict_reasons: string[];
      pair: Record<string, unknown>;
    }[];
    // A token with no pair has no symbol from DexScreener.
    expect(tokens.map((t) => t.symbol)).toEqual([
      "SAFE",
      "MINTY",
      "FRZ",
      "WHALE",
      "FEE",
      "HOOK",
      "PDEL",
      "SOUL",
      "DFRZ",
      null,
      null,
      "FEENIL",
      "FEEDUST",
      "FEECAP",
      "FEEPEND",
    ]);
    const creator = (await import("../src/local/solana/scenario.ts").then((m) => m.scenarioKeys())).creator.address;
    const bySymbol = Object.fromEntries(chain.scenario.mints.map((m) => [m.symbol, m.mint]));
    const symbolOf = Object.fromEntries(chain.scenario.mints.map((m) => [m.mint, m.symbol]));
    for (const token of tokens) {
      const truth = chain.scenario.mints.find((m) => m.mint === token.mint) as ScenarioMint;
      // Holdings in scenario.ts: every mint's fifteen EVEN holders, the top ten with 775,000 of 1,000,000
      // tokens and the largest 100,000; WHALE's four with all of it, the largest 900,000.
      const whale = truth.symbol === "WHALE";
      expect(token.risk).toEqual({
        program: truth.program,
        decimals: 6,
        supply: truth.supply,
        mint_authority: truth.mintAuthority ? creator : null,
        freeze_authority: truth.freezeAuthority ? creator : null,
        extensions: {
          transfer_fee_bps: truth.transferFeeBps,
          transfer_fee_max: truth.transferFeeMax,
          transfer_fee_pending: truth.transferFeePending && {
            bps: truth.transferFeePending.bps,
            max: truth.transferFeePending.max,
            from_epoch: truth.transferFeePending.fromEpoch,
          },
          transfer_hook_program: truth.transferHook ? "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr" : null,
          permanent_delegate: truth.permanentDelegate ? creator : null,
          non_transferable: truth.nonTransferable,
          default_account_state: truth.defaultFrozen ? "frozen" : null,
          paused: truth.paused,
          pause_authority: truth.paused ? creator : null,
        },
        top10_share_pct: whale ? 100 : 77.5,
        largest_holder_share_pct: whale ? 90 : 10,
      });
    }
    const tokenOf = (symbol: string) => tokens.find((t) => t.mint === bySymbol[symbol]) as (typeof tokens)[number];
    // FEEDROP: 10% at initialisation, then 0% set in epoch 0, which Token-2022 applies from epoch 2 only.
    expect(tokenOf("FEEDROP").risk.extensions).toMatchObject({
      transfer_fee_bps: 1000,
      transfer_fee_max: "1000000000",
      transfer_fee_pending: { bps: 0, max: "0", from_epoch: 2 },
    });
    expect(tokenOf("FEEDROP").pair).toBeNull();
    expect(tokenOf("PAUSE").risk.extensions).toMatchObject({ paused: true, pause_authority: creator });
    const verdicts = Object.fromEntries(tokens.map((t) => [symbolOf[t.mint], t.verdict]));
    expect(verdicts).toEqual({
      SAFE: "ok",
      MINTY: "caution",
      FRZ: "honeypot",
      WHALE: "caution",
      FEE: "caution",
      HOOK: "caution",
      PDEL: "caution",
      SOUL: "honeypot",
      DFRZ: "honeypot",
      FEEDROP: "high_tax",
      PAUSE: "honeypot",
      FEENIL: "ok",
      FEEDUST: "caution",
      FEECAP: "high_tax",
      FEEPEND: "caution",
    });
    const reasons = Object.fromEntries(tokens.map((t) => [symbolOf[t.mint], t.verdict_reasons]));
    expect(reasons.WHALE).toEqual(["top 10 holders hold 100% of supply", "liquidity 3000 USD under 5000"]);
    // FEE at 0.02 USD: 100 USD is 5,000 tokens, 5% of it 250 tokens, under the 1,000-token cap (20 USD).
    expect(reasons.FEE).toEqual(["transfer fee 5% capped at 1000 tokens (20 USD) (Token-2022): a 100 USD trade pays 5%"]);
    expect(reasons.DFRZ).toEqual([
      "accounts start frozen (Token-2022 default account state): a buyer cannot sell until the authority thaws it",
      `freeze authority live (${creator}): any holder's account can be frozen`,
    ]);
    // Buyers pay the 10% in force until epoch 2, and the authority can keep re-setting 0% to postpone it.
    // No pair prices FEEDROP, so its cap cannot be weighed: the 10% rate decides, and the reason says so.
    expect(reasons.FEEDROP).toEqual([
      "transfer fee 10% capped at 1000 tokens now, 0% capped at 0 tokens from epoch 2 (Token-2022): no price to value the cap, judged by its 10% rate now, no fee is charged from epoch 2",
    ]);
    // Transfer fees whose maximum decides (scenario.ts; prices in the stand-in's pairs, 6 decimals):
    // FEENIL's 10% has a maximum of 0: no transfer pays anything.
    expect(reasons.FEENIL).toEqual([]);
    // FEEDUST at 0.02 USD: 100 USD is 5,000 tokens; 10% of it is 500 tokens, capped at 0.0001 token
    // (100 atomic of 5,000,000,000: 0.000002%).
    expect(reasons.FEEDUST).toEqual([
      "transfer fee 10% capped at 0.0001 tokens (0.000002 USD) (Token-2022): a 100 USD trade pays 0.000002%",
    ]);
    // FEECAP at 0.04 USD: 100 USD is 2,500 tokens; 10% of it, 250 tokens, is under the 1,000-token cap.
    expect(reasons.FEECAP).toEqual(["transfer fee 10% capped at 1000 tokens (40 USD) (Token-2022): a 100 USD trade pays 10%"]);
    // FEEPEND at 0.05 USD: 100 USD is 2,000 tokens; 2% now (40 tokens); the pending 10% capped at
    // 0.0001 token (100 atomic of 2,000,000,000: 0.000005%).
    expect(reasons.FEEPEND).toEqual([
      "transfer fee 2% capped at 1000 tokens (50 USD) now, 10% capped at 0.0001 tokens (0.000005 USD) from epoch 2 (Token-2022): a 100 USD trade pays 2% now, a 100 USD trade pays 0.000005% from epoch 2",
    ]);
    expect(tokenOf("FEEPEND").risk.extensions).toMatchObject({
      transfer_fee_bps: 200,
      transfer_fee_max: "1000000000",
      transfer_fee_pending: { bps: 1000, max: "100", from_epoch: 2 },
    });
    expect(tokenOf("FEENIL").risk.extensions).toMatchObject({ transfer_fee_bps: 1000, transfer_fee_max: "0", transfer_fee_pending: null });
    expect(tokenOf("FEEDUST").risk.extensions).toMatchObject({ transfer_fee_bps: 1000, transfer_fee_max: "100" });
    // Freeze authority revoked, but paused with a live pause authority: no holder can sell.
    expect(reasons.PAUSE).toEqual([
      "paused (Token-2022 pausable): no holder can transfer it until the authority unpauses it",
      `pause authority live (${creator}): every transfer can be stopped at once`,
    ]);
    expect((json.verdict_rules as Record<string, string>).honeypot).toBe(
      "non-transferable, accounts frozen by default, paused, or a live freeze or pause authority: a holder may be unable to sell",
    );
    // HOOK's deepest pair (SOL/HOOK, 100,000 USD) has it on the quote side: DexScreener's priceUsd
    // there is SOL's 150 USD, and HOOK's own price is 150 / priceNative 5,000 = 0.03 USD.
    expect(tokenOf("HOOK").pair).toMatchObject({ dex: "pumpswap", quote_symbol: "SOL", price_usd: 0.03, liquidity_usd: 100000 });
    // SAFE's deepest pair is the Raydium SOL pair (250,000 USD), not the thinner Meteora one.
    expect(tokens[0]?.pair).toMatchObject({
      dex: "raydium",
      quote_symbol: "SOL",
      price_usd: 0.05,
      liquidity_usd: 250000,
      created_at: new Date(1795000000000 - 30 * 60_000).toISOString(),
    });
  });

  it("meme-hunter: from the epoch a pending transfer fee is set for, that fee is in force", async () => {
    const svm = chain.chain.svm;
    const setEpoch = (epoch: bigint) => {
      const clock = svm.getClock();
      clock.epoch = epoch;
      svm.setClock(clock);
    };
    setEpoch(2n);
    // A service of its own on the same chain: the site keeps the epoch it read for a minute, and
    // the earlier meme-hunter calls read epoch 0.
    const own = await startSolanaSite({ chain });
    try {
      const { res, json } = await paidCall("/v1/meme-hunter", { limit: 20 }, 0, own.site);
      expect(res.status).toBe(200);
      const feedropMint = chain.scenario.mints.find((m) => m.symbol === "FEEDROP")?.mint;
      const feedrop = (json.tokens as { mint: string; risk: { extensions: unknown }; verdict: string; verdict_reasons: string[] }[]).find(
        (t) => t.mint === feedropMint,
      );
      expect(feedrop?.risk.extensions).toMatchObject({ transfer_fee_bps: 0, transfer_fee_max: "0", transfer_fee_pending: null });
      expect([feedrop?.verdict, feedrop?.verdict_reasons]).toEqual(["ok", []]);
      // FEEPEND's pending 10% is in force from epoch 2, its 0.0001-token cap with it: still no high_tax.
      const feependMint = chain.scenario.mints.find((m) => m.symbol === "FEEPEND")?.mint;
      const feepend = (json.tokens as { mint: string; risk: { extensions: unknown }; verdict: string; verdict_reasons: string[] }[]).find(
        (t) => t.mint === feependMint,
      );
      expect(feepend?.risk.extensions).toMatchObject({ transfer_fee_bps: 1000, transfer_fee_max: "100", transfer_fee_pending: null });
      expect([feepend?.verdict, feepend?.verdict_reasons]).toEqual([
        "caution",
        ["transfer fee 10% capped at 0.0001 tokens (0.000005 USD) (Token-2022): a 100 USD trade pays 0.000005%"],
      ]);
    } finally {
      await own.service.close();
      setEpoch(0n);
    }
  });

  it("meme-hunter: a mint's holders' shares are of the supply its account holds, read with no getTokenSupply", async () => {
    const { proxy, reads } = await countedReads();
    try {
      const whale = chain.scenario.mints.find((m) => m.symbol === "WHALE")?.mint as string;
      // WHALE: 1,000,000 tokens of 6 decimals, its four holders with all of it, the largest 900,000.
      expect(await mintRisk(reads, whale)).toMatchObject({ supply: "1000000000000", top10_share_pct: 100, largest_holder_share_pct: 90 });
      expect(proxy.http.flatMap((r) => r.methods).sort()).toEqual(["getAccountInfo", "getTokenLargestAccounts"]);
    } finally {
      await proxy.close();
    }
  });

  it("meme-hunter: the epoch is read once for the mints asking at once and kept for those after", async () => {
    const { proxy, reads } = await countedReads();
    try {
      const feedrop = chain.scenario.mints.find((m) => m.symbol === "FEEDROP")?.mint as string;
      const pending = { transfer_fee_bps: 1_000, transfer_fee_pending: { bps: 0, max: "0", from_epoch: 2 } };
      const [first, second] = await Promise.all([mintRisk(reads, feedrop), mintRisk(reads, feedrop)]);
      expect(first?.extensions).toMatchObject(pending);
      expect(second?.extensions).toMatchObject(pending);
      expect((await mintRisk(reads, feedrop))?.extensions).toMatchObject(pending);
      expect(proxy.http.flatMap((r) => r.methods).filter((m) => m === "getEpochInfo")).toEqual(["getEpochInfo"]);
    } finally {
      await proxy.close();
    }
  });

  it("Token-2022 on the local chain withholds the fee meme-hunter judges by: the rate rounded up, at most the maximum", async () => {
    // A 100 USD trade of FEEDUST (0.02 USD: 5,000 tokens) and of FEECAP (0.04 USD: 2,500 tokens),
    // and 1 atomic unit of FEEPEND (2%), from holder-14 to holder-13 (both outside the top ten).
    const [from, to] = await Promise.all([localKey("holder-14"), localKey("holder-13")]);
    const withheld = async (symbol: string, amount: bigint) => {
      const mint = chain.scenario.mints.find((m) => m.symbol === symbol)?.mint as Address;
      const [source, destination] = await Promise.all([
        ataOf(from.address, mint, TOKEN_2022_PROGRAM_ADDRESS),
        ataOf(to.address, mint, TOKEN_2022_PROGRAM_ADDRESS),
      ]);
      await chain.chain.run(chain.scenario.feePayer.signer, [
        getTransferCheckedInstruction({ source, mint, destination, authority: from.signer, amount, decimals: 6 }),
      ]);
      const account = chain.chain.svm.getAccount(destination);
      if (!account.exists) throw new Error(`no ${symbol} account for holder-13`);
      const decoded = getTokenDecoder().decode(account.data);
      const ext = decoded.extensions.__option === "Some" ? decoded.extensions.value : [];
      const fee = ext.find((e) => e.__kind === "TransferFeeAmount");
      return fee?.__kind === "TransferFeeAmount" ? fee.withheldAmount : null;
    };
    expect(await withheld("FEEDUST", 5_000_000_000n)).toBe(100n);
    expect(await withheld("FEECAP", 2_500_000_000n)).toBe(250_000_000n);
    expect(await withheld("FEEPEND", 1n)).toBe(1n);
  });

  it("dinalibrium: SOL and USDC across Raydium, Orca and Meteora against the liquidity-weighted price, with USDC's peg", async () => {
    const { res, json } = await paidCall("/v1/dinalibrium", {});
    expect(res.status).toBe(200);
    const [sol, usdc] = json.tokens as Record<string, unknown>[];
    // (150 x 5M + 150.3 x 3M + 149.7 x 2M) / 10M
    expect(sol).toMatchObject({ symbol: "SOL", stablecoin: false, weighted_price_usd: 150.03, peg: null });
    expect((sol as { venues: Record<string, unknown>[] }).venues.map((v) => [v.dex, v.price_usd, v.deviation_bps])).toEqual([
      ["raydium", 150, -2],
      ["orca", 150.3, 18],
      ["meteora", 149.7, -22],
    ]);
    expect(sol?.max_gap_bps).toBe(40.08);
    // (1.0002 x 4M + 0.999 x 1M + 0.988 x 1M) / 6M = 0.99796667: 20 bps under the peg; Raydium's 2 bps over it, Meteora's 120 under.
    expect(usdc).toMatchObject({ symbol: "USDC", stablecoin: true, weighted_price_usd: 0.99796667, peg: "drifting" });
    expect((usdc as { venues: Record<string, unknown>[] }).venues.map((v) => [v.dex, v.peg])).toEqual([
      ["raydium", "on_peg"],
      ["orca", "drifting"],
      ["meteora", "depegged"],
    ]);
  });

  it("defi-sentiment: the Base route's method for SOL by default", async () => {
    const { res, json } = await paidCall("/v1/defi-sentiment", {});
    expect(res.status).toBe(200);
    const fixture = JSON.parse(
      readFileSync(new URL("../fixtures/upstreams/hyperliquid-meta-and-asset-ctxs.json", import.meta.url), "utf8"),
    ) as {
      response: [{ universe: { name: string }[] }, { markPx: string }[]];
    };
    const index = fixture.response[0].universe.findIndex((u) => u.name === "SOL");
    expect(json.asset).toBe("SOL");
    expect(json.mark_price_usd).toBe(Number(fixture.response[1][index]?.markPx));
  });
});

describe("a Token-2022 transfer fee's verdict", () => {
  // A mint of 6 decimals with nothing else to say: only its fee decides. Maximum 1,000 tokens unless given.
  const withFee = (bps: number, pending: { bps: number; from_epoch: number; max?: string } | null, max = "1000000000"): MintRiskAnswer => ({
    program: "spl-token-2022",
    decimals: 6,
    supply: "1000000000000",
    mint_authority: null,
    freeze_authority: null,
    extensions: {
      transfer_fee_bps: bps,
      transfer_fee_max: max,
      transfer_fee_pending: pending && { max: "1000000000", ...pending },
      transfer_hook_program: null,
      permanent_delegate: null,
      non_transferable: false,
      default_account_state: null,
      paused: false,
      pause_authority: null,
    },
    top10_share_pct: 50,
    largest_holder_share_pct: 10,
  });

  it("is judged by the higher of the fee in force and a pending one (in force within two epochs)", () => {
    // At 1 USD a token, 100 USD is 100 tokens: every fee here is under the 1,000-token cap.
    expect(verdictOf(withFee(100, { bps: 5_000, from_epoch: 812 }), null, 0, 1)).toEqual({
      verdict: "high_tax",
      reasons: [
        "transfer fee 1% capped at 1000 tokens (1000 USD) now, 50% capped at 1000 tokens (1000 USD) from epoch 812 (Token-2022): a 100 USD trade pays 1% now, a 100 USD trade pays 50% from epoch 812",
      ],
    });
    expect(verdictOf(withFee(0, { bps: 300, from_epoch: 812 }), null, 0, 1)).toEqual({
      verdict: "caution",
      reasons: [
        "transfer fee 0% capped at 1000 tokens now, 3% capped at 1000 tokens (1000 USD) from epoch 812 (Token-2022): no fee is charged now, a 100 USD trade pays 3% from epoch 812",
      ],
    });
    expect(verdictOf(withFee(9_900, { bps: 0, from_epoch: 812 }), null, 0, 1)).toEqual({
      verdict: "high_tax",
      reasons: [
        "transfer fee 99% capped at 1000 tokens (1000 USD) now, 0% capped at 1000 tokens from epoch 812 (Token-2022): a 100 USD trade pays 99% now, no fee is charged from epoch 812",
      ],
    });
    expect(verdictOf(withFee(0, null), null, 0, 1)).toEqual({ verdict: "ok", reasons: [] });
  });

  it("is judged by what a 100 USD trade pays under the fee's maximum (a fee charging nothing has no USD cap)", () => {
    // A maximum of 0 charges nothing, whatever the rate.
    expect(verdictOf(withFee(1_000, null, "0"), null, 0, 0.5)).toEqual({ verdict: "ok", reasons: [] });
    expect(verdictOf(withFee(10_000, null, "0"), null, 0, null)).toEqual({ verdict: "ok", reasons: [] });
    // 10% capped at 1 atomic unit (0.000001 token at 0.5 USD): 200 tokens pay 0.000001 of them.
    expect(verdictOf(withFee(1_000, null, "1"), null, 0, 0.5)).toEqual({
      verdict: "caution",
      reasons: ["transfer fee 10% capped at 0.000001 tokens (0.0000005 USD) (Token-2022): a 100 USD trade pays 0.0000005%"],
    });
    // 10% capped at 5 tokens (5 USD at 1 USD): the 100-token trade pays 5 tokens, 5%.
    expect(verdictOf(withFee(1_000, null, "5000000"), null, 0, 1)).toEqual({
      verdict: "caution",
      reasons: ["transfer fee 10% capped at 5 tokens (5 USD) (Token-2022): a 100 USD trade pays 5%"],
    });
    // Capped at exactly 10 tokens (10 USD): the 100-token trade pays its full 10%.
    expect(verdictOf(withFee(1_000, null, "10000000"), null, 0, 1)).toEqual({
      verdict: "high_tax",
      reasons: ["transfer fee 10% capped at 10 tokens (10 USD) (Token-2022): a 100 USD trade pays 10%"],
    });
    // Charging nothing now, but 10% with a large cap pending: high_tax.
    expect(verdictOf(withFee(1_000, { bps: 1_000, max: "1000000000", from_epoch: 812 }, "0"), null, 0, 1)).toEqual({
      verdict: "high_tax",
      reasons: [
        "transfer fee 10% capped at 0 tokens now, 10% capped at 1000 tokens (1000 USD) from epoch 812 (Token-2022): no fee is charged now, a 100 USD trade pays 10% from epoch 812",
      ],
    });
  });

  it("with no price, is judged by its rate alone and says so", () => {
    expect(verdictOf(withFee(1_000, null, "1"), null, 0, null)).toEqual({
      verdict: "high_tax",
      reasons: ["transfer fee 10% capped at 0.000001 tokens (Token-2022): no price to value the cap, judged by its 10% rate"],
    });
    expect(verdictOf(withFee(500, null), null, 0, null)).toEqual({
      verdict: "caution",
      reasons: ["transfer fee 5% capped at 1000 tokens (Token-2022): no price to value the cap, judged by its 5% rate"],
    });
  });

  it("is Token-2022's fee: the rate rounded up, at most the maximum", () => {
    expect(transferFeeOn({ bps: 1, max: 1_000n }, 1n)).toBe(1n);
    expect(transferFeeOn({ bps: 1, max: 1_000n }, 10_000n)).toBe(1n);
    expect(transferFeeOn({ bps: 1, max: 1_000n }, 10_001n)).toBe(2n);
    expect(transferFeeOn({ bps: 1_000, max: 7n }, 1_000n)).toBe(7n);
    expect(transferFeeOn({ bps: 1_000, max: 0n }, 1_000n)).toBe(0n);
    expect(transferFeeOn({ bps: 0, max: 1_000n }, 1_000n)).toBe(0n);
  });
});

describe("never charged, never twice", () => {
  it("a call that fails is not charged: bad input with a payment, and a token no venue prices", async () => {
    const before = await usdcOf(buyer(2).address);
    // Bad input is refused before any challenge: the payment comes from a valid call's challenge.
    expect((await post("/v1/wallet-profile", { address: "not-an-address" })).status).toBe(400);
    const { header } = await paymentFor("/v1/wallet-profile", { address: chain.scenario.wallet.address }, 2);
    const bad = await post("/v1/wallet-profile", { address: "not-an-address" }, { "payment-signature": header });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { details: { fields: { field: string }[] } } }).error.details.fields[0]?.field).toBe(
      "body.address",
    );
    const unknown = await paidCall("/v1/dinalibrium", { token: "11111111111111111111111111111112" }, 2);
    expect(unknown.res.status).toBe(404);
    expect(await usdcOf(buyer(2).address)).toBe(before);
  });

  it("wallet-profile: base58 of the right length that is not 32 bytes is bad input naming body.address, not a 502, not charged", async () => {
    // 43 ones are 43 zero bytes; 44 z's are more than 32 bytes. Both pass the pattern, so the stock client pays.
    for (const address of ["1".repeat(43), "z".repeat(44)]) {
      const { res, json, before, after } = await paidCall("/v1/wallet-profile", { address }, 2);
      expect([address, res.status]).toEqual([address, 400]);
      expect(json).toMatchObject({
        error: { code: "invalid_request", details: { fields: [{ field: "body.address", received: address }] } },
      });
      expect(res.headers.get("payment-response")).toBeNull();
      expect(after).toEqual(before);
    }
  });

  it("dinalibrium: a symbol it does not know is bad input naming body.token, with or without a payment, not charged", async () => {
    const before = await usdcOf(buyer(2).address);
    expect((await post("/v1/dinalibrium", { token: "BONK" })).status).toBe(400);
    // Its own symbols are taken in any case: a challenge.
    expect((await post("/v1/dinalibrium", { token: "usdt" })).status).toBe(402);
    const { header } = await paymentFor("/v1/dinalibrium", { token: "SOL" }, 2);
    const bad = await post("/v1/dinalibrium", { token: "BONK" }, { "payment-signature": header });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { details: { fields: { field: string }[] } } }).error.details.fields[0]?.field).toBe(
      "body.token",
    );
    expect(await usdcOf(buyer(2).address)).toBe(before);
  });

  it("a replayed payment gets the kept answer for the same request, and is refused for another; nothing moves again", async () => {
    const body = { address: chain.scenario.payTo };
    const { header } = await paymentFor("/v1/wallet-profile", body, 2);
    const first = await post("/v1/wallet-profile", body, { "payment-signature": header });
    expect(first.status).toBe(200);
    const firstText = await first.text();
    const afterFirst = await usdcOf(buyer(2).address);
    const retry = await post("/v1/wallet-profile", body, { "payment-signature": header });
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(firstText);
    const other = await post("/v1/wallet-profile", { address: chain.scenario.wallet.address }, { "payment-signature": header });
    expect(other.status).toBe(402);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe("payment_already_used");
    expect(await usdcOf(buyer(2).address)).toBe(afterFirst);
  });

  it("a tampered payment is refused and moves nothing: a changed amount, and a changed transaction", async () => {
    const body = { address: chain.scenario.wallet.address };
    const before = await usdcOf(buyer(2).address);
    const { payload } = await paymentFor("/v1/wallet-profile", body, 2);
    const cheaper = { ...payload, accepted: { ...payload.accepted, amount: "1" } };
    const r1 = await post("/v1/wallet-profile", body, { "payment-signature": encodePaymentSignatureHeader(cheaper) });
    expect(r1.status).toBe(402);
    const tx = Buffer.from((payload.payload as { transaction: string }).transaction, "base64");
    tx.writeUInt8((tx.at(-1) as number) ^ 0xff, tx.length - 1); // the last byte of the message: the signature no longer matches
    const altered = { ...payload, payload: { transaction: tx.toString("base64") } };
    const r2 = await post("/v1/wallet-profile", body, { "payment-signature": encodePaymentSignatureHeader(altered) });
    expect(r2.status).toBe(402);
    expect(await usdcOf(buyer(2).address)).toBe(before);
  });

  it("one payment sent twice at once settles once", async () => {
    const body = { address: chain.scenario.feePayer.address };
    const { header } = await paymentFor("/v1/wallet-profile", body, 2);
    const before = await usdcOf(chain.scenario.payTo);
    const [a, b] = await Promise.all([0, 1].map(() => post("/v1/wallet-profile", body, { "payment-signature": header })));
    const statuses = [a?.status, b?.status].sort();
    // One settles; the other waits for it (409 in progress) or, arriving after, gets the kept answer.
    expect(statuses[0]).toBe(200);
    expect([200, 409]).toContain(statuses[1]);
    expect((await usdcOf(chain.scenario.payTo)) - before).toBe(PRICE);
  });
});

describe("an outside buyer", () => {
  it("pays a route from another process with @x402/fetch and the stock SVM client scheme", async () => {
    const script = `
      import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
      import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
      import { ExactSvmScheme } from "@x402/svm/exact/client";
      import { toClientSvmSigner } from "@x402/svm";
      const signer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(process.env.SECRET));
      const client = new x402Client();
      client.register("solana:*", new ExactSvmScheme(toClientSvmSigner(signer), { rpcUrl: process.env.RPC }));
      const pay = wrapFetchWithPayment(fetch, client);
      const res = await pay(process.env.URL, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: "SOL" }) });
      console.log(JSON.stringify({ status: res.status, receipt: res.headers.get("payment-response") !== null, symbol: (await res.json()).tokens?.[0]?.symbol }));
    `;
    const before = await usdcOf(chain.scenario.payTo);
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        env: { ...process.env, SECRET: buyer(0).secretKey, RPC: chain.rpcUrl, URL: `${site}/v1/dinalibrium` },
        cwd: new URL("..", import.meta.url).pathname,
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d));
      child.stderr.on("data", (d: Buffer) => (stderr += d));
      child.on("exit", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`buyer exited ${code}: ${stderr}`))));
    });
    expect(JSON.parse(out.trim().split("\n").at(-1) as string)).toEqual({ status: 200, receipt: true, symbol: "SOL" });
    expect((await usdcOf(chain.scenario.payTo)) - before).toBe(PRICE);
  });

  it("runs the landing page's first-purchase snippet as printed, with the Solana buyer's settings: 200, exactly the price moves", async () => {
    const html = await (await fetch(`${site}/`)).text();
    const snippets = [...html.matchAll(/<pre[^>]*>\s*<code[^>]*>([\s\S]*?)<\/code>/g)].map((m) =>
      decodeHTML((m[1] as string).replace(/<[^>]+>/g, "")),
    );
    // Nothing on the page is Base's: no EVM client, no Base site's port, no EVM key.
    expect(html).not.toMatch(/@x402\/evm|viem|127\.0\.0\.1:4022|BUYER_PRIVATE_KEY|window\.ethereum/);
    expect(html).not.toContain("USDC on Base");
    expect(html).toContain("You need a wallet holding a little USDC on Solana");
    expect(html).toContain("Paid routes settle per call in USDC on Solana (solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp) with x402 v2.");
    const mcp = JSON.parse(snippets.find((s) => s.includes('"mcpServers"')) as string) as {
      mcpServers: Record<string, { env: Record<string, string> }>;
    };
    expect(Object.keys(Object.values(mcp.mcpServers)[0]?.env ?? {})).toEqual([
      "SOLANA_BUYER_KEY",
      "SOLANA_RPC_URL",
      "SOLANA_BASE_URL",
      "MCP_MAX_SPEND_USD",
    ]);
    const snippet = snippets[0] as string;
    expect(snippet).toContain('new URL("/v1/meme-hunter"');
    const before = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer(1).address) };
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", snippet], {
        env: { ...process.env, SOLANA_BUYER_KEY: buyer(1).secretKey, SOLANA_RPC_URL: chain.rpcUrl, SOLANA_BASE_URL: site },
        cwd: new URL("..", import.meta.url).pathname,
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d));
      child.stderr.on("data", (d: Buffer) => (stderr += d));
      child.on("exit", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`snippet exited ${code}: ${stderr}`))));
    });
    // console.log(res.status, await res.json()): the status, then the answer's first line.
    expect(out.startsWith("200 {")).toBe(true);
    expect(out).toContain("network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'");
    expect(await usdcOf(chain.scenario.payTo)).toBe(before.payTo + PRICE);
    expect(await usdcOf(buyer(1).address)).toBe(before.buyer - PRICE);
  });
});

describe("an MCP client", () => {
  it("refuses a Solana challenge naming another payee than MCP_EXPECTED_SOLANA_PAY_TO, paying nothing", async () => {
    const other = buyer(2).address;
    const server = createStdioServer({
      routes,
      baseUrl: service.url,
      solana: { routes: solanaRoutes, baseUrl: site, buyer: { secretKey: buyer(1).secretKey, rpcUrl: chain.rpcUrl } },
      buyer: undefined,
      caps: new SpendCaps({ maxPerCall: 1_000_000n, maxSession: 1_000_000n }),
      expectedSolanaPayTo: other,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const before = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer(1).address) };
      const result = (await client.callTool({ name: "solanaDinalibrium", arguments: { token: "SOL" } })) as CallToolResult;
      const message = `The service asks to be paid to ${chain.scenario.payTo}, not to ${other} (MCP_EXPECTED_SOLANA_PAY_TO). Nothing was paid.`;
      expect(result).toEqual({
        isError: true,
        content: [{ type: "text", text: message }],
        structuredContent: {
          error: { code: "pay_to_mismatch", message, details: { pay_to: chain.scenario.payTo, expected_pay_to: other } },
        },
      });
      expect(await usdcOf(chain.scenario.payTo)).toBe(before.payTo);
      expect(await usdcOf(buyer(1).address)).toBe(before.buyer);
    } finally {
      await client.close();
    }
  });

  it("pays a Solana tool through npm run mcp's server with the Solana buyer, within the caps", async () => {
    const server = createStdioServer({
      routes,
      baseUrl: service.url,
      secondary: { routes: baseToolsRoutes, baseUrl: service.secondaryUrl as string },
      solana: { routes: solanaRoutes, baseUrl: site, buyer: { secretKey: buyer(1).secretKey, rpcUrl: chain.rpcUrl } },
      buyer: undefined,
      caps: new SpendCaps({ maxPerCall: 1_000_000n, maxSession: 1_000_000n }),
      expectedSolanaPayTo: chain.scenario.payTo,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining(["solanaMemeHunter", "solanaDefiSentiment", "solanaDinalibrium", "solanaWalletProfile"]),
      );
      const before = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer(1).address) };
      const result = (await client.callTool({ name: "solanaDinalibrium", arguments: { token: "SOL" } })) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
      const answer = result.structuredContent as { tokens: { symbol: string; weighted_price_usd: number }[] };
      expect(answer.tokens.map((t) => [t.symbol, t.weighted_price_usd])).toEqual([["SOL", 150.03]]);
      expect((await usdcOf(chain.scenario.payTo)) - before.payTo).toBe(PRICE);
      expect(before.buyer - (await usdcOf(buyer(1).address))).toBe(PRICE);
    } finally {
      await client.close();
    }
  });
});

describe("the Solana site's remote /mcp, paid the x402 MCP way", () => {
  const args = { token: "SOL" };
  const signedFor = (challenge: PaymentRequired, i: number) =>
    svmClient(buyer(i).signer, chain.rpcUrl, chain.scenario.network).createPaymentPayload(challenge);
  const httpChallenge = async () => {
    const res = await post("/v1/dinalibrium", args);
    return decodePaymentRequiredHeader(res.headers.get("payment-required") as string);
  };
  /** The settlement transaction's status on the chain. */
  const statusOf = async (signature: string) =>
    (
      await rpc()
        .getSignatureStatuses([signature as Signature])
        .send()
    ).value[0] as { err: unknown; confirmationStatus: string } | null;

  it("lists its routes, answers an unpaid call with the PaymentRequired, and settles a payment in _meta once: exactly the price moves", async () => {
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${site}/mcp`)));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(solanaRoutes.map((r) => r.operationId));
      const call = { name: "solanaDinalibrium", arguments: args };
      const unpaid = (await client.callTool(call)) as CallToolResult;
      expect(unpaid.isError).toBe(true);
      expect(unpaid.structuredContent).toEqual(await httpChallenge());

      const payment = await signedFor(unpaid.structuredContent as unknown as PaymentRequired, 2);
      const before = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer(2).address) };
      const paid = (await client.callTool({ ...call, _meta: { "x402/payment": payment } })) as CallToolResult;
      expect(paid.isError).toBeUndefined();
      const answer = paid.structuredContent as { tokens: { symbol: string; weighted_price_usd: number }[] };
      expect(answer.tokens.map((t) => [t.symbol, t.weighted_price_usd])).toEqual([["SOL", 150.03]]);
      const settlement = paid._meta?.["x402/payment-response"] as { success: boolean; transaction: string; network: string; payer: string };
      expect(settlement).toMatchObject({ success: true, network: chain.scenario.network, payer: buyer(2).address });
      expect(await statusOf(settlement.transaction)).toMatchObject({ err: null, confirmationStatus: "finalized" });
      expect((await usdcOf(chain.scenario.payTo)) - before.payTo).toBe(PRICE);
      expect(before.buyer - (await usdcOf(buyer(2).address))).toBe(PRICE);

      // The same call with the same payment: the kept answer and the same settlement, nothing moves again.
      const again = (await client.callTool({ ...call, _meta: { "x402/payment": payment } })) as CallToolResult;
      expect(again.structuredContent).toEqual(paid.structuredContent);
      expect(again._meta?.["x402/payment-response"]).toMatchObject({ success: true, transaction: settlement.transaction });
      expect((await usdcOf(chain.scenario.payTo)) - before.payTo).toBe(PRICE);
      expect(before.buyer - (await usdcOf(buyer(2).address))).toBe(PRICE);
    } finally {
      await client.close();
    }
  });

  it("with the org.x402/payment extension: resultType payment_required, then complete with the settlement; exactly the price moves", async () => {
    const jsonRpc = async (id: number, meta: Record<string, unknown>) => {
      const { status, answers } = await mcpRpc(site, {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "solanaDinalibrium", arguments: args, _meta: meta },
      });
      expect(status).toBe(200);
      return answers[0]?.result as Record<string, unknown>;
    };
    const unpaid = await jsonRpc(1, CAPABILITY);
    expect(unpaid).toEqual({ resultType: "payment_required", paymentRequired: await httpChallenge() });

    const payment = await signedFor(unpaid.paymentRequired as PaymentRequired, 0);
    const before = { payTo: await usdcOf(chain.scenario.payTo), buyer: await usdcOf(buyer(0).address) };
    const paid = await jsonRpc(2, { ...CAPABILITY, "x402/payment": payment });
    expect(paid.resultType).toBe("complete");
    expect(paid.isError).toBeUndefined();
    expect((paid.structuredContent as { tokens: { symbol: string }[] }).tokens.map((t) => t.symbol)).toEqual(["SOL"]);
    const settlement = (paid._meta as Record<string, { transaction: string }>)["x402/payment-response"];
    expect(settlement).toMatchObject({ success: true, network: chain.scenario.network, payer: buyer(0).address });
    expect(await statusOf(settlement?.transaction as string)).toMatchObject({ err: null, confirmationStatus: "finalized" });
    expect((await usdcOf(chain.scenario.payTo)) - before.payTo).toBe(PRICE);
    expect(before.buyer - (await usdcOf(buyer(0).address))).toBe(PRICE);
  });
});
