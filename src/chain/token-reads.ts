/**
 * Reads about one token contract: its ERC-20 metadata in one Multicall3 batch (tolerating
 * tokens whose name and symbol are bytes32, as early ones are), and whether it is a proxy:
 * the EIP-1967 implementation, beacon and admin slots, the slot of the older
 * OpenZeppelin/zos proxies that Circle's USDC uses, and the EIP-1167 minimal-proxy code.
 */
import { type Address, getAddress, type Hex, hexToString, type PublicClient, parseAbi, size, slice, trim, zeroAddress } from "viem";
import { readChain, readMulticall } from "./rpc-error.ts";

/** keccak256("eip1967.proxy.implementation") - 1. */
export const EIP1967_IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
/** keccak256("eip1967.proxy.admin") - 1. */
export const EIP1967_ADMIN_SLOT = "0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103";
/** keccak256("eip1967.proxy.beacon") - 1. */
export const EIP1967_BEACON_SLOT = "0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50";
/** keccak256("org.zeppelinos.proxy.implementation"): pre-EIP-1967 proxies, Circle's FiatTokenProxy among them. */
export const ZEPPELINOS_IMPLEMENTATION_SLOT = "0x7050c9e0f4ca769c69bd3a8ef740bc37934f8e2c036e5a723fd8ee048ed3f8c3";

const EIP1167 = /^0x363d3d373d3d3d363d73([0-9a-f]{40})5af43d82803e903d91602b57fd5bf3$/i;

/** How a proxy was recognised. */
export type ProxyStandard = "eip1967" | "eip1967_beacon" | "zeppelinos" | "eip1167_minimal";

/** The proxy facts of a contract; `standard` null means no known proxy pattern was found. */
export interface ProxyInfo {
  standard: ProxyStandard | null;
  implementation: Address | null;
  admin: Address | null;
  beacon: Address | null;
}

const stringAbi = parseAbi([
  "function name() view returns (string)",
  "function symbol() view returns (string)",
  "function decimals() view returns (uint8)",
  "function totalSupply() view returns (uint256)",
]);
const bytes32Abi = parseAbi(["function name() view returns (bytes32)", "function symbol() view returns (bytes32)"]);

function slotAddress(value: Hex | undefined): Address | null {
  if (!value || size(value) !== 32) return null;
  const address = slice(value, 12);
  return address === zeroAddress ? null : getAddress(address);
}

/** Recognise a proxy from its code and the values of the known slots (exported for unit tests). */
export function proxyFromSlots(
  code: Hex,
  slots: Partial<Record<"implementation" | "admin" | "beacon" | "zeppelinos", Hex | undefined>>,
): ProxyInfo {
  const admin = slotAddress(slots.admin);
  const implementation = slotAddress(slots.implementation);
  if (implementation) return { standard: "eip1967", implementation, admin, beacon: null };
  const beacon = slotAddress(slots.beacon);
  if (beacon) return { standard: "eip1967_beacon", implementation: null, admin, beacon };
  const zos = slotAddress(slots.zeppelinos);
  if (zos) return { standard: "zeppelinos", implementation: zos, admin: null, beacon: null };
  const clone = EIP1167.exec(code);
  if (clone) return { standard: "eip1167_minimal", implementation: getAddress(`0x${clone[1]}`), admin: null, beacon: null };
  return { standard: null, implementation: null, admin, beacon: null };
}

/** Read the proxy slots of `address` at `blockNumber` (four storage reads, one JSON-RPC batch). */
export async function readProxyInfo(client: PublicClient, address: Address, code: Hex, blockNumber: bigint): Promise<ProxyInfo> {
  const read = (slot: Hex) => client.getStorageAt({ address, slot, blockNumber });
  const [implementation, admin, beacon, zeppelinos] = await readChain("reading proxy slots", () =>
    Promise.all([
      read(EIP1967_IMPLEMENTATION_SLOT),
      read(EIP1967_ADMIN_SLOT),
      read(EIP1967_BEACON_SLOT),
      read(ZEPPELINOS_IMPLEMENTATION_SLOT),
    ]),
  );
  return proxyFromSlots(code, { implementation, admin, beacon, zeppelinos });
}

function bytes32Text(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const text = hexToString(trim(value as Hex, { dir: "right" })).replace(/\0+$/, "");
  return text.length > 0 ? text : null;
}

/** Read the ERC-20 metadata (name, symbol, decimals and total supply) at `blockNumber` in one multicall; unanswered fields are null. */
export async function readTokenMetadata(client: PublicClient, address: Address, blockNumber: bigint) {
  const answers = await readMulticall("reading token metadata", () =>
    client.multicall({
      allowFailure: true,
      blockNumber,
      contracts: [
        { address, abi: stringAbi, functionName: "name" },
        { address, abi: stringAbi, functionName: "symbol" },
        { address, abi: stringAbi, functionName: "decimals" },
        { address, abi: stringAbi, functionName: "totalSupply" },
        { address, abi: bytes32Abi, functionName: "name" },
        { address, abi: bytes32Abi, functionName: "symbol" },
      ],
    }),
  );
  const [name, symbol, decimals, totalSupply, name32, symbol32] = answers;
  const text = (a: typeof name, fallback: typeof name32) =>
    a?.status === "success" && typeof a.result === "string"
      ? a.result
      : fallback?.status === "success"
        ? bytes32Text(fallback.result)
        : null;
  return {
    name: text(name, name32),
    symbol: text(symbol, symbol32),
    decimals: decimals?.status === "success" ? Number(decimals.result) : null,
    totalSupply: totalSupply?.status === "success" ? (totalSupply.result as bigint) : null,
  };
}
