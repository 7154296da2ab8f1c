/**
 * `payment-verify` against real transactions on the devnet: every reason it can give, with
 * exact amounts, senders, recipients and blocks. The function is called directly with a
 * real chain client; the paid HTTP path is covered by payment.test.ts.
 */
import { createWalletClient, erc20Abi, type Hash, http, type PrivateKeyAccount, parseUnits } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import verify from "../functions/payment-verify.ts";
import { paymentVerify } from "../spec/routes/core.ts";
import type { FunctionContext } from "../src/context.ts";
import { createLogger } from "../src/log.ts";
import { base } from "../src/networks/base.ts";
import type { Store } from "../src/store/store.ts";
import { buyerAccount, chainClient, devnet } from "./support/service.ts";

const wethAbi = [{ type: "function", name: "deposit", stateMutability: "payable", inputs: [], outputs: [] }] as const;
let ctx: FunctionContext;
let sender: PrivateKeyAccount;
let other: PrivateKeyAccount;

function wallet(account: PrivateKeyAccount) {
  const d = devnet();
  return createWalletClient({ account, chain: base.chainAt([d.rpcUrl]), transport: http(d.rpcUrl) });
}

async function usdcTransfer(from: PrivateKeyAccount, to: `0x${string}`, usdc: string): Promise<Hash> {
  const hash = await wallet(from).writeContract({
    address: devnet().usdc,
    abi: erc20Abi,
    functionName: "transfer",
    args: [to, parseUnits(usdc, 6)],
  });
  await chainClient().waitForTransactionReceipt({ hash });
  return hash;
}

beforeAll(() => {
  const d = devnet();
  sender = buyerAccount(7);
  other = buyerAccount(5);
  ctx = {
    config: {
      mode: "local",
      network: base.id,
      chainId: base.chainId,
      usdc: d.usdc,
      payTo: d.payTo,
      publicUrl: undefined,
      version: "test",
      validateResponses: true,
    },
    chain: chainClient(),
    log: createLogger("silent"),
    // payment-verify never touches the store.
    store: {} as Store,
    requestId: "test",
    payment: null,
    route: paymentVerify,
    now: () => new Date(),
  };
});

describe("payment-verify", () => {
  it("verifies a transfer to the service's receiving address, with its block and confirmations", async () => {
    const hash = await usdcTransfer(sender, devnet().payTo, "2.5");
    const receipt = await chainClient().getTransactionReceipt({ hash });
    await usdcTransfer(other, other.address, "0.01"); // one more block on top
    const answer = await verify.run({ tx_hash: hash, min_amount: 2.5, from: sender.address }, ctx);
    expect(answer).toEqual({
      tx_hash: hash,
      verified: true,
      reason: "verified",
      detail: `Paid 2.5 USDC to ${devnet().payTo} with 2 confirmation(s).`,
      from: sender.address,
      to: devnet().payTo,
      amount_usdc: "2.5",
      confirmations: 2,
      transfer: { from: sender.address, to: devnet().payTo, value_atomic: 2_500_000, block: Number(receipt.blockNumber), log_index: 0 },
    });
  });

  it("says amount_too_small when the transfer is below min_amount", async () => {
    const hash = await usdcTransfer(sender, devnet().payTo, "0.05");
    const answer = await verify.run({ tx_hash: hash, min_amount: 0.1 }, ctx);
    expect(answer).toMatchObject({
      verified: false,
      reason: "amount_too_small",
      amount_usdc: "0.05",
      detail: "Paid 0.05 USDC, less than the 0.1 USDC required.",
    });
  });

  it("says wrong_recipient when USDC went elsewhere, and checks an explicit `to`", async () => {
    const hash = await usdcTransfer(sender, other.address, "1");
    expect(await verify.run({ tx_hash: hash }, ctx)).toMatchObject({
      verified: false,
      reason: "wrong_recipient",
      to: other.address,
      amount_usdc: "1",
    });
    expect(await verify.run({ tx_hash: hash, to: other.address.toLowerCase() }, ctx)).toMatchObject({
      verified: true,
      reason: "verified",
      to: other.address,
    });
  });

  it("says wrong_sender when the expected sender did not pay", async () => {
    const hash = await usdcTransfer(sender, devnet().payTo, "1");
    expect(await verify.run({ tx_hash: hash, from: other.address }, ctx)).toMatchObject({
      verified: false,
      reason: "wrong_sender",
      from: sender.address,
    });
  });

  it("says no_usdc_transfer for a transaction that moved another token", async () => {
    const hash = await wallet(sender).writeContract({ address: devnet().weth, abi: wethAbi, functionName: "deposit", value: 10n ** 15n });
    await chainClient().waitForTransactionReceipt({ hash });
    expect(await verify.run({ tx_hash: hash }, ctx)).toMatchObject({
      verified: false,
      reason: "no_usdc_transfer",
      transfer: null,
      amount_usdc: null,
    });
  });

  it("says tx_reverted for a mined transaction that reverted", async () => {
    const hash = await wallet(sender).writeContract({
      address: devnet().usdc,
      abi: erc20Abi,
      functionName: "transfer",
      args: [devnet().payTo, parseUnits("1000000", 6)],
      gas: 100_000n,
    });
    await chainClient().waitForTransactionReceipt({ hash });
    expect(await verify.run({ tx_hash: hash }, ctx)).toMatchObject({ verified: false, reason: "tx_reverted", confirmations: 1 });
  });

  it("says tx_not_found for an unknown hash and tx_pending for one not yet mined", async () => {
    expect(await verify.run({ tx_hash: `0x${"55".repeat(32)}` }, ctx)).toMatchObject({
      verified: false,
      reason: "tx_not_found",
      confirmations: 0,
    });
    const client = chainClient();
    await client.request({ method: "evm_setAutomine" as never, params: [false] as never });
    try {
      const hash = await wallet(sender).writeContract({
        address: devnet().usdc,
        abi: erc20Abi,
        functionName: "transfer",
        args: [devnet().payTo, 1n],
        gas: 100_000n,
      });
      expect(await verify.run({ tx_hash: hash }, ctx)).toMatchObject({ verified: false, reason: "tx_pending" });
      await client.request({ method: "evm_mine" as never });
      expect(await verify.run({ tx_hash: hash }, ctx)).toMatchObject({ verified: true, amount_usdc: "0.000001" });
    } finally {
      await client.request({ method: "evm_setAutomine" as never, params: [true] as never });
    }
  });
});
