/** Configuration: local mode by default; production settings are checked all at once, one line per problem, secrets never echoed. */
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { base as baseNetwork } from "../src/networks/base.ts";

/** A CDP Ed25519 key secret as CDP issues it: the 32-byte seed and the 32-byte public key, in base64. */
function ed25519Secret(): string {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
  return Buffer.concat([seed, publicKey.export({ format: "der", type: "spki" }).subarray(-32)]).toString("base64");
}

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("local mode", () => {
  it("is the default with no settings", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      mode: "local",
      network: baseNetwork.id,
      chainId: baseNetwork.chainId,
      host: "127.0.0.1",
      port: 4021,
      facilitator: { kind: "devnet" },
      usdc: { address: baseNetwork.usdc.address, name: "USD Coin", version: "2", decimals: 6 },
      maxTimeoutSeconds: 300,
    });
  });

  it("refuses to bind beyond loopback", () => {
    expect(problems({ HOST: "0.0.0.0" })).toEqual([
      'local mode binds to 127.0.0.1 only (it runs a development chain with public keys); HOST="0.0.0.0" needs production settings',
    ]);
  });

  it("refuses chat settings it cannot use, among its own problems", () => {
    expect(problems({ CHAT_LLM_MODEL: "m" })).toEqual([
      "CHAT_LLM_MODEL and CHAT_LLM_API_KEY need CHAT_LLM_URL (the chat-completions API's base URL)",
    ]);
    expect(loadConfig({ CHAT_LLM_URL: "http://127.0.0.1:9/v1", CHAT_LLM_MODEL: "m" }).chatLlm).toEqual({
      url: "http://127.0.0.1:9/v1",
      model: "m",
      apiKey: undefined,
      timeoutMs: 15_000,
      maxRounds: 4,
    });
  });
});

describe("production mode", () => {
  const key = `0x${"ab".repeat(32)}`;

  it("is chosen by any production setting and lists every missing one", () => {
    expect(problems({ PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" })).toEqual([
      "RPC_URL is required in production: one or more comma-separated Base RPC URLs (e.g. https://mainnet.base.org)",
      "a facilitator is required in production: FACILITATOR_URL (with CDP_API_KEY_ID/CDP_API_KEY_SECRET for Coinbase's) or FACILITATOR_PRIVATE_KEY to settle ourselves",
      "PUBLIC_URL is required in production: the public origin (e.g. https://api.example.com) that challenges and sign-ins name; an origin read from the Host header is the caller's to choose",
    ]);
  });

  it("accepts several RPC URLs and a self-hosted facilitator", () => {
    const config = loadConfig({
      RPC_URL: "https://mainnet.base.org, https://base.drpc.org/",
      PAY_TO: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
      FACILITATOR_PRIVATE_KEY: key,
      PUBLIC_URL: "https://api.example.com/",
    });
    expect(config).toMatchObject({
      mode: "production",
      host: "0.0.0.0",
      rpcUrls: ["https://mainnet.base.org", "https://base.drpc.org"],
      payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      facilitator: { kind: "self", privateKey: key },
      publicUrl: "https://api.example.com",
    });
  });

  it("needs CDP keys for the CDP facilitator", () => {
    const base = {
      RPC_URL: "https://mainnet.base.org",
      PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      PUBLIC_URL: "https://api.example.com",
    };
    expect(problems({ ...base, FACILITATOR_URL: "https://api.cdp.coinbase.com/platform/v2/x402" })).toEqual([
      "CDP_API_KEY_ID and CDP_API_KEY_SECRET are required when FACILITATOR_URL is the Coinbase CDP facilitator",
    ]);
    const secret = ed25519Secret();
    const config = loadConfig({
      ...base,
      FACILITATOR_URL: "https://api.cdp.coinbase.com/platform/v2/x402",
      CDP_API_KEY_ID: "id",
      CDP_API_KEY_SECRET: secret,
    });
    expect(config.facilitator).toEqual({
      kind: "remote",
      url: "https://api.cdp.coinbase.com/platform/v2/x402",
      cdp: { keyId: "id", keySecret: secret },
    });
    expect(loadConfig({ ...base, FACILITATOR_URL: "https://facilitator.payai.network" }).facilitator).toEqual({
      kind: "remote",
      url: "https://facilitator.payai.network",
      cdp: undefined,
    });
  });

  it("refuses a CDP key secret the CDP signer cannot sign with, as the signer itself judges it, without echoing it", async () => {
    const base = {
      RPC_URL: "https://mainnet.base.org",
      PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      PUBLIC_URL: "https://api.example.com",
      FACILITATOR_URL: "https://api.cdp.coinbase.com/platform/v2/x402",
      CDP_API_KEY_ID: "key-id",
    };
    const pem = (curve: string, type: "pkcs8" | "sec1") =>
      generateKeyPairSync("ec", { namedCurve: curve }).privateKey.export({ format: "pem", type }) as string;
    const secrets = {
      ed25519: ed25519Secret(),
      p256: pem("prime256v1", "pkcs8"),
      "p256 as SEC1": pem("prime256v1", "sec1"),
      p384: pem("secp384r1", "pkcs8"),
      "a word": "notavalidsecretXYZ",
    };
    const { createFacilitatorConfig } = await import("@coinbase/x402");
    const verdicts: Record<string, [string, string[]]> = {};
    for (const [name, secret] of Object.entries(secrets)) {
      const signs = await (createFacilitatorConfig("key-id", secret).createAuthHeaders as () => Promise<unknown>)().then(
        () => "signs",
        () => "refused",
      );
      verdicts[name] = [signs, problems({ ...base, CDP_API_KEY_SECRET: secret })];
    }
    const refused = [
      "CDP_API_KEY_SECRET must be a CDP API key secret: an EC P-256 private key in PEM (-----BEGIN PRIVATE KEY-----, with its line breaks) or an Ed25519 key in base64 (64 bytes); its value is not shown",
    ];
    expect(verdicts).toEqual({
      ed25519: ["signs", []],
      p256: ["signs", []],
      "p256 as SEC1": ["refused", refused],
      p384: ["refused", refused],
      "a word": ["refused", refused],
    });
  });

  it("reports each malformed value without echoing secrets", () => {
    const found = problems({
      NETWORK: "eip155:1",
      RPC_URL: "ftp://x",
      PAY_TO: "0x123",
      FACILITATOR_PRIVATE_KEY: "0xsecretvalue",
      PORT: "99999",
      PUBLIC_URL: "https://api.example.com",
    });
    expect(found).toEqual([
      `NETWORK must be one of ${baseNetwork.id}, got "eip155:1"`,
      'PORT must be a port number 0-65535, got "99999"',
      'RPC_URL must be an http(s) URL, got "ftp://x"',
      'PAY_TO must be an EVM address (0x + 40 hex digits), got "0x123"',
      "FACILITATOR_PRIVATE_KEY must be a 32-byte hex private key (64 hex digits); its value is not shown",
    ]);
    expect(found.join("\n")).not.toContain("secretvalue");
  });
});
