/**
 * Whether a process is alive, as the embedded database's owner check and anvil's state-cache
 * cleanup ask it: a process of another user (signal 0 refused with EPERM) is alive, a pid with
 * no process (ESRCH) is not. process.kill is stubbed to give each answer, since a live process of
 * another user cannot be had on demand.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { processAlive } from "../src/process-alive.ts";
import { embeddedOwner } from "../src/store/configured.ts";

/** process.kill failing as the kernel does for `code`. */
function killFails(code: "EPERM" | "ESRCH") {
  return vi.spyOn(process, "kill").mockImplementation(() => {
    throw Object.assign(new Error(`kill ${code}`), { code, errno: code === "EPERM" ? -1 : -3, syscall: "kill" });
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("processAlive", () => {
  it("takes a process it may not signal (EPERM) for alive, and a missing one (ESRCH) for dead", () => {
    const kill = killFails("EPERM");
    expect(processAlive(424242)).toBe(true);
    expect(kill).toHaveBeenCalledWith(424242, 0);
    kill.mockRestore();
    killFails("ESRCH");
    expect(processAlive(424242)).toBe(false);
  });

  it("takes a process it may signal for alive", () => {
    expect(processAlive(process.pid)).toBe(true);
  });

  it("never takes a process group (pid 0 or below) for a process", () => {
    expect([processAlive(0), processAlive(-1)]).toEqual([false, false]);
  });
});

describe("the embedded database's owner", () => {
  it("is another user's live process (EPERM), and no one when the recorded pid has no process (ESRCH)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "x402-test-owner-"));
    const file = path.join(dir, "store.sqlite");
    try {
      writeFileSync(`${file}.owner`, "424242");
      killFails("EPERM");
      expect(embeddedOwner(file)).toBe(424242);
      vi.restoreAllMocks();
      killFails("ESRCH");
      expect(embeddedOwner(file)).toBeUndefined();
      vi.restoreAllMocks();
      // An empty owner file reads as pid 0: signal 0 to pid 0 reaches our own process group.
      writeFileSync(`${file}.owner`, "");
      expect(embeddedOwner(file)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
