/**
 * What the scenario's chapters share: its deterministic wallets and contract addresses, and the
 * pool arithmetic of their plans. Apart from src/local/devnet/scenario.ts so that its chapters
 * (scenario-entities.ts, scenario-tokens.ts) use them without importing the module that imports them.
 */
import {
  type Address,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  keccak256,
  type PrivateKeyAccount,
  parseAbi,
  stringToBytes,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";

/** The deterministic key of a scenario wallet: public, local-only, worthless anywhere else. */
export function scenarioAccount(name: string): PrivateKeyAccount {
  return privateKeyToAccount(keccak256(stringToBytes(`x402-chain-data-service/local-scenario/${name}`)));
}

/** The contract addresses the scenario deploys (the deployer's first nonces; the proxy creates its admin). */
export function scenarioContracts() {
  const from = scenarioAccount("deployer").address;
  const at = (nonce: number) => getContractAddress({ from, nonce: BigInt(nonce) });
  const proxyToken = at(2);
  return {
    plainToken: at(0),
    proxyImplementation: at(1),
    proxyToken,
    // OpenZeppelin 5's transparent proxy deploys its ProxyAdmin in its constructor (the proxy's nonce 1).
    proxyAdmin: getContractAddress({ from: proxyToken, nonce: 1n }),
    v2Pair: at(3),
    v3Pool: at(4),
    router: at(5),
  };
}

/** What the scenario calls on its tokens (mintable ERC-20s and WETH) and Uniswap v2 pairs, beyond ERC-20. */
export const tokenAbi = parseAbi([
  "function mint(address to, uint256 amount)",
  "function deposit() payable",
  "function initialize(address token0, address token1)",
  "function sync()",
  "function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes data)",
]);

/** A Uniswap v2 pair's token0 and token1: the lower address first. */
export function sortTokens(a: Address, b: Address): [Address, Address] {
  return BigInt(a) < BigInt(b) ? [a, b] : [b, a];
}

/**
 * initialize() of a Uniswap v2 pair deployed directly rather than by a factory: the deployer is
 * its factory, the only account allowed to name its tokens.
 */
export function initializePair(a: Address, b: Address): Hex {
  return encodeFunctionData({ abi: tokenAbi, functionName: "initialize", args: sortTokens(a, b) });
}

/** floor(sqrt(y)), as Solidity's Babylonian square root computes it. */
export function isqrt(y: bigint): bigint {
  if (y < 4n) return y === 0n ? 0n : 1n;
  let z = y;
  let x = y / 2n + 1n;
  while (x < z) {
    z = x;
    x = (y / x + x) / 2n;
  }
  return z;
}

/** Uniswap v2's output for `amountIn` against reserves at 0.3%: what the scenario's v2 pairs accept. */
export function amountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  const inWithFee = amountIn * 997n;
  return (inWithFee * reserveOut) / (reserveIn * 1000n + inWithFee);
}
