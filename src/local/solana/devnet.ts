/**
 * Local mode's Solana, started in the service's process: the chain (kept in the data folder
 * across restarts), seeded on first start, its JSON-RPC server on loopback and its blocks.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { LocalSolana } from "./local-chain.ts";
import { startSolanaRpc } from "./rpc-server.ts";
import { SOLANA_SCENARIO_VERSION, seedSolanaScenario } from "./scenario.ts";

export interface LocalSolanaOptions {
  /** Where the state is kept; undefined: nothing is saved (tests). */
  dataDir?: string;
  /** The RPC's port on 127.0.0.1 (0: a free one). */
  rpcPort?: number;
  /** Milliseconds between blocks; each block's blockhash is valid for VALID_BLOCKS blocks. */
  blockMs?: number;
}

/** Start (or reopen) the local Solana. */
export async function startLocalSolana(options: LocalSolanaOptions = {}) {
  const { chain, fresh } = LocalSolana.open(options.dataDir, SOLANA_SCENARIO_VERSION);
  const scenario = await seedSolanaScenario(chain, fresh);
  const rpc = await startSolanaRpc(chain, options.rpcPort ?? 0);
  chain.startBlocks(options.blockMs);
  return {
    chain,
    rpcUrl: rpc.url,
    scenario,
    // Whether this start seeded it (false: the state of an earlier start, seeded by this scenario version).
    seeded: fresh,
    async stop() {
      await rpc.close();
      chain.stop();
    },
  };
}

/** The running local Solana. */
export type LocalSolanaDevnet = Awaited<ReturnType<typeof startLocalSolana>>;

/** The `solana` object of `data/devnet.json` for `devnet` served at `siteUrl`: what a buyer or a tool needs to pay the Solana site. */
export function solanaDevnetInfo(devnet: LocalSolanaDevnet, siteUrl: string) {
  const s = devnet.scenario;
  return {
    siteUrl,
    rpcUrl: devnet.rpcUrl,
    network: s.network,
    usdcMint: s.usdcMint,
    payTo: s.payTo,
    feePayer: s.feePayer.address,
    // `secretKey`: the 64-byte key in base58, as Solana wallets export it.
    buyers: s.buyers.map((b) => ({ address: b.address, secretKey: b.secretKey })),
  };
}

/** Add (or replace) the `solana` object of the devnet file written by the EVM devnet, atomically. */
export function writeSolanaDevnetInfo(file: string, info: ReturnType<typeof solanaDevnetInfo>): void {
  const current = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
  const tmp = `${file}.${process.pid}.solana.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...current, solana: info }, null, 2)}\n`);
  renameSync(tmp, file);
}
