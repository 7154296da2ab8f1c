import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startAnvil } from "../src/local/devnet/anvil.ts";

// Anvil writes older blocks' states to a cache folder past a few hundred blocks and never removes
// it; by default a new folder in ~/.foundry/anvil/tmp at every start (77 GB had piled up on a
// developer's machine). Each node's cache must be ours, and gone once the node stops.
const PREFIX = `x402-anvil-cache-`;
const anvilDefaultCache = join(homedir(), ".foundry", "anvil", "tmp");
const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
const made: string[] = [];

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe("anvil's state cache", () => {
  it("is a folder of ours that anvil fills past a few hundred blocks, and is removed when the node stops", async () => {
    const before = new Set(list(tmpdir()));
    const defaultBefore = new Set(list(anvilDefaultCache));
    const anvil = await startAnvil({ port: 0 });
    const ours = list(tmpdir()).filter((name) => name.startsWith(`${PREFIX}${process.pid}-`) && !before.has(name));
    expect(ours).toHaveLength(1);
    const dir = join(tmpdir(), ours[0] as string);
    await fetch(anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_mine", params: ["0x2bc"] }), // 700 blocks
    });
    const files = (path: string): number =>
      readdirSync(path, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? files(join(path, e.name)) : 1), 0);
    expect(files(dir)).toBeGreaterThan(0);
    expect(list(anvilDefaultCache).filter((name) => !defaultBefore.has(name))).toEqual([]);
    await anvil.stop();
    expect(existsSync(dir)).toBe(false);
  });

  it("left behind by a process that is gone is removed at the next start; a live process's is kept", async () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid as number;
    const orphan = join(tmpdir(), `${PREFIX}${dead}-orphan`);
    const live = join(tmpdir(), `${PREFIX}${process.pid}-live`);
    for (const dir of [orphan, live]) {
      made.push(dir);
      mkdirSync(join(dir, "anvil-state-x"), { recursive: true });
      writeFileSync(join(dir, "anvil-state-x", "1"), "state");
    }
    const anvil = await startAnvil({ port: 0 });
    await anvil.stop();
    expect([existsSync(orphan), existsSync(live)]).toEqual([false, true]);
  });
});
