/**
 * The operator's settings of verified-by-purchase (src/intel/purchase.ts), read from the
 * environment: off by default in production, on by default in local mode (paying from a
 * devnet buyer), always within a budget.
 *
 * - TRUST_PURCHASES: 1 or 0.
 * - TRUST_PURCHASE_RUN_BUDGET_USD: spent at most per trust run (default 0.10).
 * - TRUST_PURCHASE_ORIGIN_BUDGET_USD: spent at most on one origin per run (default 0.02).
 * - TRUST_PURCHASE_PRICE_CAP_USD: only sellers quoting at most this are bought from (default 0.02).
 * - TRUST_BUYER_PRIVATE_KEY: the buyer wallet (production; local mode uses a devnet buyer).
 */
import type { PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { PurchaseBudget, PurchaserSettings } from "./purchase.ts";

/** The default budget: a few cents per run. */
export const DEFAULT_BUDGET: PurchaseBudget = { per_run_usd: 0.1, per_origin_usd: 0.02, price_cap_usd: 0.02 };

/** The devnet buyer local mode pays from: account 9 of the test mnemonic (the last of data/devnet.json's buyers). */
export const LOCAL_BUYER_INDEX = 7;

function usd(name: string, text: string | undefined, fallback: number, problems: string[]): number {
  if (text === undefined || text === "") return fallback;
  const n = Number(text);
  if (!/^[0-9]+(\.[0-9]{1,6})?$/.test(text.trim()) || !Number.isFinite(n) || n < 0 || n > 1_000) {
    problems.push(`${name} must be a USD amount 0-1000 with at most 6 decimals, got "${text}"`);
    return fallback;
  }
  return n;
}

/** Read the settings; every problem goes to `problems`. */
export function purchaseConfigFromEnv(env: Record<string, string | undefined>, production: boolean, problems: string[]) {
  const flag = env.TRUST_PURCHASES;
  let enabled = !production;
  if (flag !== undefined && flag !== "") {
    if (flag !== "1" && flag !== "0") problems.push(`TRUST_PURCHASES must be 1 or 0, got "${flag}"`);
    else enabled = flag === "1";
  }
  const budget: PurchaseBudget = {
    per_run_usd: usd("TRUST_PURCHASE_RUN_BUDGET_USD", env.TRUST_PURCHASE_RUN_BUDGET_USD, DEFAULT_BUDGET.per_run_usd, problems),
    per_origin_usd: usd("TRUST_PURCHASE_ORIGIN_BUDGET_USD", env.TRUST_PURCHASE_ORIGIN_BUDGET_USD, DEFAULT_BUDGET.per_origin_usd, problems),
    price_cap_usd: usd("TRUST_PURCHASE_PRICE_CAP_USD", env.TRUST_PURCHASE_PRICE_CAP_USD, DEFAULT_BUDGET.price_cap_usd, problems),
  };
  // The buyer's key; undefined in local mode, which pays from a devnet buyer.
  let buyerPrivateKey: `0x${string}` | undefined;
  const key = env.TRUST_BUYER_PRIVATE_KEY?.trim();
  if (key) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(key))
      problems.push("TRUST_BUYER_PRIVATE_KEY must be a 32-byte hex private key (64 hex digits); its value is not shown");
    else buyerPrivateKey = key as `0x${string}`;
  }
  // A key that is set but malformed has its own line above.
  if (production && enabled && !key) {
    problems.push(
      "TRUST_PURCHASES=1 in production needs TRUST_BUYER_PRIVATE_KEY: the wallet the trust runs buy from, funded with USDC within the budget",
    );
  }
  return { enabled, budget, buyerPrivateKey };
}

/** Verified-by-purchase settings. */
export type PurchaseConfig = ReturnType<typeof purchaseConfigFromEnv>;

/**
 * What a trust run's purchases need, or undefined when purchases are off (or no buyer key is
 * known): the configured key, else in local mode the devnet buyer `devnetBuyerKey`.
 */
export function trustPurchases(
  config: { network: string; usdc: { address: `0x${string}` }; intel: { purchases: PurchaseConfig } },
  chain: PublicClient,
  devnetBuyerKey?: `0x${string}`,
): Omit<PurchaserSettings, "fetcher"> | undefined {
  const { purchases } = config.intel;
  const key = purchases.buyerPrivateKey ?? devnetBuyerKey;
  if (!purchases.enabled || !key) return undefined;
  return { buyer: privateKeyToAccount(key), chain, network: config.network, usdc: config.usdc.address, budget: purchases.budget };
}
