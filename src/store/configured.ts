/**
 * The store the configuration names (PostgreSQL with DATABASE_URL, else the embedded PGlite
 * database in DATA_DIR), and the rule that only one process opens the embedded database at a
 * time: the service records its pid there, and tools refuse while it runs.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config.ts";
import { openStore, type Store, type StoreLocation } from "./store.ts";

/** The file naming the process that has the embedded database open. */
const OWNER_FILE = "owner.pid";

/** Where the configured store lives. */
export function storeLocationOf(config: Pick<Config, "databaseUrl" | "dataDir">): StoreLocation {
  return config.databaseUrl ? { kind: "postgres", url: config.databaseUrl } : { kind: "pglite", dir: path.join(config.dataDir, "pglite") };
}

/** The pid of a live process (not this one) holding the embedded database in `dir`, if any. */
export function pgliteOwner(dir: string): number | undefined {
  const file = path.join(dir, OWNER_FILE);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").trim());
  if (!Number.isInteger(pid) || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Record this process as the one holding the embedded database in `dir`; refuses if another live one does. */
export function claimPgliteDir(dir: string): void {
  const owner = pgliteOwner(dir);
  if (owner !== undefined) {
    throw new Error(
      `The embedded database in ${dir} is in use by process ${owner}; stop it first, or set DATABASE_URL to share a PostgreSQL server.`,
    );
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, OWNER_FILE), String(process.pid));
}

/** Open the store `config` names for the service, claiming the embedded database's directory first. */
export async function openServiceStore(config: Pick<Config, "databaseUrl" | "dataDir">): Promise<Store> {
  const location = storeLocationOf(config);
  if (location.kind === "pglite") claimPgliteDir(location.dir as string);
  return openStore(location);
}

/** Forget this process's hold on the embedded database in `dir`. */
export function releasePgliteDir(dir: string): void {
  rmSync(path.join(dir, OWNER_FILE), { force: true });
}

/**
 * Open the configured store from a command-line tool. The embedded database serves one process,
 * so while the service holds it the tool refuses, saying `whileServiceRuns` (what to do instead).
 */
export async function openStoreForTool(config: Pick<Config, "databaseUrl" | "dataDir">, whileServiceRuns: string): Promise<Store> {
  const location = storeLocationOf(config);
  if (location.kind === "pglite") {
    const owner = pgliteOwner(location.dir as string);
    if (owner !== undefined) {
      throw new Error(
        `The service (process ${owner}) has the embedded database in ${location.dir} open, and it serves one process at a time. ${whileServiceRuns}`,
      );
    }
  }
  return openStore(location);
}
