/**
 * Address classes from interface probes, token metadata and proxy detection, against the
 * seeded devnet's contracts and wallets (ground truth: src/local/devnet/scenario.ts), and a
 * multicall's failed request told apart from a call's own revert.
 */
import { type Address, getAddress, type Hex, parseAbi } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { AddressClassifier, classFromProbes } from "../src/chain/classify.ts";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { causeChain, isBatchFailure, readMulticall, readOrNull } from "../src/chain/rpc-error.ts";
import { proxyFromSlots, readProxyInfo, readTokenMetadata } from "../src/chain/token-reads.ts";
import { UpstreamError } from "../src/errors.ts";
import { base } from "../src/networks/base.ts";
import { startRpcProxy } from "./support/rpc-proxy.ts";
import { scenario } from "./support/scenario.ts";
import { chainClient, devnet } from "./support/service.ts";

const proxies: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
});

describe("address classifier", () => {
  it("classifies every contract and wallet of the scenario as the ground truth says, in one multicall", async () => {
    const rpc = await startRpcProxy(devnet().rpcUrl);
    proxies.push(rpc);
    const calls: string[] = [];
    const client = createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 }));
    const classifier = new AddressClassifier(client);
    const truth = scenario().classes;
    const addresses = Object.keys(truth) as Address[];
    const before = rpc.requests.length;
    const classes = await classifier.classify(addresses.map((a) => a.toLowerCase() as Address));
    expect(Object.fromEntries(classes)).toEqual(truth);
    // JSON-RPC bodies the classifier sent: eth_getCode for each address, then the probes in aggregate3 calls.
    for (const r of rpc.requests.slice(before))
      for (const call of Array.isArray(r.body) ? r.body : [r.body]) calls.push((call as { method: string }).method);
    const contracts = Object.values(truth).filter((c) => c !== "wallet" && c !== "zero_address").length;
    expect(calls.filter((m) => m === "eth_getCode").length).toBe(addresses.length - 1); // the zero address needs no read
    expect(calls.filter((m) => m === "eth_call").length).toBeLessThanOrEqual(Math.ceil((contracts * 5) / 40));

    // A second call is answered from memory.
    const again = rpc.requests.length;
    await classifier.classify(addresses);
    expect(rpc.requests.length).toBe(again);
  });

  it("decides classes from code and probes in a stated order", () => {
    const none = { getReserves: false, token0: false, slot0: false, factory: false, decimals: false };
    expect(classFromProbes(undefined, none)).toBe("wallet");
    expect(classFromProbes("0x", none)).toBe("wallet");
    // An EIP-7702 delegated account is still a wallet.
    expect(classFromProbes(`0xef0100${"ab".repeat(20)}`, { ...none, decimals: true })).toBe("wallet");
    // A v2 pair answers decimals() too when it is its own LP token: the pair probe wins.
    expect(classFromProbes("0x6000", { ...none, getReserves: true, token0: true, decimals: true })).toBe("v2_pair");
    expect(classFromProbes("0x6000", { ...none, slot0: true, token0: true, factory: true })).toBe("v3_pool");
    expect(classFromProbes("0x6304e45aaf", { ...none, factory: true })).toBe("router");
    expect(classFromProbes("0x6000", { ...none, factory: true })).toBe("contract");
    expect(classFromProbes("0x6000", { ...none, decimals: true })).toBe("token");
  });
});

describe("token reads", () => {
  it("reads the plain token's metadata and finds no proxy", async () => {
    const s = scenario();
    const client = chainClient();
    const block = await client.getBlockNumber({ cacheTime: 0 });
    const token = s.contracts.plainToken;
    expect(await readTokenMetadata(client, token, block)).toEqual({
      name: "Plain Test Token",
      symbol: "PLAIN",
      decimals: 18,
      totalSupply: BigInt(s.tokens.PLAIN.totalSupply),
    });
    const code = (await client.getCode({ address: token })) as Hex;
    expect(await readProxyInfo(client, token, code, block)).toEqual({ standard: null, implementation: null, admin: null, beacon: null });
  });

  it("reads the proxy token through its proxy and its implementation and admin from the EIP-1967 slots", async () => {
    const s = scenario();
    const client = chainClient();
    const block = await client.getBlockNumber({ cacheTime: 0 });
    const token = s.contracts.proxyToken;
    expect(await readTokenMetadata(client, token, block)).toEqual({
      name: "Proxied Test Token",
      symbol: "PRXY",
      decimals: 18,
      totalSupply: 2_625_000n * 10n ** 18n,
    });
    const code = (await client.getCode({ address: token })) as Hex;
    expect(await readProxyInfo(client, token, code, block)).toEqual({
      standard: "eip1967",
      implementation: s.contracts.proxyImplementation,
      admin: s.contracts.proxyAdmin,
      beacon: null,
    });
  });

  it("knows the older zeppelinos slot, beacons and EIP-1167 clones", () => {
    const slot = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}` as Hex;
    const impl = getAddress(`0x${"12".repeat(20)}`);
    expect(proxyFromSlots("0x60", { zeppelinos: slot(impl) })).toEqual({
      standard: "zeppelinos",
      implementation: impl,
      admin: null,
      beacon: null,
    });
    expect(proxyFromSlots("0x60", { beacon: slot(impl) })).toEqual({
      standard: "eip1967_beacon",
      implementation: null,
      admin: null,
      beacon: impl,
    });
    const clone = `0x363d3d373d3d3d363d73${impl.slice(2).toLowerCase()}5af43d82803e903d91602b57fd5bf3` as Hex;
    expect(proxyFromSlots(clone, {})).toEqual({ standard: "eip1167_minimal", implementation: impl, admin: null, beacon: null });
    expect(proxyFromSlots("0x60", { implementation: slot("0x0000000000000000000000000000000000000000") })).toMatchObject({
      standard: null,
    });
  });
});

describe("a multicall whose request fails", () => {
  const abi = parseAbi(["function decimals() view returns (uint8)", "function token0() view returns (address)"]);

  it("a call's own revert stays a per-call failure; the batch's request failing (HTTP 503) throws the 503 chain error", async () => {
    const plain = scenario().contracts.plainToken;
    const rpc = await startRpcProxy(devnet().rpcUrl);
    proxies.push(rpc);
    const client = createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 }));
    // The plain ERC-20 answers decimals() and reverts on token0(), which it does not have.
    const read = () =>
      client.multicall({
        allowFailure: true,
        contracts: [
          { address: plain, abi, functionName: "decimals" },
          { address: plain, abi, functionName: "token0" },
        ],
      });
    const answers = await read();
    expect(answers[0]).toEqual({ status: "success", result: 18 });
    expect(answers[1].status).toBe("failure");
    expect(causeChain(answers[1].error).map((e) => e.name)).toEqual([
      "ContractFunctionExecutionError",
      "ContractFunctionRevertedError",
      "RawContractError",
    ]);
    expect(isBatchFailure(answers[1].error)).toBe(false);
    expect(await readMulticall("reading", async () => answers)).toBe(answers);
    expect(await readMulticall("reading", read)).toEqual(answers);

    rpc.options.failMethods = ["eth_call"];
    // viem does not throw: every call of the batch comes back failed, with the request's error.
    const blip = await read();
    expect(blip.map((a) => a.status)).toEqual(["failure", "failure"]);
    expect(causeChain(blip[0].error).map((e) => e.name)).toEqual([
      "ContractFunctionExecutionError",
      "CallExecutionError",
      "HttpRequestError",
    ]);
    expect(isBatchFailure(blip[0].error)).toBe(true);
    await expect(readMulticall("reading", async () => blip)).rejects.toThrow(UpstreamError);
    await expect(readMulticall("probing contract interfaces", read)).rejects.toMatchObject({
      code: "unavailable",
      status: 503,
      message: "The chain node is unreachable while probing contract interfaces; retry shortly.",
    });
  });

  it("the classifier keeps no class from a failed probe: after the blip the v2 pair is a v2_pair, the token a token", async () => {
    const s = scenario();
    const rpc = await startRpcProxy(devnet().rpcUrl, { failMethods: ["eth_call"] });
    proxies.push(rpc);
    const client = createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 }));
    const classifier = new AddressClassifier(client);
    const addresses = [s.contracts.v2Pair, s.contracts.plainToken];
    await expect(classifier.classify(addresses)).rejects.toMatchObject({ code: "unavailable", status: 503 });
    rpc.options.failMethods = [];
    expect(Object.fromEntries(await classifier.classify(addresses))).toEqual({
      [s.contracts.v2Pair]: "v2_pair",
      [s.contracts.plainToken]: "token",
    });
  });
});

describe("one contract read whose revert means no answer", () => {
  const abi = parseAbi(["function decimals() view returns (uint8)"]);

  it("is null when the contract reverts or there is no code, the 503 chain error when the eth_call fails", async () => {
    const rpc = await startRpcProxy(devnet().rpcUrl);
    proxies.push(rpc);
    const client = createChainClient(base.chainAt([rpc.url]), rpcTransport([rpc.url], { retryCount: 0 }));
    const decimalsOf = (address: Address) => () => client.readContract({ address, abi, functionName: "decimals" });
    const failure = async (read: () => Promise<unknown>) =>
      read().then(
        () => null,
        (e: unknown) => causeChain(e).map((x) => x.name),
      );
    // Multicall3 has no decimals() and no fallback: the node says the call reverted (a single
    // read's revert does pass through CallExecutionError, unlike a call inside a multicall).
    expect(await failure(decimalsOf(devnet().multicall3))).toEqual([
      "ContractFunctionExecutionError",
      "ContractFunctionRevertedError",
      "CallExecutionError",
      "ExecutionRevertedError",
      "RpcRequestError",
    ]);
    expect(await readOrNull("reading", decimalsOf(devnet().multicall3))).toBeNull();
    // No code: an empty answer.
    const nobody = getAddress(`0x${"ab".repeat(20)}`);
    expect(await failure(decimalsOf(nobody))).toEqual([
      "ContractFunctionExecutionError",
      "ContractFunctionZeroDataError",
      "AbiDecodingZeroDataError",
    ]);
    expect(await readOrNull("reading", decimalsOf(nobody))).toBeNull();
    expect(await readOrNull("reading", decimalsOf(scenario().contracts.plainToken))).toBe(18);

    rpc.options.failSelectors = ["0x313ce567"]; // decimals()
    expect(await failure(decimalsOf(scenario().contracts.plainToken))).toEqual([
      "ContractFunctionExecutionError",
      "CallExecutionError",
      "HttpRequestError",
    ]);
    await expect(readOrNull("reading the token's decimals", decimalsOf(scenario().contracts.plainToken))).rejects.toMatchObject({
      code: "unavailable",
      status: 503,
    });
  });
});
