/**
 * The seeded local chain: a deterministic scenario of realistic activity on the devnet, run
 * by local mode on first start and by the test global setup. It deploys a plain ERC-20, an
 * EIP-1967 (transparent) proxy token, a Uniswap v2 pair, a v3-style pool and a router; funds
 * exchange, bridge, whale and user wallets with USDC and WETH; moves money between them over
 * a few hundred blocks (a few whale-sized transfers among many small ones, swaps, liquidity);
 * and ends with blocks of known priority fees. It writes down its ground truth: every
 * transfer with its block, log index and transaction, every balance and nonce, every class.
 *
 * The ground truth comes from the plan, not from reading the chain back: each receipt is
 * checked to carry exactly the planned Transfer logs, and only its position (block, log
 * index) is taken from it. The scenario never touches devnet accounts 1-9 and only uses
 * account 0 as USDC's minter, so the payment tests' exact balance checks are unaffected.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import {
  type Abi,
  type Address,
  decodeEventLog,
  encodeDeployData,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hash,
  type Hex,
  maxUint256,
  type PrivateKeyAccount,
  parseUnits,
  type TransactionReceipt,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { MULTICALL3_ADDRESS, WETH_ADDRESS } from "../../chain/addresses.ts";
import type { AddressClass } from "../../chain/classify.ts";
import { TRANSFER_EVENT, TRANSFER_TOPIC } from "../../chain/log-scanner.ts";
import { base } from "../../networks/base.ts";
import { type Deployable, loadContracts } from "./contracts.ts";
import { type DevnetAccount, devnetClient } from "./devnet.ts";
import { amountOut, initializePair, isqrt, scenarioAccount, scenarioContracts, tokenAbi } from "./scenario-common.ts";
import { type EntitiesTruth, type EntityTokenSymbol, seedEntities } from "./scenario-entities.ts";
import { type LiquiditySymbol, seedTokenRisk, type TokenRiskSymbol, type TokenRiskTruth } from "./scenario-tokens.ts";

/** Tokens the scenario's first chapter moves. */
type CoreTokenSymbol = "USDC" | "WETH" | "PLAIN" | "PRXY";

/** Tokens the scenario moves (later chapters deploy their own). */
export type ScenarioTokenSymbol = CoreTokenSymbol | EntityTokenSymbol;

/** Roles of scenario wallets. */
export type ScenarioRole = "deployer" | "exchange" | "bridge" | "whale" | "user" | "fee" | "cold";

/** Every token whose transfers the ground truth records (the token-risk tokens of src/local/devnet/scenario-tokens.ts and its pairs' liquidity tokens too). */
export type ScenarioTransferToken = ScenarioTokenSymbol | TokenRiskSymbol | LiquiditySymbol;

/** One transfer of the ground truth. */
export interface ScenarioTransfer {
  token: ScenarioTransferToken;
  tokenAddress: Address;
  from: Address;
  to: Address;
  /** Smallest units, decimal string. */
  value: string;
  block: number;
  logIndex: number;
  txHash: Hash;
}

/** One wallet of the ground truth, with its state at the end of the scenario. */
export interface ScenarioWalletTruth {
  name: string;
  role: ScenarioRole;
  address: Address;
  nonce: number;
  ethWei: string;
  usdcAtomic: string;
  wethWei: string;
}

/** Everything the scenario did, for the tests (JSON-serialisable: big numbers are strings). */
export interface ScenarioGroundTruth {
  version: number;
  startBlock: number;
  endBlock: number;
  contracts: ReturnType<typeof scenarioContracts>;
  tokens: Record<"PLAIN" | "PRXY", { name: string; symbol: string; decimals: number; totalSupply: string }>;
  wallets: ScenarioWalletTruth[];
  transfers: ScenarioTransfer[];
  /** The last blocks, each with five 21,000-gas transfers of known priority fees (wei, sorted ascending). */
  feeBlocks: { blocks: number[]; tipsWei: string[][] };
  /** The class every named address must get from the classifier. */
  classes: Record<Address, AddressClass>;
  /** The entity-intelligence chapter: venues, users, flows and the answers they imply (src/local/devnet/scenario-entities.ts). */
  entities: EntitiesTruth;
  /** The token-risk tokens, pairs and stablecoin pools (src/local/devnet/scenario-tokens.ts). */
  tokenRisk: TokenRiskTruth;
}

/** Bump when the plan changes: a persisted chain seeded by another version is reported (`staleScenario`), not reseeded. */
export const SCENARIO_VERSION = 4;

/** Why a persisted chain's ground truth is not this code's scenario, or undefined when it is. */
export function staleScenario(truth: ScenarioGroundTruth | undefined, dataDir: string): string | undefined {
  if (truth === undefined) return `the local chain in ${dataDir} was seeded before, but its ground truth (scenario.json) is missing`;
  if (truth.version === SCENARIO_VERSION) return undefined;
  return `the local chain in ${dataDir} was seeded by scenario version ${truth.version}; this code seeds version ${SCENARIO_VERSION}`;
}

const DECIMALS: Record<CoreTokenSymbol, number> = { USDC: 6, WETH: 18, PLAIN: 18, PRXY: 18 };
const DEFAULT_TIP = 1_000_000n; // 0.001 gwei, a typical Base priority fee
const MAX_FEE = 2_000_000_000n;
const ERC20_GAS = 120_000n;

/** Names and roles of the scenario's wallets. */
export const SCENARIO_WALLETS: readonly { name: string; role: ScenarioRole }[] = [
  { name: "deployer", role: "deployer" },
  { name: "exchange-a", role: "exchange" },
  { name: "exchange-b", role: "exchange" },
  { name: "bridge", role: "bridge" },
  { name: "whale-1", role: "whale" },
  { name: "whale-2", role: "whale" },
  { name: "whale-3", role: "whale" },
  ...Array.from({ length: 16 }, (_, i) => ({ name: `user-${String(i + 1).padStart(2, "0")}`, role: "user" as const })),
  ...Array.from({ length: 5 }, (_, i) => ({ name: `fee-${i + 1}`, role: "fee" as const })),
  { name: "cold", role: "cold" },
];

/** The fee wallets' accounts, in order (tests re-mine fee blocks with them). */
export function feeAccounts(): PrivateKeyAccount[] {
  return SCENARIO_WALLETS.filter((w) => w.role === "fee").map((w) => scenarioAccount(w.name));
}

/**
 * The priority fees (wei) of fee block `j`, ascending. With five equal-gas transactions,
 * eth_feeHistory's 10th/50th/90th percentiles pick the 1st, 3rd and 5th: over 20 blocks their
 * medians are 2,500,000, 12,000,000 and 100,000,000 wei (0.0025, 0.012 and 0.1 gwei).
 */
export function feeBlockTips(j: number): bigint[] {
  return [
    1_000_000n * BigInt(1 + (j % 4)),
    5_000_000n + 1_000_000n * BigInt(j % 2),
    10_000_000n + 1_000_000n * BigInt(j % 5),
    30_000_000n,
    50_000_000n * BigInt(1 + (j % 3)),
  ];
}

/** Blocks in the fee window (the gas tracker samples 20). */
export const FEE_BLOCK_COUNT = 20;

// mulberry32: a tiny seeded generator, so "random" small transfers are the same on every run.
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The scenario's client: anvil test actions, public and wallet actions. */
export type TestClient = ReturnType<typeof devnetClient>;

/** A transfer a transaction is planned to make (its Transfer log is checked against it). */
export interface PlannedTransfer {
  token: ScenarioTransferToken;
  from: Address;
  to: Address;
  value: bigint;
}

interface PendingTx {
  hash: Hash;
  from: Address;
  transfers: PlannedTransfer[];
  what: string;
}

/** What a later chapter (scenario-entities.ts, scenario-tokens.ts) runs with. */
export interface Chapter {
  client: TestClient;
  /** The scenario's builder (automine off): the chapter's transfers are planned and recorded with the others. */
  builder: BlockBuilder;
  /** Devnet account 0: USDC's minter. */
  minter: PrivateKeyAccount;
  artifacts: ReturnType<typeof loadContracts>;
}

/** Sends signed transactions into the next block and mines it, keeping nonces and an ETH ledger. */
export class BlockBuilder {
  readonly #client: TestClient;
  readonly #nonces = new Map<Address, number>();
  #pending: PendingTx[] = [];
  readonly transfers: ScenarioTransfer[] = [];
  /** ETH spent on gas (and L1 fees) per sender. */
  readonly gasSpent = new Map<Address, bigint>();
  /** Where each token's Transfer logs come from; later chapters add the tokens they deploy. */
  readonly tokenAddress: Partial<Record<ScenarioTransferToken, Address>>;

  constructor(client: TestClient, tokenAddress: Record<CoreTokenSymbol, Address>) {
    this.#client = client;
    this.tokenAddress = { ...tokenAddress };
  }

  async nonceOf(account: Address): Promise<number> {
    let nonce = this.#nonces.get(account);
    if (nonce === undefined) {
      nonce = await this.#client.getTransactionCount({ address: account, blockTag: "pending" });
      this.#nonces.set(account, nonce);
    }
    return nonce;
  }

  async send(
    account: PrivateKeyAccount,
    tx: { to?: Address; data?: Hex; value?: bigint; gas: bigint; tip?: bigint },
    transfers: PlannedTransfer[],
    what: string,
  ): Promise<Hash> {
    const nonce = await this.nonceOf(account.address);
    this.#nonces.set(account.address, nonce + 1);
    const signed = await account.signTransaction({
      chainId: this.#client.chain.id,
      type: "eip1559",
      nonce,
      ...(tx.to ? { to: tx.to } : {}),
      ...(tx.data ? { data: tx.data } : {}),
      value: tx.value ?? 0n,
      gas: tx.gas,
      maxFeePerGas: MAX_FEE,
      maxPriorityFeePerGas: tx.tip ?? DEFAULT_TIP,
    });
    const hash = await this.#client.sendRawTransaction({ serializedTransaction: signed });
    this.#pending.push({ hash, from: account.address, transfers, what });
    return hash;
  }

  /** An ERC-20 transfer from `account`, planned as its one Transfer log unless `transfers` says otherwise. */
  transfer(
    account: PrivateKeyAccount,
    token: ScenarioTransferToken,
    to: Address,
    value: bigint,
    what: string,
    transfers: PlannedTransfer[] = [{ token, from: account.address, to, value }],
  ): Promise<Hash> {
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, value] });
    return this.send(account, { to: this.tokenAddress[token] as Address, data, gas: ERC20_GAS }, transfers, what);
  }

  /** A mint of `token` by its minter, planned as a Transfer from the zero address. */
  mint(minter: PrivateKeyAccount, token: ScenarioTransferToken, to: Address, value: bigint, what: string): Promise<Hash> {
    const data = encodeFunctionData({ abi: tokenAbi, functionName: "mint", args: [to, value] });
    return this.send(
      minter,
      { to: this.tokenAddress[token] as Address, data, gas: ERC20_GAS },
      [{ token, from: zeroAddress, to, value }],
      what,
    );
  }

  /** Wraps ETH into WETH: WETH's Deposit event is not a Transfer, so nothing is planned. */
  wrap(account: PrivateKeyAccount, value: bigint, what: string): Promise<Hash> {
    const data = encodeFunctionData({ abi: tokenAbi, functionName: "deposit" });
    return this.send(account, { to: WETH_ADDRESS, data, value, gas: 80_000n }, [], what);
  }

  /** swap() on a v2-style pair that was sent its input first: pays `out` of `token` to `account`, the other side being `otherToken`. */
  swapOut(
    account: PrivateKeyAccount,
    pair: Address,
    token: ScenarioTransferToken,
    otherToken: ScenarioTransferToken,
    out: bigint,
    gas: bigint,
    what: string,
  ): Promise<Hash> {
    // The pair's token0 is the lower address.
    const outIsToken0 = BigInt(this.tokenAddress[token] as Address) < BigInt(this.tokenAddress[otherToken] as Address);
    const args = [outIsToken0 ? out : 0n, outIsToken0 ? 0n : out, account.address, "0x"] as const;
    const data = encodeFunctionData({ abi: tokenAbi, functionName: "swap", args });
    return this.send(account, { to: pair, data, gas }, [{ token, from: pair, to: account.address, value: out }], what);
  }

  /** Deploys `artifact` with its constructor's `args`. */
  deploy(
    account: PrivateKeyAccount,
    artifact: Deployable,
    args: readonly unknown[],
    what: string,
    gas: bigint,
    transfers: PlannedTransfer[] = [],
  ): Promise<Hash> {
    const data = encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args });
    return this.send(account, { data, gas }, transfers, what);
  }

  /** Mine the pending transactions into one block; check each receipt against its plan. */
  async mine(): Promise<{ block: number; receipts: TransactionReceipt[] }> {
    const pending = this.#pending;
    this.#pending = [];
    await this.#client.mine({ blocks: 1 });
    const receipts = await Promise.all(pending.map((p) => this.#client.getTransactionReceipt({ hash: p.hash })));
    const block = Number(receipts[0]?.blockNumber ?? (await this.#client.getBlockNumber({ cacheTime: 0 })));
    receipts.forEach((receipt, i) => {
      const plan = pending[i] as PendingTx;
      if (receipt.status !== "success") throw new Error(`scenario: "${plan.what}" reverted (${plan.hash})`);
      if (Number(receipt.blockNumber) !== block) throw new Error(`scenario: "${plan.what}" was mined in another block`);
      const l1Fee = (receipt as { l1Fee?: bigint | null }).l1Fee ?? 0n;
      this.gasSpent.set(plan.from, (this.gasSpent.get(plan.from) ?? 0n) + receipt.gasUsed * receipt.effectiveGasPrice + l1Fee);
      const logs = receipt.logs
        .filter((log) => log.topics[0] === TRANSFER_TOPIC && log.topics.length === 3)
        .map((log) => ({ log, args: decodeEventLog({ abi: [TRANSFER_EVENT], data: log.data, topics: log.topics }).args }));
      if (logs.length !== plan.transfers.length) {
        throw new Error(`scenario: "${plan.what}" emitted ${logs.length} Transfer logs, planned ${plan.transfers.length}`);
      }
      logs.forEach(({ log, args }, k) => {
        const want = plan.transfers[k] as PlannedTransfer;
        const token = this.tokenAddress[want.token];
        if (
          !token ||
          getAddress(log.address) !== token ||
          getAddress(args.from) !== want.from ||
          getAddress(args.to) !== want.to ||
          args.value !== want.value
        ) {
          throw new Error(`scenario: "${plan.what}" transfer ${k} differs from its plan`);
        }
        this.transfers.push({
          token: want.token,
          tokenAddress: token,
          from: want.from,
          to: want.to,
          value: want.value.toString(),
          block,
          logIndex: log.logIndex,
          txHash: plan.hash,
        });
      });
    });
    return { block, receipts };
  }

  /** Mine `count` empty blocks; no time passes (interval 0), so the chain's clock stays near the wall clock. */
  async skip(count: number): Promise<void> {
    if (count > 0) await this.#client.request({ method: "anvil_mine" as never, params: [`0x${count.toString(16)}`, "0x0"] as never });
  }
}

const units = (token: CoreTokenSymbol, amount: string) => parseUnits(amount, DECIMALS[token]);

/** Options of {@link seedScenario}. */
export interface SeedOptions {
  rpcUrl: string;
  /** Devnet account 0: USDC's minter. */
  minter: DevnetAccount;
  /** Where to write (and, on a seeded chain, read) the ground truth. */
  groundTruthFile?: string;
}

/**
 * Seed the scenario on a fresh devnet and return its ground truth. On a chain that was already
 * seeded (the deployer has sent transactions) nothing is sent: the ground truth is read back
 * from `groundTruthFile`, or undefined when there is none.
 */
export async function seedScenario(options: SeedOptions): Promise<ScenarioGroundTruth | undefined> {
  const client = devnetClient(options.rpcUrl);
  const deployer = scenarioAccount("deployer");
  if ((await client.getTransactionCount({ address: deployer.address })) > 0) {
    if (options.groundTruthFile && existsSync(options.groundTruthFile)) {
      return JSON.parse(readFileSync(options.groundTruthFile, "utf8")) as ScenarioGroundTruth;
    }
    return undefined;
  }
  const artifacts = loadContracts();
  await client.setAutomine(false);
  try {
    const truth = await runScenario(client, options.minter, artifacts);
    if (options.groundTruthFile) {
      const tmp = `${options.groundTruthFile}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(truth, null, 2)}\n`);
      renameSync(tmp, options.groundTruthFile);
    }
    return truth;
  } finally {
    await client.setAutomine(true);
  }
}

/** Mine the fee window (five 21,000-gas transfers a block, of known tips) with `builder`; returns its plan. */
export async function feeWindow(builder: BlockBuilder): Promise<ScenarioGroundTruth["feeBlocks"]> {
  const fee = feeAccounts();
  const blocks: number[] = [];
  const tipsWei: string[][] = [];
  for (let j = 0; j < FEE_BLOCK_COUNT; j++) {
    const tips = feeBlockTips(j);
    // Zero-value transfers around a ring of fee wallets: exactly 21,000 gas each, no balance moves but gas.
    for (let i = 0; i < fee.length; i++) {
      const from = fee[i] as PrivateKeyAccount;
      const to = (fee[(i + 1) % fee.length] as PrivateKeyAccount).address;
      await builder.send(from, { to, gas: 21_000n, tip: tips[i] as bigint }, [], `fee block ${j} tx ${i}`);
    }
    const { block } = await builder.mine();
    blocks.push(block);
    tipsWei.push(tips.map(String));
  }
  return { blocks, tipsWei };
}

async function runScenario(
  client: TestClient,
  minterKey: DevnetAccount,
  artifacts: ReturnType<typeof loadContracts>,
): Promise<ScenarioGroundTruth> {
  const contracts = scenarioContracts();
  const tokenAddress: Record<CoreTokenSymbol, Address> = {
    USDC: base.usdc.address,
    WETH: WETH_ADDRESS,
    PLAIN: contracts.plainToken,
    PRXY: contracts.proxyToken,
  };
  const builder = new BlockBuilder(client, tokenAddress);
  const minter = privateKeyToAccount(minterKey.privateKey);
  const acct = Object.fromEntries(SCENARIO_WALLETS.map((w) => [w.name, scenarioAccount(w.name)])) as Record<string, PrivateKeyAccount>;
  const A = (name: string) => (acct[name] as PrivateKeyAccount).address;
  const users = SCENARIO_WALLETS.filter((w) => w.role === "user").map((w) => w.name);
  const startBlock = Number(await client.getBlockNumber({ cacheTime: 0 })) + 1;

  // Ledgers of the plan: the ground truth of balances.
  const balances: Record<CoreTokenSymbol, Map<Address, bigint>> = {
    USDC: new Map(),
    WETH: new Map(),
    PLAIN: new Map(),
    PRXY: new Map(),
  };
  const ethIn = new Map<Address, bigint>();
  const ethOut = new Map<Address, bigint>();
  const supply: Record<"PLAIN" | "PRXY", bigint> = { PLAIN: 0n, PRXY: 0n };
  const move = (t: PlannedTransfer) => {
    const book = balances[t.token as CoreTokenSymbol];
    if (t.from !== zeroAddress) {
      const have = book.get(t.from) ?? 0n;
      if (have < t.value) throw new Error(`scenario plan: ${t.from} cannot send ${t.value} ${t.token}`);
      book.set(t.from, have - t.value);
    }
    book.set(t.to, (book.get(t.to) ?? 0n) + t.value);
  };
  const addEth = (map: Map<Address, bigint>, who: Address, v: bigint) => map.set(who, (map.get(who) ?? 0n) + v);

  // Money the wallets start with (ETH by anvil_setBalance: no transaction, no log).
  const initialEth: Record<string, string> = {
    deployer: "1000",
    "exchange-a": "3000",
    "exchange-b": "50",
    bridge: "20",
    "whale-1": "800",
    "whale-2": "600",
    "whale-3": "5",
  };
  for (const w of SCENARIO_WALLETS) {
    const eth = initialEth[w.name] ?? (w.role === "user" ? "60" : w.role === "fee" ? "1" : "0");
    if (eth !== "0") await client.setBalance({ address: A(w.name), value: units("WETH", eth) });
    addEth(ethIn, A(w.name), units("WETH", eth));
  }

  const token = async (who: string, t: CoreTokenSymbol, to: Address, amount: bigint, what?: string) => {
    move({ token: t, from: A(who), to, value: amount });
    await builder.transfer(acct[who] as PrivateKeyAccount, t, to, amount, what ?? `${who} sends ${amount} ${t}`);
  };
  const deposit = async (who: string, eth: string) => {
    const value = units("WETH", eth);
    balances.WETH.set(A(who), (balances.WETH.get(A(who)) ?? 0n) + value);
    addEth(ethOut, A(who), value);
    await builder.wrap(acct[who] as PrivateKeyAccount, value, `${who} wraps ${eth} ETH`);
  };
  const deploy = (artifact: Deployable, args: readonly unknown[], what: string) =>
    builder.deploy(deployer(), artifact, args, what, 4_000_000n);
  const deployer = () => acct.deployer as PrivateKeyAccount;

  // --- Block 1: contracts, USDC mints, WETH deposits. -------------------------------------------
  const PLAIN = { name: "Plain Test Token", symbol: "PLAIN", decimals: 18 };
  const PRXY = { name: "Proxied Test Token", symbol: "PRXY", decimals: 18 };
  const a = artifacts;
  await deploy(a.ScenarioToken, [PLAIN.name, PLAIN.symbol, PLAIN.decimals], "deploy PLAIN");
  await deploy(a.ScenarioUpgradeableToken, [], "deploy the proxy token's implementation");
  await deploy(
    a.TransparentUpgradeableProxy,
    [
      contracts.proxyImplementation,
      A("deployer"),
      encodeFunctionData({
        abi: a.ScenarioUpgradeableToken.abi as Abi,
        functionName: "initialize",
        args: [PRXY.name, PRXY.symbol, PRXY.decimals, A("deployer")],
      }),
    ],
    "deploy the PRXY proxy",
  );
  await deploy(a.UniswapV2Pair, [], "deploy the PLAIN/WETH v2 pair");
  // WETH (0x42..) sorts before USDC (0x83..): token0 = WETH; 3,120.45 USDC per WETH in raw units
  // (tick = floor(log1.0001(price)), liquidity = sqrt(500 WETH x 1,560,000 USDC) in raw units).
  const sqrtPrice = isqrt((3_120_450_000n << 192n) / 10n ** 18n);
  await deploy(
    a.ScenarioV3Pool,
    [WETH_ADDRESS, base.usdc.address, 500, sqrtPrice, -195_863, 27_928_480_087_537_882n],
    "deploy the WETH/USDC v3 pool",
  );
  await deploy(a.ScenarioRouter, [A("deployer")], "deploy the router");
  await builder.send(
    deployer(),
    { to: contracts.v2Pair, data: initializePair(contracts.plainToken, WETH_ADDRESS), gas: 100_000n },
    [],
    "name the pair's tokens",
  );

  const usdcMints: [string, string][] = [
    ["exchange-a", "5000000"],
    ["exchange-b", "3000000"],
    ["whale-1", "2000000"],
    ["whale-2", "1500000"],
  ];
  const random = seededRandom(4021);
  for (const name of users) usdcMints.push([name, (1_000 + Math.floor(random() * 49_000)).toString()]);
  for (const [name, amount] of usdcMints) {
    const plan = { token: "USDC" as const, from: zeroAddress, to: A(name), value: units("USDC", amount) };
    move(plan);
    await builder.mint(minter, "USDC", plan.to, plan.value, `mint ${amount} USDC to ${name}`);
  }
  await deposit("exchange-a", "2000");
  await deposit("exchange-b", "20");
  await deposit("whale-1", "300");
  await deposit("whale-2", "400");
  // user-07 later moves 40 WETH to an exchange and user-08 swaps twice, so they wrap fixed amounts.
  for (const name of users)
    await deposit(name, name === "user-07" ? "45" : name === "user-08" ? "10" : (5 + Math.floor(random() * 45)).toString());
  await builder.mine();

  // --- Block 2: token supplies and the router's pair. ---------------------------------------------
  const mintToken = async (t: "PLAIN" | "PRXY", to: Address, amount: string) => {
    const plan = { token: t, from: zeroAddress, to, value: units(t, amount) };
    move(plan);
    supply[t] += plan.value;
    await builder.mint(deployer(), t, to, plan.value, `mint ${amount} ${t}`);
  };
  await mintToken("PLAIN", A("deployer"), "10000000");
  await mintToken("PRXY", A("deployer"), "2500000");
  await mintToken("PRXY", A("user-01"), "125000");
  await builder.send(
    deployer(),
    {
      to: contracts.router,
      data: encodeFunctionData({
        abi: a.ScenarioRouter.abi as Abi,
        functionName: "setPair",
        args: [contracts.plainToken, WETH_ADDRESS, contracts.v2Pair],
      }),
      gas: 120_000n,
    },
    [],
    "register the PLAIN/WETH pair on the router",
  );
  await deposit("deployer", "200");
  await builder.mine();

  // --- Block 3: liquidity. ------------------------------------------------------------------------
  await token("deployer", "PLAIN", contracts.v2Pair, units("PLAIN", "1000000"), "PLAIN liquidity");
  await token("deployer", "WETH", contracts.v2Pair, units("WETH", "100"), "WETH liquidity of the v2 pair");
  await token("exchange-a", "WETH", contracts.v3Pool, units("WETH", "500"), "WETH liquidity of the v3 pool");
  await token("exchange-a", "USDC", contracts.v3Pool, units("USDC", "1560000"), "USDC liquidity of the v3 pool");
  await builder.mine();
  await builder.send(
    deployer(),
    { to: contracts.v2Pair, data: encodeFunctionData({ abi: tokenAbi, functionName: "sync" }), gas: 100_000n },
    [],
    "sync the pair",
  );
  await builder.send(
    acct["user-08"] as PrivateKeyAccount,
    {
      to: WETH_ADDRESS,
      data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [contracts.router, maxUint256] }),
      gas: 80_000n,
    },
    [],
    "user-08 approves the router",
  );
  await builder.mine();
  const reserves = { PLAIN: units("PLAIN", "1000000"), WETH: units("WETH", "100") };

  // --- Activity: small transfers every few blocks, whale-sized ones at fixed places. ----------------
  const whales: Record<number, () => Promise<void>> = {
    2: () => token("exchange-a", "USDC", A("whale-3"), units("USDC", "250000"), "exchange withdrawal to whale-3"),
    5: () => token("whale-1", "USDC", A("bridge"), units("USDC", "1200000"), "whale-1 bridges out"),
    8: () => token("whale-2", "USDC", A("exchange-b"), units("USDC", "480000.5"), "whale-2 deposits at exchange B"),
    11: () => token("exchange-a", "WETH", A("whale-1"), units("WETH", "150"), "exchange withdrawal of 150 WETH"),
    14: () => token("exchange-a", "USDC", A("user-05"), units("USDC", "150000"), "exchange withdrawal to user-05"),
    17: () => token("whale-2", "WETH", A("bridge"), units("WETH", "60"), "whale-2 bridges WETH"),
    20: () => token("user-07", "WETH", A("exchange-b"), units("WETH", "40"), "user-07 deposits WETH at exchange B"),
    23: () => token("whale-1", "USDC", A("whale-2"), units("USDC", "99990"), "just under 100,000 USD at 1.0001"),
    26: () => token("whale-2", "USDC", A("whale-1"), units("USDC", "99991"), "just over 100,000 USD at 1.0001"),
    29: () => token("bridge", "USDC", A("whale-3"), units("USDC", "300000"), "bridge release to whale-3"),
    32: () => token("whale-1", "WETH", A("cold"), units("WETH", "0.5"), "whale-1 to the cold wallet"),
    34: () => token("whale-1", "USDC", A("cold"), units("USDC", "125000"), "whale-1 to the cold wallet"),
  };
  const ACTIVITY_BLOCKS = 36;
  for (let k = 0; k < ACTIVITY_BLOCKS; k++) {
    await builder.skip(3 + Math.floor(random() * 12));
    await whales[k]?.();
    // Each user sends at most once per block and only what it held when the block began, so no
    // transfer in a block depends on another's order.
    const senders = new Set<string>();
    const held = { USDC: new Map(balances.USDC), WETH: new Map(balances.WETH) };
    for (let n = 0; n < 4; n++) {
      const from = users[Math.floor(random() * users.length)] as string;
      if (senders.has(from) || from === "user-07" || from === "user-08") continue;
      senders.add(from);
      const to = random() < 0.2 ? A(random() < 0.5 ? "exchange-a" : "exchange-b") : A(users[Math.floor(random() * users.length)] as string);
      if (to === A(from)) continue;
      if (random() < 0.7) {
        const amount = units("USDC", (10 + Math.floor(random() * 2_000)).toString());
        if ((held.USDC.get(A(from)) ?? 0n) >= amount) await token(from, "USDC", to, amount);
      } else {
        const amount = units("WETH", (0.01 + Math.floor(random() * 300) / 100).toFixed(2));
        if ((held.WETH.get(A(from)) ?? 0n) >= amount) await token(from, "WETH", to, amount);
      }
    }
    if (k === 12 || k === 30) {
      // user-08 swaps WETH for PLAIN through the router: WETH to the pair, PLAIN out of it.
      const amountIn = units("WETH", "2");
      const out = amountOut(amountIn, reserves.WETH, reserves.PLAIN);
      const plans = [
        { token: "WETH" as const, from: A("user-08"), to: contracts.v2Pair, value: amountIn },
        { token: "PLAIN" as const, from: contracts.v2Pair, to: A("user-08"), value: out },
      ];
      for (const p of plans) move(p);
      reserves.WETH += amountIn;
      reserves.PLAIN -= out;
      await builder.send(
        acct["user-08"] as PrivateKeyAccount,
        {
          to: contracts.router,
          data: encodeFunctionData({
            abi: a.ScenarioRouter.abi as Abi,
            functionName: "exactInputSingle",
            args: [
              {
                tokenIn: WETH_ADDRESS,
                tokenOut: contracts.plainToken,
                fee: 3000,
                recipient: A("user-08"),
                amountIn,
                amountOutMinimum: out,
                sqrtPriceLimitX96: 0n,
              },
            ],
          }),
          gas: 250_000n,
        },
        plans,
        "user-08 swaps 2 WETH for PLAIN",
      );
    }
    await builder.mine();
  }
  const entities = await seedEntities({ client, builder, minter, artifacts });
  await builder.skip(10);
  const tokenRisk = await seedTokenRisk({ client, builder, minter, artifacts });

  // --- The fee window: the last blocks of the scenario. ----------------------------------------------
  const feeBlocks = await feeWindow(builder);
  const endBlock = feeBlocks.blocks.at(-1) as number;

  const nonces = await Promise.all(SCENARIO_WALLETS.map((w) => builder.nonceOf(A(w.name))));
  const wallets: ScenarioWalletTruth[] = SCENARIO_WALLETS.map((w, i) => {
    const address = A(w.name);
    const eth = (ethIn.get(address) ?? 0n) - (ethOut.get(address) ?? 0n) - (builder.gasSpent.get(address) ?? 0n);
    return {
      name: w.name,
      role: w.role,
      address,
      nonce: nonces[i] as number,
      ethWei: eth.toString(),
      usdcAtomic: (balances.USDC.get(address) ?? 0n).toString(),
      wethWei: (balances.WETH.get(address) ?? 0n).toString(),
    };
  });

  const classes: Record<Address, AddressClass> = {
    [contracts.plainToken]: "token",
    [contracts.proxyToken]: "token",
    [contracts.proxyImplementation]: "token",
    [contracts.proxyAdmin]: "contract",
    [contracts.v2Pair]: "v2_pair",
    [contracts.v3Pool]: "v3_pool",
    [contracts.router]: "router",
    [base.usdc.address]: "token",
    [WETH_ADDRESS]: "token",
    [MULTICALL3_ADDRESS]: "contract",
    [zeroAddress]: "zero_address",
  };
  for (const w of wallets) classes[w.address] = "wallet";
  Object.assign(classes, tokenRisk.classes);

  return {
    version: SCENARIO_VERSION,
    startBlock,
    endBlock,
    contracts,
    tokens: {
      PLAIN: { ...PLAIN, totalSupply: supply.PLAIN.toString() },
      PRXY: { ...PRXY, totalSupply: supply.PRXY.toString() },
    },
    wallets,
    transfers: builder.transfers,
    feeBlocks,
    classes: { ...classes, ...entities.classes },
    entities,
    tokenRisk,
  };
}
