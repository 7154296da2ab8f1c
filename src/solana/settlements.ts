/**
 * Finding how a Solana payment left open (a crash between settling and writing the ledger, a
 * settlement that timed out) ended on chain. Solana keeps no authorisation state to read: the
 * payment is a transaction, found among payTo's USDC account's transactions by the hash of its
 * message (the payment's identity, what the payer signed). A transaction lands only while its
 * blockhash is valid, which a verified payment's was: past that window one not found never will.
 */
import type { Address, Signature } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token-2022";
import { SETTLEMENT_TTL_MS, TOKEN_PROGRAM_ADDRESS } from "@x402/svm";
import { LRUCache } from "lru-cache";
import type { AuthorizationReader } from "../chain/authorization.ts";
import type { OpenPayment, SettlementLookup } from "../payments/scheme.ts";
import { solanaRpc } from "./rpc.ts";
import { messageHash, readTransfer } from "./transfer.ts";

/** Between the ledger's clock and the chain's block times. */
const CLOCK_SLACK_S = 60;
const PAGE = 1000;

/** The lookup of payments to `payTo` in `mint` (an SPL Token mint), through `rpcUrl`. */
export function svmSettlementLookup(rpcUrl: string, payTo: string, mint: string) {
  const rpc = solanaRpc(rpcUrl);
  const account = findAssociatedTokenPda({
    owner: payTo as Address,
    mint: mint as Address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS as Address,
  }).then(([ata]) => ata);
  // The library's own bound on how long a verified payment's transaction can still land (its blockhash's lifetime, with margin).
  const windowS = SETTLEMENT_TTL_MS / 1000;

  /**
   * The nonce of a landed transaction (its message's hash), read once: a landed transaction never
   * changes, and the upkeep's and the gate's lookups scan the same recent signatures again.
   */
  const nonces = new LRUCache<string, string>({
    max: 10_000,
    fetchMethod: async (signature) => {
      const found = await rpc
        .getTransaction(signature as Signature, { encoding: "base64", maxSupportedTransactionVersion: 0, commitment: "confirmed" })
        .send();
      const wire = found?.transaction?.[0];
      if (!wire) return undefined;
      try {
        return messageHash(readTransfer(Buffer.from(wire, "base64")).message);
      } catch {
        // Not a transfer this service reads (kept, as lru-cache keeps no undefined: it is not fetched again).
        return "";
      }
    },
  });
  const nonceOf = async (signature: string) => (await nonces.fetch(signature)) ?? null;

  return async function settlementOf(open: OpenPayment, now = new Date()): Promise<SettlementLookup> {
    const from = Math.floor(open.openedAt.getTime() / 1000) - CLOCK_SLACK_S;
    const until = from + CLOCK_SLACK_S * 2 + windowS;
    let before: Signature | undefined;
    // Newest first, page by page, back to the row's opening.
    for (;;) {
      const page = await rpc
        .getSignaturesForAddress(await account, { limit: PAGE, commitment: "confirmed", ...(before ? { before } : {}) })
        .send();
      for (const entry of page) {
        const time = entry.blockTime === null ? null : Number(entry.blockTime);
        // A failed transaction moved nothing: its payment is not settled by it.
        if (entry.err !== null || (time !== null && (time < from || time > until))) continue;
        if ((await nonceOf(entry.signature)) === open.nonce.toLowerCase()) return { tx: entry.signature };
      }
      const last = page.at(-1);
      if (page.length < PAGE || !last || (last.blockTime !== null && Number(last.blockTime) < from)) break;
      before = last.signature;
    }
    return { tx: null, final: now.getTime() / 1000 > until };
  };
}

/**
 * The gate's reader of a payment's fate on Solana right after a settlement reported failed: its
 * transaction found by `settlementOf` over the time a payment verified just now could have landed.
 * (A retry of a payment left open looks from the row's own opening: src/payments/upkeep.ts.) No
 * authorisation state: never "used elsewhere".
 */
export function svmPaymentReader(settlementOf: (open: OpenPayment) => Promise<SettlementLookup>): AuthorizationReader {
  const findPayment = async (_payer: string, nonce: string) => {
    const { tx } = await settlementOf({ nonce, openedAt: new Date(Date.now() - SETTLEMENT_TTL_MS) });
    return tx as `0x${string}` | null;
  };
  return { isUsed: async () => false, findUse: findPayment, findPayment };
}
