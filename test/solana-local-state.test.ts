/**
 * Local mode's Solana kept on disk: a state seeded by this code's scenario is reopened as it was
 * (payments and all), and a state seeded by another version of the scenario (older files carry
 * none) is seeded afresh, so the chain holds every mint the scenario describes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Address } from "@solana/kit";
import { afterAll, describe, expect, it } from "vitest";
import { startLocalSolana } from "../src/local/solana/devnet.ts";
import { SOLANA_SCENARIO_VERSION } from "../src/local/solana/scenario.ts";

const dir = mkdtempSync(path.join(tmpdir(), "x402-solana-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// An address no seed touches: its lamports tell this state from a fresh one.
const MARKER = "Marker1111111111111111111111111111111111111" as Address;

describe("the local Solana's saved state", () => {
  it("is reopened when this scenario seeded it, and seeded afresh when another version (or none) did", async () => {
    const first = await startLocalSolana({ dataDir: dir });
    expect(first.seeded).toBe(true);
    first.chain.airdrop(MARKER, 7_000_000n);
    await first.stop();

    const again = await startLocalSolana({ dataDir: dir });
    expect(again.seeded).toBe(false);
    expect(again.chain.svm.getBalance(MARKER)).toBe(7_000_000n);
    await again.stop();

    // A state saved before the scenario's version was kept: its meta names none, and it lacks the newer mints.
    const metaFile = path.join(dir, "solana-state.json");
    const meta = JSON.parse(readFileSync(metaFile, "utf8")) as Record<string, unknown>;
    delete meta.scenario;
    writeFileSync(metaFile, JSON.stringify(meta));

    const reseeded = await startLocalSolana({ dataDir: dir });
    try {
      expect(reseeded.seeded).toBe(true);
      expect(reseeded.chain.svm.getBalance(MARKER)).toBeNull();
      for (const symbol of ["FEEDROP", "PAUSE"]) {
        const mint = reseeded.scenario.mints.find((m) => m.symbol === symbol)?.mint as Address;
        expect(reseeded.chain.svm.getAccount(mint).exists).toBe(true);
      }
    } finally {
      await reseeded.stop();
    }
    expect((JSON.parse(readFileSync(metaFile, "utf8")) as Record<string, unknown>).scenario).toBe(SOLANA_SCENARIO_VERSION);
  });
});
