/**
 * The token-risk tools against the seeded local chain (src/local/devnet/scenario-tokens.ts): every
 * seeded token gets the verdict and taxes its plan says, the token check carries the same
 * simulation, the simulation never moves anything on chain, and a node failing its calls is
 * never read as "no pools" or "no owner".
 */
import {
  decodeErrorResult,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  http,
  keccak256,
  numberToHex,
  parseUnits,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { loadContracts } from "../src/local/devnet/contracts.ts";
import type { MemePairTruth } from "../src/local/devnet/scenario-tokens.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { assessToken, deepestSimulable, pricePools } from "../src/token-risk/assess.ts";
import { tokenRiskMethodology } from "../src/token-risk/methodology.ts";
import { findPools, type TokenPool } from "../src/token-risk/pools.ts";
import { readLimits, readOwnerPrivileges } from "../src/token-risk/privileges.ts";
import { findBalanceSlot, freshAddress, revertReason, simulatorAbi } from "../src/token-risk/simulate.ts";
import { venuesFor } from "../src/token-risk/venues.ts";
import { startRpcProxy } from "./support/rpc-proxy.ts";
import { paidPost, scenario } from "./support/scenario.ts";
import { chainClient, devnet, startTestService } from "./support/service.ts";

let service: RunningService;
let secondary: RunningService;
beforeAll(async () => {
  service = await startTestService();
  secondary = { ...service, url: service.secondaryUrl as string };
});
afterAll(() => service.close());

const truth = () => scenario().tokenRisk;
/** The token's pool the check must trade through (its deepest): a token with two pools has two entries. */
const pairOf = (symbol: MemePairTruth["symbol"]) =>
  truth().pairs.find((p) => p.symbol === symbol && p.pair === p.expected.pool) as MemePairTruth;
const WETH = "0x4200000000000000000000000000000000000006";
const WETH_USD = 3120.45;
const DEX = { uniswap_v2: "Seeded v2 factory", uniswap_v3: "Seeded v3 factory" } as const;
/**
 * The WETH depth of a seeded pool in wei: a v2 pair's WETH reserve; a v3 pool's virtual WETH
 * reserve of its one full-range position (L x sqrtP when WETH is token1, L / sqrtP when token0).
 */
function wethDepth(p: MemePairTruth): bigint {
  if (!p.v3) return BigInt(p.reserves.weth);
  const [L, sqrtP] = [BigInt(p.v3.liquidity), BigInt(p.v3.sqrtPriceX96)];
  const wethIs1 = BigInt(p.token) < BigInt(WETH);
  const virtual = wethIs1 ? (L * sqrtP) / 2n ** 96n : (L * 2n ** 96n) / sqrtP;
  return virtual < BigInt(p.reserves.weth) ? virtual : BigInt(p.reserves.weth);
}
/** Twice the WETH depth at the stubbed WETH price (3,120.45 USD), to the cent. */
const liquidityUsd = (p: MemePairTruth) => Number(((Number(wethDepth(p)) / 1e18) * WETH_USD * 2).toFixed(2));

describe("POST /v1/honeypot-check", () => {
  it.each(["MEME", "HPOT", "TAX", "BLKL", "RUG", "BTAX"] as const)(
    "gives %s its planned verdict and taxes (within 0.5 pp)",
    async (symbol) => {
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
        dex: DEX[pair.kind],
        kind: pair.kind,
        quote_symbol: "WETH",
        quote: WETH,
        fee_bps: 30,
        liquidity_usd: liquidityUsd(pair),
      });
      expect(answer.pools_found).toBe(truth().pairs.filter((p) => p.token === pair.token).length);
      expect(answer.amount_in).toMatchObject({ quote_symbol: "WETH", usd: 100, capped: false });
      expect(answer.simulated_at_block).toBeGreaterThanOrEqual(truth().lastBlock);
      expect(answer.methodology).toEqual(tokenRiskMethodology("honeypot-check"));
    },
  );

  it("trades BTAX through its deeper v3 pool, not its shallower untaxed v2 pair, and measures its 5% buy tax there", async () => {
    const [v3, v2] = [
      truth().pairs.find((p) => p.symbol === "BTAX" && p.kind === "uniswap_v3"),
      truth().pairs.find((p) => p.symbol === "BTAX" && p.kind === "uniswap_v2"),
    ] as [MemePairTruth, MemePairTruth];
    // The ground truth itself: the v3 pool is the deeper one, and both quote the same price.
    expect(liquidityUsd(v3)).toBeGreaterThan(10 * liquidityUsd(v2));
    expect(v3.expected.pool).toBe(v3.pair);
    const { body } = await paidPost(secondary, "/v1/honeypot-check", { token: v3.token }, 7);
    expect(body).toMatchObject({
      pool: { address: v3.pair, kind: "uniswap_v3", dex: "Seeded v3 factory", fee_bps: 30, liquidity_usd: liquidityUsd(v3) },
      pools_found: 2,
      can_buy: true,
      can_sell: true,
      can_transfer: true,
      buy_tax_pct: 5,
      sell_tax_pct: 0,
      transfer_tax_pct: 0,
      verdict: "caution",
    });
    expect(body.reasons).toEqual(["the buy tax is 5%", `the owner ${truth().deployer} can set fee (setBuyTax(uint256))`]);
  });

  it("reports a sale a concentrated pool refuses: a token keeping 5% of what enters the pool is paid short, with both amounts", async () => {
    // BTAX run with SellTaxToken's code (same storage: owner, pool, tax in bps after ERC20's five
    // slots), so it keeps 5% of every transfer into its v3 pool; the pool would revert with "IIA".
    const pool = pairOf("BTAX");
    const client = chainClient();
    const block = await client.getBlockNumber({ cacheTime: 0 });
    const artifacts = loadContracts();
    const [simulator, fresh] = [freshAddress(), freshAddress()];
    const wethSlot = await findBalanceSlot(client, WETH, block);
    expect(wethSlot).toEqual({ slot: 3, layout: "solidity" }); // WETH9's balanceOf, after its name, symbol and decimals
    const key = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [simulator, 3n]));
    const quoteIn = parseUnits("0.05", 18);
    const { data } = await client.call({
      to: simulator,
      data: encodeFunctionData({
        abi: simulatorAbi,
        functionName: "simulate",
        args: [pool.pair, pool.token, WETH, quoteIn, fresh, 30n, 2],
      }),
      blockNumber: block,
      gas: 30_000_000n,
      stateOverride: [
        { address: simulator, code: artifacts.TokenRiskSimulator.deployedBytecode },
        { address: WETH, stateDiff: [{ slot: key, value: numberToHex(quoteIn, { size: 32 }) }] },
        { address: pool.token, code: artifacts.SellTaxToken.deployedBytecode },
      ],
    });
    const r = decodeFunctionResult({ abi: simulatorAbi, functionName: "simulate", data: data ?? "0x" });
    expect([r.buyOk, r.bought === r.buyExpected, r.transferOk, r.sellOk]).toEqual([true, true, true, false]);
    const shortPaid = [{ type: "error", name: "ShortPaid", inputs: [{ type: "uint256" }, { type: "uint256" }] }] as const;
    const [owed, arrived] = decodeErrorResult({ abi: shortPaid, data: r.sellError }).args;
    expect(owed).toBe(r.sellSent);
    expect(arrived).toBe(owed - (owed * 500n) / 10_000n);
    expect(revertReason(r.sellError)).toBe(
      `the pool received ${arrived} of the ${owed} it asked for (5% kept by the token on the way in); a concentrated-liquidity pool refuses a short payment ("IIA"), so no router can sell it there`,
    );
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

  it("moves nothing through a v3 pool either: its balances, price and liquidity are the same after a simulation", async () => {
    const pool = pairOf("BTAX");
    const client = chainClient();
    const poolAbi = [
      { type: "function", name: "slot0", stateMutability: "view", inputs: [], outputs: [{ type: "uint160" }] },
      { type: "function", name: "liquidity", stateMutability: "view", inputs: [], outputs: [{ type: "uint128" }] },
    ] as const;
    const read = () =>
      Promise.all([
        client.readContract({ address: pool.token, abi: erc20Abi, functionName: "balanceOf", args: [pool.pair] }),
        client.readContract({ address: WETH, abi: erc20Abi, functionName: "balanceOf", args: [pool.pair] }),
        client.readContract({ address: pool.pair, abi: poolAbi, functionName: "slot0" }),
        client.readContract({ address: pool.pair, abi: poolAbi, functionName: "liquidity" }),
      ]);
    const before = await read();
    expect(before.map(String)).toEqual([pool.reserves.token, pool.reserves.weth, pool.v3?.sqrtPriceX96, pool.v3?.liquidity]);
    await paidPost(secondary, "/v1/honeypot-check", { token: pool.token }, 7);
    expect(await read()).toEqual(before);
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
    expect(plain.reasons).toContain("no pool of the token with liquidity on the curated factories to simulate a buy and a sell through");
    const bad = await paidPost(secondary, "/v1/honeypot-check", { token: "0xnope" }, 7);
    expect(bad.status).toBe(400);
    expect(bad.spent).toBe(0n);
  });

  it("refuses, without charging, an address that is not a token: a wallet or another contract", async () => {
    const wallet = scenario().wallets.find((w) => w.name === "whale-1")?.address as string;
    const multicall = "0xcA11bde05977b3631167028862bE2a173976CA11";
    for (const token of [wallet, multicall]) {
      const { status, body, spent } = await paidPost(secondary, "/v1/honeypot-check", { token }, 7);
      expect(status, token).toBe(400);
      expect(spent, token).toBe(0n);
      expect(body.error, token).toEqual({
        code: "invalid_request",
        message: `Invalid request: body.token (${token} does not answer decimals() like an ERC-20 token).`,
        details: { fields: [{ field: "body.token", expected: "the address of an ERC-20 token", received: token }] },
        docs: "/errors#invalid_request",
      });
    }
  });
});

describe("the deepest pool across kinds", () => {
  const weth = { symbol: "WETH", address: WETH, decimals: 18, quote: true, peg_usd: null, default: true } as const;
  const token = "0x00000000000000000000000000000000000000aa";
  const Q96 = 2n ** 96n;
  const v2 = (wethReserve: bigint): TokenPool => ({
    address: "0x00000000000000000000000000000000000000b2",
    factory: { name: "v2", kind: "uniswap_v2", address: "0x00000000000000000000000000000000000000f2", fee_bps: 30 },
    token,
    counter: weth,
    feeBps: 30,
    v2Style: true,
    stable: false,
    reserves: { token: 10n ** 27n, counter: wethReserve },
    sqrtPriceX96: null,
    liquidity: null,
    balances: { token: 10n ** 27n, counter: wethReserve },
    tokenIs0: true,
  });
  /** A v3 pool at price 1 (raw WETH per raw token, token0): its virtual WETH reserve is L itself. */
  const v3 = (inRangeL: bigint, wethBalance: bigint): TokenPool => ({
    ...v2(0n),
    address: "0x00000000000000000000000000000000000000b3",
    factory: { name: "v3", kind: "uniswap_v3", address: "0x00000000000000000000000000000000000000f3" },
    v2Style: false,
    reserves: null,
    sqrtPriceX96: Q96,
    liquidity: inRangeL,
    balances: { token: 10n ** 27n, counter: wethBalance },
  });
  const prices = { price: async () => ({ price_usd: "2000" }) } as never;
  const ether = 10n ** 18n;

  it("ranks a v3 pool by the liquidity in range at its price, not by what its out-of-range positions hold", async () => {
    // 50 WETH held, but only 2 WETH of virtual reserve in range: the 10 WETH v2 pair is deeper.
    const outOfRange = await pricePools([v2(10n * ether), v3(2n * ether, 50n * ether)], prices);
    expect(outOfRange.map((p) => p.liquidityUsd)).toEqual([40_000, 8_000]);
    expect(deepestSimulable(outOfRange)?.factory.kind).toBe("uniswap_v2");
    // 20 WETH in range (of 30 held): the v3 pool is deeper; a virtual reserve above the balance counts the balance.
    const inRange = await pricePools([v2(10n * ether), v3(20n * ether, 30n * ether)], prices);
    expect(deepestSimulable(inRange)?.factory.kind).toBe("uniswap_v3");
    const capped = await pricePools([v3(90n * ether, 30n * ether)], prices);
    expect(capped[0]?.liquidityUsd).toBe(120_000);
    // No liquidity in range: nothing to trade through.
    expect(deepestSimulable(await pricePools([v3(0n, 30n * ether)], prices))).toBeNull();
  });
});

describe("POST /v1/meme-hunter", () => {
  /** A window reaching back past every seeded pair's creation, from the head as it is now (other files' payments move it). */
  async function windowOverSeededPairs() {
    const head = Number(await chainClient().getBlockNumber({ cacheTime: 0 }));
    const first = Math.min(...truth().pairs.map((p) => p.createdBlock));
    return { head, blocks: head - first + 1 };
  }
  type Hunted = Record<string, unknown> & { pair: string; liquidity_usd: number; top10_share_pct: number; created_block: number };

  it("lists exactly the seeded new pairs with their liquidity, trading and verdicts, and flags the one whose liquidity was pulled", async () => {
    const { head, blocks } = await windowOverSeededPairs();
    const { status, body, spent } = await paidPost(secondary, "/v1/meme-hunter", { blocks, min_liquidity_usd: 0, limit: 100 }, 7);
    expect(status).toBe(200);
    expect(spent).toBe(100_000n);
    const from = body.from_block as number;
    expect(from).toBeLessThanOrEqual(Math.min(...truth().pairs.map((p) => p.createdBlock)));
    expect(body.to_block).toBeGreaterThanOrEqual(head);
    // The USDL pools pair two curated tokens: created in the window, but not new-token pairs.
    // Six new tokens in seven pools (BTAX has a v3 pool and a v2 pair), and four USDL pools.
    expect(body).toMatchObject({ factories_scanned: 3, pairs_created: 11, new_token_pairs: 7, above_min_liquidity: 7 });
    expect(truth().pairs.length).toBe(7);
    const listed = body.pairs as Hunted[];
    expect(listed.map((p) => p.pair).sort()).toEqual(
      truth()
        .pairs.map((p) => p.pair)
        .sort(),
    );
    const client = chainClient();
    for (const pair of truth().pairs) {
      const got = listed.find((p) => p.pair === pair.pair) as Hunted;
      const created = await client.getBlock({ blockNumber: BigInt(pair.createdBlock) });
      const latest = await client.getBlock({ blockNumber: BigInt(body.to_block as number) });
      // The share of the token received outside the pair in the window that went to the 10 largest receivers.
      const received = new Map<string, bigint>();
      const pools = new Set(
        truth()
          .pairs.filter((p) => p.token === pair.token)
          .map((p) => p.pair),
      );
      for (const t of scenario().transfers) {
        if (t.token !== pair.symbol || t.block < from || pools.has(t.to) || t.to === "0x0000000000000000000000000000000000000000") continue;
        received.set(t.to, (received.get(t.to) ?? 0n) + BigInt(t.value));
      }
      const amounts = [...received.values()].sort((a, b) => (a > b ? -1 : 1));
      const total = amounts.reduce((a, b) => a + b, 0n);
      const top10 = amounts.slice(0, 10).reduce((a, b) => a + b, 0n);
      expect(got, pair.pair).toMatchObject({
        token: pair.token,
        symbol: pair.symbol,
        dex: DEX[pair.kind],
        quote_symbol: "WETH",
        created_block: pair.createdBlock,
        age_minutes: Math.floor((Number(latest.timestamp) - Number(created.timestamp)) / 60),
        liquidity_usd: liquidityUsd(pair),
        buys: pair.buys,
        sells: pair.sells,
        unique_buyers: pair.uniqueBuyers,
        // BTAX: nothing of it reached anyone but its pools inside the window (its supply was minted before).
        top10_share_pct: total > 0n ? Number((top10 * 10_000n) / total) / 100 : null,
        liquidity_removed: pair.liquidityRemovedPct > 0,
        verdict: pair.expected.verdict,
      });
    }
    // RUG: 12 WETH added at launch; the burn returned the WETH the ground truth records from the pair to the deployer.
    const rug = pairOf("RUG");
    const burned = scenario().transfers.find((t) => t.token === "WETH" && t.from === rug.pair && t.to === truth().deployer);
    const removedPct = Math.min(100, Number((BigInt(burned?.value ?? 0) * 10_000n) / 12_000_000_000_000_000_000n) / 100);
    expect(listed.find((p) => p.pair === rug.pair)).toMatchObject({ liquidity_removed: true, liquidity_removed_pct: removedPct });
    expect(removedPct).toBeGreaterThan(90);
    // Ranked least risky first; each score is the sum of its stated contributions.
    const scores = listed.map((p) => p.risk_score as number);
    expect(scores).toEqual([...scores].sort((a, b) => a - b));
    for (const p of listed) {
      const inputs = p.risk_inputs as { scaled: number; weight: number; contribution: number }[];
      expect(inputs.map((i) => i.weight).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
      expect(p.risk_score).toBeCloseTo(
        inputs.reduce((sum, i) => sum + i.contribution, 0),
        1,
      );
    }
    expect(listed.at(-1)?.symbol).toBe("HPOT");
    expect(body.methodology).toEqual(tokenRiskMethodology("meme-hunter"));
  });

  it("filters by liquidity and limit, and finds nothing in a window after the seeded pairs", async () => {
    const { blocks } = await windowOverSeededPairs();
    const deepest = truth().pairs.reduce((a, b) => (liquidityUsd(a) >= liquidityUsd(b) ? a : b));
    const deep = await paidPost(secondary, "/v1/meme-hunter", { blocks, min_liquidity_usd: liquidityUsd(deepest) }, 7);
    expect((deep.body.pairs as Hunted[]).map((p) => p.pair)).toEqual([deepest.pair]);
    expect(deep.body).toMatchObject({ new_token_pairs: 7, above_min_liquidity: 1 });
    const two = await paidPost(secondary, "/v1/meme-hunter", { blocks, min_liquidity_usd: 0, limit: 2 }, 7);
    expect((two.body.pairs as Hunted[]).length).toBe(2);
    const head = Number(await chainClient().getBlockNumber({ cacheTime: 0 }));
    const recent = await paidPost(secondary, "/v1/meme-hunter", { blocks: Math.max(1, head - truth().lastBlock) }, 7);
    expect(recent.body).toMatchObject({ pairs_created: 0, new_token_pairs: 0, pairs: [] });
    const tooMany = await paidPost(secondary, "/v1/meme-hunter", { blocks: 43_201 }, 7);
    expect(tooMany.status).toBe(400);
    expect(tooMany.spent).toBe(0n);
  });
});

describe("POST /v1/dinalibrium", () => {
  const PRICE = { USDC: 1.0001, WETH: 3120.45 } as const;
  const DECIMALS = { USDC: 6, WETH: 18 } as const;

  it("finds the seeded deviations of the local stablecoin within 1 bp, with each pool's peg and the widest gap", async () => {
    const stable = truth().stable;
    const { status, body, spent } = await paidPost(secondary, "/v1/dinalibrium", { token: "usdl" }, 7);
    expect(status).toBe(200);
    expect(spent).toBe(100_000n);
    const [answer] = body.tokens as {
      symbol: string;
      reference_price_usd: number;
      reference_source: string;
      pools: { pool: string; deviation_bps: number; liquidity_usd: number; peg: string; fee_bps: number; gap_after_fee_bps: number }[];
      weighted_deviation_bps: number;
      peg: string;
      max_gap_bps: number;
      max_gap_after_fees_bps: number;
      max_gap_between: string[];
    }[];
    expect(answer).toMatchObject({ symbol: "USDL", stablecoin: true, reference_price_usd: 1, reference_source: "peg", pools_skipped: 0 });
    expect(answer?.pools.map((p) => p.pool).sort()).toEqual(stable.pools.map((p) => p.pool).sort());
    const implied = new Map<string, number>();
    for (const planned of stable.pools) {
      const got = answer?.pools.find((p) => p.pool === planned.pool);
      const quoteUnits = Number(BigInt(planned.balances.quote)) / 10 ** DECIMALS[planned.quote];
      let price: number;
      if (planned.sqrtPriceX96) {
        // USDL sorts before USDC: the pool's price is raw USDC per raw USDL.
        const raw = (Number(BigInt(planned.sqrtPriceX96)) / 2 ** 96) ** 2;
        price = raw * 10 ** 12 * PRICE[planned.quote];
      } else price = (quoteUnits / (Number(BigInt(planned.balances.usdl)) / 1e18)) * PRICE[planned.quote];
      implied.set(planned.pool, price);
      const deviation = (price - 1) * 10_000;
      expect(Math.abs((got?.deviation_bps ?? Number.NaN) - planned.deviationBps), planned.pool).toBeLessThanOrEqual(1);
      expect(got?.deviation_bps).toBeCloseTo(deviation, 1);
      expect(got).toMatchObject({
        fee_bps: planned.feeBps,
        liquidity_usd: Number((quoteUnits * PRICE[planned.quote] * 2).toFixed(2)),
        peg: Math.abs(planned.deviationBps) < 10 ? "on_peg" : Math.abs(planned.deviationBps) < 100 ? "drifting" : "depegged",
      });
      expect(got?.gap_after_fee_bps).toBeCloseTo(Math.max(0, Math.abs(deviation) - planned.feeBps), 1);
    }
    expect(answer?.pools.map((p) => p.peg).sort()).toEqual(["depegged", "depegged", "drifting", "on_peg"]);
    // The widest gap: the -320 bps pool against the +150 bps one, less 0.30% and 0.01% of fees.
    const low = stable.pools.find((p) => p.deviationBps === -320) as { pool: string; feeBps: number };
    const high = stable.pools.find((p) => p.deviationBps === 150) as { pool: string; feeBps: number };
    const gap = ((implied.get(high.pool) as number) - (implied.get(low.pool) as number)) * 10_000;
    expect(answer?.max_gap_between).toEqual([low.pool, high.pool]);
    expect(Math.abs((answer?.max_gap_bps ?? 0) - 470)).toBeLessThanOrEqual(1);
    expect(answer?.max_gap_bps).toBeCloseTo(gap, 1);
    expect(answer?.max_gap_after_fees_bps).toBeCloseTo(gap - low.feeBps - high.feeBps, 1);
    const pools = answer?.pools ?? [];
    const weighted = pools.reduce((s, p) => s + p.deviation_bps * p.liquidity_usd, 0) / pools.reduce((s, p) => s + p.liquidity_usd, 0);
    expect(answer?.weighted_deviation_bps).toBeCloseTo(weighted, 1);
    expect(answer?.peg).toBe(Math.abs(weighted) < 10 ? "on_peg" : Math.abs(weighted) < 100 ? "drifting" : "depegged");
    expect(body.methodology).toEqual(tokenRiskMethodology("dinalibrium"));
  });

  it("answers the default tokens, prices WETH against its market price, and refuses an unknown symbol without charging", async () => {
    const { body } = await paidPost(secondary, "/v1/dinalibrium", {}, 7);
    expect((body.tokens as { symbol: string }[]).map((t) => t.symbol)).toEqual(["WETH", "USDC", "USDL"]);
    const weth = (
      body.tokens as {
        symbol: string;
        reference_price_usd: number;
        reference_source: string;
        pools: { counter_symbol: string; deviation_bps: number }[];
      }[]
    )[0];
    expect(weth).toMatchObject({ reference_price_usd: 3120.45, reference_source: "dexscreener", stablecoin: false, peg: null });
    // WETH against USDL (at its 1 USD peg): the pool that holds USDL 45 bps under its peg holds WETH about 45 bps over.
    const usdlPool = weth?.pools.find((p) => p.counter_symbol === "USDL");
    expect(usdlPool?.deviation_bps).toBeCloseTo((1 / (1 - 0.0045) - 1) * 10_000, 0);
    const unknown = await paidPost(secondary, "/v1/dinalibrium", { token: "NOPE" }, 7);
    expect(unknown.status).toBe(404);
    expect(unknown.spent).toBe(0n);
    expect(unknown.body).toMatchObject({ error: { code: "not_found", details: { token: "NOPE", symbols: ["WETH", "USDC", "USDL"] } } });
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

describe("a node failing eth_call (HTTP 503) during the token-risk reads", () => {
  it("pools, owner and limits fail with the 503 chain error, not read as none; healthy, the same reads find them", async () => {
    const pair = pairOf("BTAX");
    const rpc = await startRpcProxy(devnet().rpcUrl);
    try {
      const client = createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 }));
      const venues = venuesFor("local");
      const quotes = venues.tokens.filter((t) => t.quote);
      const block = await client.getBlockNumber({ cacheTime: 0 });
      const code = (await client.getCode({ address: pair.token, blockNumber: block })) ?? "0x";
      const reads = () => [
        findPools(client, pair.token, venues.factories, quotes, block),
        readOwnerPrivileges(client, pair.token, code, block),
        readLimits(client, pair.token, block),
      ];
      const [pools, privileges] = (await Promise.all(reads())) as [TokenPool[], { owner: string | null }];
      expect(pools.map((p) => p.address).sort()).toEqual(
        truth()
          .pairs.filter((p) => p.symbol === "BTAX")
          .map((p) => p.pair)
          .sort(),
      );
      expect(privileges.owner).toBe(truth().deployer);

      rpc.options.failMethods = ["eth_call"];
      await Promise.all(reads().map((read) => expect(read).rejects.toMatchObject({ code: "unavailable", status: 503 })));

      // Only the token's own decimals() read failing: no longer read as "not a token, no limits".
      rpc.options.failMethods = [];
      rpc.options.failSelectors = ["0x313ce567"];
      const deps = { chain: client, venues, prices: { price: async (token: `0x${string}`) => ({ token, price_usd: "1" }) as never } };
      await expect(assessToken(deps, pair.token, 100, block, { code })).rejects.toMatchObject({
        code: "unavailable",
        status: 503,
      });
    } finally {
      await rpc.close();
    }
  });

  it("meme-hunter with the tokens' symbol() reads failing answers 503, not charged, instead of listing them without symbols", async () => {
    const rpc = await startRpcProxy(devnet().rpcUrl, { failSelectors: ["0x95d89b41"] });
    const proxied = await startTestService({ readTransport: http(rpc.url, { retryCount: 0 }) });
    try {
      const head = Number(await chainClient().getBlockNumber({ cacheTime: 0 }));
      const blocks = head - Math.min(...truth().pairs.map((p) => p.createdBlock)) + 1;
      const answer = await paidPost(
        { ...proxied, url: proxied.secondaryUrl as string },
        "/v1/meme-hunter",
        { blocks, min_liquidity_usd: 0, limit: 100 },
        7,
      );
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ error: { code: "unavailable", details: { upstream: "rpc" } } });
      expect(answer.spent).toBe(0n);
      expect(rpc.http.some((r) => r.status === 503)).toBe(true);
    } finally {
      await proxied.close();
      await rpc.close();
    }
  });
});
