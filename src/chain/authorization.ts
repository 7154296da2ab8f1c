/**
 * Reading an EIP-3009 authorisation's fate on chain: whether it was used
 * (`authorizationState`) and which transaction used it (its `AuthorizationUsed` event).
 * Used to resolve payments whose settlement outcome is unknown.
 */
import { erc20Abi, isAddressEqual, type PublicClient, parseAbi, parseEventLogs } from "viem";
import { readChain } from "./rpc-error.ts";

/** EIP-3009's authorisation state and the event marking an authorisation used. */
export const eip3009Abi = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);

/** Reads authorisations of one EIP-3009 token. */
export interface AuthorizationReader {
  /** True when the authorisation was used (settled) or cancelled. */
  isUsed(authorizer: string, nonce: string): Promise<boolean>;
  /** The transaction that used it, searched back `lookbackBlocks` from the latest block. */
  findUse(authorizer: string, nonce: string, lookbackBlocks: number): Promise<`0x${string}` | null>;
  /**
   * The transaction that used the authorisation to pay `payTo` at least `amount` (atomic), or
   * null. A used nonce alone proves nothing: it may have been cancelled or spent elsewhere.
   */
  findPayment(authorizer: string, nonce: string, payTo: string, amount: bigint, lookbackBlocks: number): Promise<`0x${string}` | null>;
}

/** An `AuthorizationReader` for `token` through `client`. */
export function authorizationReader(client: PublicClient, token: `0x${string}`): AuthorizationReader {
  const reader: AuthorizationReader = {
    isUsed: (authorizer, nonce) =>
      readChain("reading an authorisation's state", () =>
        client.readContract({
          address: token,
          abi: eip3009Abi,
          functionName: "authorizationState",
          args: [authorizer as `0x${string}`, nonce as `0x${string}`],
        }),
      ),
    findUse: (authorizer, nonce, lookbackBlocks) =>
      readChain("searching for the settlement of an authorisation", async () => {
        const latest = await client.getBlockNumber({ cacheTime: 0 });
        const floor = latest > BigInt(lookbackBlocks) ? latest - BigInt(lookbackBlocks) : 0n;
        // Newest first, in chunks public RPCs accept.
        for (let to = latest; to >= floor; to -= 2000n) {
          const from = to - 1999n > floor ? to - 1999n : floor;
          const logs = await client.getLogs({
            address: token,
            event: eip3009Abi[1],
            args: { authorizer: authorizer as `0x${string}`, nonce: nonce as `0x${string}` },
            fromBlock: from,
            toBlock: to,
          });
          const found = logs.at(-1);
          if (found) return found.transactionHash;
          if (from === floor) break;
        }
        return null;
      }),
    findPayment: async (authorizer, nonce, payTo, amount, lookbackBlocks) => {
      const tx = await reader.findUse(authorizer, nonce, lookbackBlocks);
      if (!tx) return null;
      const receipt = await readChain("reading a settlement receipt", () => client.getTransactionReceipt({ hash: tx }));
      if (receipt.status !== "success") return null;
      const transfers = parseEventLogs({
        abi: erc20Abi,
        eventName: "Transfer",
        logs: receipt.logs.filter((l) => isAddressEqual(l.address, token)),
      });
      const paid = transfers.some(
        (t) =>
          isAddressEqual(t.args.from, authorizer as `0x${string}`) &&
          isAddressEqual(t.args.to, payTo as `0x${string}`) &&
          t.args.value >= amount,
      );
      return paid ? tx : null;
    },
  };
  return reader;
}
