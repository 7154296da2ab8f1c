/**
 * The Solana site's settings: local mode's ports, production's host, RPC, payTo and facilitator,
 * and each missing or inconsistent setting refused at start with its name.
 */
import { describe, expect, it } from "vitest";
import { type ConfigError, loadConfig } from "../src/config.ts";
import { startService } from "../src/server/service.ts";
import { localKey } from "../src/solana/keys.ts";

const base = {
  PUBLIC_URL: "https://api.example.com",
  RPC_URL: "https://mainnet.base.org",
  PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  FACILITATOR_URL: "https://facilitator.payai.network",
};
const PAY_TO = "BfjyfwsbuhmXi1cRCev6BQuQeE8gjXSwehPo9G95QGWZ";
const solana = {
  SOLANA_HOST: "sol.example.com",
  SOLANA_RPC_URL: "https://rpc.example.com",
  SOLANA_PAY_TO: PAY_TO,
  SOLANA_FACILITATOR_URL: "https://facilitator.example.com",
};
const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
};

describe("the Solana site's configuration", () => {
  it("listens on 4023 with its RPC on 8899 in local mode, on free ports when PORT is 0", () => {
    expect(loadConfig({}).solana).toMatchObject({ enabled: true, port: 4023, rpcPort: 8899, facilitator: { kind: "devnet" } });
    expect(loadConfig({ PORT: "0" }).solana).toMatchObject({ port: 0, rpcPort: 0 });
    expect(loadConfig({ SOLANA_PORT: "5023", SOLANA_RPC_PORT: "9899" }).solana).toMatchObject({ port: 5023, rpcPort: 9899 });
  });

  it("is off in production without a host name, on with one, with its public URL and settings", () => {
    expect(loadConfig(base).solana.enabled).toBe(false);
    expect(loadConfig({ ...base, ...solana }).solana).toEqual({
      enabled: true,
      host: "sol.example.com",
      publicUrl: "https://sol.example.com",
      port: 4023,
      rpcPort: 8899,
      rpcUrls: ["https://rpc.example.com"],
      payTo: PAY_TO,
      facilitator: { kind: "remote", url: "https://facilitator.example.com" },
    });
  });

  it("refuses each missing or inconsistent setting, naming it", async () => {
    const { SOLANA_RPC_URL: _r, SOLANA_PAY_TO: _p, SOLANA_FACILITATOR_URL: _f, ...hostOnly } = solana;
    expect(problems({ ...base, ...hostOnly })).toEqual([
      "SOLANA_RPC_URL is required for the Solana site: a Solana mainnet RPC serving getAccountInfo, getLatestBlockhash, simulateTransaction, sendTransaction, getSignatureStatuses, getBalance, getTokenAccountsByOwner, getTokenLargestAccounts, getTokenAccountBalance, getSignaturesForAddress and getTransaction",
      "SOLANA_PAY_TO is required for the Solana site: the Solana wallet whose USDC account receives payments",
      "a Solana facilitator is required for the Solana site: SOLANA_FEE_PAYER_KEY (a funded fee payer, to settle ourselves) or SOLANA_FACILITATOR_URL",
    ]);
    const key = (await localKey("config-test")).secretKey;
    expect(problems({ ...base, ...solana, SOLANA_FEE_PAYER_KEY: key })).toEqual([
      "set either SOLANA_FACILITATOR_URL (a remote facilitator) or SOLANA_FEE_PAYER_KEY (settle ourselves), not both",
    ]);
    expect(problems({ ...base, ...solana, SOLANA_PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" })).toEqual([
      'SOLANA_PAY_TO must be a Solana address (base58 of 32 bytes), got "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"',
    ]);
    const { SOLANA_FACILITATOR_URL: _u, ...selfSettled } = solana;
    expect(problems({ ...base, ...selfSettled, SOLANA_FEE_PAYER_KEY: "abc" })).toEqual([
      "SOLANA_FEE_PAYER_KEY must be a 64-byte Solana secret key, in base58 or as a JSON array of 64 numbers; its value is not shown",
    ]);
    expect(problems({ ...base, SOLANA_RPC_URL: "https://rpc.example.com" })).toEqual([
      "SOLANA_RPC_URL set without SOLANA_HOST or SOLANA_PUBLIC_URL: the Solana site needs its own host name",
    ]);
    expect(problems({ ...base, ...solana, SECONDARY_HOST: "sol.example.com" })).toEqual([
      "SOLANA_HOST names the host of another site (PUBLIC_URL or SECONDARY_HOST); each site needs its own host name",
    ]);
    expect(problems({ ...base, ...solana, SOLANA_PORT: "4023" })).toEqual([
      "SOLANA_PORT is for local mode; in production the Solana site is chosen by SOLANA_HOST on PORT and reads SOLANA_RPC_URL",
    ]);
    expect(problems({ SOLANA_PAY_TO: PAY_TO })).toEqual([
      "SOLANA_PAY_TO is a production setting; local mode runs its own Solana chain (set the production variables to use it)",
    ]);
  });

  it("refuses at start a fee-payer key whose halves disagree, and one that is payTo", async () => {
    const a = await localKey("config-test-a");
    const b = await localKey("config-test-b");
    const { getBase58Decoder, getBase58Encoder } = await import("@solana/kit");
    const mismatched = new Uint8Array(64);
    mismatched.set(getBase58Encoder().encode(a.secretKey).slice(0, 32), 0);
    mismatched.set(getBase58Encoder().encode(b.secretKey).slice(32), 32);
    const { SOLANA_FACILITATOR_URL: _u, ...selfSettled } = solana;
    const start = (env: Record<string, string>) =>
      startService({
        config: loadConfig({ ...base, ...selfSettled, PORT: "0", LOG_LEVEL: "silent", ...env }),
        maintenance: false,
        statusFeed: false,
      });
    await expect(start({ SOLANA_FEE_PAYER_KEY: getBase58Decoder().decode(mismatched) })).rejects.toThrow(
      /SOLANA_FEE_PAYER_KEY is not a valid Solana key pair/,
    );
    await expect(start({ SOLANA_FEE_PAYER_KEY: a.secretKey, SOLANA_PAY_TO: a.address })).rejects.toThrow(
      /SOLANA_PAY_TO is the fee payer's address/,
    );
  });
});
