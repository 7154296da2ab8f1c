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
import { privateKeyToAccount } from "viem/accounts";
import { MULTICALL3_ADDRESS, WETH_ADDRESS } from "../../chain/addresses.ts";
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

/**
 * Accounts 0-9 of the test mnemonic, the ones anvil lists when it starts: a start takes them
 * from here instead of deriving them (about 0.7 s of elliptic-curve arithmetic in JavaScript).
 * test/devnet.test.ts holds them to viem's derivation.
 */
const TEST_MNEMONIC_ACCOUNTS: readonly DevnetAccount[] = [
  {
    address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
    privateKey: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  },
  {
    address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    privateKey: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  },
  {
    address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    privateKey: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  },
  {
    address: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
    privateKey: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  },
  {
    address: "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
    privateKey: "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  },
  {
    address: "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
    privateKey: "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  },
  {
    address: "0x976EA74026E726554dB657fA54763abd0C3a0aa9",
    privateKey: "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  },
  {
    address: "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
    privateKey: "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  },
  {
    address: "0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f",
    privateKey: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  },
  {
    address: "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
    privateKey: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
  },
];

/** Devnet accounts 0-9 of the test mnemonic, with their private keys. */
export function devnetAccounts(): DevnetAccount[] {
  return TEST_MNEMONIC_ACCOUNTS.map((a) => ({ ...a }));
}

/** viem chain for the devnet: Base's definition (formatters, chain id) pointed at the local RPC. */
export function devnetChain(rpcUrl: string, chainId: number = base.chainId): Chain {
  return defineChain({
    ...base.chain,
    id: chainId,
    name: "Base (local devnet)",
    rpcUrls: { default: { http: [rpcUrl] } },
    blockExplorers: undefined,
    // Base's entry carries blockCreated: 5022 for Multicall3, which would make viem refuse
    // multicalls pinned to the devnet's early blocks.
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
    testnet: true,
  });
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
  const client = createTestClient({
    mode: "anvil",
    chain: devnetChain(info.rpcUrl, info.chainId),
    transport: http(info.rpcUrl),
    account: privateKeyToAccount(info.facilitator.privateKey),
    pollingInterval: 50,
  })
    .extend(publicActions)
    .extend(walletActions);

  const usdc = contracts.FiatTokenLocal;
  if (!sameRuntimeCode(await client.getCode({ address: base.usdc.address }), usdc)) {
    // Immutables (minter, EIP-712 caches) are only filled in by a real constructor run, so deploy
    // normally and copy the resulting runtime code; setCode keeps existing storage (balances).
    const hash = await client.deployContract({
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
