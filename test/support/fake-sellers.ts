/**
 * Ground truth for the local fake sellers (src/local/sellers/demo-sellers.ts): what the conformance
 * checker must answer for each kind, and the score, verdict and penalties the trust rules
 * give each kind when its payTo is on chain but has never received USDC. Written by hand from
 * the sellers' behaviour and the rule table, so a change to either shows up in the tests.
 */
import { createWalletClient, erc20Abi, http, parseUnits } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { CHECK_NAMES, type CheckName } from "../../src/intel/conformance.ts";
import type { PenaltyId, Verdict } from "../../src/intel/trust-score.ts";
import type { SellerKind } from "../../src/local/sellers/demo-sellers.ts";
import { base } from "../../src/networks/base.ts";
import { buyerAccount, chainClient, devnet } from "./service.ts";

const all = (value: boolean) => Object.fromEntries(CHECK_NAMES.map((n) => [n, value])) as Record<CheckName, boolean>;
const allBut = (...failing: CheckName[]) =>
  ({ ...all(true), ...Object.fromEntries(failing.map((n) => [n, false])) }) as Record<CheckName, boolean>;

const PROTOCOL_FAILED = CHECK_NAMES.filter((n) => !["bazaar_metadata", "well_known_x402", "openapi"].includes(n));

/** The checks each kind must get. */
export const EXPECTED_CHECKS: Readonly<Record<SellerKind, Record<CheckName, boolean>>> = {
  conforming_v2: all(true),
  v1_only: allBut("bazaar_metadata", "well_known_x402", "openapi"),
  body_only: allBut("challenge_transport"),
  decimal_amount: allBut("atomic_amount"),
  missing_pay_to: allBut("accepts_fields", "has_pay_to"),
  free_200: all(false),
  expensive: all(true),
  // The slow seller serves its discovery documents at once; only its endpoint is slow.
  slow: allBut(...PROTOCOL_FAILED, "bazaar_metadata"),
  dead: all(false),
};

/** Whether a standard client can pay each kind. */
export const EXPECTED_PAYABLE: Readonly<Record<SellerKind, boolean>> = {
  conforming_v2: true,
  v1_only: true,
  body_only: false,
  decimal_amount: false,
  missing_pay_to: false,
  free_200: false,
  // Above the default client's $1 per-payment cap: @x402/fetch refuses it unless the buyer raises the cap.
  expensive: false,
  slow: false,
  dead: false,
};

/** Reachable, status, version, where the challenge was, and the USD price each kind must get. */
export const EXPECTED_SHAPE: Readonly<
  Record<
    SellerKind,
    { reachable: boolean; status: number | null; x402Version: number | null; challenge_source: string | null; price_usd: number | null }
  >
> = {
  conforming_v2: { reachable: true, status: 402, x402Version: 2, challenge_source: "both", price_usd: 0.01 },
  v1_only: { reachable: true, status: 402, x402Version: 1, challenge_source: "body", price_usd: 0.01 },
  body_only: { reachable: true, status: 402, x402Version: 2, challenge_source: "body", price_usd: 0.01 },
  decimal_amount: { reachable: true, status: 402, x402Version: 2, challenge_source: "both", price_usd: null },
  missing_pay_to: { reachable: true, status: 402, x402Version: 2, challenge_source: "both", price_usd: 0.01 },
  free_200: { reachable: true, status: 200, x402Version: null, challenge_source: null, price_usd: null },
  expensive: { reachable: true, status: 402, x402Version: 2, challenge_source: "both", price_usd: 25 },
  slow: { reachable: false, status: null, x402Version: null, challenge_source: null, price_usd: null },
  dead: { reachable: false, status: null, x402Version: null, challenge_source: null, price_usd: null },
};

/** Score, verdict and penalties of each kind when its payTo has received no USDC (reputation measured). */
export const EXPECTED_TRUST: Readonly<Record<SellerKind, { score: number; verdict: Verdict; penalties: PenaltyId[] }>> = {
  conforming_v2: { score: 85, verdict: "pay_with_caution", penalties: ["no_usdc_received"] },
  v1_only: {
    score: 71,
    verdict: "pay_with_caution",
    penalties: ["not_v2", "no_bazaar", "no_usdc_received", "no_well_known", "no_openapi"],
  },
  body_only: { score: 25, verdict: "avoid", penalties: ["not_payable", "no_header", "no_usdc_received"] },
  decimal_amount: { score: 20, verdict: "avoid", penalties: ["not_payable", "bad_amount", "no_usdc_received"] },
  missing_pay_to: { score: 10, verdict: "avoid", penalties: ["not_payable", "bad_accepts", "no_pay_to", "reputation_not_measured"] },
  free_200: { score: 34, verdict: "avoid", penalties: ["not_402", "no_well_known", "no_openapi"] },
  expensive: { score: 10, verdict: "avoid", penalties: ["refused_by_spend_controls", "no_usdc_received", "price_very_high"] },
  slow: { score: 0, verdict: "avoid", penalties: ["unreachable"] },
  dead: { score: 0, verdict: "avoid", penalties: ["unreachable"] },
};

/** A fresh address that has never received anything on the shared devnet. */
export function freshAddress(): `0x${string}` {
  return privateKeyToAccount(generatePrivateKey()).address;
}

/** Send USDC on the shared devnet from buyers (by index) to `payTo`, one transfer each, waiting for every receipt. */
export async function payUsdc(payTo: `0x${string}`, transfers: readonly { buyer: number; usdc: string }[]): Promise<void> {
  const d = devnet();
  for (const { buyer, usdc } of transfers) {
    const wallet = createWalletClient({ account: buyerAccount(buyer), chain: base.chainAt([d.rpcUrl]), transport: http(d.rpcUrl) });
    const hash = await wallet.writeContract({
      address: d.usdc,
      abi: erc20Abi,
      functionName: "transfer",
      args: [payTo, parseUnits(usdc, 6)],
    });
    await chainClient().waitForTransactionReceipt({ hash });
  }
}
