/**
 * The network registry (src/networks/): Base's entry holds Base's real id, chain id and USDC
 * (checked against @x402/evm's own table of default assets), its scheme registrations cover
 * Base alone, and no other file of the service names Base's chain id or USDC address.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import { x402ResourceServer } from "@x402/core/server";
import { getDefaultAsset, toFacilitatorEvmSigner } from "@x402/evm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { base } from "../src/networks/base.ts";
import { DEFAULT_NETWORK, evmNetwork, NETWORKS, networkById } from "../src/networks/index.ts";
import { KNOWN_NETWORKS } from "../src/networks/known.ts";

const root = path.resolve(import.meta.dirname, "..");
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

describe("the network registry", () => {
  it("holds Base mainnet with its CAIP-2 id, chain id, v1 name and USDC", () => {
    expect(NETWORKS.map((n) => n.id)).toEqual(["eip155:8453", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"]);
    expect(DEFAULT_NETWORK).toBe(base);
    expect({ family: base.family, id: base.id, chainId: base.chainId, name: base.name, v1Name: base.v1Name }).toEqual({
      family: "evm",
      id: "eip155:8453",
      chainId: 8453,
      name: "Base",
      v1Name: "base",
    });
    expect(base.usdc).toEqual({ symbol: "USDC", address: BASE_USDC, decimals: 6, eip712: { name: "USD Coin", version: "2" } });
    expect(base.chain.id).toBe(8453);
  });

  it("quotes the USDC and EIP-712 domain @x402/evm itself knows for Base", () => {
    const library = getDefaultAsset(base.id);
    expect({ address: base.usdc.address, decimals: base.usdc.decimals, ...base.usdc.eip712 }).toEqual({
      address: library.asset,
      decimals: library.decimals,
      name: library.name,
      version: library.version,
    });
  });

  it("finds entries by id and refuses an id it does not hold", () => {
    expect(networkById("eip155:8453")).toBe(base);
    expect(networkById("eip155:1")).toBeUndefined();
    expect(evmNetwork("eip155:8453")).toBe(base);
    expect(() => evmNetwork("eip155:1")).toThrow("no EVM network eip155:1 in the registry (src/networks/)");
  });

  it("points the chain at the given RPC URLs, without Multicall3's creation block", () => {
    const chain = base.chainAt(["http://127.0.0.1:1/", "http://127.0.0.1:2/"]);
    expect(chain.id).toBe(8453);
    expect(chain.rpcUrls.default.http).toEqual(["http://127.0.0.1:1/", "http://127.0.0.1:2/"]);
    expect(chain.contracts?.multicall3).toEqual({ address: "0xca11bde05977b3631167028862be2a173976ca11" });
    expect(chain.formatters).toBe(base.chain.formatters);
  });

  it("registers x402's exact scheme for Base alone, in the seller's role", () => {
    const server = base.schemes.server(new x402ResourceServer());
    expect(server.hasRegisteredScheme("eip155:8453", "exact")).toBe(true);
    expect(server.hasRegisteredScheme("eip155:1", "exact")).toBe(false);
  });

  it("registers x402's exact scheme for Base alone, in the facilitator's role (x402 v2)", () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const signer = toFacilitatorEvmSigner({ ...account, readContract: async () => 0n } as never);
    const supported = base.schemes.facilitator(new x402Facilitator(), signer).getSupported();
    // x402 v2 kinds: Base only (the library's helper adds its v1 network names beside them).
    const v2 = supported.kinds.filter((k) => k.x402Version === 2);
    expect(v2.map((k) => `${k.scheme} ${k.network}`)).toEqual(["exact eip155:8453"]);
  });

  it("signs Base payments in the buyer's role and refuses another chain's", async () => {
    const client = base.schemes.client(new x402Client(), privateKeyToAccount(generatePrivateKey()));
    const challenge = (network: string) => ({
      x402Version: 2,
      resource: { url: "http://127.0.0.1/api/x", description: "x", mimeType: "application/json" },
      accepts: [
        {
          scheme: "exact",
          network,
          asset: BASE_USDC,
          amount: "10000",
          payTo: "0x000000000000000000000000000000000000dEaD",
          maxTimeoutSeconds: 60,
          extra: { name: "USD Coin", version: "2" },
        },
      ],
    });
    const payload = await client.createPaymentPayload(challenge("eip155:8453") as never);
    expect(payload.accepted.network).toBe("eip155:8453");
    await expect(client.createPaymentPayload(challenge("eip155:1") as never)).rejects.toThrow();
  });

  it("lists Base among the known networks from its entry, once", () => {
    const entries = KNOWN_NETWORKS.filter((n) => n.id === "eip155:8453");
    expect(entries).toEqual([{ id: "eip155:8453", v1Names: ["base"], usdc: BASE_USDC, usdcDomain: { name: "USD Coin", version: "2" } }]);
    expect(new Set(KNOWN_NETWORKS.map((n) => n.id)).size).toBe(KNOWN_NETWORKS.length);
  });

  it("is what the configuration settles on, and NETWORK must name one of its EVM entries", () => {
    const local = loadConfig({});
    expect({ network: local.network, chainId: local.chainId, usdc: local.usdc }).toEqual({
      network: "eip155:8453",
      chainId: 8453,
      usdc: { address: BASE_USDC, name: "USD Coin", version: "2", decimals: 6 },
    });
    expect(() => loadConfig({ NETWORK: "eip155:1" })).toThrow('NETWORK must be one of eip155:8453, got "eip155:1"');
  });
});

describe("nothing outside the registry names Base", () => {
  it("finds Base's chain id and USDC address only in src/networks/, the registry's tests, content/ and recorded upstream fixtures", () => {
    // git grep reads tracked and new files of the worktree, as `grep -rn` would, without dist/ or data/.
    const hits = (pattern: string): string[] => {
      try {
        return execFileSync("git", ["grep", "-l", "-i", "--untracked", "-e", pattern, "--", "."], { cwd: root, encoding: "utf8" })
          .split("\n")
          .filter(Boolean);
      } catch {
        return []; // git grep exits 1 when nothing matches
      }
    };
    const allowed = (file: string) =>
      file.startsWith("src/networks/") ||
      file === "test/networks.test.ts" ||
      file === "test/networks-base-chain.test.ts" ||
      file.startsWith("content/") ||
      // Third-party API answers recorded as they came (DexScreener, DefiLlama): data, not code.
      file.startsWith("fixtures/upstreams/");
    // It can find one: this file names both.
    expect(hits("8453")).toContain("test/networks.test.ts");
    expect(hits(BASE_USDC)).toContain("test/networks.test.ts");
    expect(hits("8453").filter((f) => !allowed(f))).toEqual([]);
    expect(hits(BASE_USDC).filter((f) => !allowed(f))).toEqual([]);
  });
});
