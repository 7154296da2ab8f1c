/**
 * Local mode's Solana, started in the service's process: the chain (kept in the data folder
 * across restarts), seeded on first start, its JSON-RPC server on loopback and its blocks.
 */
import { LocalSolana } from "./local-chain.ts";
import { startSolanaRpc } from "./rpc-server.ts";
import { type SolanaScenario, seedSolanaScenario } from "./scenario.ts";

/** The running local Solana. */
export interface LocalSolanaDevnet {
  chain: LocalSolana;
  rpcUrl: string;
  scenario: SolanaScenario;
  /** Whether this start seeded it (false: the state of an earlier start). */
  seeded: boolean;
  stop(): Promise<void>;
}

export interface LocalSolanaOptions {
  /** Where the state is kept; undefined: nothing is saved (tests). */
  dataDir?: string;
  /** The RPC's port on 127.0.0.1 (0: a free one). */
  rpcPort?: number;
  /** Milliseconds between blocks; each block's blockhash is valid for VALID_BLOCKS blocks. */
  blockMs?: number;
}

/** Start (or reopen) the local Solana. */
export async function startLocalSolana(options: LocalSolanaOptions = {}): Promise<LocalSolanaDevnet> {
  const { chain, fresh } = LocalSolana.open(options.dataDir);
  const scenario = await seedSolanaScenario(chain, fresh);
  const rpc = await startSolanaRpc(chain, options.rpcPort ?? 0);
  chain.startBlocks(options.blockMs);
  return {
    chain,
    rpcUrl: rpc.url,
    scenario,
    seeded: fresh,
    async stop() {
      await rpc.close();
      chain.stop();
    },
  };
}
