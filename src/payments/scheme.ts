/**
 * What the payment gate needs from a network family: how a site's challenges quote the asset,
 * which x402 server scheme it registers, how a payment header is read into a payer and a
 * one-time identity (its "nonce"), and how the payer's own signature is checked. The gate takes
 * one per site from its configuration; the EVM one (EIP-3009 USDC) is the default.
 */
import type { x402ResourceServer } from "@x402/core/server";
import type { Config } from "../config.ts";
import { evmNetwork } from "../networks/index.ts";
import { type DecodedPayment, decodePayment, type PayloadProblem, signedByPayer, signedOnce } from "./payload.ts";

/** A site's payment scheme. */
export interface PaymentScheme {
  /** The CAIP-2 network its challenges name. */
  network: string;
  /** The asset its challenges quote (the USDC contract or mint). */
  asset: string;
  /** The `extra` of its quotes (EIP-712 domain fields on EVM; the server scheme adds the rest, e.g. feePayer). */
  assetExtra: Record<string, unknown>;
  /** Register the x402 server scheme for `network` on `server`. */
  register(server: x402ResourceServer): void;
  /** A payment header read for shape: payer, identity, payment-identifier id; or the field that is wrong. */
  decode(header: string): DecodedPayment | PayloadProblem;
  /** Whether the payment carries the payer's own signature (checked locally, once per decoded payment). */
  signedByPayer(decoded: DecodedPayment): Promise<boolean>;
  /** What its server scheme adds to `extra` at run time, at full length, counted when challenges are sized. */
  sizingExtra?: Record<string, unknown>;
  /** Whether its challenges declare Sign-In-With-X (EIP-4361, an EVM wallet's). */
  signIn: boolean;
  /**
   * How a verified payment whose ledger row was left open ended on chain, for a family whose
   * chain keeps no authorisation state to read (Solana): the upkeep records the row from it.
   */
  settlementOf?(open: OpenPayment, now?: Date): Promise<SettlementLookup>;
}

/** An open ledger row's payment, as a scheme's chain lookup needs it. */
export interface OpenPayment {
  /** The payment's one-time identity (the scheme's `nonce`). */
  nonce: string;
  /** When its row was opened (before verify): its transfer cannot have landed earlier. */
  openedAt: Date;
}

/** The transaction that settled the payment; or none, `final` when it can no longer land. */
export type SettlementLookup = { tx: string } | { tx: null; final: boolean };

/** The EVM exact scheme with the EIP-3009 USDC of `config` (the Base sites). */
export function usdcScheme(config: Pick<Config, "network" | "chainId" | "usdc">): PaymentScheme {
  const { name, version, address } = config.usdc;
  const domain = { name, version, chainId: config.chainId, verifyingContract: address };
  return {
    network: config.network,
    asset: address,
    // Some clients (thirdweb's) refuse to sign without the EIP-712 primary type; the facilitator reads only name and version.
    assetExtra: { name, version, primaryType: "TransferWithAuthorization" },
    register: (server) => evmNetwork(config.network).schemes.server(server),
    decode: decodePayment,
    signedByPayer: signedOnce((decoded) => signedByPayer(decoded, domain)),
    signIn: true,
  };
}
