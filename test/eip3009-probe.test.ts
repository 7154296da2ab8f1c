/**
 * The EIP-3009 probe behind x402-check, x402-trust and the crawl remembers each token's answer
 * across requests: every paid call asks for the probe anew, and a token's interface never changes.
 */
import { createPublicClient, custom, type PublicClient } from "viem";
import { describe, expect, it } from "vitest";
import { eip3009Probe } from "../src/intel/eip3009-probe.ts";
import { base } from "../src/networks/base.ts";

const TOKEN = base.usdc.address;

describe("the EIP-3009 probe", () => {
  it("reads a token's authorizationState once, however many requests ask for the probe", async () => {
    const calls: string[] = [];
    const client = createPublicClient({
      transport: custom({
        request: async ({ method }: { method: string }) => {
          calls.push(method);
          if (method === "eth_chainId") return `0x${base.chainId.toString(16)}`;
          if (method === "eth_call") return `0x${"0".repeat(64)}`; // authorizationState: false (unused)
          throw new Error(`unexpected ${method}`);
        },
      }),
    }) as PublicClient;
    // Two requests, each asking for the probe as the functions do.
    expect(await eip3009Probe(client, base.id)(base.id, TOKEN)).toBe(true);
    expect(await eip3009Probe(client, base.id)(base.id, TOKEN.toLowerCase())).toBe(true);
    expect(calls.filter((m) => m === "eth_call")).toHaveLength(1);
    // Another network is not read.
    expect(await eip3009Probe(client, base.id)("eip155:1", TOKEN)).toBeNull();
    expect(calls.filter((m) => m === "eth_call")).toHaveLength(1);
  });
});
