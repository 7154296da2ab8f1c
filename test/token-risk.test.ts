/**
 * The token-risk tools against the seeded local chain (src/devnet/scenario-tokens.ts): every
 * seeded token gets the verdict and taxes its plan says, the token check carries the same
 * simulation, and the simulation never moves anything on chain.
 */
import { erc20Abi } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MemePairTruth } from "../src/devnet/scenario-tokens.ts";
import type { RunningService } from "../src/server/service.ts";
import { tokenRiskMethodology } from "../src/token-risk/methodology.ts";
import { paidPost, scenario } from "./support/scenario.ts";
import { chainClient, startTestService } from "./support/service.ts";

let service: RunningService;
let secondary: RunningService;
beforeAll(async () => {
  service = await startTestService();
  secondary = { ...service, url: service.secondaryUrl as string };
});
afterAll(() => service.close());

const truth = () => scenario().tokenRisk;
const pairOf = (symbol: MemePairTruth["symbol"]) => truth().pairs.find((p) => p.symbol === symbol) as MemePairTruth;
const WETH = "0x4200000000000000000000000000000000000006";

describe("POST /v1/honeypot-check", () => {
  it.each(["MEME", "HPOT", "TAX", "BLKL", "RUG"] as const)("gives %s its planned verdict and taxes (within 0.5 pp)", async (symbol) => {
    const pair = pairOf(symbol);
    const { status, body, spent } = await paidPost(secondary, "/v1/honeypot-check", { token: pair.token }, 7);
    expect(status).toBe(200);
    expect(spent).toBe(50_000n);
    const answer = body as Record<string, unknown> & { buy_tax_pct: number; sell_tax_pct: number | null; transfer_tax_pct: number };
    expect(answer.verdict, String(answer.reasons)).toBe(pair.expected.verdict);
    expect(answer.can_buy).toBe(true);
    expect(answer.can_transfer).toBe(true);
    expect(answer.can_sell).toBe(pair.expected.canSell);
    expect(Math.abs(answer.buy_tax_pct - pair.expected.buyTaxPct)).toBeLessThanOrEqual(0.5);
    expect(Math.abs(answer.transfer_tax_pct - pair.expected.transferTaxPct)).toBeLessThanOrEqual(0.5);
    if (pair.expected.canSell) expect(Math.abs((answer.sell_tax_pct as number) - pair.expected.sellTaxPct)).toBeLessThanOrEqual(0.5);
    else {
      expect(answer.sell_tax_pct).toBeNull();
      expect(answer.sell_revert_reason).toBe("HoneypotToken: transfer to pair not allowed");
    }
    expect(answer.pool).toMatchObject({
      address: pair.pair,
      dex: "Seeded v2 factory",
      kind: "uniswap_v2",
      quote_symbol: "WETH",
      quote: WETH,
      fee_bps: 30,
    });
    // Twice the WETH side at the stubbed WETH price (3,120.45 USD).
    const liquidity = (Number(BigInt(pair.reserves.weth)) / 1e18) * 3120.45 * 2;
    expect(answer.pool).toMatchObject({ liquidity_usd: Number(liquidity.toFixed(2)) });
    expect(answer.amount_in).toMatchObject({ quote_symbol: "WETH", usd: 100, capped: false });
    expect(answer.simulated_at_block).toBeGreaterThanOrEqual(truth().lastBlock);
    expect(answer.methodology).toEqual(tokenRiskMethodology("honeypot-check"));
  });

  it("reads the owner's privileges from the bytecode and names them in the reasons", async () => {
    const blkl = (await paidPost(secondary, "/v1/honeypot-check", { token: pairOf("BLKL").token }, 7)).body;
    expect(blkl.owner_privileges).toEqual({
      owner: truth().deployer,
      renounced: false,
      proxy: null,
      privileges: [{ privilege: "blacklist", signature: "setBlacklist(address,bool)", selector: "0x153b0d1e", found_in: "token" }],
    });
    expect(blkl.reasons).toEqual([`the owner ${truth().deployer} can blacklist (setBlacklist(address,bool))`]);
    const tax = (await paidPost(secondary, "/v1/honeypot-check", { token: pairOf("TAX").token }, 7)).body;
    expect(tax.reasons).toEqual(["the sell tax is 10%", `the owner ${truth().deployer} can set fee (setSellTax(uint256))`]);
    const meme = (await paidPost(secondary, "/v1/honeypot-check", { token: pairOf("MEME").token }, 7)).body;
    expect(meme.owner_privileges).toEqual({ owner: null, renounced: false, proxy: null, privileges: [] });
  });

  it("moves nothing: balances and reserves are the same after a simulation", async () => {
    const pair = pairOf("TAX");
    const client = chainClient();
    const read = () =>
      Promise.all([
        client.readContract({ address: pair.token, abi: erc20Abi, functionName: "balanceOf", args: [pair.pair] }),
        client.readContract({ address: WETH, abi: erc20Abi, functionName: "balanceOf", args: [pair.pair] }),
        client.readContract({ address: pair.token, abi: erc20Abi, functionName: "balanceOf", args: [truth().deployer] }),
      ]);
    const before = await read();
    expect(before.slice(0, 2).map(String)).toEqual([pair.reserves.token, pair.reserves.weth]);
    await paidPost(secondary, "/v1/honeypot-check", { token: pair.token }, 7);
    expect(await read()).toEqual(before);
  });

  it("caps the simulated buy at 10% of the pool's quote reserve", async () => {
    const pair = pairOf("RUG");
    const { body } = await paidPost(secondary, "/v1/honeypot-check", { token: pair.token, amount_usd: 100_000 }, 7);
    const cap = (BigInt(pair.reserves.weth) * 1000n) / 10_000n;
    expect(body.amount_in).toMatchObject({ quote_symbol: "WETH", capped: true });
    expect((body.amount_in as { amount: string }).amount).toBe((Number(cap) / 1e18).toString());
    expect(body.verdict).toBe("ok");
  });

  it("answers a token without a pool on the curated factories with caution, and refuses a bad address without charging", async () => {
    const plain = (await paidPost(secondary, "/v1/honeypot-check", { token: scenario().contracts.plainToken }, 7)).body;
    expect(plain).toMatchObject({ pool: null, pools_found: 0, can_buy: null, can_sell: null, verdict: "caution" });
    expect(plain.reasons).toContain("no v2-style pool of the token on the curated factories to simulate a buy and a sell through");
    const bad = await paidPost(secondary, "/v1/honeypot-check", { token: "0xnope" }, 7);
    expect(bad.status).toBe(400);
    expect(bad.spent).toBe(0n);
  });
});

describe("POST /api/token-check carries the simulation", () => {
  it("finds the honeypot and no longer lists honeypot simulation as not checked", async () => {
    const pair = pairOf("HPOT");
    const { status, body } = await paidPost(service, "/api/token-check", { token: pair.token }, 7);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      symbol: "HPOT",
      is_token: true,
      simulation: { verdict: "honeypot", can_sell: false, pool: { address: pair.pair } },
    });
    expect((body.not_checked as string[]).some((t) => t.startsWith("honeypot simulation"))).toBe(false);
  });
});
