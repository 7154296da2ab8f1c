/**
 * Solana in the network registry: the second entry, of a second family, with its x402 scheme
 * registered for Solana mainnet alone in each role, and listed among the known networks once.
 */
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import { x402ResourceServer } from "@x402/core/server";
import { toClientSvmSigner, toFacilitatorSvmSigner } from "@x402/svm";
import { describe, expect, it } from "vitest";
import { NETWORKS, networkById, svmNetwork } from "../src/networks/index.ts";
import { KNOWN_NETWORKS } from "../src/networks/known.ts";
import { solana } from "../src/networks/solana.ts";
import { localKey } from "../src/solana/keys.ts";

const MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

describe("Solana in the network registry", () => {
  it("is the second entry: Solana mainnet, family svm, v1 name solana, USDC at the canonical mint", () => {
    expect(NETWORKS[1]).toBe(solana);
    expect(networkById(MAINNET)).toBe(solana);
    expect(svmNetwork(MAINNET)).toBe(solana);
    expect(() => svmNetwork(NETWORKS[0]?.id as string)).toThrow("no Solana network eip155:");
    expect({ family: solana.family, id: solana.id, v1Name: solana.v1Name, usdc: solana.usdc }).toEqual({
      family: "svm",
      id: MAINNET,
      v1Name: "solana",
      usdc: { symbol: "USDC", address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", decimals: 6 },
    });
  });

  it("registers x402's exact scheme for Solana mainnet alone, as seller, facilitator and buyer", async () => {
    const server = solana.schemes.server(new x402ResourceServer());
    expect(server.hasRegisteredScheme(MAINNET, "exact")).toBe(true);
    expect(server.hasRegisteredScheme(DEVNET, "exact")).toBe(false);
    const feePayer = await localKey("registry-test-fee-payer");
    const facilitator = solana.schemes.facilitator(new x402Facilitator(), toFacilitatorSvmSigner(feePayer.signer));
    const v2 = facilitator.getSupported().kinds.filter((k) => k.x402Version === 2);
    expect(v2.map((k) => `${k.scheme} ${k.network} ${(k.extra as { feePayer: string }).feePayer}`)).toEqual([
      `exact ${MAINNET} ${feePayer.address}`,
    ]);
    const client = solana.schemes.client(new x402Client(), toClientSvmSigner(feePayer.signer));
    const challenge = (network: string) =>
      ({
        x402Version: 2,
        resource: { url: "http://127.0.0.1/v1/x", description: "x", mimeType: "application/json" },
        accepts: [
          { scheme: "exact", network, asset: solana.usdc.address, amount: "1", payTo: feePayer.address, maxTimeoutSeconds: 60, extra: {} },
        ],
      }) as never;
    // The client scheme is Solana mainnet's alone: another network's challenge finds no scheme.
    await expect(client.createPaymentPayload(challenge(DEVNET))).rejects.toThrow(/No network\/scheme registered|not supported|No scheme/i);
  });

  it("is listed among the known networks from its entry, once", () => {
    expect(KNOWN_NETWORKS.filter((n) => n.id === MAINNET)).toEqual([{ id: MAINNET, v1Names: ["solana"], usdc: solana.usdc.address }]);
  });
});
