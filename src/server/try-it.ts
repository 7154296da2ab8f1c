/**
 * The "Try it" command local mode's start banner prints. It is pasted into another terminal,
 * where `npm run buy` knows neither the port nor the data folder this service was started
 * with, so every one that differs from what `buy` assumes (scripts/buy.ts: BASE_URL
 * http://127.0.0.1:4021, DATA_DIR data) is written into the command.
 */
import path from "node:path";

const BUY_BASE_URL = "http://127.0.0.1:4021";
const BUY_DATA_DIR = "data";

/** `text` as one shell word. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A paid call of this service's, by `npm run buy` from the repository, reaching `serviceUrl` and paying with a buyer of `dataDir`'s devnet.json. */
export function tryItCommand(serviceUrl: string, dataDir: string, cwd = process.cwd()): string {
  const env = [
    ...(serviceUrl === BUY_BASE_URL ? [] : [`BASE_URL=${shellWord(serviceUrl)}`]),
    // Absolute: the command may be run from another folder than the one the service started in.
    ...(path.resolve(cwd, dataDir) === path.resolve(cwd, BUY_DATA_DIR) ? [] : [`DATA_DIR=${shellWord(path.resolve(cwd, dataDir))}`]),
  ];
  return [...env, `npm run buy -- POST /api/payment-verify '{"tx_hash":"0x${"0".repeat(64)}"}'`].join(" ");
}
