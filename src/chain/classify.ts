/**
 * What kind of address is this: a wallet, a token, a DEX pool or router, or some other
 * contract. Decided from the code (none: wallet) and interface probes batched through
 * Multicall3, each probe allowed to fail: `getReserves()`+`token0()` answer on a v2-style
 * pair, `slot0()`+`token0()` on a v3-style pool, a router carries the `exactInputSingle`
 * selector in its code and answers `factory()`, and a token answers `decimals()`.
 */
import { LRUCache } from "lru-cache";
import { type Address, getAddress, type Hex, type PublicClient, parseAbi, toFunctionSelector, zeroAddress } from "viem";
import type { AddressClass } from "../../spec/routes/analytics.ts";
import { readChain, readMulticall } from "./rpc-error.ts";

/** The classes an address can have, as the answers name them. */
export type { AddressClass };

/** Classes that are DEX venues: money sent there is traded or pooled. */
export const DEX_CLASSES: ReadonlySet<AddressClass> = new Set(["v2_pair", "v3_pool", "router"]);

const probeAbi = parseAbi([
  "function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)",
  "function token0() view returns (address)",
  "function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex, uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked)",
  "function factory() view returns (address)",
  "function decimals() view returns (uint8)",
]);

// exactInputSingle of Uniswap's SwapRouter (with deadline) and SwapRouter02 (without): a router's
// entry point cannot be probed with a call (it moves funds), so its selector is looked for in
// the code, where Solidity's dispatcher pushes it with PUSH4 (0x63).
const ROUTER_SELECTORS = [
  toFunctionSelector("exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))"),
  toFunctionSelector("exactInputSingle((address,address,uint24,address,uint256,uint256,uint160))"),
].map((s) => `63${s.slice(2)}`);

// EIP-7702: an EOA delegating to code carries 0xef0100 + the delegate's address; it is still a wallet.
const DELEGATED_EOA = /^0xef0100[0-9a-f]{40}$/i;

/** Contract classes are kept an hour (code rarely changes); wallets a minute, since code can be deployed to them. */
const CONTRACT_TTL_MS = 60 * 60_000;
const WALLET_TTL_MS = 60_000;

/** Decide the class of an address from its code and probe results (exported for unit tests). */
export function classFromProbes(
  code: Hex | undefined,
  ok: { getReserves: boolean; token0: boolean; slot0: boolean; factory: boolean; decimals: boolean },
): AddressClass {
  if (!code || code === "0x" || DELEGATED_EOA.test(code)) return "wallet";
  if (ok.getReserves && ok.token0) return "v2_pair";
  if (ok.slot0 && ok.token0) return "v3_pool";
  const lower = code.toLowerCase();
  if (ok.factory && ROUTER_SELECTORS.some((s) => lower.includes(s))) return "router";
  if (ok.decimals) return "token";
  return "contract";
}

/** Classifies addresses for the analytics; one instance per RPC, shared by all requests. */
export class AddressClassifier {
  readonly #client: PublicClient;
  readonly #known = new LRUCache<Address, AddressClass>({ max: 100_000 });

  constructor(client: PublicClient) {
    this.#client = client;
  }

  /** The class of each address (keys: checksummed addresses), probing only those not cached. */
  async classify(addresses: readonly Address[]): Promise<Map<Address, AddressClass>> {
    const unique = [...new Set(addresses.map((a) => getAddress(a)))];
    const result = new Map<Address, AddressClass>();
    const unknown: Address[] = [];
    for (const address of unique) {
      if (address === zeroAddress) {
        result.set(address, "zero_address");
        continue;
      }
      const known = this.#known.get(address);
      if (known) result.set(address, known);
      else unknown.push(address);
    }
    if (unknown.length === 0) return result;

    const codes = await readChain("reading contract code", () => Promise.all(unknown.map((address) => this.#client.getCode({ address }))));
    const contracts = unknown.filter((_, i) => {
      const code = codes[i];
      return code !== undefined && code !== "0x" && !DELEGATED_EOA.test(code);
    });
    const probes = ["getReserves", "token0", "slot0", "factory", "decimals"] as const;
    const answers =
      contracts.length === 0
        ? []
        : await readMulticall("probing contract interfaces", () =>
            this.#client.multicall({
              allowFailure: true,
              // ~50 probes per aggregate3 call (viem's default 1 KB would split them into many calls).
              batchSize: 8_192,
              contracts: contracts.flatMap((address) => probes.map((functionName) => ({ address, abi: probeAbi, functionName }))),
            }),
          );
    const okByAddress = new Map<Address, Record<(typeof probes)[number], boolean>>();
    contracts.forEach((address, i) => {
      const ok = Object.fromEntries(probes.map((p, j) => [p, answers[i * probes.length + j]?.status === "success"]));
      okByAddress.set(address, ok as Record<(typeof probes)[number], boolean>);
    });
    const none = { getReserves: false, token0: false, slot0: false, factory: false, decimals: false };
    unknown.forEach((address, i) => {
      const cls = classFromProbes(codes[i], okByAddress.get(address) ?? none);
      this.#known.set(address, cls, { ttl: cls === "wallet" ? WALLET_TTL_MS : CONTRACT_TTL_MS });
      result.set(address, cls);
    });
    return result;
  }
}
