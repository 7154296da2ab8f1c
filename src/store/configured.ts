/**
 * The store the configuration names (PostgreSQL with DATABASE_URL, else the embedded SQLite
 * file in DATA_DIR), and the rule that only one service process serves from the embedded file
 * at a time: its in-flight payment claims and rate limits live in that process's memory, so a
 * second service on the same file could run one payment twice. The service records its pid
 * next to the file and a second one refuses. Tools (`npm run ledger`, `npm run crawl`) may
 * open the file while the service runs: SQLite's WAL lets readers and one writer share it, and
 * a writer waits for the other's lock (busy_timeout) instead of failing or corrupting it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config.ts";
import { processAlive } from "../process-alive.ts";
import { openStore, type Store, type StoreLocation } from "./store.ts";

/** The embedded database's file name in the data directory. */
export const SQLITE_FILE = "store.sqlite";

/** Where the configured store lives. */
export function storeLocationOf(config: Pick<Config, "databaseUrl" | "dataDir">): StoreLocation {
  return config.databaseUrl
    ? { kind: "postgres", url: config.databaseUrl }
    : { kind: "sqlite", file: path.join(config.dataDir, SQLITE_FILE) };
}

/** The file naming the service process that serves from the embedded database `file`. */
const ownerFileOf = (file: string) => `${file}.owner`;

/** The pid of a live service process (not this one) serving from the embedded database `file`, if any. */
export function embeddedOwner(file: string): number | undefined {
  const owner = ownerFileOf(file);
  if (!existsSync(owner)) return undefined;
  const pid = Number(readFileSync(owner, "utf8").trim());
  if (!Number.isInteger(pid) || pid === process.pid) return undefined;
  return processAlive(pid) ? pid : undefined;
}

/** Record this process as the service serving from the embedded database `file`; refuses if another live one does. */
export function claimEmbedded(file: string): void {
  const owner = embeddedOwner(file);
  if (owner !== undefined) {
    throw new Error(
      `The embedded database ${file} is served by process ${owner}; stop it first, or set DATABASE_URL to share a PostgreSQL server between instances.`,
    );
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(ownerFileOf(file), String(process.pid));
}

/** Forget this process's hold on the embedded database `file`. */
export function releaseEmbedded(file: string): void {
  rmSync(ownerFileOf(file), { force: true });
}

/**
 * Open the store `config` names for the service, claiming the embedded database file first
 * (released again when opening fails); `npm start` begins this while the local chain starts.
 */
export async function openServiceStore(config: Pick<Config, "databaseUrl" | "dataDir">): Promise<Store> {
  const location = storeLocationOf(config);
  if (location.kind !== "sqlite" || location.file === undefined) return openStore(location);
  const file = location.file;
  claimEmbedded(file);
  return openStore(location).catch((error: unknown) => {
    releaseEmbedded(file);
    throw error;
  });
}
