/**
 * Once per test run: build if the build is stale (the HTTP tests run the built Astro
 * handler, as `npm start` does), and start one devnet in a temporary folder that every test
 * file shares through `inject("devnet")`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { ensureBuild } from "../src/build-stamp.ts";
import { type DevnetInfo, startDevnet } from "../src/local/devnet/devnet.ts";
import { type ScenarioGroundTruth, seedScenario } from "../src/local/devnet/scenario.ts";
import { startUpstreamStubs, type UpstreamStubs } from "../src/local/stubs/upstream-stubs.ts";

declare module "vitest" {
  export interface ProvidedContext {
    devnet: DevnetInfo;
    /** A PostgreSQL server for the store tests, when one is available (TEST_DATABASE_URL). */
    databaseUrl: string | undefined;
    /** Ground truth of the analytics scenario seeded on the shared devnet (src/local/devnet/scenario.ts). */
    scenario: ScenarioGroundTruth;
    /** Base URLs of the market-data stub server every test service points at by default. */
    stubs: UpstreamStubs["urls"];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await ensureBuild();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-test-devnet-"));
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const { stop, ...info } = devnet;
  project.provide("devnet", info);
  // Seeded once, before any test file runs: the scenario uses its own wallets (never accounts 1-9).
  const scenario = await seedScenario({ rpcUrl: devnet.rpcUrl, minter: devnet.facilitator });
  if (!scenario) throw new Error("the test devnet was already seeded");
  project.provide("scenario", scenario);
  const stubs = await startUpstreamStubs();
  project.provide("stubs", stubs.urls);
  project.provide("databaseUrl", process.env.TEST_DATABASE_URL || undefined);
  return async () => {
    await stubs.close();
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
