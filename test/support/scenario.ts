/**
 * Test support for the chain analytics: the seeded scenario's ground truth (provided by the
 * global setup), the labels and directions the tests expect, written out here by hand rather
 * than computed by the code under test, and paid calls through a real x402 buyer.
 */
import { type Address, getAddress, zeroAddress } from "viem";
import { inject } from "vitest";
import { WETH_ADDRESS } from "../../src/chain/addresses.ts";
import type { TransferLog } from "../../src/chain/log-scanner.ts";
import { devnetClient } from "../../src/local/devnet/devnet.ts";
import {
  BlockBuilder,
  feeWindow,
  type ScenarioGroundTruth,
  type ScenarioTransfer,
  type ScenarioWalletTruth,
} from "../../src/local/devnet/scenario.ts";
import { base as baseNetwork } from "../../src/networks/base.ts";
import type { RunningService } from "../../src/server/service.ts";
import { buyerAccount, payingFetch, usdcBalance } from "./service.ts";

/** The ground truth of the shared devnet's scenario. */
export function scenario(): ScenarioGroundTruth {
  return inject("scenario");
}

/** Mine the scenario's fee window again now (the gas tracker samples the latest blocks); returns its plan. */
export async function mineFeeBlocks(rpcUrl: string): Promise<ScenarioGroundTruth["feeBlocks"]> {
  const client = devnetClient(rpcUrl);
  await client.setAutomine(false);
  try {
    const builder = new BlockBuilder(client, { USDC: baseNetwork.usdc.address, WETH: WETH_ADDRESS, PLAIN: zeroAddress, PRXY: zeroAddress });
    return await feeWindow(builder);
  } finally {
    await client.setAutomine(true);
  }
}

/** The ground truth's transfers as the scanner reports them. */
export function truthLogs(token: "USDC" | "WETH", filter: (t: { from: string; to: string }) => boolean = () => true): TransferLog[] {
  const s = scenario();
  return transfersOf(token, s.startBlock, s.endBlock)
    .filter(filter)
    .map((t) => ({
      token: t.tokenAddress,
      blockNumber: t.block,
      logIndex: t.logIndex,
      txHash: t.txHash,
      from: t.from,
      to: t.to,
      value: BigInt(t.value),
    }));
}

/** A scenario wallet by name. */
export function wallet(name: string): ScenarioWalletTruth {
  const found = scenario().wallets.find((w) => w.name === name);
  if (!found) throw new Error(`no scenario wallet ${name}`);
  return found;
}

/** The buyers analytics tests pay with (accounts 8 and 9): other files' exact balance checks never use them. */
export const ANALYTICS_BUYERS = [6, 7] as const;

/** The curated local-network labels the tests expect, by address (content/labels.json, written out again). */
export function expectedLabels(): Record<Address, string[]> {
  const s = scenario();
  const w = (name: string) => wallet(name).address;
  return {
    [w("exchange-a")]: ["Seeded Exchange A (hot wallet)"],
    [w("exchange-b")]: ["Seeded Exchange B (deposit wallet)"],
    [w("bridge")]: ["Seeded Bridge (escrow)"],
    [s.contracts.v2Pair]: ["Seeded PLAIN/WETH v2 pair"],
    [s.contracts.v3Pool]: ["Seeded WETH/USDC v3 pool"],
    [s.contracts.router]: ["Seeded DEX router"],
    "0x4200000000000000000000000000000000000006": ["Wrapped Ether (WETH9)"],
    [baseNetwork.usdc.address]: ["USD Coin (local stand-in)"],
    "0xcA11bde05977b3631167028862bE2a173976CA11": ["Multicall3"],
  };
}

/** Labels of an address as answers list them. */
export function labelsOf(address: Address): string[] {
  return expectedLabels()[getAddress(address)] ?? [];
}

/** The class the ground truth gives an address. */
export function classOf(address: Address): string {
  const cls = scenario().classes[getAddress(address)];
  if (!cls) throw new Error(`the scenario does not classify ${address}`);
  return cls;
}

/** Whale-watch's direction rule, restated from its methodology for the expected answers. */
export function expectedDirection(from: Address, to: Address): string {
  const s = scenario();
  const role = (a: Address) => s.wallets.find((w) => w.address === getAddress(a))?.role;
  const dex = new Set([s.contracts.v2Pair, s.contracts.v3Pool, s.contracts.router]);
  if (from === zeroAddress) return "mint";
  if (to === zeroAddress) return "burn";
  if (role(to) === "exchange") return "to_exchange";
  if (role(from) === "exchange") return "from_exchange";
  if (role(to) === "bridge") return "to_bridge";
  if (role(from) === "bridge") return "from_bridge";
  if (dex.has(to)) return "into_dex";
  if (dex.has(from)) return "out_of_dex";
  if (classOf(from) === "wallet" && classOf(to) === "wallet") return "wallet_to_wallet";
  return "other";
}

/** Scenario transfers of `token` in blocks `[fromBlock, toBlock]`, in chain order. */
export function transfersOf(token: ScenarioTransfer["token"], fromBlock = 0, toBlock = Number.MAX_SAFE_INTEGER): ScenarioTransfer[] {
  return scenario()
    .transfers.filter((t) => t.token === token && t.block >= fromBlock && t.block <= toBlock)
    .sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
}

/** Format smallest units as the decimal string answers use (no trailing zeros). */
export function decimal(value: bigint | string, decimals: number): string {
  const v = BigInt(value);
  const base = 10n ** BigInt(decimals);
  const int = v / base;
  const frac = (v % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  return frac ? `${int}.${frac}` : `${int}`;
}

/** POST a paid analytics call with a real x402 buyer; returns status, body and the buyer's USDC spent. */
export async function paidPost(
  service: RunningService,
  path: string,
  body: unknown,
  buyerIndex: (typeof ANALYTICS_BUYERS)[number] = 6,
): Promise<{ status: number; body: Record<string, unknown>; spent: bigint; headers: Headers }> {
  const buyer = buyerAccount(buyerIndex);
  const before = await usdcBalance(buyer.address);
  const res = await payingFetch(buyer)(`${service.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body: json, spent: before - (await usdcBalance(buyer.address)), headers: res.headers };
}
