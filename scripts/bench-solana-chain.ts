/**
 * The Solana bench's local chain in a worker thread of its own: litesvm, its JSON-RPC server and
 * its blocks, with the bench's buyers funded and the minimal seller's fee payer airdropped. A
 * real deployment reads a Solana RPC on another machine, so the chain's own CPU (executing and
 * simulating transactions, serving JSON-RPC) is kept off the event loop of the sellers measured.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

export interface BenchChainPlan {
  /** Labels of the buyer keys to fund with USDC (src/solana/keys.ts `localKey`). */
  buyers: string[];
  /** Labels of keys to airdrop SOL to (fee payers). */
  feePayers: string[];
  blockMs: number;
}

/** What the worker reports once the chain is up. */
export interface BenchChain {
  rpcUrl: string;
  network: string;
  usdcMint: string;
  payTo: string;
  stop(): Promise<void>;
}

/** Start the chain in a worker thread; `stop` ends it. */
export function startBenchChain(plan: BenchChainPlan): Promise<BenchChain> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: plan });
    worker.once("error", reject);
    worker.once("message", (m: { ready?: Omit<BenchChain, "stop">; error?: string }) => {
      if (m.error || !m.ready) return reject(new Error(m.error ?? "the chain worker did not start"));
      resolve({
        ...m.ready,
        stop: async () => {
          worker.postMessage("stop");
          await new Promise((done) => worker.once("exit", done));
        },
      });
    });
  });
}

async function run(plan: BenchChainPlan, port: NonNullable<typeof parentPort>): Promise<void> {
  const { getCreateAssociatedTokenIdempotentInstruction, getMintToInstruction } = await import("@solana-program/token-2022");
  const { startLocalSolana } = await import("../src/local/solana/devnet.ts");
  const { ataOf, scenarioKeys, TOKEN_PROGRAM, USDC_MINT } = await import("../src/local/solana/scenario.ts");
  const { localKey } = await import("../src/solana/keys.ts");
  // Blocks every `blockMs`: transactions signed before a round stay valid through it.
  const chain = await startLocalSolana({ blockMs: plan.blockMs });
  const k = await scenarioKeys();
  for (const label of plan.buyers) {
    const buyer = await localKey(label);
    const ata = await ataOf(buyer.address, USDC_MINT);
    await chain.chain.run(k.feePayer.signer, [
      getCreateAssociatedTokenIdempotentInstruction({
        payer: k.feePayer.signer,
        ata,
        owner: buyer.address,
        mint: USDC_MINT,
        tokenProgram: TOKEN_PROGRAM,
      }),
      getMintToInstruction(
        { mint: USDC_MINT, token: ata, mintAuthority: k.usdcAuthority.signer, amount: 1_000_000_000n },
        { programAddress: TOKEN_PROGRAM },
      ),
    ]);
  }
  for (const label of plan.feePayers) chain.chain.airdrop((await localKey(label)).address, 100_000_000_000n);
  port.once("message", () => {
    void chain.stop().then(() => process.exit(0));
  });
  const s = chain.scenario;
  port.postMessage({ ready: { rpcUrl: chain.rpcUrl, network: s.network, usdcMint: s.usdcMint, payTo: s.payTo } });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  run(workerData as BenchChainPlan, port).catch((error: Error) => port.postMessage({ error: error.stack ?? error.message }));
}
