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
import { type DevnetInfo, startDevnet } from "../src/devnet/devnet.ts";

declare module "vitest" {
  export interface ProvidedContext {
    devnet: DevnetInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await ensureBuild();
  const dataDir = mkdtempSync(path.join(tmpdir(), "x402-test-devnet-"));
  const devnet = await startDevnet({ dataDir, port: 0, persist: false });
  const { stop, ...info } = devnet;
  project.provide("devnet", info);
  return async () => {
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
