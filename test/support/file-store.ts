/** The embedded stores of the tests: each a SQLite file in a folder of its own, removed when it closes. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openStore, type Store } from "../../src/store/store.ts";

/** A new, migrated embedded store in a SQLite file of its own (as `npm start` opens it); its folder goes when it closes. */
export async function freshSqliteStore(): Promise<Store> {
  const dir = mkdtempSync(path.join(tmpdir(), "x402-test-store-"));
  const store = await openStore({ kind: "sqlite", file: path.join(dir, "store.sqlite") });
  const close = store.close;
  return Object.assign(store, {
    async close() {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

let fileStore: Promise<Store> | undefined;

/** This test file's store: an embedded SQLite store, shared by the file's services (closed after the file, test/support/after-file.ts). */
export function testStore(): Promise<Store> {
  fileStore ??= freshSqliteStore();
  return fileStore;
}

/** Close this test file's store, if it opened one, and remove its folder. */
export async function closeTestStore(): Promise<void> {
  const store = fileStore;
  fileStore = undefined;
  await (await store)?.close();
}
