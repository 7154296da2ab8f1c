/**
 * The chain-analytics endpoints over real HTTP, each paid call through a real x402 buyer
 * (accounts 8 and 9 only), against the seeded scenario and the market-data stubs: every
 * answer equals the ground truth exactly (balances, nonces, counts, the whale list and its
 * order, proxy detection, classes, fee levels of the mined blocks, the fixtures' prices).
 */
import { type Address, getAddress, parseAbiItem } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { methodologyFor } from "../src/analytics/methodology.ts";
import { base as baseNetwork } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import {
  classOf,
  decimal,
  expectedDirection,
  labelsOf,
  mineFeeBlocks,
  paidPost,
  scenario,
  transfersOf,
  wallet,
} from "./support/scenario.ts";
import { buyerAccount, chainClient, devnet, startTestService, usdcBalance } from "./support/service.ts";

const PRICE = 100_000n; // 0.10 USDC in atomic units
const USDC = baseNetwork.usdc.address;
const WETH = "0x4200000000000000000000000000000000000006";

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

const latestBlock = async () => Number(await chainClient().getBlockNumber({ cacheTime: 0 }));

/** USD value in cents, rounded half up, of `value` smallest units at a price of `priceUnits / 10^priceScale`. */
function usd(value: bigint, decimals: number, priceUnits: bigint, priceScale: number): number {
  const denominator = 10n ** BigInt(decimals + priceScale - 2);
  return Number((value * priceUnits * 2n + denominator) / (2n * denominator)) / 100;
}

describe("wallet-profile", () => {
  for (const name of ["exchange-a", "cold", "whale-2"]) {
    it(`profiles ${name} exactly as the scenario left it`, async () => {
      const w = wallet(name);
      const latest = await latestBlock();
      const usdcTransfers = transfersOf("USDC").filter((t) => t.from === w.address || t.to === w.address);
      const { status, body, spent } = await paidPost(service, "/api/wallet-profile", { address: w.address.toLowerCase() });
      expect(status).toBe(200);
      expect(spent).toBe(PRICE);
      expect(body).toEqual({
        address: w.address,
        chain_id: baseNetwork.chainId,
        block_number: latest,
        is_contract: false,
        class: "wallet",
        balance_eth: decimal(w.ethWei, 18),
        balance_wei: w.ethWei,
        balance_usdc: decimal(w.usdcAtomic, 6),
        nonce: w.nonce,
        recent_usdc_activity: {
          window_blocks: latest + 1,
          from_block: 0,
          to_block: latest,
          transfers_found: usdcTransfers.length,
          sent: usdcTransfers.filter((t) => t.from === w.address).length,
          received: usdcTransfers.filter((t) => t.to === w.address).length,
        },
        labels: labelsOf(w.address),
        methodology: methodologyFor("wallet-profile"),
      });
    });
  }

  it("names the cold wallet's facts in plain numbers: received only, never sent", async () => {
    const { body } = await paidPost(service, "/api/wallet-profile", { address: wallet("cold").address }, 7);
    expect(body).toMatchObject({
      nonce: 0,
      balance_eth: "0",
      balance_usdc: "125000",
      labels: [],
      recent_usdc_activity: { transfers_found: 1, sent: 0, received: 1 },
    });
  });

  it("says a contract is one: the v3 pool, with its label", async () => {
    const { body } = await paidPost(service, "/api/wallet-profile", { address: scenario().contracts.v3Pool }, 7);
    expect(body).toMatchObject({
      is_contract: true,
      class: "v3_pool",
      balance_usdc: "1560000",
      nonce: 1,
      labels: ["Seeded WETH/USDC v3 pool"],
    });
  });
});

describe("gas-tracker", () => {
  it("gives the fee levels of the last 20 mined blocks and their USD cost at the fixture ETH price", async () => {
    const plan = await mineFeeBlocks(devnet().rpcUrl);
    const pending = await chainClient().getBlock({ blockTag: "pending" });
    const baseFee = pending.baseFeePerGas as bigint;
    const { status, body, spent } = await paidPost(service, "/api/gas-tracker", {});
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    // Five equal-gas transfers per block: the 10th/50th/90th percentiles are the 1st, 3rd and 5th tips;
    // over 20 blocks the medians are (2+3)/2 M, 12 M and 100 M wei (src/local/devnet/scenario.ts feeBlockTips).
    const tips = { low: 2_500_000n, medium: 12_000_000n, high: 100_000_000n };
    const cost = (gas: bigint, tip: bigint) => {
      // gas x (base + tip) wei x 3120.45 USD/ETH, rounded half up to 8 decimals.
      const scaled = gas * (baseFee + tip) * 312_045n; // x 10^-18 ETH, x 10^-2 USD
      const unit = 10n ** 12n; // 10^(18 + 2 - 8)
      return Number((scaled * 2n + unit) / (2n * unit)) / 1e8;
    };
    expect(body).toEqual({
      chain_id: baseNetwork.chainId,
      block_number: plan.blocks.at(-1),
      base_fee_gwei: Number(baseFee) / 1e9,
      priority_fee_gwei: { low: 0.0025, medium: 0.012, high: 0.1 },
      percentiles: { low: 10, medium: 50, high: 90 },
      blocks_sampled: 20,
      blocks_with_transactions: 20,
      eth_price_usd: 3120.45,
      price_source: "dexscreener",
      usd_estimate: {
        transfer_21000: cost(21_000n, tips.medium),
        transfer_21000_low: cost(21_000n, tips.low),
        transfer_21000_medium: cost(21_000n, tips.medium),
        transfer_21000_high: cost(21_000n, tips.high),
        erc20_transfer_65000: cost(65_000n, tips.medium),
        erc20_transfer_65000_low: cost(65_000n, tips.low),
        erc20_transfer_65000_medium: cost(65_000n, tips.medium),
        erc20_transfer_65000_high: cost(65_000n, tips.high),
      },
      methodology: methodologyFor("gas-tracker"),
    });
    expect(plan.tipsWei.map((t) => t.length)).toEqual(Array(20).fill(5));
  });
});

describe("token-check", () => {
  const s = () => scenario();
  const base = (token: Address) => ({
    token,
    chain_id: baseNetwork.chainId,
    labels: labelsOf(token),
    not_checked: methodologyFor("token-check").not_checked,
    methodology: methodologyFor("token-check"),
  });
  /** The honeypot simulation of a seeded token no curated factory has a pool for: nothing to trade through. */
  const unsimulated = (token: Address, block: number, ownerPrivileges: Record<string, unknown>, reasons: string[]) => ({
    token,
    pool: null,
    pools_found: 0,
    amount_in: null,
    can_buy: null,
    can_sell: null,
    can_transfer: null,
    buy_tax_pct: null,
    sell_tax_pct: null,
    transfer_tax_pct: null,
    buy_revert_reason: null,
    sell_revert_reason: null,
    transfer_revert_reason: null,
    limits: { max_transaction: null, max_wallet: null, hit: false },
    owner_privileges: ownerPrivileges,
    verdict: "caution",
    reasons: ["no pool of the token with liquidity on the curated factories to simulate a buy and a sell through", ...reasons],
    simulated_at_block: block,
  });
  const MINT = { privilege: "mint", signature: "mint(address,uint256)", selector: "0x40c10f19" };

  it("finds the plain token: metadata, no proxy, its v2 pair as the deepest DEX pair", async () => {
    const token = s().contracts.plainToken;
    const latest = await latestBlock();
    const { status, body, spent } = await paidPost(service, "/api/token-check", { token });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    expect(body).toEqual({
      ...base(token),
      block_number: latest,
      is_contract: true,
      class: "token",
      is_token: true,
      name: "Plain Test Token",
      symbol: "PLAIN",
      decimals: 18,
      total_supply: decimal(s().tokens.PLAIN.totalSupply, 18),
      is_proxy: false,
      proxy: null,
      dex: {
        liquidity_usd: 624090,
        volume_24h_usd: 12480.5,
        price_usd: "0.312045",
        pair_address: s().contracts.v2Pair,
        dex_id: "uniswap",
        pair: "PLAIN/WETH",
        pairs_found: 1,
        source: "dexscreener",
      },
      // PLAIN's minter is an immutable the token does not expose as owner(): who can mint is not named.
      simulation: unsimulated(token, latest, { owner: null, renounced: false, proxy: null, privileges: [{ ...MINT, found_in: "token" }] }, [
        "an account the token does not name (no owner() or getOwner()) can mint (mint(address,uint256))",
      ]),
    });
  });

  it("detects the EIP-1967 proxy token: implementation and admin from the slots; no DEX pair listed", async () => {
    const token = s().contracts.proxyToken;
    const { body } = await paidPost(service, "/api/token-check", { token }, 7);
    expect(body).toEqual({
      ...base(token),
      block_number: expect.any(Number),
      is_contract: true,
      class: "token",
      is_token: true,
      name: "Proxied Test Token",
      symbol: "PRXY",
      decimals: 18,
      total_supply: "2625000",
      is_proxy: true,
      proxy: { standard: "eip1967", implementation: s().contracts.proxyImplementation, admin: s().contracts.proxyAdmin, beacon: null },
      dex: null,
      simulation: unsimulated(
        token,
        body.block_number as number,
        {
          owner: wallet("deployer").address,
          renounced: false,
          proxy: { standard: "eip1967", implementation: s().contracts.proxyImplementation },
          privileges: [{ ...MINT, found_in: "implementation" }],
        },
        [
          `the owner ${wallet("deployer").address} can mint (mint(address,uint256))`,
          "the token is an upgradeable proxy (eip1967): its code can be replaced",
        ],
      ),
    });
  });

  it("answers for USDC with the deepest Base pair, USDC being its quote token", async () => {
    const { body } = await paidPost(service, "/api/token-check", { token: USDC });
    expect(body).toMatchObject({
      class: "token",
      name: "USD Coin",
      symbol: "USDC",
      decimals: 6,
      is_proxy: false,
      labels: ["USD Coin (local stand-in)"],
      dex: {
        liquidity_usd: 18250000.5,
        volume_24h_usd: 24512300.4,
        price_usd: "1",
        dex_id: "aerodrome",
        pair: "WETH/USDC",
        pairs_found: 5,
      },
    });
  });

  it("says a wallet is not a contract, a pool is a contract but not a token, and a v2 pair is also its liquidity token", async () => {
    const cold = wallet("cold").address;
    const walletAnswer = await paidPost(service, "/api/token-check", { token: cold });
    expect(walletAnswer.body).toMatchObject({
      token: cold,
      is_contract: false,
      class: "wallet",
      is_token: false,
      name: null,
      symbol: null,
      decimals: null,
      total_supply: null,
      is_proxy: false,
      proxy: null,
      dex: null,
    });
    const pool = await paidPost(service, "/api/token-check", { token: s().contracts.v3Pool }, 7);
    expect(pool.body).toMatchObject({
      is_contract: true,
      class: "v3_pool",
      is_token: false,
      name: null,
      decimals: null,
      is_proxy: false,
      dex: null,
      labels: ["Seeded WETH/USDC v3 pool"],
    });
    // A Uniswap v2 pair is an ERC-20 too, its liquidity token, as every v2 pair on Base is.
    const pair = await paidPost(service, "/api/token-check", { token: s().contracts.v2Pair }, 7);
    expect(pair.body).toMatchObject({
      is_contract: true,
      class: "v2_pair",
      is_token: true,
      name: "Uniswap V2",
      decimals: 18,
      is_proxy: false,
      dex: null,
      labels: ["Seeded PLAIN/WETH v2 pair"],
    });
  });
});

describe("whale-watch", () => {
  /** The expected list from the ground truth: threshold compared exactly, largest first, ties by block then log index. */
  function expectedWhales(token: "USDC" | "WETH", minUsd: bigint, fromBlock: number, toBlock: number) {
    const [decimals, priceUnits, priceScale] = token === "USDC" ? [6, 10_001n, 4] : [18, 312_045n, 2];
    const all = transfersOf(token, fromBlock, toBlock);
    const large = all
      .filter((t) => BigInt(t.value) * priceUnits >= minUsd * 10n ** BigInt(decimals + priceScale))
      .sort((a, b) =>
        BigInt(a.value) > BigInt(b.value) ? -1 : BigInt(a.value) < BigInt(b.value) ? 1 : a.block - b.block || a.logIndex - b.logIndex,
      );
    return {
      scanned: all.length,
      events: large.length,
      largest: large.slice(0, 25).map((t) => ({
        amount: decimal(t.value, decimals),
        amount_usd: usd(BigInt(t.value), decimals, priceUnits, priceScale),
        from: t.from,
        to: t.to,
        tx_hash: t.txHash,
        block: t.block,
        log_index: t.logIndex,
        direction: expectedDirection(t.from, t.to),
        from_class: classOf(t.from),
        to_class: classOf(t.to),
        from_labels: labelsOf(t.from),
        to_labels: labelsOf(t.to),
      })),
    };
  }

  it("lists every USDC transfer of at least 100,000 USD with the defaults, in order", async () => {
    const latest = await latestBlock();
    const { status, body, spent } = await paidPost(service, "/api/whale-watch", {});
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    // The default window (1,800 blocks) still reaches back to the scenario on the shared devnet.
    expect(latest - 1800 + 1, "more than 1,800 blocks were mined after the scenario").toBeLessThanOrEqual(scenario().startBlock);
    const want = expectedWhales("USDC", 100_000n, Math.max(0, latest - 1800 + 1), latest);
    // Other test files' payments are 0.10 USDC transfers: they count as scanned, never as whales.
    // Every USDC Transfer log in the window, read from the node directly (this call's own
    // settlement is mined after `latest`).
    const onChain = await chainClient().getLogs({
      address: USDC,
      event: parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)"),
      fromBlock: BigInt(Math.max(0, latest - 1800 + 1)),
      toBlock: BigInt(latest),
    });
    expect(onChain.length).toBeGreaterThanOrEqual(want.scanned);
    expect(body).toEqual({
      token: "USDC",
      token_address: USDC,
      chain_id: baseNetwork.chainId,
      from_block: Math.max(0, latest - 1800 + 1),
      to_block: latest,
      blocks_scanned: latest - Math.max(0, latest - 1800 + 1) + 1,
      threshold_usd: 100000,
      price_usd: "1.0001",
      price_source: "dexscreener",
      transfers_scanned: onChain.length,
      events_found: want.events,
      largest: want.largest,
      mempool: expect.stringContaining("not visible"),
      methodology: methodologyFor("whale-watch"),
    });
    // The boundary: 99,991 USDC is 100,000.9991 USD (listed), 99,990 is 99,999.999 USD (not).
    const amounts = (body.largest as { amount: string }[]).map((w) => w.amount);
    expect(amounts).toContain("99991");
    expect(amounts).not.toContain("99990");
    expect(amounts.slice(0, 3)).toEqual(["5000000", "3000000", "2000000"]);
    const bridgeOut = (body.largest as { amount: string; direction: string; to_labels: string[] }[]).find((w) => w.amount === "1200000");
    expect(bridgeOut).toMatchObject({ direction: "to_bridge", to_labels: ["Seeded Bridge (escrow)"], from_labels: [] });
  });

  it("lists WETH whales at the WETH price, with a window that starts later", async () => {
    const latest = await latestBlock();
    const s = scenario();
    const blocks = latest - s.startBlock; // leaves out the scenario's first block
    const { body } = await paidPost(service, "/api/whale-watch", { token: "WETH", min_usd: 100000, blocks }, 7);
    const from = latest - blocks + 1;
    const want = expectedWhales("WETH", 100_000n, from, latest);
    expect(body).toMatchObject({
      token: "WETH",
      token_address: WETH,
      from_block: from,
      to_block: latest,
      blocks_scanned: blocks,
      price_usd: "3120.45",
      events_found: want.events,
      largest: want.largest,
    });
    expect((body.largest as { amount: string; direction: string }[]).map((w) => [w.amount, w.direction])).toEqual([
      // Liquidity from an exchange wallet into the pool: the exchange rule comes before the DEX rule.
      ["500", "from_exchange"],
      ["150", "from_exchange"],
      ["100", "into_dex"],
      ["60", "to_bridge"],
      ["40", "to_exchange"],
    ]);
  });

  it("sees only the recent whales in a short window, and a low threshold lists at most 25", async () => {
    const latest = await latestBlock();
    const truth = scenario();
    const recent = truth.transfers.find((t) => t.value === "300000000000")?.block as number; // bridge release to whale-3
    const blocks = latest - recent + 1;
    const { body } = await paidPost(service, "/api/whale-watch", { blocks, min_usd: 100000 });
    expect(body).toMatchObject({ from_block: recent, events_found: expectedWhales("USDC", 100_000n, recent, latest).events });
    expect((body.largest as { amount: string; direction: string }[]).map((w) => [w.amount, w.direction])).toEqual([
      ["300000", "from_bridge"],
      ["125000", "wallet_to_wallet"],
    ]);
    // 5,000 USD: above the devnet's initial 1,000 USDC mints to accounts 0-9, which are not the scenario's.
    const many = await paidPost(service, "/api/whale-watch", { min_usd: 5000, blocks: 43200 }, 7);
    expect((many.body.largest as unknown[]).length).toBe(25);
    expect(many.body.events_found).toBe(expectedWhales("USDC", 5000n, 0, latest).events);
    expect(many.body.events_found).toBeGreaterThan(25);
  });
});

describe("defi-sentiment", () => {
  it("combines ETH funding, open interest and price change with Aave V3's TVL trend, weights shown", async () => {
    const { status, body, spent } = await paidPost(service, "/api/defi-sentiment", { asset: "eth", protocol: "aave-v3" });
    expect(status).toBe(200);
    expect(spent).toBe(PRICE);
    const change = Number(((3121.3 / 3050 - 1) * 100).toFixed(6));
    const inputs = [
      {
        name: "price_change_24h",
        value: change,
        normalized: Number((change / 10).toFixed(6)),
        weight: 0.4,
        contribution: Number(((change / 10) * 0.4 * 100).toFixed(4)),
      },
      { name: "funding_rate_8h", value: 0.01, normalized: 0, weight: 0.3, contribution: 0 },
      { name: "tvl_change_24h", value: -1.2, normalized: -0.12, weight: 0.3, contribution: -3.6 },
    ];
    expect(body).toEqual({
      asset: "ETH",
      protocol: "aave-v3",
      sentiment: "neutral",
      score: Number(((change / 10) * 40 - 3.6).toFixed(2)),
      funding_rate_1h_pct: 0.00125,
      funding_rate_8h_pct: 0.01,
      open_interest_contracts: 612345.12,
      open_interest_usd: 1911312823.06, // 612,345.12 x 3,121.3
      mark_price_usd: 3121.3,
      price_change: { "24h_pct": change },
      protocol_tvl: { slug: "aave-v3", name: "Aave V3", tvl_usd: 26841230512.4, change_24h_pct: -1.2, change_source: "protocols_list" },
      score_inputs: inputs,
      scoring: {
        weights: { price_change_24h: 0.4, funding_rate_8h: 0.3, tvl_change_24h: 0.3 },
        full_scale: { price_change_24h_pct: 10, funding_rate_8h_pct: 0.05, tvl_change_24h_pct: 10 },
        neutral_funding_8h_pct: 0.01,
        thresholds: { bullish: 20, bearish: -20 },
      },
      sources: { hyperliquid: { fetched_at: expect.any(String) }, defillama: { fetched_at: expect.any(String) } },
      methodology: methodologyFor("defi-sentiment"),
    });
  });

  it("is bearish on SOL and bullish on HYPE from their funding and price moves alone", async () => {
    const sol = await paidPost(service, "/api/defi-sentiment", { asset: "SOL" }, 7);
    expect(sol.body).toMatchObject({
      asset: "SOL",
      protocol: null,
      sentiment: "bearish",
      score: -62.01,
      funding_rate_8h_pct: -0.028,
      protocol_tvl: null,
    });
    const hype = await paidPost(service, "/api/defi-sentiment", { asset: "HYPE" }, 7);
    expect(hype.body).toMatchObject({ asset: "HYPE", sentiment: "bullish", score: 82.86, funding_rate_8h_pct: 0.04 });
  });

  it("computes a protocol's 24 h TVL change from its series when the list has none", async () => {
    const { body } = await paidPost(service, "/api/defi-sentiment", { protocol: "moonwell" });
    expect(body).toMatchObject({
      asset: null,
      protocol: "moonwell",
      protocol_tvl: {
        slug: "moonwell",
        name: "Moonwell",
        tvl_usd: 320000000,
        change_24h_pct: (320 / 328 - 1) * 100,
        change_source: "tvl_series",
      },
      score_inputs: [{ name: "tvl_change_24h", weight: 1 }],
      score: -24.39,
      sentiment: "bearish",
    });
  });

  it("answers 404 for an unknown asset or protocol, without charging", async () => {
    const asset = await paidPost(service, "/api/defi-sentiment", { asset: "NOPE" }, 7);
    expect(asset.status).toBe(404);
    expect(asset.spent).toBe(0n);
    expect(asset.body).toMatchObject({ error: { code: "not_found", details: { asset: "NOPE" } } });
    // "aave" is a parent protocol (answered with its aggregate); "aave-v" is no slug and no parent.
    const protocol = await paidPost(service, "/api/defi-sentiment", { protocol: "aave-v" }, 7);
    expect(protocol.status).toBe(404);
    expect(protocol.spent).toBe(0n);
    expect(protocol.body).toMatchObject({
      error: { code: "not_found", details: { protocol: "aave-v", similar_slugs: ["aave-v3", "aave-v2"] } },
    });
  });
});

describe("markets (free)", () => {
  it("lists the watched tokens through their deepest Base pair, with source and age", async () => {
    const res = await fetch(`${service.url}/api/markets`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { pairs: Record<string, unknown>[] };
    const row = (
      symbol: string,
      token: string,
      pair: string,
      price: string,
      change: number,
      liquidity: number,
      volume: number,
      dex: string,
      pairAddress: string,
    ) => ({
      symbol,
      token_address: getAddress(token),
      pair,
      price_usd: price,
      change_24h_pct: change,
      liquidity_usd: liquidity,
      volume_24h_usd: volume,
      dex_id: dex,
      pair_address: getAddress(pairAddress),
      source: "dexscreener",
      fetched_at: expect.any(String),
      age_seconds: expect.any(Number),
    });
    expect(body).toEqual({
      pairs: [
        row("WETH", WETH, "WETH/USDC", "3120.45", 1.84, 18250000.5, 24512300.4, "aerodrome", "0xcDAC0d6c6C59727a65F871236188350531885C43"),
        row(
          "cbBTC",
          "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf",
          "cbBTC/USDC",
          "97250.12",
          0.85,
          9800000,
          12000400.5,
          "aerodrome",
          "0x4e962BB3889Bf030368F56810A9c96B83CB3E778",
        ),
        row(
          "cbETH",
          "0x2Ae3F1Ec7F1F5012CFEab0185bfc7aa3cf0DEc22",
          "cbETH/WETH",
          "3405.1",
          1.72,
          6100000,
          2210400.3,
          "uniswap",
          "0x10648BA41B8565907Cfa1496765fA4D95390aa0d",
        ),
        row(
          "AERO",
          "0x940181a94A35A4569E4529A3CDfB74e38FD98631",
          "AERO/USDC",
          "0.7211",
          4.02,
          5400000,
          8120330.4,
          "aerodrome",
          "0x6cDcb1C4A4D1C3C6d054b27AC5B77e89eAFb971d",
        ),
        row("USDC", USDC, "USDC/USDbC", "1.0001", 0.01, 4120000, 3400112.75, "aerodrome", "0x27a8Afa3Bd49406e48a074350fB7b2020c43B2bD"),
      ],
      generated_at: expect.any(String),
      note: expect.stringContaining("may be delayed"),
      methodology: methodologyFor("markets"),
    });
    for (const pair of body.pairs) expect(pair.age_seconds).toBeLessThan(60);
  });
});

describe("bad inputs are 400s naming the field, never charged", () => {
  const cases: [string, string, unknown, string][] = [
    ["wallet-profile", "a malformed address", { address: "0x1234" }, "body.address"],
    ["wallet-profile", "another chain", { address: USDC, chain_id: 1 }, "body.chain_id"],
    ["token-check", "a missing token", {}, "body.token"],
    ["whale-watch", "too many blocks", { blocks: 50_000 }, "body.blocks"],
    ["whale-watch", "an unsupported token", { token: "DAI" }, "body.token"],
    ["whale-watch", "a negative threshold", { min_usd: -1 }, "body.min_usd"],
    ["gas-tracker", "an unknown field", { fast: true }, "body.fast"],
    ["defi-sentiment", "a malformed slug", { protocol: "../etc" }, "body.protocol"],
  ];
  for (const [route, what, input, field] of cases) {
    it(`${route}: ${what}`, async () => {
      const buyer = buyerAccount(7);
      const before = await usdcBalance(buyer.address);
      const { status, body } = await paidPost(service, `/api/${route}`, input, 7);
      expect(status).toBe(400);
      expect((body as { error: { code: string; details: { fields: { field: string }[] } } }).error.code).toBe("invalid_request");
      expect((body as { error: { details: { fields: { field: string }[] } } }).error.details.fields.map((f) => f.field)).toContain(field);
      expect(await usdcBalance(buyer.address)).toBe(before);
    });
  }
});
