/**
 * Test support: a buyer of its own for one test, holding exactly `usdc` atomic USDC on the
 * devnet (anvil's `anvil_dealERC20`), so that its balance moves only with that test's payments
 * while other test files pay from the shared devnet buyers at the same time. An EIP-3009 payer
 * needs no ETH: the facilitator pays the gas.
 */
import type { PrivateKeyAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { base } from "../../src/networks/base.ts";
import { chainClient } from "./service.ts";

export async function freshBuyer(usdc: bigint): Promise<PrivateKeyAccount & { privateKey: `0x${string}` }> {
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  await chainClient().request({
    method: "anvil_dealERC20" as never,
    params: [account.address, base.usdc.address, `0x${usdc.toString(16)}`] as never,
  });
  return Object.assign(account, { privateKey });
}
