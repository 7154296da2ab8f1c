/**
 * Ownership proofs: `npm run ownership-proof` signs the origin with the payTo key on the owner's
 * machine and prints the OWNERSHIP_PROOFS line; the configuration accepts only signatures, and
 * only with the PUBLIC_URL they sign. Signers are recovered with viem, as x402scan does.
 */
import { spawnSync } from "node:child_process";
import { recoverMessageAddress } from "viem";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";

// Accounts 0 and 1 of the public test mnemonic: the devnet's facilitator and payTo.
const ACCOUNT_0_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ACCOUNT_1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ACCOUNT_1_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

function ownershipProof(env: Record<string, string>, args: string[] = [], input = "") {
  const { PUBLIC_URL: _u, PAY_TO: _p, PAY_TO_PRIVATE_KEY: _k, PORT: _port, ...rest } = process.env;
  return spawnSync(process.execPath, ["scripts/ownership-proof.ts", ...args], { encoding: "utf8", input, env: { ...rest, ...env } });
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

const production = {
  RPC_URL: "https://mainnet.base.org",
  PAY_TO: ACCOUNT_1,
  FACILITATOR_URL: "https://facilitator.payai.network",
};

describe("npm run ownership-proof", () => {
  it("signs PUBLIC_URL's origin with the key read from stdin and prints the OWNERSHIP_PROOFS line", async () => {
    const run = ownershipProof({ PUBLIC_URL: "https://api.example.com/some/path", PAY_TO: ACCOUNT_1 }, [], `${ACCOUNT_1_KEY}\n`);
    expect(run.stderr).toBe(`Signed https://api.example.com as ${ACCOUNT_1}. Add this line to the service's environment:\n`);
    expect(run.status).toBe(0);
    const match = /^OWNERSHIP_PROOFS=(0x[0-9a-f]{130})\n$/.exec(run.stdout);
    expect(match).not.toBeNull();
    expect(await recoverMessageAddress({ message: "https://api.example.com", signature: match?.[1] as `0x${string}` })).toBe(ACCOUNT_1);
    expect(
      loadConfig({ ...production, PUBLIC_URL: "https://api.example.com", OWNERSHIP_PROOFS: match?.[1] as string }).ownershipProofs,
    ).toEqual([match?.[1]]);
  });

  it("takes --origin and PAY_TO_PRIVATE_KEY too", async () => {
    const run = ownershipProof({ PAY_TO_PRIVATE_KEY: ACCOUNT_1_KEY }, ["--origin", "https://data.example.org:8443"]);
    expect(run.status).toBe(0);
    const proof = run.stdout.slice("OWNERSHIP_PROOFS=".length).trim() as `0x${string}`;
    expect(await recoverMessageAddress({ message: "https://data.example.org:8443", signature: proof })).toBe(ACCOUNT_1);
  });

  it("refuses a key that is not PAY_TO's and prints nothing to put in the environment", () => {
    const run = ownershipProof({ PUBLIC_URL: "https://api.example.com", PAY_TO: ACCOUNT_1, PAY_TO_PRIVATE_KEY: ACCOUNT_0_KEY });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      `ownership-proof: this key belongs to 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266, not PAY_TO ${ACCOUNT_1}: sign with the key of the address that receives payments\n`,
    );
  });

  it("in local mode signs http://127.0.0.1:4021 with the devnet payTo key, unasked", async () => {
    const run = ownershipProof({});
    expect(run.status).toBe(0);
    expect(run.stderr).toContain("Local mode: signed with the devnet payTo key");
    const proof = run.stdout.slice("OWNERSHIP_PROOFS=".length).trim() as `0x${string}`;
    expect(await recoverMessageAddress({ message: "http://127.0.0.1:4021", signature: proof })).toBe(ACCOUNT_1);
  });
});

describe("OWNERSHIP_PROOFS", () => {
  const proof = `0x${"ab".repeat(65)}`;

  it("is a list of signatures, comma- or space-separated; none by default", () => {
    expect(loadConfig({}).ownershipProofs).toEqual([]);
    expect(loadConfig({ OWNERSHIP_PROOFS: `${proof}, ${proof.replace("ab", "cd")}` }).ownershipProofs).toEqual([
      proof,
      proof.replace("ab", "cd"),
    ]);
  });

  it("refuses anything but a signature, and proofs without the PUBLIC_URL they sign in production", () => {
    expect(problems({ OWNERSHIP_PROOFS: "0x1234" })).toEqual([
      'OWNERSHIP_PROOFS must be signatures (0x + 130 hex digits) printed by `npm run ownership-proof`, got "0x1234"',
    ]);
    expect(problems({ ...production, OWNERSHIP_PROOFS: proof })).toEqual([
      "PUBLIC_URL is required in production: the public origin (e.g. https://api.example.com) that challenges and sign-ins name; an origin read from the Host header is the caller's to choose",
    ]);
  });
});
