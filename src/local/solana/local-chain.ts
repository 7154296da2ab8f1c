/**
 * Local mode's Solana: an in-process litesvm (SPL Token, Token-2022, Associated Token, Memo and
 * Compute Budget built in), with what litesvm leaves out and a long-running chain needs: blocks
 * on a timer, each with a new blockhash valid for VALID_BLOCKS blocks (litesvm's own never
 * expires), a record of every transaction by signature and account (statuses, recent activity,
 * duplicates refused), and its state kept on disk across restarts, as anvil's is.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  type Address,
  appendTransactionMessageInstructions,
  type Blockhash,
  createTransactionMessage,
  getBase58Decoder,
  getBase64Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionEncoder,
  type Instruction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Transaction,
  type TransactionSigner,
} from "@solana/kit";
import { FailedTransactionMetadata, LiteSVM } from "litesvm";

/** Blocks a blockhash stays valid for (mainnet: 150 slots, 60-90 s; here with BLOCK_MS: 60 s). */
export const VALID_BLOCKS = 6;
/** A block every 10 s by default: each one's blockhash replaces the last. */
export const BLOCK_MS = 10_000;

/** A transaction the chain ran (or refused on execution), as the RPC reports it. */
export interface TxRecord {
  signature: string;
  slot: number;
  blockTime: number;
  /** null: it succeeded; else why it failed (it still landed, as a failed transaction does). */
  err: unknown;
  accounts: string[];
  /** The signed transaction (base64), as getTransaction serves it; none in records of older state files. */
  wire?: string;
}

/** Why a transaction was not accepted at all (the RPC's preflight answer). */
export class SendError extends Error {
  override name = "SendError";
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

interface Meta {
  /** The version of the scenario the state was seeded with (none in files of before it was kept). */
  scenario?: number;
  height: number;
  blockhashes: [string, number][];
  txs: TxRecord[];
}

/** The local chain. */
export class LocalSolana {
  readonly svm: LiteSVM;
  private height: number;
  /** blockhash -> the last block height it is valid at. */
  private readonly blockhashes = new Map<string, number>();
  private readonly txs = new Map<string, TxRecord>();
  private readonly files: { state: string; meta: string } | undefined;
  private readonly scenario: number;
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;

  private constructor(svm: LiteSVM, meta: Meta | undefined, files: { state: string; meta: string } | undefined, scenario: number) {
    this.svm = svm;
    this.files = files;
    this.scenario = scenario;
    // Blockhash ages are checked here (a window of VALID_BLOCKS), not by litesvm (only the latest).
    svm.withBlockhashCheck(false);
    svm.withSigverify(true);
    this.height = meta?.height ?? 1;
    for (const [hash, last] of meta?.blockhashes ?? []) this.blockhashes.set(hash, last);
    for (const tx of meta?.txs ?? []) this.txs.set(tx.signature, tx);
    if (this.blockhashes.size === 0) this.blockhashes.set(svm.latestBlockhash(), this.height + VALID_BLOCKS);
  }

  /**
   * Open the chain: the state saved in `dataDir` when there is one seeded by scenario version
   * `scenario`, else a new chain (`fresh` true: the caller seeds it; a state of another version is
   * replaced at the first save). Without `dataDir` nothing is saved.
   */
  static open(dataDir: string | undefined, scenario: number): { chain: LocalSolana; fresh: boolean } {
    const files = dataDir ? { state: path.join(dataDir, "solana-state.bin"), meta: path.join(dataDir, "solana-state.json") } : undefined;
    if (files && existsSync(files.state) && existsSync(files.meta)) {
      const meta = JSON.parse(readFileSync(files.meta, "utf8")) as Meta;
      if (meta.scenario === scenario) {
        const svm = LiteSVM.fromBytes(new Uint8Array(readFileSync(files.state)));
        return { chain: new LocalSolana(svm, meta, files, scenario), fresh: false };
      }
    }
    if (dataDir) mkdirSync(dataDir, { recursive: true });
    return { chain: new LocalSolana(new LiteSVM().withTransactionHistory(0n), undefined, files, scenario), fresh: true };
  }

  /** Produce blocks every `ms` until `stop` (each expires the oldest blockhash's window a block closer). */
  startBlocks(ms = BLOCK_MS): void {
    this.timer ??= setInterval(() => this.nextBlock(), ms);
    this.timer.unref();
  }

  /** One block: a new blockhash, the slot and clock forward, blockhashes past their window dropped. */
  nextBlock(): void {
    this.svm.expireBlockhash();
    this.height += 1;
    this.svm.warpToSlot(BigInt(this.height));
    const clock = this.svm.getClock();
    clock.unixTimestamp = BigInt(Math.floor(Date.now() / 1000));
    this.svm.setClock(clock);
    this.blockhashes.set(this.svm.latestBlockhash(), this.height + VALID_BLOCKS);
    for (const [hash, last] of this.blockhashes) if (last < this.height) this.blockhashes.delete(hash);
    if (this.dirty) this.save();
  }

  /** The slot, which is also the block height: every slot here has its block. */
  get slot(): number {
    return this.height;
  }

  latestBlockhash(): { blockhash: Blockhash; lastValidBlockHeight: number } {
    const blockhash = this.svm.latestBlockhash();
    return { blockhash, lastValidBlockHeight: this.blockhashes.get(blockhash) ?? this.height + VALID_BLOCKS };
  }

  isBlockhashValid(hash: string): boolean {
    const last = this.blockhashes.get(hash);
    return last !== undefined && last >= this.height;
  }

  /** Run a fully signed transaction; refused (SendError) when its blockhash expired or it ran before. */
  send(tx: Transaction): TxRecord {
    const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    const first = Object.values(tx.signatures)[0];
    if (!first) throw new SendError("MissingSignature", "Transaction has no signature");
    const signature = getBase58Decoder().decode(first);
    if (this.txs.has(signature))
      throw new SendError("AlreadyProcessed", "Transaction simulation failed: This transaction has already been processed");
    if (!this.isBlockhashValid(compiled.lifetimeToken)) {
      throw new SendError("BlockhashNotFound", "Transaction simulation failed: Blockhash not found");
    }
    const result = this.svm.sendTransaction(tx);
    const err = result instanceof FailedTransactionMetadata ? errorOf(result) : null;
    // A transaction refused before execution (a bad signature, no fee) never lands.
    if (err && /SignatureFailure|InsufficientFundsForFee|AccountNotFound/.test(JSON.stringify(err))) {
      throw new SendError(String(err), `Transaction simulation failed: ${JSON.stringify(err)}`);
    }
    const record: TxRecord = {
      signature,
      slot: this.height,
      blockTime: Math.floor(Date.now() / 1000),
      err,
      accounts: compiled.staticAccounts.map(String),
      wire: getBase64Decoder().decode(getTransactionEncoder().encode(tx)),
    };
    this.txs.set(signature, record);
    this.dirty = true;
    return record;
  }

  /** Simulate: nothing changes. Without `sigVerify` the fee payer's missing signature is accepted (a facilitator verifies before co-signing). */
  simulate(tx: Transaction, sigVerify: boolean): { err: unknown; logs: string[]; unitsConsumed: number } {
    this.svm.withSigverify(sigVerify);
    try {
      const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
      if (!this.isBlockhashValid(compiled.lifetimeToken)) return { err: "BlockhashNotFound", logs: [], unitsConsumed: 0 };
      const result = this.svm.simulateTransaction(tx);
      const err = result instanceof FailedTransactionMetadata ? errorOf(result) : null;
      const meta = result.meta();
      return { err, logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed()) };
    } finally {
      this.svm.withSigverify(true);
    }
  }

  status(signature: string): TxRecord | undefined {
    return this.txs.get(signature);
  }

  /** The transactions naming `address`, newest first; with `before`, those older than that signature's. */
  signaturesFor(address: string, limit: number, before?: string): TxRecord[] {
    const out: TxRecord[] = [];
    const all = [...this.txs.values()];
    let i = all.length - 1;
    if (before !== undefined) i = all.findIndex((tx) => tx.signature === before) - 1;
    for (; i >= 0 && out.length < limit; i--) {
      const tx = all[i] as TxRecord;
      if (tx.accounts.includes(address)) out.push(tx);
    }
    return out;
  }

  /** Build, sign and run `instructions` paid by `feePayer` (seeding and tests). Throws when it fails. */
  async run(feePayer: TransactionSigner, instructions: Instruction[]): Promise<TxRecord> {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => {
        const { blockhash, lastValidBlockHeight } = this.latestBlockhash();
        return setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) }, m);
      },
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    const record = this.send(signed);
    if (record.err) throw new Error(`local Solana transaction failed: ${JSON.stringify(record.err)}`);
    return record;
  }

  airdrop(address: Address, lamports: bigint): void {
    const result = this.svm.airdrop(address, lamports as never);
    if (!result || result instanceof FailedTransactionMetadata) throw new Error(`airdrop to ${address} failed`);
  }

  /** Write the state to disk (no-op without a data folder). Atomic: a crash mid-write keeps the last state. */
  save(): void {
    this.dirty = false;
    if (!this.files) return;
    const meta: Meta = {
      scenario: this.scenario,
      height: this.height,
      blockhashes: [...this.blockhashes],
      txs: [...this.txs.values()],
    };
    writeFileSync(`${this.files.state}.tmp`, this.svm.toBytes());
    writeFileSync(`${this.files.meta}.tmp`, JSON.stringify(meta));
    renameSync(`${this.files.state}.tmp`, this.files.state);
    renameSync(`${this.files.meta}.tmp`, this.files.meta);
  }

  /** Stop the blocks and save. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.save();
  }
}

/** A failed transaction's error as the RPC reports it (litesvm's enums have no runtime names: their text). */
function errorOf(failed: FailedTransactionMetadata): unknown {
  const err = failed.err() as unknown;
  if (typeof err === "object" && err !== null && "index" in err) {
    const e = err as { index: number; err(): unknown };
    const inner = e.err();
    const innerText =
      typeof inner === "object" && inner !== null && "code" in inner ? { Custom: (inner as { code: number }).code } : String(inner);
    return { InstructionError: [e.index, innerText] };
  }
  return failed.toString().slice(0, 300);
}
