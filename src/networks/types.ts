/**
 * What a network entry of the registry (src/networks/index.ts) holds. An entry is data plus
 * the few functions its chain family needs: its CAIP-2 id, its chain client, the asset the
 * service is paid in, its x402 scheme registrations for each role, and for an EVM network the
 * chain local mode runs in its place (local mode starts Solana's in-process chain itself).
 * Families differ in keys, signers, clients and local chains, so each family is its own member
 * of the `Network` union, told apart by `family`.
 */
import type { x402Client } from "@x402/core/client";
import type { x402Facilitator } from "@x402/core/facilitator";
import type { x402ResourceServer } from "@x402/core/server";
import type { ClientEvmSigner, toFacilitatorEvmSigner } from "@x402/evm";
import type { ClientSvmSigner, FacilitatorSvmSigner } from "@x402/svm";
import type { Address, Chain } from "viem";

/** A CAIP-2 chain id, `namespace:reference` (x402 v2 writes networks this way). */
export type CaipNetworkId = `${string}:${string}`;

/** The token a network's routes are priced and paid in (USDC on every network so far). */
export interface PaymentAsset {
  symbol: string;
  /** As x402's `asset` field carries it: the token contract (EVM) or the mint (Solana). */
  address: string;
  decimals: number;
}

/** An EVM payment token: EIP-3009 signatures are checked against its EIP-712 domain. */
export interface EvmPaymentAsset extends PaymentAsset {
  address: Address;
  /** The token contract's EIP-712 domain name and version (x402 quotes them in `extra`). */
  eip712: { name: string; version: string };
}

/**
 * The x402 scheme registrations of one network, one per role. Each registers the network's
 * schemes for this network only (never the family's wildcard), so two networks of one
 * family stay apart. Signers are the family's own.
 */
export interface SchemeRegistrations<ClientSigner, FacilitatorSigner> {
  /** The seller's side: builds and checks this network's payment requirements. */
  server(server: x402ResourceServer): x402ResourceServer;
  /** The facilitator's side: verifies and settles with `signer` paying the fees. */
  facilitator(facilitator: x402Facilitator, signer: FacilitatorSigner): x402Facilitator;
  /** The buyer's side: signs payments with `signer`. */
  client(client: x402Client, signer: ClientSigner): x402Client;
}

/** What every family's entry has. */
export interface NetworkCommon<Family extends string> {
  family: Family;
  /** CAIP-2 id, as x402 v2 challenges carry it. */
  id: CaipNetworkId;
  /** Display name, e.g. "Base". */
  name: string;
  /** The x402 v1 short name (`base`), which v1 sellers and directories still write. */
  v1Name: string;
  /** A public RPC URL, named in configuration messages (never used without being configured). */
  publicRpc: string;
}

/** An EVM (eip155) network. */
export interface EvmNetwork extends NetworkCommon<"evm"> {
  id: `eip155:${number}`;
  /** The numeric chain id (the reference of `id`); EIP-712 domains sign it. */
  chainId: number;
  /** viem's chain definition (formatters, serializers, well-known contracts). */
  chain: Chain;
  /** The chain client's chain: `chain` read through these RPC URLs. */
  chainAt(rpcUrls: string[]): Chain;
  usdc: EvmPaymentAsset;
  schemes: SchemeRegistrations<ClientEvmSigner, ReturnType<typeof toFacilitatorEvmSigner>>;
  /** The chain local mode runs instead of the network, seeded, with funded test keys. */
  local: {
    /** Start (or resume from its saved state) and seed it; loaded only when called. */
    start(options: import("../local/devnet/devnet.ts").DevnetOptions): Promise<import("../local/devnet/devnet.ts").Devnet>;
  };
}

/** A Solana (SVM) network. */
export interface SvmNetwork extends NetworkCommon<"svm"> {
  id: `solana:${string}`;
  /** USDC's mint. */
  usdc: PaymentAsset;
  /** Registrations reading the network's public RPC. */
  schemes: SchemeRegistrations<ClientSvmSigner, FacilitatorSvmSigner>;
  /** Registrations reading `rpcUrl`: challenges carry its recent blockhash, buyers read the mint there. */
  schemesAt(rpcUrl: string): SchemeRegistrations<ClientSvmSigner, FacilitatorSvmSigner>;
}

/** Any network of the registry; code that needs one family narrows on `family`. */
export type Network = EvmNetwork | SvmNetwork;
