/**
 * `POST /api/payment-verify`: reads a transaction's receipt and its USDC `Transfer` logs and
 * says whether it paid the expected recipient enough, from the expected sender.
 */
import {
  erc20Abi,
  formatUnits,
  getAddress,
  type Hash,
  isAddressEqual,
  parseEventLogs,
  parseUnits,
  TransactionNotFoundError,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from "viem";
import { paymentVerify } from "../spec/routes/core.ts";
import { readChain } from "../src/chain/rpc-error.ts";
import { defineFunction, type FunctionContext, type RouteOutput } from "../src/context.ts";

type Answer = RouteOutput<typeof paymentVerify>;

/** Values above 2^53 cannot be JSON integers without loss, so they are given as strings. */
function atomicJson(value: bigint): number | string {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

async function receiptOrState(ctx: FunctionContext, hash: Hash): Promise<TransactionReceipt | "pending" | "not_found"> {
  try {
    return await ctx.chain.getTransactionReceipt({ hash });
  } catch (error) {
    if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
  }
  try {
    await ctx.chain.getTransaction({ hash });
    return "pending";
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return "not_found";
    throw error;
  }
}

export default defineFunction(paymentVerify, async (input, ctx) => {
  const hash = input.tx_hash.toLowerCase() as Hash;
  const expectedTo = getAddress(input.to ?? ctx.config.payTo);
  const expectedFrom = input.from ? getAddress(input.from) : undefined;
  const minAtomic = input.min_amount === undefined ? 0n : parseUnits(input.min_amount.toFixed(6), 6);
  const answer = (reason: Answer["reason"], detail: string, extra: Partial<Answer> = {}): Answer => ({
    tx_hash: hash,
    verified: reason === "verified",
    reason,
    detail,
    from: null,
    to: null,
    amount_usdc: null,
    confirmations: 0,
    transfer: null,
    ...extra,
  });

  const found = await readChain("reading the transaction receipt", () => receiptOrState(ctx, hash));
  if (found === "not_found") return answer("tx_not_found", "No transaction with this hash is known to the chain node.");
  if (found === "pending") return answer("tx_pending", "The transaction is known but not yet in a block; ask again once it is mined.");

  const latest = await readChain("reading the latest block", () => ctx.chain.getBlockNumber({ cacheTime: 0 }));
  const confirmations = Number(latest - found.blockNumber + 1n);
  if (found.status !== "success") {
    return answer("tx_reverted", "The transaction was mined but reverted, so it moved no USDC.", { confirmations });
  }

  const transfers = parseEventLogs({
    abi: erc20Abi,
    eventName: "Transfer",
    logs: found.logs.filter((log) => isAddressEqual(log.address, ctx.config.usdc)),
  });
  if (transfers.length === 0) {
    return answer("no_usdc_transfer", `The transaction moved no USDC (token ${ctx.config.usdc}).`, { confirmations });
  }

  // The answer's figures from the first transfer that counts (`amount`: what the answer adds up).
  const figuresOf = (t: (typeof transfers)[number], amount = t.args.value) => ({
    confirmations,
    from: getAddress(t.args.from),
    to: getAddress(t.args.to),
    amount_usdc: formatUnits(amount, 6),
    transfer: {
      from: getAddress(t.args.from),
      to: getAddress(t.args.to),
      value_atomic: atomicJson(t.args.value),
      block: Number(t.blockNumber),
      log_index: t.logIndex,
    },
  });
  const toRecipient = transfers.filter((t) => isAddressEqual(t.args.to, expectedTo));
  if (toRecipient.length === 0) {
    return answer(
      "wrong_recipient",
      `The transaction paid USDC, but not to ${expectedTo}.`,
      figuresOf(transfers[0] as (typeof transfers)[number]),
    );
  }
  const matching = expectedFrom ? toRecipient.filter((t) => isAddressEqual(t.args.from, expectedFrom)) : toRecipient;
  if (matching.length === 0) {
    return answer(
      "wrong_sender",
      `USDC reached ${expectedTo}, but not from ${expectedFrom}.`,
      figuresOf(toRecipient[0] as (typeof transfers)[number]),
    );
  }
  const total = matching.reduce((sum, t) => sum + t.args.value, 0n);
  const paid = figuresOf(matching[0] as (typeof transfers)[number], total);
  if (total < minAtomic) {
    return answer(
      "amount_too_small",
      `Paid ${formatUnits(total, 6)} USDC, less than the ${formatUnits(minAtomic, 6)} USDC required.`,
      paid,
    );
  }
  return answer("verified", `Paid ${formatUnits(total, 6)} USDC to ${expectedTo} with ${confirmations} confirmation(s).`, paid);
});
