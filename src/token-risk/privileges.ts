/**
 * What a token's owner can do to holders, read from the code itself: the function selectors of
 * known privileged functions (mint, blacklist, pause, set fee) pushed in the dispatcher of the
 * token's bytecode and, for a proxy, of its implementation; the owner (`owner()`/`getOwner()`),
 * and the limits a transfer can hit (maximum transaction and wallet sizes).
 */
import { type Address, getAddress, type Hex, type PublicClient, parseAbi, toFunctionSelector, zeroAddress } from "viem";
import type { HoneypotSimulation } from "../../spec/token-risk-schemas.ts";
import { readChain, readMulticall } from "../chain/rpc-error.ts";
import { readProxyInfo } from "../chain/token-reads.ts";

/** The owner and privileges of a token, as the honeypot check answers them, one privileged function found in the code, and its kind of power over holders. */
type OwnerPrivileges = HoneypotSimulation["owner_privileges"];
type FoundPrivilege = OwnerPrivileges["privileges"][number];
export type Privilege = FoundPrivilege["privilege"];

/** The signatures recognised for each privilege (names used by common token templates). */
export const PRIVILEGED_SIGNATURES: Record<Privilege, readonly string[]> = {
  mint: ["mint(address,uint256)", "mint(uint256)", "mintTo(address,uint256)", "issue(uint256)"],
  blacklist: [
    "blacklist(address)",
    "blacklist(address,bool)",
    "setBlacklist(address,bool)",
    "addToBlacklist(address)",
    "blacklistAddress(address,bool)",
    "setIsBlacklisted(address,bool)",
    "updateBlacklist(address,bool)",
    "setBots(address[],bool)",
    "addBots(address[])",
    "blockBots(address[])",
    "setBot(address,bool)",
  ],
  pause: ["pause()", "setPaused(bool)", "setTradingEnabled(bool)", "disableTrading()"],
  set_fee: [
    "setFee(uint256)",
    "setFees(uint256,uint256)",
    "setTaxes(uint256,uint256)",
    "setBuyTax(uint256)",
    "setSellTax(uint256)",
    "setBuyFee(uint256)",
    "setSellFee(uint256)",
    "setTaxFeePercent(uint256)",
    "updateFees(uint256,uint256)",
    "updateBuyFees(uint256)",
    "updateSellFees(uint256)",
    "setFeeRate(uint256)",
  ],
};

const SELECTORS = Object.entries(PRIVILEGED_SIGNATURES).flatMap(([privilege, signatures]) =>
  signatures.map((signature) => ({ privilege: privilege as Privilege, signature, selector: toFunctionSelector(signature) })),
);

/** The privileged functions whose selector the code pushes (PUSH4, the dispatcher's comparison). */
export function privilegesInCode(code: Hex, where: FoundPrivilege["found_in"]): FoundPrivilege[] {
  const lower = code.toLowerCase();
  return SELECTORS.filter((s) => lower.includes(`63${s.selector.slice(2)}`)).map((s) => ({ ...s, found_in: where }));
}

const ownerAbi = parseAbi(["function owner() view returns (address)", "function getOwner() view returns (address)"]);
const LIMIT_GETTERS = {
  max_transaction: ["_maxTxAmount", "maxTxAmount", "maxTransactionAmount", "maxTx"],
  max_wallet: ["_maxWalletSize", "maxWalletSize", "maxWallet", "maxWalletAmount", "_maxWalletToken"],
} as const;
const limitAbi = Object.values(LIMIT_GETTERS)
  .flat()
  .map((name) => ({ type: "function", name, stateMutability: "view", inputs: [], outputs: [{ type: "uint256" }] }) as const);

/** Read the owner, the proxy and the privileged functions of `token` at `blockNumber`. */
export async function readOwnerPrivileges(chain: PublicClient, token: Address, code: Hex, blockNumber: bigint): Promise<OwnerPrivileges> {
  const [proxy, owners] = await Promise.all([
    readProxyInfo(chain, token, code, blockNumber),
    readMulticall("reading the token's owner", () =>
      chain.multicall({
        contracts: [
          { address: token, abi: ownerAbi, functionName: "owner" },
          { address: token, abi: ownerAbi, functionName: "getOwner" },
        ],
        allowFailure: true,
        blockNumber,
      }),
    ),
  ]);
  const privileges = privilegesInCode(code, "token");
  if (proxy.implementation) {
    const implementation = proxy.implementation;
    const implCode = await readChain("reading the implementation's code", () => chain.getCode({ address: implementation, blockNumber }));
    const seen = new Set(privileges.map((p) => p.selector));
    for (const p of privilegesInCode(implCode ?? "0x", "implementation")) if (!seen.has(p.selector)) privileges.push(p);
  }
  const ownerResult = owners.find((o) => o.status === "success");
  const owner = ownerResult ? getAddress(ownerResult.result as Address) : null;
  return {
    owner: owner === zeroAddress ? null : owner,
    renounced: owner === zeroAddress,
    proxy: proxy.standard ? { standard: proxy.standard, implementation: proxy.implementation } : null,
    privileges,
  };
}

/** The token's declared transaction and wallet limits (smallest units), when it declares any. */
export async function readLimits(
  chain: PublicClient,
  token: Address,
  blockNumber: bigint,
): Promise<{ maxTransaction: bigint | null; maxWallet: bigint | null }> {
  const results = await readMulticall("reading the token's limits", () =>
    chain.multicall({
      contracts: limitAbi.map((fn) => ({ address: token, abi: [fn], functionName: fn.name })),
      allowFailure: true,
      blockNumber,
    }),
  );
  const first = (names: readonly string[]) => {
    for (const name of names) {
      const r = results[limitAbi.findIndex((f) => f.name === name)];
      if (r?.status === "success" && typeof r.result === "bigint" && r.result > 0n) return r.result;
    }
    return null;
  };
  return { maxTransaction: first(LIMIT_GETTERS.max_transaction), maxWallet: first(LIMIT_GETTERS.max_wallet) };
}
