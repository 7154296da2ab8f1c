import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeFunctionResult,
  domainSeparator,
  encodeFunctionData,
  type Hex,
  http,
  keccak256,
  parseAbi,
  parseEther,
  parseEventLogs,
  parseSignature,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MULTICALL3_ADDRESS, WETH_ADDRESS } from "../src/chain/addresses.ts";
import { type Devnet, type DevnetAccount, devnetAccounts, devnetChain, startDevnet } from "../src/local/devnet/devnet.ts";
import { SCENARIO_VERSION, staleScenario } from "../src/local/devnet/scenario.ts";
import { base } from "../src/networks/base.ts";
import { scenario } from "./support/scenario.ts";

// Written from Circle's FiatTokenV2_2 interface rather than taken from our compiled ABI, so the
// test also proves x402 code using Circle's signatures can talk to the local token.
const usdcAbi = parseAbi([
  "function name() view returns (string)",
  "function symbol() view returns (string)",
  "function decimals() view returns (uint8)",
  "function version() view returns (string)",
  "function totalSupply() view returns (uint256)",
  "function balanceOf(address) view returns (uint256)",
  "function allowance(address,address) view returns (uint256)",
  "function nonces(address) view returns (uint256)",
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function TRANSFER_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function RECEIVE_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function CANCEL_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function PERMIT_TYPEHASH() view returns (bytes32)",
  "function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)",
  "function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);

const wethAbi = parseAbi([
  "function name() view returns (string)",
  "function symbol() view returns (string)",
  "function decimals() view returns (uint8)",
  "function totalSupply() view returns (uint256)",
  "function balanceOf(address) view returns (uint256)",
  "function deposit() payable",
  "function withdraw(uint256)",
]);

const multicall3Abi = parseAbi([
  "struct Call3 { address target; bool allowFailure; bytes callData; }",
  "struct Result { bool success; bytes returnData; }",
  // Declared view (like viem's own multicall ABI) so readContract will eth_call it.
  "function aggregate3(Call3[] calls) view returns (Result[] returnData)",
  "function getChainId() view returns (uint256)",
]);

const domain = { name: "USD Coin", version: "2", chainId: base.chainId, verifyingContract: base.usdc.address } as const;

const transferTypes = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

const dataDir = mkdtempSync(join(tmpdir(), "devnet-test-"));
let devnet: Devnet;

function clients(rpcUrl: string) {
  const chain = devnetChain(rpcUrl);
  return {
    publicClient: createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 }),
    walletFor: (privateKey: Hex) =>
      createWalletClient({
        chain,
        transport: http(rpcUrl),
        account: privateKeyToAccount(privateKey),
        pollingInterval: 50,
      }),
  };
}

function buyerAt(index: number): DevnetAccount {
  const account = devnet.buyers[index];
  if (!account) throw new Error(`devnet has no buyer ${index}`);
  return account;
}

function randomNonce(): Hex {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}

async function nowOnChain(rpcUrl: string): Promise<bigint> {
  const block = await clients(rpcUrl).publicClient.getBlock();
  return block.timestamp;
}

beforeAll(async () => {
  devnet = await startDevnet({ dataDir, port: 0 });
}, 30_000);

afterAll(async () => {
  await devnet?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the test mnemonic's accounts", () => {
  it("are the ones anvil lists for it (BIP-39 seed, m/44'/60'/0'/0/i), with their private keys", () => {
    // Anvil's well-known default accounts, written out rather than derived again the way the
    // code under test derives them.
    expect(devnetAccounts()).toEqual([
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
    ]);
  });
});

describe("devnet", () => {
  it("exposes the roles and writes devnet.json", () => {
    expect(devnet.chainId).toBe(base.chainId);
    expect(devnet.usdc).toBe(base.usdc.address);
    expect(devnet.weth).toBe("0x4200000000000000000000000000000000000006");
    expect(devnet.multicall3).toBe("0xcA11bde05977b3631167028862bE2a173976CA11");
    expect(devnet.facilitator).toEqual({
      address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      privateKey: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    });
    expect(devnet.payTo).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    // Accounts 2-9 of the public test mnemonic ("test test ... junk"), written out rather than
    // derived again with the code under test; each key must be the key of its address.
    expect(devnet.buyers.map((b) => b.address)).toEqual([
      "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
      "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
      "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
      "0x976EA74026E726554dB657fA54763abd0C3a0aa9",
      "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
      "0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f",
      "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
    ]);
    for (const b of devnet.buyers) expect(privateKeyToAccount(b.privateKey).address, b.address).toBe(b.address);

    const file = JSON.parse(readFileSync(join(dataDir, "devnet.json"), "utf8"));
    expect(file).toMatchObject({
      rpcUrl: devnet.rpcUrl,
      chainId: base.chainId,
      usdc: base.usdc.address,
      weth: WETH_ADDRESS,
      multicall3: MULTICALL3_ADDRESS,
      payTo: devnet.payTo,
      facilitator: devnet.facilitator,
      buyers: devnet.buyers,
    });
    expect(Number.isNaN(Date.parse(file.createdAt))).toBe(false);
  });

  it("has USDC with Circle metadata, domain and typehashes at the canonical address", async () => {
    const { publicClient } = clients(devnet.rpcUrl);
    const read = <T>(functionName: string) =>
      publicClient.readContract({ address: base.usdc.address, abi: usdcAbi, functionName } as never) as Promise<T>;

    expect(await publicClient.getChainId()).toBe(base.chainId);
    expect(await read<string>("name")).toBe("USD Coin");
    expect(await read<string>("symbol")).toBe("USDC");
    expect(await read<number>("decimals")).toBe(6);
    expect(await read<string>("version")).toBe("2");
    expect(await read<readonly unknown[]>("eip712Domain")).toEqual([
      "0x0f",
      "USD Coin",
      "2",
      BigInt(base.chainId),
      base.usdc.address,
      `0x${"0".repeat(64)}`,
      [],
    ]);
    expect(await read<Hex>("DOMAIN_SEPARATOR")).toBe(domainSeparator({ domain }));
    expect(await read<Hex>("TRANSFER_WITH_AUTHORIZATION_TYPEHASH")).toBe(
      "0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267",
    );
    expect(await read<Hex>("RECEIVE_WITH_AUTHORIZATION_TYPEHASH")).toBe(
      "0xd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de8",
    );
    expect(await read<Hex>("CANCEL_AUTHORIZATION_TYPEHASH")).toBe("0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429");
    expect(await read<Hex>("PERMIT_TYPEHASH")).toBe(
      keccak256(toHex("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)")),
    );
  });

  it("funds every account 0-9 with exactly 1000 USDC", async () => {
    const { publicClient } = clients(devnet.rpcUrl);
    for (const { address } of devnetAccounts()) {
      const balance = await publicClient.readContract({
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "balanceOf",
        args: [address],
      });
      expect(balance, address).toBe(1_000_000_000n);
    }
    expect(await publicClient.readContract({ address: base.usdc.address, abi: usdcAbi, functionName: "totalSupply" })).toBe(
      10_000_000_000n,
    );
  });

  it("settles an EIP-3009 transferWithAuthorization and rejects replays and expired ones", async () => {
    const { publicClient, walletFor } = clients(devnet.rpcUrl);
    const buyer = privateKeyToAccount(buyerAt(0).privateKey);
    const facilitator = walletFor(devnet.facilitator.privateKey);
    const balanceOf = (address: Address) =>
      publicClient.readContract({ address: base.usdc.address, abi: usdcAbi, functionName: "balanceOf", args: [address] });

    const now = await nowOnChain(devnet.rpcUrl);
    const message = {
      from: buyer.address,
      to: devnet.payTo,
      value: 12_345n,
      validAfter: 0n,
      validBefore: now + 600n,
      nonce: randomNonce(),
    };
    const signature = await buyer.signTypedData({
      domain,
      types: transferTypes,
      primaryType: "TransferWithAuthorization",
      message,
    });
    const { v, r, s } = parseSignature(signature);
    const args = [
      message.from,
      message.to,
      message.value,
      message.validAfter,
      message.validBefore,
      message.nonce,
      Number(v),
      r,
      s,
    ] as const;

    const buyerBefore = await balanceOf(buyer.address);
    const payToBefore = await balanceOf(devnet.payTo);
    const hash = await facilitator.writeContract({
      address: base.usdc.address,
      abi: usdcAbi,
      functionName: "transferWithAuthorization",
      args,
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    expect(await balanceOf(buyer.address)).toBe(buyerBefore - 12_345n);
    expect(await balanceOf(devnet.payTo)).toBe(payToBefore + 12_345n);
    expect(
      await publicClient.readContract({
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "authorizationState",
        args: [buyer.address, message.nonce],
      }),
    ).toBe(true);
    const events = parseEventLogs({ abi: usdcAbi, logs: receipt.logs }).map((log) => [log.eventName, log.args]);
    expect(events).toEqual([
      ["AuthorizationUsed", { authorizer: buyer.address, nonce: message.nonce }],
      ["Transfer", { from: buyer.address, to: devnet.payTo, value: 12_345n }],
    ]);

    await expect(
      publicClient.simulateContract({
        account: facilitator.account,
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "transferWithAuthorization",
        args,
      }),
    ).rejects.toThrow("FiatTokenV2: authorization is used or canceled");

    const expired = { ...message, validBefore: now - 1n, nonce: randomNonce() };
    const expiredSig = await buyer.signTypedData({
      domain,
      types: transferTypes,
      primaryType: "TransferWithAuthorization",
      message: expired,
    });
    await expect(
      publicClient.simulateContract({
        account: facilitator.account,
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "transferWithAuthorization",
        args: [expired.from, expired.to, expired.value, expired.validAfter, expired.validBefore, expired.nonce, expiredSig],
      }),
    ).rejects.toThrow("FiatTokenV2: authorization is expired");
  });

  it("accepts the bytes-signature form and enforces Circle revert reasons", async () => {
    const { publicClient, walletFor } = clients(devnet.rpcUrl);
    const buyer = privateKeyToAccount(buyerAt(1).privateKey);
    const other = privateKeyToAccount(buyerAt(2).privateKey);
    const facilitator = walletFor(devnet.facilitator.privateKey);
    const now = await nowOnChain(devnet.rpcUrl);
    const message = {
      from: buyer.address,
      to: devnet.payTo,
      value: 1n,
      validAfter: 0n,
      validBefore: now + 600n,
      nonce: randomNonce(),
    };
    const sign = (m: typeof message, signer = buyer) =>
      signer.signTypedData({ domain, types: transferTypes, primaryType: "TransferWithAuthorization", message: m });
    const simulate = (m: typeof message, signature: Hex) =>
      publicClient.simulateContract({
        account: facilitator.account,
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "transferWithAuthorization",
        args: [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature],
      });

    const { request } = await simulate(message, await sign(message));
    expect((await publicClient.waitForTransactionReceipt({ hash: await facilitator.writeContract(request) })).status).toBe("success");

    const future = { ...message, validAfter: now + 300n, nonce: randomNonce() };
    await expect(simulate(future, await sign(future))).rejects.toThrow("FiatTokenV2: authorization is not yet valid");
    const forged = { ...message, nonce: randomNonce() };
    await expect(simulate(forged, await sign(forged, other))).rejects.toThrow("FiatTokenV2: invalid signature");

    const receive = { ...message, nonce: randomNonce() };
    const receiveSig = await buyer.signTypedData({
      domain,
      types: { ReceiveWithAuthorization: transferTypes.TransferWithAuthorization },
      primaryType: "ReceiveWithAuthorization",
      message: receive,
    });
    await expect(
      publicClient.simulateContract({
        account: facilitator.account,
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "receiveWithAuthorization",
        args: [receive.from, receive.to, receive.value, receive.validAfter, receive.validBefore, receive.nonce, receiveSig],
      }),
    ).rejects.toThrow("FiatTokenV2: caller must be the payee");

    const canceled = { ...message, nonce: randomNonce() };
    const cancelSig = await buyer.signTypedData({
      domain,
      types: {
        CancelAuthorization: [
          { name: "authorizer", type: "address" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: "CancelAuthorization",
      message: { authorizer: buyer.address, nonce: canceled.nonce },
    });
    const cancelHash = await facilitator.writeContract({
      address: base.usdc.address,
      abi: usdcAbi,
      functionName: "cancelAuthorization",
      args: [buyer.address, canceled.nonce, cancelSig],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: cancelHash })).status).toBe("success");
    await expect(simulate(canceled, await sign(canceled))).rejects.toThrow("FiatTokenV2: authorization is used or canceled");
  });

  it("verifies smart-wallet (ERC-1271) payers through the bytes-signature form", async () => {
    const { publicClient, walletFor } = clients(devnet.rpcUrl);
    const testClient = createTestClient({ mode: "anvil", transport: http(devnet.rpcUrl) });
    const facilitator = walletFor(devnet.facilitator.privateKey);
    // Hand-assembled wallets whose isValidSignature ignores its input and returns a fixed word:
    // PUSH4 word, PUSH1 0xe0, SHL, PUSH0, MSTORE, PUSH1 0x20, PUSH0, RETURN.
    const acceptAll: Address = "0x0000000000000000000000000000000000012710";
    const rejectAll: Address = "0x0000000000000000000000000000000000012711";
    await testClient.setCode({ address: acceptAll, bytecode: "0x631626ba7e60e01b5f5260205ff3" });
    await testClient.setCode({ address: rejectAll, bytecode: "0x63ffffffff60e01b5f5260205ff3" });
    const funder = walletFor(buyerAt(5).privateKey);
    const funding = await funder.writeContract({
      address: base.usdc.address,
      abi: parseAbi(["function transfer(address to, uint256 value) returns (bool)"]),
      functionName: "transfer",
      args: [acceptAll, 5_000n],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: funding })).status).toBe("success");

    const validBefore = (await nowOnChain(devnet.rpcUrl)) + 600n;
    const settle = (from: Address) =>
      publicClient.simulateContract({
        account: facilitator.account,
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "transferWithAuthorization",
        args: [from, devnet.payTo, 5_000n, 0n, validBefore, randomNonce(), "0xc0ffee"],
      });
    const { request } = await settle(acceptAll);
    expect((await publicClient.waitForTransactionReceipt({ hash: await facilitator.writeContract(request) })).status).toBe("success");
    expect(
      await publicClient.readContract({
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "balanceOf",
        args: [acceptAll],
      }),
    ).toBe(0n);
    await expect(settle(rejectAll)).rejects.toThrow("FiatTokenV2: invalid signature");
  });

  it('supports EIP-2612 permit under the "USD Coin"/"2" domain', async () => {
    const { publicClient, walletFor } = clients(devnet.rpcUrl);
    const owner = privateKeyToAccount(buyerAt(3).privateKey);
    const spender = devnet.facilitator.address;
    const deadline = (await nowOnChain(devnet.rpcUrl)) + 600n;
    const signature = await owner.signTypedData({
      domain,
      types: {
        Permit: [
          { name: "owner", type: "address" },
          { name: "spender", type: "address" },
          { name: "value", type: "uint256" },
          { name: "nonce", type: "uint256" },
          { name: "deadline", type: "uint256" },
        ],
      },
      primaryType: "Permit",
      message: { owner: owner.address, spender, value: 777n, nonce: 0n, deadline },
    });
    const { v, r, s } = parseSignature(signature);
    const hash = await walletFor(devnet.facilitator.privateKey).writeContract({
      address: base.usdc.address,
      abi: usdcAbi,
      functionName: "permit",
      args: [owner.address, spender, 777n, deadline, Number(v), r, s],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect(
      await publicClient.readContract({
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "allowance",
        args: [owner.address, spender],
      }),
    ).toBe(777n);
    expect(
      await publicClient.readContract({
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "nonces",
        args: [owner.address],
      }),
    ).toBe(1n);
  });

  it("has WETH9 at the Base predeploy address", async () => {
    const { publicClient, walletFor } = clients(devnet.rpcUrl);
    const wallet = walletFor(buyerAt(4).privateKey);
    const address = wallet.account.address;
    expect(await publicClient.readContract({ address: WETH_ADDRESS, abi: wethAbi, functionName: "name" })).toBe("Wrapped Ether");
    expect(await publicClient.readContract({ address: WETH_ADDRESS, abi: wethAbi, functionName: "symbol" })).toBe("WETH");
    expect(await publicClient.readContract({ address: WETH_ADDRESS, abi: wethAbi, functionName: "decimals" })).toBe(18);

    const deposit = await wallet.writeContract({
      address: WETH_ADDRESS,
      abi: wethAbi,
      functionName: "deposit",
      value: parseEther("1.5"),
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: deposit })).status).toBe("success");
    expect(
      await publicClient.readContract({
        address: WETH_ADDRESS,
        abi: wethAbi,
        functionName: "balanceOf",
        args: [address],
      }),
    ).toBe(parseEther("1.5"));
    expect(await publicClient.readContract({ address: WETH_ADDRESS, abi: wethAbi, functionName: "totalSupply" })).toBe(parseEther("1.5"));

    const withdraw = await wallet.writeContract({
      address: WETH_ADDRESS,
      abi: wethAbi,
      functionName: "withdraw",
      args: [parseEther("0.5")],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: withdraw })).status).toBe("success");
    expect(
      await publicClient.readContract({
        address: WETH_ADDRESS,
        abi: wethAbi,
        functionName: "balanceOf",
        args: [address],
      }),
    ).toBe(parseEther("1"));
  });

  it("has Multicall3 at the canonical address (aggregate3 reads two balances)", async () => {
    const { publicClient } = clients(devnet.rpcUrl);
    const [facilitator, buyer] = [devnet.facilitator.address, buyerAt(7).address];
    const calls = [facilitator, buyer].map((account) => ({
      target: base.usdc.address,
      allowFailure: false,
      callData: encodeFunctionData({ abi: usdcAbi, functionName: "balanceOf", args: [account] }),
    }));
    const results = await publicClient.readContract({
      address: MULTICALL3_ADDRESS,
      abi: multicall3Abi,
      functionName: "aggregate3",
      args: [calls],
    });
    expect(results.map((result) => result.success)).toEqual([true, true]);
    const balances = results.map((result) => decodeFunctionResult({ abi: usdcAbi, functionName: "balanceOf", data: result.returnData }));
    expect(balances).toEqual([1_000_000_000n, 1_000_000_000n]);
    expect(await publicClient.readContract({ address: MULTICALL3_ADDRESS, abi: multicall3Abi, functionName: "getChainId" })).toBe(
      BigInt(base.chainId),
    );
    // viem's own multicall goes through aggregate3 at chain.contracts.multicall3 too.
    expect(
      await publicClient.multicall({
        allowFailure: false,
        contracts: [{ address: base.usdc.address, abi: usdcAbi, functionName: "balanceOf", args: [buyer] }],
      }),
    ).toEqual([1_000_000_000n]);
  });

  it("restarts from the state file without losing or re-minting balances", async () => {
    const read = async (rpcUrl: string) => {
      const { publicClient } = clients(rpcUrl);
      const balances = await Promise.all(
        devnetAccounts().map(({ address }) =>
          publicClient.readContract({
            address: base.usdc.address,
            abi: usdcAbi,
            functionName: "balanceOf",
            args: [address],
          }),
        ),
      );
      const supply = await publicClient.readContract({
        address: base.usdc.address,
        abi: usdcAbi,
        functionName: "totalSupply",
      });
      return { balances, supply, block: await publicClient.getBlockNumber() };
    };
    const before = await read(devnet.rpcUrl);
    expect(before.balances.some((balance) => balance !== 1_000_000_000n)).toBe(true); // earlier tests moved funds
    const createdAt = JSON.parse(readFileSync(join(dataDir, "devnet.json"), "utf8")).createdAt;

    await devnet.stop();
    devnet = await startDevnet({ dataDir, port: 0 });

    const after = await read(devnet.rpcUrl);
    expect(after.balances).toEqual(before.balances);
    expect(after.supply).toBe(10_000_000_000n); // 10 accounts x 1,000 USDC, not minted again
    expect(after.block).toBeGreaterThan(before.block);
    expect(JSON.parse(readFileSync(join(dataDir, "devnet.json"), "utf8")).createdAt).toBe(createdAt);
  }, 20_000);
});

describe("a local chain kept from an earlier start", () => {
  it("is reported when another scenario version seeded it, or when its ground truth is missing", () => {
    const truth = scenario();
    expect(truth.version).toBe(SCENARIO_VERSION);
    expect(staleScenario(truth, "data")).toBeUndefined();
    expect(staleScenario({ ...truth, version: SCENARIO_VERSION - 1 }, "data")).toBe(
      `the local chain in data was seeded by scenario version ${SCENARIO_VERSION - 1}; this code seeds version ${SCENARIO_VERSION}`,
    );
    expect(staleScenario(undefined, "data")).toBe(
      "the local chain in data was seeded before, but its ground truth (scenario.json) is missing",
    );
  });
});
