/**
 * The entity-intelligence chapter of the seeded scenario: two exchanges with hot-wallet
 * clusters, a bridge, two DEX pools, a mixer, 32 users of exchange X spread over value
 * segments (some of whom go quiet), a flagged funder that funds three of them, a wallet holding
 * six tokens, and a four-hop flow from a flagged exploiter that ends at an exchange deposit and
 * at the bridge. Everything happens in one window of {@link ENTITY_WINDOW_BLOCKS} blocks, at
 * planned offsets from its first block, with empty blocks mined in between by `anvil_mine`.
 *
 * The chapter only uses wallets and contracts of its own (its keys are derived from names
 * under `entities/`), so the first chapter's balances, nonces and whale lists do not move;
 * every USDC transfer stays under 99,990 USDC and every WETH transfer under 32 WETH, below the
 * whale-watch thresholds the first chapter's tests check. USDC comes from mints by devnet
 * account 0, the devnet's USDC minter, as in the first chapter.
 *
 * Its ground truth (`entities` of the scenario's JSON) is computed here from the plan and the
 * mined positions of its transfers, by code of its own: the endpoints never compute it.
 */
import { type Address, encodeFunctionData, getContractAddress, type Hash, type Hex, type PrivateKeyAccount, parseUnits } from "viem";
import { WETH_ADDRESS } from "../../chain/addresses.ts";
import type { AddressClass } from "../../chain/classify.ts";
import { base } from "../../networks/base.ts";
import type { Deployable } from "./contracts.ts";
import type { Chapter, PlannedTransfer, ScenarioTokenSymbol, ScenarioTransfer } from "./scenario.ts";
import { amountOut, initializePair, scenarioAccount, scenarioContracts, tokenAbi } from "./scenario-common.ts";

/** Tokens this chapter deploys: ENTA (priced by DexScreener), ENTB (DefiLlama only), ENTC (no price anywhere). */
export type EntityTokenSymbol = "ENTA" | "ENTB" | "ENTC";

/** Blocks of the chapter's window; the tests ask for exactly this window with `to_block`. */
export const ENTITY_WINDOW_BLOCKS = 160;

/** Venue classes of the chapter's venues, as the curated label file states them. */
export type EntityVenueClass = "cex" | "dex" | "bridge" | "mixer";

/** A transfer of the chapter with where it was mined: the scenario's record, its token by address. */
export type EntityTransfer = Omit<ScenarioTransfer, "token" | "tokenAddress"> & { token: Address };

/** Atomic amounts by token address (decimal strings). */
export type AmountsByToken = Record<Address, string>;

/** What the entity endpoints must answer about the chapter, from its own bookkeeping. */
export interface EntitiesTruth {
  /** The chapter's window: `to_block` = toBlock and `blocks` = toBlock - fromBlock + 1 cover it exactly. */
  window: { fromBlock: number; toBlock: number };
  /** Wallets and contracts by their name in this module. */
  addresses: Record<string, Address>;
  tokens: Record<EntityTokenSymbol, { address: Address; name: string; symbol: string; decimals: number }>;
  /** The venues as the label file must list them (id, class and addresses). */
  venues: { id: string; class: EntityVenueClass; addresses: Address[] }[];
  /** The curated flags the label file must carry. */
  flags: { address: Address; flag: "exploit" | "phishing" | "mixer" | "scam" }[];
  /** Classes the classifier must give the chapter's addresses. */
  classes: Record<Address, AddressClass>;
  /** Every Transfer of the chapter, in chain order. */
  transfers: EntityTransfer[];
  /** USDC flows in and out of each venue class over the window (transfers inside one venue's cluster excluded). */
  exchangeFlow: {
    token: Address;
    byClass: Record<string, { inflow: string; outflow: string; transfers: number }>;
    /** Non-venue addresses on the other side, with what they sent to venues (inflow) and got from them (outflow). */
    counterparties: { address: Address; inflow: string; outflow: string }[];
  };
  /** The holder wallet at the window's last block. */
  portfolio: {
    address: Address;
    ethWei: string;
    /** Every token with a balance, by address. */
    balances: AmountsByToken;
    activity: { transfersIn: number; transfersOut: number; tokensTouched: number; firstSeenBlock: number; lastSeenBlock: number };
  };
  /** The holder's counterparties over the window, every token. */
  counterparties: {
    address: Address;
    rows: {
      address: Address;
      transfersIn: number;
      transfersOut: number;
      firstBlock: number;
      lastBlock: number;
      volumeIn: AmountsByToken;
      volumeOut: AmountsByToken;
    }[];
  };
  /** The exploiter's flow, hop by hop (USDC transfers of at least 1,000 USDC), and where each path ends. */
  trace: {
    origin: Address;
    /** The transaction of the first hop's first transfer (a trace can start from it). */
    firstTx: Hash;
    hops: { from: Address; to: Address; token: Address; value: string; txHash: Hash; block: number }[][];
    /** The terminal of each node reached by the fourth hop, with max_hops 4. */
    terminals: Record<Address, "cex" | "bridge" | "no_further_transfers">;
    /** A transfer below min_usd that the trace must leave out. */
    dust: { to: Address; value: string };
  };
  /** Exchange X (a cluster of two hot wallets) and its users over the window. */
  venueUsers: {
    venue: string;
    addresses: Address[];
    users: { address: Address; volume: AmountsByToken; transfers: number; firstBlock: number; lastBlock: number }[];
    /** Active in the window's first half, silent in its last quarter. */
    quiet: Address[];
    /** Users that received a transfer from a flagged address in the window. */
    flaggedFunders: { user: Address; funder: Address }[];
  };
}

const TOKENS: Record<EntityTokenSymbol, { name: string; symbol: string; decimals: number }> = {
  ENTA: { name: "Entity Test Token A", symbol: "ENTA", decimals: 18 },
  ENTB: { name: "Entity Test Token B", symbol: "ENTB", decimals: 18 },
  ENTC: { name: "Entity Test Token C", symbol: "ENTC", decimals: 6 },
};

const USER_COUNT = 32;
const userName = (i: number) => `user-${String(i).padStart(2, "0")}`;

/** Wallet names of the chapter. */
export const ENTITY_WALLETS = [
  "deployer",
  "cex-x-hot-1",
  "cex-x-hot-2",
  "cex-y-hot-1",
  "cex-y-hot-2",
  "bridge",
  "mixer",
  "funder",
  "holder",
  "exploiter",
  "hop-1",
  "hop-2",
  "hop-3a",
  "hop-3b",
  "sink",
  "dust",
  ...Array.from({ length: USER_COUNT }, (_, i) => userName(i + 1)),
] as const;

const usdc = (amount: string) => parseUnits(amount, 6);
const weth = (amount: string) => parseUnits(amount, 18);
const ent = (symbol: EntityTokenSymbol, amount: string) => parseUnits(amount, TOKENS[symbol].decimals);

/** Run the chapter on the scenario's builder and return its ground truth. */
export async function seedEntities({ client, builder, minter, artifacts }: Chapter): Promise<EntitiesTruth> {
  // The chapter's wallets have keys of their own (public, local-only), derived from names under `entities/`.
  const acct = Object.fromEntries(ENTITY_WALLETS.map((n) => [n, scenarioAccount(`entities/${n}`)])) as Record<string, PrivateKeyAccount>;
  const A = (name: string) => (acct[name] as PrivateKeyAccount).address;
  // The chapter's contracts: the deployer's first five nonces.
  const created = (nonce: number) => getContractAddress({ from: A("deployer"), nonce: BigInt(nonce) });
  const contracts = { ENTA: created(0), ENTB: created(1), ENTC: created(2), poolA: created(3), poolB: created(4) };
  const core = scenarioContracts();
  for (const symbol of ["ENTA", "ENTB", "ENTC"] as const) builder.tokenAddress[symbol] = contracts[symbol];
  // The first chapter registered USDC, WETH, PLAIN and PRXY.
  const tokenAddress = builder.tokenAddress as Record<ScenarioTokenSymbol, Address>;
  const firstTransfer = builder.transfers.length;

  // Pair reserves from the plan: the first chapter's PLAIN/WETH pair from its recorded transfers.
  const balanceOf = (token: Address, holder: Address) =>
    builder.transfers.reduce(
      (sum, t) =>
        sum +
        (t.tokenAddress === token && t.to === holder ? BigInt(t.value) : 0n) -
        (t.tokenAddress === token && t.from === holder ? BigInt(t.value) : 0n),
      0n,
    );

  for (const name of ENTITY_WALLETS) {
    const eth = name === "deployer" ? "100" : name === "holder" ? "10" : name === "user-20" || name === "user-31" ? "10" : "1";
    await client.setBalance({ address: A(name), value: weth(eth) });
  }
  const ethWrapped = new Map<Address, bigint>();

  const send = (who: string, symbol: ScenarioTokenSymbol, to: Address, value: bigint) =>
    builder.transfer(acct[who] as PrivateKeyAccount, symbol, to, value, `entities: ${who} sends ${value} ${symbol}`);
  const mintUsdc = (to: Address, amount: string) => builder.mint(minter, "USDC", to, usdc(amount), `entities: mint ${amount} USDC`);
  const wrap = (who: string, amount: string) => {
    ethWrapped.set(A(who), (ethWrapped.get(A(who)) ?? 0n) + weth(amount));
    return builder.wrap(acct[who] as PrivateKeyAccount, weth(amount), `entities: ${who} wraps ${amount} ETH`);
  };
  const call = (who: string, to: Address, data: Hex, transfers: PlannedTransfer[], what: string) =>
    builder.send(acct[who] as PrivateKeyAccount, { to, data, gas: 250_000n }, transfers, `entities: ${what}`);
  // A swap on a v2-style pair: the input is sent first, then swap() pays the output (same sender: nonce order).
  const reserves = new Map<string, bigint>();
  const swap = async (who: string, pair: Address, tokenIn: ScenarioTokenSymbol, tokenOut: ScenarioTokenSymbol, amountIn: bigint) => {
    const rIn = reserves.get(`${pair}:${tokenIn}`) ?? balanceOf(tokenAddress[tokenIn], pair);
    const rOut = reserves.get(`${pair}:${tokenOut}`) ?? balanceOf(tokenAddress[tokenOut], pair);
    const out = amountOut(amountIn, rIn, rOut);
    reserves.set(`${pair}:${tokenIn}`, rIn + amountIn);
    reserves.set(`${pair}:${tokenOut}`, rOut - out);
    await send(who, tokenIn, pair, amountIn);
    const what = `entities: ${who} swaps ${amountIn} ${tokenIn} for ${tokenOut}`;
    await builder.swapOut(acct[who] as PrivateKeyAccount, pair, tokenOut, tokenIn, out, 250_000n, what);
  };

  // Blocks at planned offsets from the window's first block.
  let start = -1;
  let last = -1;
  const at = async (offset: number, work: () => Promise<void>) => {
    if (start >= 0) await builder.skip(start + offset - last - 1);
    await work();
    const { block } = await builder.mine();
    if (start < 0) start = block;
    if (block !== start + offset) throw new Error(`entities: offset ${offset} was mined in block ${block}, planned ${start + offset}`);
    last = block;
  };

  // --- The plan of exchange X's users: deposits (to hot wallet 1) and withdrawals (from hot wallet 2).
  type Leg = { offset: number; kind: "deposit" | "withdrawal"; token: "USDC" | "WETH"; amount: string };
  const legs = new Map<number, Leg[]>();
  const leg = (i: number, l: Leg) => legs.set(i, [...(legs.get(i) ?? []), l]);
  const waveOffset = (i: number) => (i <= 11 ? 10 : i <= 22 ? 14 : 18);
  for (let i = 1; i <= 10; i++) leg(i, { offset: waveOffset(i), kind: "deposit", token: "USDC", amount: String(100 + 80 * i) });
  for (let i = 1; i <= 4; i++) leg(i, { offset: 125, kind: "deposit", token: "USDC", amount: "50" });
  for (let i = 11; i <= 20; i++) {
    if (i === 20) leg(i, { offset: waveOffset(i), kind: "deposit", token: "WETH", amount: "2.5" });
    else leg(i, { offset: waveOffset(i), kind: "deposit", token: "USDC", amount: String(1_000 + 800 * (i - 10)) });
  }
  for (let i = 11; i <= 14; i++) leg(i, { offset: 95, kind: "deposit", token: "USDC", amount: "100" });
  for (let i = 15; i <= 17; i++) leg(i, { offset: 125, kind: "withdrawal", token: "USDC", amount: "500" });
  for (let i = 21; i <= 29; i++)
    leg(i, { offset: waveOffset(i), kind: "deposit", token: "USDC", amount: String(12_000 + 9_000 * (i - 21)) });
  for (let i = 24; i <= 26; i++) leg(i, { offset: 95, kind: "deposit", token: "USDC", amount: "1000" });
  for (let i = 27; i <= 29; i++) leg(i, { offset: 125, kind: "deposit", token: "USDC", amount: "1000" });
  for (let i = 30; i <= 32; i++) {
    const amount = String(60_000 + 5_000 * (i - 29));
    leg(i, { offset: 18, kind: "deposit", token: "USDC", amount });
    leg(i, { offset: 60, kind: "deposit", token: "USDC", amount });
    if (i === 31) leg(i, { offset: 125, kind: "deposit", token: "WETH", amount: "5" });
    else leg(i, { offset: 125, kind: "withdrawal", token: "USDC", amount: "20000" });
  }
  const legsAt = async (offset: number) => {
    for (const [i, list] of legs) {
      for (const l of list.filter((x) => x.offset === offset)) {
        const value = l.token === "USDC" ? usdc(l.amount) : weth(l.amount);
        if (l.kind === "deposit") await send(userName(i), l.token, A("cex-x-hot-1"), value);
        else await send("cex-x-hot-2", l.token, A(userName(i)), value);
      }
    }
  };

  // --- Offset 0: contracts and USDC. ---------------------------------------------------------------
  const deploy = (artifact: Deployable, args: readonly unknown[], what: string) =>
    builder.deploy(acct.deployer as PrivateKeyAccount, artifact, args, `entities: deploy ${what}`, 4_000_000n);
  await at(0, async () => {
    const a = artifacts;
    for (const symbol of ["ENTA", "ENTB", "ENTC"] as const) {
      const t = TOKENS[symbol];
      await deploy(a.ScenarioToken, [t.name, t.symbol, t.decimals], symbol);
    }
    await deploy(a.UniswapV2Pair, [], "the ENTA/WETH pool");
    await deploy(a.UniswapV2Pair, [], "the ENTB/USDC pool");
    await call("deployer", contracts.poolA, initializePair(contracts.ENTA, WETH_ADDRESS), [], "name the ENTA/WETH pool's tokens");
    await call("deployer", contracts.poolB, initializePair(contracts.ENTB, base.usdc.address), [], "name the ENTB/USDC pool's tokens");
    await mintUsdc(A("deployer"), "60000");
    await mintUsdc(A("funder"), "10000");
    await mintUsdc(A("exploiter"), "90000");
    for (let i = 1; i <= USER_COUNT; i++) {
      const need = (legs.get(i) ?? []).filter((l) => l.kind === "deposit" && l.token === "USDC").reduce((s, l) => s + Number(l.amount), 0);
      // At most 90,000 USDC per mint (under the whale threshold); Y's depositors get 3,000 more.
      let rest = need + (i >= 29 ? 3_000 : 0) + 500;
      while (rest > 0) {
        const amount = Math.min(rest, 90_000);
        await mintUsdc(A(userName(i)), String(amount));
        rest -= amount;
      }
    }
  });
  // --- Offset 1: token supplies and wrapped ETH. ------------------------------------------------------
  await at(1, async () => {
    for (const [symbol, amount] of [
      ["ENTA", "1000000"],
      ["ENTB", "5000000"],
      ["ENTC", "100000"],
    ] as const) {
      await builder.mint(acct.deployer as PrivateKeyAccount, symbol, A("deployer"), ent(symbol, amount), `entities: mint ${symbol}`);
    }
    await wrap("deployer", "30");
    await wrap("holder", "2");
    await wrap("user-20", "3");
    await wrap("user-31", "6");
  });
  // --- Offset 2: pool liquidity and the holder's tokens. ---------------------------------------------
  await at(2, async () => {
    await send("deployer", "ENTA", contracts.poolA, ent("ENTA", "37000"));
    await send("deployer", "WETH", contracts.poolA, weth("30"));
    await send("deployer", "ENTB", contracts.poolB, ent("ENTB", "1000000"));
    await send("deployer", "USDC", contracts.poolB, usdc("45000"));
    for (const pool of [contracts.poolA, contracts.poolB]) {
      await call("deployer", pool, encodeFunctionData({ abi: tokenAbi, functionName: "sync" }), [], "sync a pool");
    }
    await send("deployer", "ENTA", A("holder"), ent("ENTA", "2000"));
    await send("deployer", "ENTB", A("holder"), ent("ENTB", "50000"));
    await send("deployer", "ENTC", A("holder"), ent("ENTC", "1000"));
  });
  // --- Offset 4: the flagged funder funds three users. -----------------------------------------------
  await at(4, async () => {
    for (const i of [5, 6, 7]) await send("funder", "USDC", A(userName(i)), usdc("2000"));
  });
  await at(10, () => legsAt(10));
  await at(14, () => legsAt(14));
  await at(18, () => legsAt(18));
  // --- Offsets 20-32: the exploiter's flow, one hop every four blocks. -------------------------------
  await at(20, async () => {
    await send("exploiter", "USDC", A("hop-1"), usdc("80000"));
    await send("exploiter", "USDC", A("dust"), usdc("400"));
  });
  await at(24, () => send("hop-1", "USDC", A("hop-2"), usdc("79000")).then(() => undefined));
  await at(28, async () => {
    await send("hop-2", "USDC", A("hop-3a"), usdc("50000"));
    await send("hop-2", "USDC", A("hop-3b"), usdc("28000"));
    await send("hop-2", "USDC", A("sink"), usdc("1000"));
  });
  await at(32, async () => {
    await send("hop-3a", "USDC", A("cex-x-hot-1"), usdc("49000"));
    await send("hop-3b", "USDC", A("bridge"), usdc("27500"));
  });
  // --- Offsets 40-70: sweeps inside the clusters, withdrawals, swaps, exchange Y. ----------------------
  await at(40, () => send("cex-x-hot-1", "USDC", A("cex-x-hot-2"), usdc("90000")).then(() => undefined));
  await at(44, () => send("cex-x-hot-2", "USDC", A("holder"), usdc("30000")).then(() => undefined));
  await at(50, async () => {
    await swap("holder", contracts.poolB, "USDC", "ENTB", usdc("3000"));
    await swap("holder", contracts.poolA, "WETH", "ENTA", weth("0.5"));
    await swap("holder", core.v2Pair, "WETH", "PLAIN", weth("0.3"));
  });
  await at(60, async () => {
    await legsAt(60);
    for (let i = 29; i <= 32; i++) await send(userName(i), "USDC", A("cex-y-hot-1"), usdc("3000"));
  });
  await at(66, () => send("cex-y-hot-1", "USDC", A("cex-y-hot-2"), usdc("8000")).then(() => undefined));
  await at(70, () => send("cex-y-hot-2", "USDC", A(userName(29)), usdc("2000")).then(() => undefined));
  // --- The third quarter (offsets 80-119), then the last quarter (120-159). -------------------------
  await at(95, () => legsAt(95));
  await at(100, () => send("holder", "USDC", A("mixer"), usdc("1500")).then(() => undefined));
  await at(125, async () => {
    await legsAt(125);
    await send("holder", "USDC", A(userName(1)), usdc("700"));
    await send("holder", "USDC", A("bridge"), usdc("2000"));
    await send("holder", "WETH", A(userName(2)), weth("0.5"));
    await swap("holder", contracts.poolB, "ENTB", "USDC", ent("ENTB", "10000"));
  });
  await at(130, () => send("bridge", "USDC", A(userName(30)), usdc("10000")).then(() => undefined));
  await builder.skip(start + ENTITY_WINDOW_BLOCKS - 1 - last);
  const window = { fromBlock: start, toBlock: start + ENTITY_WINDOW_BLOCKS - 1 };

  const transfers: EntityTransfer[] = builder.transfers
    .slice(firstTransfer)
    .map(({ token: _symbol, tokenAddress, ...t }) => ({ token: tokenAddress, ...t }));

  const venues: EntitiesTruth["venues"] = [
    { id: "seeded-exchange-x", class: "cex", addresses: [A("cex-x-hot-1"), A("cex-x-hot-2")] },
    { id: "seeded-exchange-y", class: "cex", addresses: [A("cex-y-hot-1"), A("cex-y-hot-2")] },
    { id: "seeded-bridge-z", class: "bridge", addresses: [A("bridge")] },
    { id: "seeded-enta-weth-pool", class: "dex", addresses: [contracts.poolA] },
    { id: "seeded-entb-usdc-pool", class: "dex", addresses: [contracts.poolB] },
    { id: "seeded-mixer", class: "mixer", addresses: [A("mixer")] },
  ];
  const flags: EntitiesTruth["flags"] = [
    { address: A("exploiter"), flag: "exploit" },
    { address: A("funder"), flag: "scam" },
    { address: A("mixer"), flag: "mixer" },
  ];
  const classes: Record<Address, AddressClass> = {
    [contracts.ENTA]: "token",
    [contracts.ENTB]: "token",
    [contracts.ENTC]: "token",
    [contracts.poolA]: "v2_pair",
    [contracts.poolB]: "v2_pair",
  };
  for (const name of ENTITY_WALLETS) classes[A(name)] = "wallet";

  const addresses: Record<string, Address> = { ...contracts };
  for (const name of ENTITY_WALLETS) addresses[name] = A(name);
  // The holder's ETH: the 10 ETH set above, less what it wrapped and spent on gas.
  const holderEth = weth("10") - (ethWrapped.get(A("holder")) ?? 0n) - (builder.gasSpent.get(A("holder")) ?? 0n);

  return {
    window,
    addresses,
    tokens: Object.fromEntries(
      Object.entries(TOKENS).map(([symbol, token]) => [symbol, { address: contracts[symbol as EntityTokenSymbol], ...token }]),
    ) as EntitiesTruth["tokens"],
    venues,
    flags,
    classes,
    transfers,
    exchangeFlow: exchangeFlowTruth(transfers, venues, base.usdc.address),
    portfolio: portfolioTruth(transfers, A("holder"), holderEth, ethWrapped.get(A("holder")) ?? 0n),
    counterparties: counterpartiesTruth(transfers, A("holder")),
    trace: traceTruth(transfers, A, venues),
    venueUsers: venueUsersTruth(transfers, venues[0] as EntitiesTruth["venues"][number], flags, window),
  };
}

// --- The bookkeeping: what each endpoint must answer, restated from the transfers and the plan. ---

const add = (book: AmountsByToken, token: Address, value: string) => {
  book[token] = (BigInt(book[token] ?? "0") + BigInt(value)).toString();
};

function exchangeFlowTruth(transfers: EntityTransfer[], venues: EntitiesTruth["venues"], token: Address): EntitiesTruth["exchangeFlow"] {
  const venueOf = new Map<Address, EntitiesTruth["venues"][number]>();
  for (const v of venues) for (const a of v.addresses) venueOf.set(a, v);
  const byClass: EntitiesTruth["exchangeFlow"]["byClass"] = {};
  const row = (cls: string) => {
    byClass[cls] ??= { inflow: "0", outflow: "0", transfers: 0 };
    return byClass[cls];
  };
  for (const cls of ["cex", "dex", "bridge"]) row(cls);
  const others = new Map<Address, { inflow: bigint; outflow: bigint }>();
  for (const t of transfers.filter((x) => x.token === token)) {
    const from = venueOf.get(t.from);
    const to = venueOf.get(t.to);
    if (from && from === to) continue; // a sweep inside one cluster is not a flow
    // Into a venue, its inflow (and what the sender sent venues); out of one, its outflow (and what the recipient got).
    for (const [venue, otherVenue, other, way] of [
      [to, from, t.from, "inflow"],
      [from, to, t.to, "outflow"],
    ] as const) {
      if (!venue) continue;
      const r = row(venue.class);
      r[way] = (BigInt(r[way]) + BigInt(t.value)).toString();
      r.transfers++;
      if (otherVenue) continue;
      const o = others.get(other) ?? { inflow: 0n, outflow: 0n };
      o[way] += BigInt(t.value);
      others.set(other, o);
    }
  }
  const counterparties = [...others]
    .map(([address, o]) => ({ address, inflow: o.inflow.toString(), outflow: o.outflow.toString() }))
    .sort((a, b) => {
      const d = BigInt(b.inflow) + BigInt(b.outflow) - (BigInt(a.inflow) + BigInt(a.outflow));
      return d > 0n ? 1 : d < 0n ? -1 : a.address.toLowerCase().localeCompare(b.address.toLowerCase());
    });
  return { token, byClass, counterparties };
}

function portfolioTruth(transfers: EntityTransfer[], holder: Address, ethWei: bigint, wrapped: bigint): EntitiesTruth["portfolio"] {
  const mine = transfers.filter((t) => t.from === holder || t.to === holder);
  // Wrapping emits WETH's Deposit event, not a Transfer: the wrapped amount is in the plan only.
  const balances: AmountsByToken = { [WETH_ADDRESS]: wrapped.toString() };
  for (const t of mine) {
    if (t.to === holder) add(balances, t.token, t.value);
    if (t.from === holder) add(balances, t.token, `-${t.value}`);
  }
  for (const [token, value] of Object.entries(balances)) if (value === "0") delete balances[token as Address];
  return {
    address: holder,
    ethWei: ethWei.toString(),
    balances,
    activity: {
      transfersIn: mine.filter((t) => t.to === holder).length,
      transfersOut: mine.filter((t) => t.from === holder).length,
      tokensTouched: new Set(mine.map((t) => t.token)).size,
      firstSeenBlock: Math.min(...mine.map((t) => t.block)),
      lastSeenBlock: Math.max(...mine.map((t) => t.block)),
    },
  };
}

function counterpartiesTruth(transfers: EntityTransfer[], subject: Address): EntitiesTruth["counterparties"] {
  const rows = new Map<Address, EntitiesTruth["counterparties"]["rows"][number]>();
  for (const t of transfers) {
    if (t.from !== subject && t.to !== subject) continue;
    const other = t.from === subject ? t.to : t.from;
    const r = rows.get(other) ?? {
      address: other,
      transfersIn: 0,
      transfersOut: 0,
      firstBlock: t.block,
      lastBlock: t.block,
      volumeIn: {},
      volumeOut: {},
    };
    if (t.to === subject) {
      r.transfersIn++;
      add(r.volumeIn, t.token, t.value);
    } else {
      r.transfersOut++;
      add(r.volumeOut, t.token, t.value);
    }
    r.firstBlock = Math.min(r.firstBlock, t.block);
    r.lastBlock = Math.max(r.lastBlock, t.block);
    rows.set(other, r);
  }
  return { address: subject, rows: [...rows.values()] };
}

function traceTruth(transfers: EntityTransfer[], A: (name: string) => Address, venues: EntitiesTruth["venues"]): EntitiesTruth["trace"] {
  const edge = (from: string, to: string) => {
    const t = transfers.find((x) => x.from === A(from) && x.to === A(to) && x.token === base.usdc.address);
    if (!t) throw new Error(`entities: no planned transfer ${from} -> ${to}`);
    return { from: t.from, to: t.to, token: t.token, value: t.value, txHash: t.txHash, block: t.block };
  };
  const hops = [
    [edge("exploiter", "hop-1")],
    [edge("hop-1", "hop-2")],
    [edge("hop-2", "hop-3a"), edge("hop-2", "hop-3b"), edge("hop-2", "sink")],
    [edge("hop-3a", "cex-x-hot-1"), edge("hop-3b", "bridge")],
  ];
  const cex = venues.find((v) => v.id === "seeded-exchange-x")?.addresses[0] as Address;
  return {
    origin: A("exploiter"),
    firstTx: hops[0]?.[0]?.txHash as Hash,
    hops,
    terminals: { [cex]: "cex", [A("bridge")]: "bridge", [A("sink")]: "no_further_transfers" },
    dust: { to: A("dust"), value: usdc("400").toString() },
  };
}

function venueUsersTruth(
  transfers: EntityTransfer[],
  venue: EntitiesTruth["venues"][number],
  flags: EntitiesTruth["flags"],
  window: { fromBlock: number; toBlock: number },
): EntitiesTruth["venueUsers"] {
  const cluster = new Set(venue.addresses);
  const users = new Map<Address, EntitiesTruth["venueUsers"]["users"][number] & { blocks: number[] }>();
  for (const t of transfers) {
    const inside = cluster.has(t.from) && cluster.has(t.to);
    if (inside || (!cluster.has(t.from) && !cluster.has(t.to))) continue;
    const user = cluster.has(t.from) ? t.to : t.from;
    const u = users.get(user) ?? { address: user, volume: {}, transfers: 0, firstBlock: t.block, lastBlock: t.block, blocks: [] };
    add(u.volume, t.token, t.value);
    u.transfers++;
    u.firstBlock = Math.min(u.firstBlock, t.block);
    u.lastBlock = Math.max(u.lastBlock, t.block);
    u.blocks.push(t.block);
    users.set(user, u);
  }
  const n = window.toBlock - window.fromBlock + 1;
  const firstHalfEnd = window.fromBlock + Math.floor(n / 2) - 1;
  const lastQuarterStart = window.toBlock - Math.floor(n / 4) + 1;
  const quiet = [...users.values()]
    .filter((u) => u.blocks.some((b) => b <= firstHalfEnd) && !u.blocks.some((b) => b >= lastQuarterStart))
    .map((u) => u.address);
  const flagged = new Set(flags.map((f) => f.address));
  const flaggedFunders = transfers.filter((t) => flagged.has(t.from) && users.has(t.to)).map((t) => ({ user: t.to, funder: t.from }));
  return {
    venue: venue.id,
    addresses: venue.addresses,
    users: [...users.values()].map(({ blocks: _blocks, ...u }) => u),
    quiet,
    flaggedFunders,
  };
}
