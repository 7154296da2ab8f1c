/**
 * The configured store as the command-line tools (`npm run ledger`, `npm run crawl`) open it:
 * also while the service runs (SQLite's WAL lets them share the embedded file), without
 * claiming the file as the service does (src/store/configured.ts).
 */
import type { Config } from "../src/config.ts";
import { storeLocationOf } from "../src/store/configured.ts";
import { openStore, redact, type Store } from "../src/store/store.ts";

/** Open the configured store from a command-line tool (also while the service runs). */
export async function openStoreForTool(config: Pick<Config, "databaseUrl" | "dataDir">): Promise<Store> {
  return openStore(storeLocationOf(config));
}

/** Where the configured store is, for a tool's messages (the URL without its password, or the file). */
export function storeDescription(config: Pick<Config, "databaseUrl" | "dataDir">): string {
  const location = storeLocationOf(config);
  return location.kind === "postgres" ? redact(location.url) : String(location.file);
}
