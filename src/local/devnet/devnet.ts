/**
 * "Local mode" chain: an anvil node that looks like Base to x402 code — Base's chain id, USDC,
 * WETH and Multicall3 at their canonical Base addresses, funded test accounts.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  type Address,
  bytesToHex,
  type Chain,
  createTestClient,
  defineChain,
  type Hex,
  hexToBytes,
  http,
  numberToHex,
  publicActions,
  stringToBytes,
  walletActions,
} from "viem";
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { MULTICALL3_ADDRESS, TEST_MNEMONIC, WETH_ADDRESS } from "../../chain/addresses.ts";
import { base } from "../../networks/base.ts";
import { startAnvil } from "./anvil.ts";
import { type ContractArtifact, loadContracts } from "./contracts.ts";

const require = createRequire(import.meta.url);
// mds1's Multicall3 creation code as viem ships it for its deployless multicalls; viem does not
// export it, so it is read from the module that holds it (viem is pinned to one version).
const { multicall3Bytecode } = require(join(dirname(require.resolve("viem")), "constants", "contracts.js")) as { multicall3Bytecode: Hex };
// Dapphub's WETH9, the source of Base's predeploy, as the canonical-weth package builds it.
const weth9 = require("canonical-weth/build/contracts/WETH9.json") as { deployedBytecode: Hex };

/** Options for {@link startDevnet}. */
export type DevnetOptions = {
  /** Holds anvil-state.json (when persisting) and devnet.json. */
  dataDir?: string | undefined;
  /** 0 picks a free port. */
  port?: number | undefined;
  /** Keep chain state across restarts in `${dataDir}/anvil-state.json`. */
  persist?: boolean | undefined;
};

/** A devnet key pair (public test mnemonic: worthless anywhere but here). */
export type DevnetAccount = { address: Address; privateKey: Hex };

/** What other processes need to talk to the devnet; also the shape of devnet.json (plus createdAt). */
export type DevnetInfo = {
  rpcUrl: string;
  chainId: number;
  usdc: Address;
  weth: Address;
  multicall3: Address;
  /** Account 1: the service's receiving address. */
  payTo: Address;
  /** Account 0: submits settlement transactions and pays their gas; also the USDC minter. */
  facilitator: DevnetAccount;
  /** Accounts 2-9. */
  buyers: DevnetAccount[];
};

/** A running devnet. */
export type Devnet = DevnetInfo & { stop(): Promise<void> };

/** USDC (atomic, 6 decimals) minted to each of accounts 0-9 when the chain is first set up: 1,000 USDC. */
export const DEVNET_USDC_PER_ACCOUNT = 1_000_000_000n;

let testMnemonicAccounts: readonly DevnetAccount[] | undefined;

/** Devnet accounts 0-9 of the test mnemonic (the ones anvil lists when it starts), with their private keys. */
export function devnetAccounts(): DevnetAccount[] {
  // Derived once per process: ten derivations from the mnemonic take a few hundred milliseconds.
  testMnemonicAccounts ??= Array.from({ length: 10 }, (_, addressIndex) => {
    const account = mnemonicToAccount(TEST_MNEMONIC, { addressIndex });
    return { address: account.address, privateKey: bytesToHex(account.getHdKey().privateKey as Uint8Array) };
  });
  return testMnemonicAccounts.map((a) => ({ ...a }));
}

/** viem chain for the devnet: Base's definition (formatters, chain id) pointed at the local RPC. */
export function devnetChain(rpcUrl: string): Chain {
  return defineChain({
    ...base.chain,
    name: "Base (local devnet)",
    rpcUrls: { default: { http: [rpcUrl] } },
    blockExplorers: undefined,
    // Base's entry carries blockCreated: 5022 for Multicall3, which would make viem refuse
    // multicalls pinned to the devnet's early blocks.
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
    testnet: true,
  });
}

/** A client of the devnet at `rpcUrl`: anvil's test actions, public and wallet actions. */
export function devnetClient(rpcUrl: string) {
  return createTestClient({ mode: "anvil", chain: devnetChain(rpcUrl), transport: http(rpcUrl), pollingInterval: 50 })
    .extend(publicActions)
    .extend(walletActions);
}

/** Starts (or resumes) the devnet and idempotently installs contracts and funds accounts. */
export async function startDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  const dataDir = options.dataDir ?? "data";
  const persist = options.persist ?? true;
  mkdirSync(dataDir, { recursive: true });

  const contracts = loadContracts();
  const anvil = await startAnvil({ port: options.port ?? 8545, stateFile: persist ? join(dataDir, "anvil-state.json") : undefined });

  try {
    const accounts = devnetAccounts();
    const [facilitator, payTo] = accounts as [DevnetAccount, DevnetAccount];
    const info: DevnetInfo = {
      rpcUrl: anvil.rpcUrl,
      chainId: base.chainId,
      usdc: base.usdc.address,
      weth: WETH_ADDRESS,
      multicall3: MULTICALL3_ADDRESS,
      payTo: payTo.address,
      facilitator,
      buyers: accounts.slice(2),
    };
    const freshlyFunded = await setUpChain(info, accounts, contracts);
    writeDevnetFile(join(dataDir, "devnet.json"), info, freshlyFunded);
    return { ...info, stop: anvil.stop };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

type Artifacts = ReturnType<typeof loadContracts>;

// Returns true when this call minted the initial balances (i.e. the chain was new).
async function setUpChain(info: DevnetInfo, accounts: DevnetAccount[], contracts: Artifacts): Promise<boolean> {
  const client = devnetClient(info.rpcUrl);
  const account = privateKeyToAccount(info.facilitator.privateKey);

  const usdc = contracts.FiatTokenLocal;
  if (!sameRuntimeCode(await client.getCode({ address: base.usdc.address }), usdc)) {
    // Immutables (minter, EIP-712 caches) are only filled in by a real constructor run, so deploy
    // normally and copy the resulting runtime code; setCode keeps existing storage (balances).
    const hash = await client.deployContract({
      account,
      abi: usdc.abi,
      bytecode: usdc.bytecode,
      args: [info.facilitator.address],
    });
    const { contractAddress, status } = await client.waitForTransactionReceipt({ hash });
    if (status !== "success" || !contractAddress) throw new Error("FiatTokenLocal deployment failed");
    const runtime = await client.getCode({ address: contractAddress });
    if (!runtime) throw new Error("FiatTokenLocal deployment left no code");
    await client.setCode({ address: base.usdc.address, bytecode: runtime });
    await client.setCode({ address: contractAddress, bytecode: "0x" });
  }
  if ((await client.getCode({ address: WETH_ADDRESS })) !== weth9.deployedBytecode) {
    await client.setCode({ address: WETH_ADDRESS, bytecode: weth9.deployedBytecode });
    // setCode runs no constructor: write the storage WETH9's initialisers would have, its name,
    // symbol and decimals in slots 0-2 (a short string sits left-aligned, twice its length last).
    const shortString = (text: string) => {
      const word = new Uint8Array(32);
      word.set(stringToBytes(text));
      word[31] = text.length * 2;
      return bytesToHex(word);
    };
    for (const [index, value] of [shortString("Wrapped Ether"), shortString("WETH"), numberToHex(18, { size: 32 })].entries()) {
      await client.setStorageAt({ address: WETH_ADDRESS, index, value });
    }
  }
  // Running the creation code in eth_call returns the runtime code the canonical deployment holds.
  const { data: multicall3 } = await client.call({ data: multicall3Bytecode });
  if (!multicall3) throw new Error("Multicall3's creation code returned no runtime code");
  if ((await client.getCode({ address: MULTICALL3_ADDRESS })) !== multicall3) {
    await client.setCode({ address: MULTICALL3_ADDRESS, bytecode: multicall3 });
  }

  // Zero supply means nobody was ever funded: restarts from a saved state must not re-mint.
  const totalSupply = await client.readContract({ address: base.usdc.address, abi: usdc.abi, functionName: "totalSupply" });
  const fund = totalSupply === 0n;
  if (fund) {
    // One block for all mints, so an interrupted setup can't leave some accounts funded.
    await client.setAutomine(false);
    try {
      let nonce = await client.getTransactionCount({ address: info.facilitator.address, blockTag: "pending" });
      const hashes: Hex[] = [];
      for (const { address } of accounts) {
        hashes.push(
          await client.writeContract({
            account,
            address: base.usdc.address,
            abi: usdc.abi,
            functionName: "mint",
            args: [address, DEVNET_USDC_PER_ACCOUNT],
            nonce: nonce++,
            gas: 100_000n,
          }),
        );
      }
      await client.mine({ blocks: 1 });
      for (const hash of hashes) {
        const { status } = await client.waitForTransactionReceipt({ hash });
        if (status !== "success") throw new Error(`USDC mint ${hash} reverted`);
      }
    } finally {
      await client.setAutomine(true);
    }
  }
  // setCode does not create a block; mining one makes "latest" reflect every change above.
  await client.mine({ blocks: 1 });
  return fund;
}

// solc leaves immutable slots zeroed in deployedBytecode; mask them on both sides so the check
// means "same contract version", whatever constructor arguments filled them in.
function sameRuntimeCode(onchain: Hex | undefined, artifact: ContractArtifact): boolean {
  if (!onchain || onchain.length !== artifact.deployedBytecode.length) return false;
  const actual = hexToBytes(onchain);
  const expected = hexToBytes(artifact.deployedBytecode);
  for (const { start, length } of artifact.immutableReferences) {
    actual.fill(0, start, start + length);
    expected.fill(0, start, start + length);
  }
  return actual.every((byte, i) => byte === expected[i]);
}

function writeDevnetFile(file: string, info: DevnetInfo, freshChain: boolean): void {
  // createdAt dates the chain, not the process: keep it across restarts of a persisted chain.
  let createdAt = new Date().toISOString();
  if (!freshChain && existsSync(file)) {
    try {
      const previous = JSON.parse(readFileSync(file, "utf8")) as { createdAt?: string };
      if (previous.createdAt) createdAt = previous.createdAt;
    } catch {
      // Unreadable file: treat as new.
    }
  }
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...info, createdAt }, null, 2)}\n`);
  renameSync(tmp, file);
}
