/**
 * The token-risk part of the seeded local chain: two Uniswap v2 factories and a v3 one, six
 * new meme tokens paired with WETH (a clean one, a honeypot whose sells revert for everyone but
 * its owner, a 10% sell-tax token, a blacklisting token, one whose liquidity is pulled after
 * launch, and a 5% buy-tax token traded mostly in a working v3 pool with a shallower v2 pair
 * beside it), trades on the v2 pairs, and a local stablecoin (USDL) in four pools at deliberate deviations
 * from its peg. It runs inside the scenario (src/local/devnet/scenario.ts), before its fee window, with
 * the scenario's block builder, so every Transfer log is planned and recorded like the others.
 *
 * Its ground truth (`tokenRisk`) comes from the plan: the expected verdict and taxes of each
 * token, each pair's creation block, final reserves, buys, sells and buyers, and each stablecoin
 * pool's planned deviation at the local market-data stubs' prices (WETH 3,120.45 USD, USDC 1.0001 USD).
 * Every USDC and WETH amount stays under 100,000 USD, so the analytics scenario's whale
 * expectations are unchanged.
 */
import {
  type Address,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  erc20Abi,
  getContractAddress,
  getCreate2Address,
  type Hex,
  keccak256,
  type PrivateKeyAccount,
  parseAbiItem,
  parseAbiParameters,
  parseUnits,
  zeroAddress,
} from "viem";
import { WETH_ADDRESS } from "../../chain/addresses.ts";
import type { AddressClass } from "../../chain/classify.ts";
import { base } from "../../networks/base.ts";
import type { Deployable } from "./contracts.ts";
import type { Chapter, PlannedTransfer, ScenarioTransferToken } from "./scenario.ts";
import { amountOut, isqrt, scenarioAccount, sortTokens } from "./scenario-common.ts";

/** The meme tokens of the token-risk scenario. */
export type MemeSymbol = "MEME" | "HPOT" | "TAX" | "BLKL" | "RUG" | "BTAX";

/** The tokens whose transfers the token-risk scenario records. */
export type TokenRiskSymbol = MemeSymbol | "USDL";

/** A v2 pair's liquidity token, by the pair's factory and tokens (e.g. `LP v2:MEME/WETH`). */
export type LiquiditySymbol = `LP ${string}`;

/** A verdict of the honeypot check. */
export type RiskVerdict = "honeypot" | "high_tax" | "caution" | "ok";

/** One new meme pair or pool of the ground truth (a token with two pools has two entries). */
export interface MemePairTruth {
  symbol: MemeSymbol;
  name: string;
  token: Address;
  pair: Address;
  factory: Address;
  kind: "uniswap_v2" | "uniswap_v3";
  createdBlock: number;
  /**
   * What the honeypot check of the token must answer, and why; `pool` is the pool it must trade
   * through (the token's deepest), the same in every entry of the token.
   */
  expected: {
    verdict: RiskVerdict;
    buyTaxPct: number;
    sellTaxPct: number;
    transferTaxPct: number;
    canSell: boolean;
    pool: Address;
    why: string;
  };
  /** v2: reserves at the end of the scenario; v3: the pool's balances (smallest units). */
  reserves: { token: string; weth: string };
  /** v3 only: the price and the in-range liquidity L of its one full-range position. */
  v3?: { sqrtPriceX96: string; liquidity: string; feeBps: number };
  buys: number;
  sells: number;
  uniqueBuyers: number;
  /** Liquidity pulled after launch: the share of the provider's liquidity withdrawn, in percent. */
  liquidityRemovedPct: number;
}

/** One pool of the local stablecoin. */
export interface StablePoolTruth {
  pool: Address;
  factory: Address;
  kind: "uniswap_v2" | "uniswap_v3";
  quote: "USDC" | "WETH";
  feeBps: number;
  createdBlock: number;
  /** The planned deviation of USDL's implied USD price from its 1 USD peg, in basis points. */
  deviationBps: number;
  /** Pool balances at the end of the scenario, smallest units. */
  balances: { usdl: string; quote: string };
  /** v3 only: the pool's price. */
  sqrtPriceX96?: string;
}

/** The token-risk part of the ground truth. */
export interface TokenRiskTruth {
  deployer: Address;
  factories: { v2: Address; v2b: Address; v3: Address };
  /** The USD prices the deviations were planned at: the local market-data stubs' (fixtures/upstreams/). */
  plannedPricesUsd: { WETH: string; USDC: string };
  firstBlock: number;
  lastBlock: number;
  pairs: MemePairTruth[];
  stable: { symbol: "USDL"; token: Address; decimals: 18; pools: StablePoolTruth[] };
  /** Every address the token-risk scenario trades from (traders, holders, the blacklisted sniper). */
  wallets: Record<string, Address>;
  /** The class the classifier must give each address of this part of the scenario. */
  classes: Record<Address, AddressClass>;
}

const WETH_USD = "3120.45";
const USDC_USD = "1.0001";
const SUPPLY = parseUnits("1000000000", 18);
const GAS = { deploy: 6_000_000n, create: 6_000_000n, call: 200_000n, mint: 1_000_000n } as const;

const abi = {
  pairMint: parseAbiItem("function mint(address to) returns (uint256 liquidity)"),
  burn: parseAbiItem("function burn(address to) returns (uint256 amount0, uint256 amount1)"),
  createPair: parseAbiItem("function createPair(address tokenA, address tokenB) returns (address pair)"),
  createPool: parseAbiItem("function createPool(address tokenA, address tokenB, uint24 fee) returns (address pool)"),
  enableFeeAmount: parseAbiItem("function enableFeeAmount(uint24 fee, int24 tickSpacing)"),
  initialize: parseAbiItem("function initialize(uint160 sqrtPriceX96)"),
  setPair: parseAbiItem("function setPair(address pair)"),
  setPool: parseAbiItem("function setPool(address pool)"),
  v3Mint: parseAbiItem("function mint(address pool, int24 tickLower, int24 tickUpper, uint128 amount)"),
  setBlacklist: parseAbiItem("function setBlacklist(address account, bool barred)"),
};

/** Where UniswapV3Factory creates the pool of two tokens at a fee: CREATE2 of the pool's code, salted with them. */
function v3PoolAddress(factory: Address, poolCode: Hex, a: Address, b: Address, fee: number): Address {
  const salt = keccak256(encodeAbiParameters(parseAbiParameters("address, address, uint24"), [...sortTokens(a, b), fee]));
  return getCreate2Address({ from: factory, salt, bytecodeHash: keccak256(poolCode) });
}

/**
 * A full-range position by fee tier: the widest ticks its tick spacing allows (1 and 60) and
 * their prices, TickMath.getSqrtRatioAtTick(-tick) and (tick) of Uniswap v3-core (at 887,272 its
 * MIN_SQRT_RATIO and MAX_SQRT_RATIO).
 */
const FULL_RANGE: Record<number, { tick: number; sqrtLower: bigint; sqrtUpper: bigint }> = {
  100: { tick: 887_272, sqrtLower: 4_295_128_739n, sqrtUpper: 1_461_446_703_485_210_103_287_273_052_203_988_822_378_723_970_342n },
  3000: { tick: 887_220, sqrtLower: 4_306_310_044n, sqrtUpper: 1_457_652_066_949_847_389_969_617_340_386_294_118_487_833_376_468n },
};

/**
 * The amounts of token0 and token1 a full-range position of `liquidity` at `sqrtPriceX96` costs:
 * SqrtPriceMath.getAmount0Delta and getAmount1Delta, rounded up as the pool rounds what it is owed.
 */
function fullRangeAmounts(sqrtPriceX96: bigint, liquidity: bigint, fee: number): [bigint, bigint] {
  const { sqrtLower, sqrtUpper } = FULL_RANGE[fee] as (typeof FULL_RANGE)[number];
  const Q96 = 1n << 96n;
  const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
  return [
    ceilDiv(ceilDiv((liquidity << 96n) * (sqrtUpper - sqrtPriceX96), sqrtUpper), sqrtPriceX96),
    ceilDiv(liquidity * (sqrtPriceX96 - sqrtLower), Q96),
  ];
}

/** A v2 pair as the plan tracks it. */
interface PairBook {
  pair: Address;
  lp: LiquiditySymbol;
  token0: Address;
  token1: Address;
  reserve: Map<Address, bigint>;
  totalSupply: bigint;
  /** The deployer's liquidity tokens: it is each pair's only provider. */
  provided: bigint;
}

/** Seed the token-risk scenario with the scenario's builder and return its ground truth. */
export async function seedTokenRisk({ client, builder, minter, artifacts }: Chapter): Promise<TokenRiskTruth> {
  const deployer = scenarioAccount("token-risk-deployer");
  const D = deployer.address;
  const at = (nonce: number) => getContractAddress({ from: D, nonce: BigInt(nonce) });
  const factories = { v2: at(0), v2b: at(1), v3: at(2) };
  // The tokens in the order they are deployed (nonces 3-9): name, contract, and the constructor's
  // arguments after (name, symbol, supply).
  const tokenPlans: Record<TokenRiskSymbol, [name: string, artifact: Deployable, ...args: bigint[]]> = {
    MEME: ["Clean Meme", artifacts.MemeToken],
    HPOT: ["Honey Pot", artifacts.HoneypotToken],
    TAX: ["Sell Tax Meme", artifacts.SellTaxToken, 1_000n], // a 10% sell tax
    BLKL: ["Blacklist Meme", artifacts.BlacklistToken],
    RUG: ["Rug Pull Meme", artifacts.MemeToken],
    USDL: ["Local Dollar", artifacts.MemeToken],
    BTAX: ["Buy Tax Meme", artifacts.BuyTaxToken, 500n], // a 5% buy tax
  };
  const symbols = Object.keys(tokenPlans) as TokenRiskSymbol[];
  const tokens = Object.fromEntries(symbols.map((symbol, i) => [symbol, at(3 + i)])) as Record<TokenRiskSymbol, Address>;
  for (const [symbol, address] of Object.entries(tokens)) builder.tokenAddress[symbol as TokenRiskSymbol] = address;
  const symbolOf = (address: Address): ScenarioTransferToken =>
    address === WETH_ADDRESS
      ? "WETH"
      : address === base.usdc.address
        ? "USDC"
        : ((Object.entries(tokens).find(([, a]) => a === address)?.[0] as TokenRiskSymbol) ?? "WETH");

  const wallet = (name: string) => scenarioAccount(`token-risk-${name}`);
  const traders = [1, 2, 3, 4].map((i) => wallet(`trader-${i}`));
  const holders = Array.from({ length: 12 }, (_, i) => wallet(`holder-${String(i + 1).padStart(2, "0")}`));
  const sniper = wallet("sniper");
  await client.setBalance({ address: D, value: parseUnits("500", 18) });
  for (const t of traders) await client.setBalance({ address: t.address, value: parseUnits("20", 18) });

  const firstBlock = Number(await client.getBlockNumber({ cacheTime: 0 })) + 1;
  const send = (
    from: PrivateKeyAccount,
    to: Address,
    data: `0x${string}`,
    transfers: PlannedTransfer[],
    what: string,
    gas: bigint = GAS.call,
  ) => builder.send(from, { to, data, gas }, transfers, what);
  const deploy = (artifact: Deployable, args: readonly unknown[], transfers: PlannedTransfer[], what: string) =>
    builder.deploy(deployer, artifact, args, what, GAS.deploy, transfers);
  const transfer = (from: PrivateKeyAccount, token: Address, to: Address, value: bigint, what: string, transfers?: PlannedTransfer[]) =>
    builder.transfer(from, symbolOf(token), to, value, what, transfers);

  // --- Block 1: the factories. ---------------------------------------------------------------------
  await deploy(artifacts.UniswapV2Factory, [D], [], "deploy the seeded v2 factory");
  await deploy(artifacts.UniswapV2Factory, [D], [], "deploy the seeded v2 factory B");
  await deploy(artifacts.UniswapV3Factory, [], [], "deploy the seeded v3 factory");
  await builder.mine();

  // --- Block 2: the tokens (each mints its supply to the deployer), USDC and WETH for liquidity. ---
  for (const symbol of symbols) {
    const [name, artifact, ...args] = tokenPlans[symbol];
    await deploy(
      artifact,
      [name, symbol, SUPPLY, ...args],
      [{ token: symbol, from: zeroAddress, to: D, value: SUPPLY }],
      `deploy ${symbol}`,
    );
  }
  const v3Minter = at(10);
  await deploy(artifacts.ScenarioV3Minter, [], [], "deploy the v3 position minter");
  const usdcMints = [parseUnits("60100", 6), parseUnits("40000", 6), parseUnits("20400", 6)];
  for (const value of usdcMints) await builder.mint(minter, "USDC", D, value, "mint USDC for the USDL pools");
  await builder.wrap(deployer, parseUnits("90", 18), "wrap 90 ETH");
  for (const t of traders) await builder.wrap(t, parseUnits("5", 18), "a trader wraps 5 ETH");
  await builder.mine();

  // --- Blocks 3-5: the pairs and pools, a few per block. ----------------------------------------------
  const v2Pairs = new Map<string, PairBook>();
  const pairCodeHash = keccak256(artifacts.UniswapV2Pair.bytecode);
  const createPair = async (factory: "v2" | "v2b", a: Address, b: Address): Promise<PairBook> => {
    const [token0, token1] = sortTokens(a, b);
    // UniswapV2Factory creates each pair with CREATE2, salted with its two tokens.
    const salt = keccak256(encodePacked(["address", "address"], [token0, token1]));
    const pair = getCreate2Address({ from: factories[factory], salt, bytecodeHash: pairCodeHash });
    const key = `${factory}:${symbolOf(a)}/${symbolOf(b)}`;
    const lp: LiquiditySymbol = `LP ${key}`;
    builder.tokenAddress[lp] = pair;
    await send(
      deployer,
      factories[factory],
      encodeFunctionData({ abi: [abi.createPair], args: [a, b] }),
      [],
      `create the pair ${symbolOf(a)}/${symbolOf(b)}`,
      GAS.create,
    );
    const book: PairBook = {
      pair,
      lp,
      token0,
      token1,
      reserve: new Map([
        [a, 0n],
        [b, 0n],
      ]),
      totalSupply: 0n,
      provided: 0n,
    };
    v2Pairs.set(key, book);
    return book;
  };
  const memes: MemeSymbol[] = ["MEME", "HPOT", "TAX", "BLKL", "RUG", "BTAX"];
  const createdBlock = new Map<string, number>();
  const pairOf = new Map<MemeSymbol, PairBook>();
  for (const group of [
    ["MEME", "HPOT"],
    ["TAX", "BLKL"],
    ["RUG", "BTAX"],
  ] as MemeSymbol[][]) {
    for (const symbol of group.filter((m) => m !== "BTAX")) pairOf.set(symbol, await createPair("v2", tokens[symbol], WETH_ADDRESS));
    if (group[0] === "RUG") {
      await createPair("v2", tokens.USDL, base.usdc.address);
      await createPair("v2", tokens.USDL, WETH_ADDRESS);
      await createPair("v2b", tokens.USDL, base.usdc.address);
      pairOf.set("BTAX", await createPair("v2", tokens.BTAX, WETH_ADDRESS));
    }
    const { block } = await builder.mine();
    for (const symbol of group) createdBlock.set(symbol, block);
    if (group[0] === "RUG") createdBlock.set("USDL", block);
  }
  // The honeypot and the taxed token act on transfers into their pair.
  for (const symbol of ["HPOT", "TAX"] as const) {
    const pair = pairOf.get(symbol)?.pair as Address;
    await send(deployer, tokens[symbol], encodeFunctionData({ abi: [abi.setPair], args: [pair] }), [], `${symbol} names its pair`);
  }
  // BTAX taxes what leaves its v3 pool (created in the liquidity block).
  const btaxPool = v3PoolAddress(factories.v3, artifacts.UniswapV3Pool.bytecode, tokens.BTAX, WETH_ADDRESS, 3000);
  await send(deployer, tokens.BTAX, encodeFunctionData({ abi: [abi.setPool], args: [btaxPool] }), [], "BTAX names its v3 pool");
  await builder.mine();

  // --- Block 7: liquidity. --------------------------------------------------------------------------
  // Each pair is given liquidity once, at launch: Uniswap v2's first mint, sqrt(x * y) less the
  // 1,000 liquidity tokens it locks at the zero address.
  const addLiquidity = async (book: PairBook, amounts: Map<Address, bigint>, what: string) => {
    for (const [token, value] of amounts) await transfer(deployer, token, book.pair, value, `${what}: ${symbolOf(token)} in`);
    const liquidity = isqrt((amounts.get(book.token0) ?? 0n) * (amounts.get(book.token1) ?? 0n)) - 1000n;
    book.totalSupply = liquidity + 1000n;
    book.provided = liquidity;
    for (const [token, value] of amounts) book.reserve.set(token, value);
    const minted: PlannedTransfer[] = [
      { token: book.lp, from: zeroAddress, to: zeroAddress, value: 1000n },
      { token: book.lp, from: zeroAddress, to: D, value: liquidity },
    ];
    await send(deployer, book.pair, encodeFunctionData({ abi: [abi.pairMint], args: [D] }), minted, `${what}: mint`);
  };
  const liquidity: Record<MemeSymbol, [string, string]> = {
    MEME: ["400000000", "10"],
    HPOT: ["500000000", "8"],
    TAX: ["300000000", "6"],
    BLKL: ["200000000", "5"],
    RUG: ["600000000", "12"],
    // BTAX's shallow v2 pair, at the price of its v3 pool (5e-8 WETH per BTAX).
    BTAX: ["20000000", "1"],
  };
  for (const symbol of memes) {
    const [tokenAmount, weth] = liquidity[symbol];
    await addLiquidity(
      pairOf.get(symbol) as PairBook,
      new Map([
        [tokens[symbol], parseUnits(tokenAmount, 18)],
        [WETH_ADDRESS, parseUnits(weth, 18)],
      ]),
      `${symbol} liquidity`,
    );
  }
  // USDL pools, priced so that USDL's implied USD price sits at the planned deviation from 1 USD.
  const usdcUsd = Number(USDC_USD);
  const wethUsd = Number(WETH_USD);
  const stablePlans = [
    { key: "v2:USDL/USDC", quote: "USDC" as const, usdl: "60000", deviationBps: 4 },
    { key: "v2:USDL/WETH", quote: "WETH" as const, usdl: "90000", deviationBps: -45 },
    { key: "v2b:USDL/USDC", quote: "USDC" as const, usdl: "40000", deviationBps: -320 },
  ];
  const stablePools: StablePoolTruth[] = [];
  for (const plan of stablePlans) {
    const book = v2Pairs.get(plan.key) as PairBook;
    const usdValue = Number(plan.usdl) * (1 + plan.deviationBps / 10_000);
    const quoteAmount =
      plan.quote === "USDC" ? parseUnits((usdValue / usdcUsd).toFixed(6), 6) : parseUnits((usdValue / wethUsd).toFixed(18), 18);
    const quote = plan.quote === "USDC" ? base.usdc.address : WETH_ADDRESS;
    await addLiquidity(
      book,
      new Map([
        [tokens.USDL, parseUnits(plan.usdl, 18)],
        [quote, quoteAmount],
      ]),
      `USDL/${plan.quote} liquidity`,
    );
    stablePools.push({
      pool: book.pair,
      factory: plan.key.startsWith("v2b") ? factories.v2b : factories.v2,
      kind: "uniswap_v2",
      quote: plan.quote,
      feeBps: 30,
      createdBlock: createdBlock.get("USDL") as number,
      deviationBps: plan.deviationBps,
      balances: { usdl: parseUnits(plan.usdl, 18).toString(), quote: quoteAmount.toString() },
    });
  }
  // A Uniswap v3 pool at a planned price with one full-range position of liquidity L = sqrt(x * y),
  // x and y the planned amounts of token0 and token1; it holds what its mint asks for.
  const addV3Pool = async (a: Address, b: Address, fee: number, sqrtPriceX96: bigint, amounts: Record<Address, bigint>) => {
    const [token0, token1] = sortTokens(a, b);
    const pool = v3PoolAddress(factories.v3, artifacts.UniswapV3Pool.bytecode, a, b, fee);
    const liquidity = isqrt((amounts[token0] as bigint) * (amounts[token1] as bigint));
    const [owed0, owed1] = fullRangeAmounts(sqrtPriceX96, liquidity, fee);
    const { tick } = FULL_RANGE[fee] as (typeof FULL_RANGE)[number];
    const what = `the ${symbolOf(a)}/${symbolOf(b)} v3 pool`;
    await send(deployer, factories.v3, encodeFunctionData({ abi: [abi.createPool], args: [a, b, fee] }), [], `create ${what}`, GAS.create);
    await send(deployer, pool, encodeFunctionData({ abi: [abi.initialize], args: [sqrtPriceX96] }), [], `set the price of ${what}`);
    for (const [token, owed] of [
      [token0, owed0],
      [token1, owed1],
    ] as const) {
      const data = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [v3Minter, owed] });
      await send(deployer, token, data, [], `approve ${symbolOf(token)} for ${what}`);
    }
    await send(
      deployer,
      v3Minter,
      encodeFunctionData({ abi: [abi.v3Mint], args: [pool, -tick, tick, liquidity] }),
      [
        { token: symbolOf(token0), from: D, to: pool, value: owed0 },
        { token: symbolOf(token1), from: D, to: pool, value: owed1 },
      ],
      `mint the position of ${what}`,
      GAS.mint,
    );
    return { pool, liquidity, balances: { [token0]: owed0, [token1]: owed1 } as Record<Address, bigint> };
  };
  // USDL 150 bps above its peg, 0.01% fee: 1.015 USD / 1.0001 USD per USDC, in raw USDC per raw USDL
  // (times 10^6 / 10^18 for the decimals) when USDL is token0. Uniswap v3 enables the 0.01% tier on request.
  await send(deployer, factories.v3, encodeFunctionData({ abi: [abi.enableFeeAmount], args: [100, 1] }), [], "enable the 0.01% tier");
  const usdlIs0 = BigInt(tokens.USDL) < BigInt(base.usdc.address);
  const priceNum = 10_150n * 10n ** 6n;
  const priceDen = 10_001n * 10n ** 18n;
  const sqrtPriceX96 = usdlIs0 ? isqrt((priceNum << 192n) / priceDen) : isqrt((priceDen << 192n) / priceNum);
  const usdlPool = await addV3Pool(tokens.USDL, base.usdc.address, 100, sqrtPriceX96, {
    [tokens.USDL]: parseUnits("20000", 18),
    [base.usdc.address]: parseUnits("20300", 6),
  });
  // BTAX's v3 pool: 5e-8 WETH per BTAX, 0.3% fee.
  const btax = { token: parseUnits("300000000", 18), weth: parseUnits("15", 18) };
  const [x, y] = BigInt(tokens.BTAX) < BigInt(WETH_ADDRESS) ? [btax.token, btax.weth] : [btax.weth, btax.token];
  const btaxSqrtPrice = isqrt((y << 192n) / x);
  const btaxPosition = await addV3Pool(tokens.BTAX, WETH_ADDRESS, 3000, btaxSqrtPrice, {
    [tokens.BTAX]: btax.token,
    [WETH_ADDRESS]: btax.weth,
  });
  const btaxL = btaxPosition.liquidity;
  const btaxBalances = { token: btaxPosition.balances[tokens.BTAX] as bigint, weth: btaxPosition.balances[WETH_ADDRESS] as bigint };
  const { block: liquidityBlock } = await builder.mine();
  stablePools.push({
    pool: usdlPool.pool,
    factory: factories.v3,
    kind: "uniswap_v3",
    quote: "USDC",
    feeBps: 1,
    createdBlock: liquidityBlock,
    deviationBps: 150,
    balances: { usdl: String(usdlPool.balances[tokens.USDL]), quote: String(usdlPool.balances[base.usdc.address]) },
    sqrtPriceX96: sqrtPriceX96.toString(),
  });

  // --- Block 8: an airdrop of MEME to twelve holders; BLKL's owner bars a sniper. ---------------------
  for (const [i, h] of holders.entries()) {
    await transfer(deployer, tokens.MEME, h.address, parseUnits(String((12 - i) * 1_000_000), 18), `airdrop MEME to holder ${i + 1}`);
  }
  await send(
    deployer,
    tokens.BLKL,
    encodeFunctionData({ abi: [abi.setBlacklist], args: [sniper.address, true] }),
    [],
    "BLKL bars the sniper",
  );
  await builder.mine();

  // --- Blocks 9-12: trades straight on the pairs, one trader per pair per block. ----------------------
  const stats = new Map<MemeSymbol, { buys: number; sells: number; buyers: Set<Address> }>(
    memes.map((m) => [m, { buys: 0, sells: 0, buyers: new Set() }]),
  );
  const held = new Map<string, bigint>();
  const buy = async (trader: PrivateKeyAccount, symbol: MemeSymbol, weth: string) => {
    const book = pairOf.get(symbol) as PairBook;
    const token = tokens[symbol];
    const amountIn = parseUnits(weth, 18);
    const out = amountOut(amountIn, book.reserve.get(WETH_ADDRESS) as bigint, book.reserve.get(token) as bigint);
    await transfer(trader, WETH_ADDRESS, book.pair, amountIn, `buy ${symbol}: WETH in`);
    await builder.swapOut(trader, book.pair, symbol, "WETH", out, GAS.call, `buy ${symbol}: swap`);
    book.reserve.set(WETH_ADDRESS, (book.reserve.get(WETH_ADDRESS) as bigint) + amountIn);
    book.reserve.set(token, (book.reserve.get(token) as bigint) - out);
    held.set(`${trader.address}:${symbol}`, (held.get(`${trader.address}:${symbol}`) ?? 0n) + out);
    const s = stats.get(symbol) as { buys: number; buyers: Set<Address> };
    s.buys++;
    s.buyers.add(trader.address);
  };
  const sell = async (trader: PrivateKeyAccount, symbol: MemeSymbol, share: bigint) => {
    const book = pairOf.get(symbol) as PairBook;
    const token = tokens[symbol];
    const amount = ((held.get(`${trader.address}:${symbol}`) ?? 0n) * share) / 100n;
    const tax = symbol === "TAX" ? (amount * 1_000n) / 10_000n : 0n;
    const arrived = amount - tax;
    const plans: PlannedTransfer[] = [
      ...(tax > 0n ? [{ token: symbol, from: trader.address, to: D, value: tax }] : []),
      { token: symbol, from: trader.address, to: book.pair, value: arrived },
    ];
    await transfer(trader, token, book.pair, amount, `sell ${symbol}: tokens in`, plans);
    const out = amountOut(arrived, book.reserve.get(token) as bigint, book.reserve.get(WETH_ADDRESS) as bigint);
    await builder.swapOut(trader, book.pair, "WETH", symbol, out, GAS.call, `sell ${symbol}: swap`);
    book.reserve.set(token, (book.reserve.get(token) as bigint) + arrived);
    book.reserve.set(WETH_ADDRESS, (book.reserve.get(WETH_ADDRESS) as bigint) - out);
    held.set(`${trader.address}:${symbol}`, (held.get(`${trader.address}:${symbol}`) ?? 0n) - amount);
    (stats.get(symbol) as { sells: number }).sells++;
  };
  const [t1, t2, t3, t4] = traders as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
  await buy(t1, "MEME", "0.5");
  await buy(t2, "HPOT", "0.4");
  await buy(t3, "TAX", "0.3");
  await buy(t4, "BLKL", "0.2");
  await builder.mine();
  await buy(t2, "MEME", "0.3");
  await buy(t3, "HPOT", "0.2");
  await buy(t4, "TAX", "0.25");
  await buy(t1, "RUG", "0.6");
  await builder.mine();
  await sell(t1, "MEME", 50n);
  await sell(t3, "TAX", 100n);
  await buy(t4, "RUG", "0.4");
  await buy(t2, "BLKL", "0.1");
  await builder.mine();
  await buy(t3, "MEME", "0.2");
  await builder.mine();

  // --- Block 13: RUG's deployer pulls 90% of its liquidity: its liquidity tokens back to the pair, then burn.
  const rug = pairOf.get("RUG") as PairBook;
  const pulled = (rug.provided * 90n) / 100n;
  const burned = [rug.token0, rug.token1].map((token) => ({
    token,
    value: (pulled * (rug.reserve.get(token) as bigint)) / rug.totalSupply,
  }));
  await builder.transfer(deployer, rug.lp, rug.pair, pulled, "RUG's deployer returns 90% of its liquidity tokens");
  await send(
    deployer,
    rug.pair,
    encodeFunctionData({ abi: [abi.burn], args: [D] }),
    [
      { token: rug.lp, from: rug.pair, to: zeroAddress, value: pulled },
      ...burned.map(({ token, value }) => ({ token: symbolOf(token), from: rug.pair, to: D, value })),
    ],
    "RUG's deployer pulls 90% of the liquidity",
  );
  for (const { token, value } of burned) rug.reserve.set(token, (rug.reserve.get(token) as bigint) - value);
  const { block: lastBlock } = await builder.mine();

  // Each token sells and pays no tax unless its entry says otherwise.
  const untaxed = { buyTaxPct: 0, sellTaxPct: 0, transferTaxPct: 0, canSell: true };
  const expectedOf: Record<MemeSymbol, Omit<MemePairTruth["expected"], "pool">> = {
    MEME: { ...untaxed, verdict: "ok", why: "no owner, no privileged function, no tax" },
    HPOT: { ...untaxed, verdict: "honeypot", canSell: false, why: "transfers into the pair revert for everyone but the owner" },
    TAX: { ...untaxed, verdict: "high_tax", sellTaxPct: 10, why: "10% of every sell goes to the owner, who can change it" },
    BLKL: { ...untaxed, verdict: "caution", why: "the owner can blacklist any holder" },
    RUG: { ...untaxed, verdict: "ok", why: "a clean token; its pair lost 90% of its liquidity, which the new-pair hunter flags" },
    BTAX: {
      ...untaxed,
      verdict: "caution",
      buyTaxPct: 5,
      why: "5% of every buy out of its v3 pool (its deepest) goes to the owner, who can change it; its shallower v2 pair is untaxed",
    },
  };
  const expected = (symbol: MemeSymbol): MemePairTruth["expected"] => ({
    ...expectedOf[symbol],
    pool: symbol === "BTAX" ? btaxPool : (pairOf.get(symbol) as PairBook).pair,
  });
  const wallets = Object.fromEntries([
    ...traders.map((t, i) => [`trader-${i + 1}`, t.address]),
    ...holders.map((h, i) => [`holder-${String(i + 1).padStart(2, "0")}`, h.address]),
    ["sniper", sniper.address],
  ]) as Record<string, Address>;
  const classes: Record<Address, AddressClass> = {
    [D]: "wallet",
    [usdlPool.pool]: "v3_pool",
    [btaxPool]: "v3_pool",
    [v3Minter]: "contract",
  };
  for (const address of Object.values(wallets)) classes[address] = "wallet";
  for (const address of Object.values(factories)) classes[address] = "contract";
  for (const address of Object.values(tokens)) classes[address] = "token";
  for (const book of v2Pairs.values()) classes[book.pair] = "v2_pair";
  return {
    deployer: D,
    factories,
    plannedPricesUsd: { WETH: WETH_USD, USDC: USDC_USD },
    firstBlock,
    lastBlock,
    pairs: [
      ...memes.map((symbol): MemePairTruth => {
        const book = pairOf.get(symbol) as PairBook;
        const s = stats.get(symbol) as { buys: number; sells: number; buyers: Set<Address> };
        return {
          symbol,
          name: tokenPlans[symbol][0],
          token: tokens[symbol],
          pair: book.pair,
          factory: factories.v2,
          kind: "uniswap_v2",
          createdBlock: createdBlock.get(symbol) as number,
          expected: expected(symbol),
          reserves: {
            token: (book.reserve.get(tokens[symbol]) as bigint).toString(),
            weth: (book.reserve.get(WETH_ADDRESS) as bigint).toString(),
          },
          buys: s.buys,
          sells: s.sells,
          uniqueBuyers: s.buyers.size,
          liquidityRemovedPct: symbol === "RUG" ? 90 : 0,
        };
      }),
      {
        symbol: "BTAX",
        name: tokenPlans.BTAX[0],
        token: tokens.BTAX,
        pair: btaxPool,
        factory: factories.v3,
        kind: "uniswap_v3",
        createdBlock: liquidityBlock,
        expected: expected("BTAX"),
        reserves: { token: btaxBalances.token.toString(), weth: btaxBalances.weth.toString() },
        v3: { sqrtPriceX96: btaxSqrtPrice.toString(), liquidity: btaxL.toString(), feeBps: 30 },
        buys: 0,
        sells: 0,
        uniqueBuyers: 0,
        liquidityRemovedPct: 0,
      },
    ],
    stable: { symbol: "USDL", token: tokens.USDL, decimals: 18, pools: stablePools },
    wallets,
    classes,
  };
}
