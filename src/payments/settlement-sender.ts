/**
 * Sending settlement transactions from the facilitator's gas key and waiting for them.
 *
 * Nonces: one lane per chain, RPC endpoints and key in this process. Nonces are handed out and
 * signed in order, one at a time; broadcasts and the waits for receipts overlap freely, so
 * concurrent settlements pipeline. A nonce the node refuses is given back, or, when later ones
 * are already out, filled with an empty transfer, so there is never a gap. When
 * no transaction of the lane is in flight, the chain's pending count is the truth (another
 * process with the same key, a restarted or different chain with the same id): nothing is
 * carried over from an earlier chain, which is what viem's process-wide nonce manager does.
 *
 * Receipts: polled at an interval fit for the chain (tens of milliseconds on a local node,
 * the Flashblock cadence on Base, whose Flashblocks-aware RPCs answer `eth_getTransactionReceipt`
 * with preconfirmed receipts), until a deadline. A transaction that has not landed after
 * `stuckAfterMs` is checked: if its nonce was used by another transaction, or the chain has not
 * reached it, the nonce is stuck: that is logged as an error, the wait ends (the settlement's
 * outcome is then unknown) and the lane re-reads its nonce from the chain before the next send,
 * so a lost transaction's nonce is reused and the ones queued behind it can land.
 */
import {
  type Account,
  BaseError,
  type Chain,
  type Hash,
  type Hex,
  keccak256,
  type PublicClient,
  RpcRequestError,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
} from "viem";
import type { Logger } from "../log.ts";

/** How a sender polls and when it calls a nonce stuck. */
export interface SenderTiming {
  /** Between two receipt polls. */
  pollIntervalMs: number;
  /** Without a receipt this long after broadcast, the nonce is checked and, if not reached, reported stuck. */
  stuckAfterMs: number;
  /** The longest wait for a receipt. */
  receiptTimeoutMs: number;
}

/** Local node: it mines on arrival, so a receipt is there within milliseconds. */
export const LOCAL_TIMING: SenderTiming = { pollIntervalMs: 20, stuckAfterMs: 2_000, receiptTimeoutMs: 10_000 };
/** Base: 2 s blocks, 200 ms Flashblocks; three blocks without inclusion is stuck. */
export const BASE_TIMING: SenderTiming = { pollIntervalMs: 200, stuckAfterMs: 6_000, receiptTimeoutMs: 10_000 };

/** The wait for a settlement ended because its nonce is stuck or was taken by another transaction. */
export class NonceStuckError extends Error {
  override name = "NonceStuckError";
}

/** The nonce state of one key on one chain in this process. */
class NonceLane {
  next: number | undefined;
  /** Nonces broadcast and not yet resolved (receipt, stuck, deadline). */
  readonly inFlight = new Set<number>();
  /** Set when the chain must be asked again before the next send. */
  resync = false;
  /** Bumped on every broadcast: a nonce count read before the last one is stale. */
  sends = 0;
  #tail: Promise<unknown> = Promise.resolve();

  /** Run `fn` alone on this lane, after every earlier caller. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => {});
    return run;
  }
}

const lanes = new Map<string, NonceLane>();

function laneOf(chain: Chain, address: string): NonceLane {
  const key = `${chain.id}:${chain.rpcUrls.default.http.join(",")}:${address.toLowerCase()}`;
  let lane = lanes.get(key);
  if (!lane) {
    lane = new NonceLane();
    lanes.set(key, lane);
  }
  return lane;
}

/** Whether `error` or one of its causes passes `test`. */
function anyCause(error: unknown, test: (e: Error) => boolean): boolean {
  for (let e = error; e instanceof Error; e = e.cause) if (test(e)) return true;
  return false;
}

/** The node refused the nonce as used, or as already taken in its pool by another transaction. */
const NONCE_CONFLICT = /nonce too low|nonce.*already.*used|replacement transaction underpriced|already imported with a different/i;
/** The node already has this exact transaction. */
const ALREADY_KNOWN = /already known|transaction already imported|known transaction/i;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type SigningAccount = Account & { signTransaction: NonNullable<Account["signTransaction"]> };

/** What a broadcast transaction is waited on with. */
interface Sent {
  nonce: number;
  sentAt: number;
}

/** Sends transactions from `account` on `chain` through `client`, and waits for them. */
export class SettlementSender {
  readonly #client: PublicClient;
  readonly #account: SigningAccount;
  readonly #chain: Chain;
  readonly #lane: NonceLane;
  readonly #timing: SenderTiming;
  readonly #log: Logger | undefined;
  readonly #sent = new Map<Hash, Sent>();
  #fees: { at: number; value: Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> } | undefined;

  constructor(client: PublicClient, account: Account, chain: Chain, timing: SenderTiming, log?: Logger) {
    if (!account.signTransaction) throw new Error("the gas key must sign locally");
    this.#client = client;
    this.#account = account as SigningAccount;
    this.#chain = chain;
    this.#lane = laneOf(chain, account.address);
    this.#timing = timing;
    this.#log = log;
  }

  /** Transactions broadcast and not yet resolved on this key's lane. */
  get inFlight(): number {
    return this.#lane.inFlight.size;
  }

  // Fees change at most once a block; one estimate serves every settlement within a second,
  // and its 1.2x base-fee headroom covers the drift.
  #feesPerGas() {
    const now = Date.now();
    if (!this.#fees || now - this.#fees.at > 1_000) {
      const value = this.#client.estimateFeesPerGas();
      value.catch(() => {
        if (this.#fees?.value === value) this.#fees = undefined;
      });
      this.#fees = { at: now, value };
    }
    return this.#fees.value;
  }

  #pendingCount(): Promise<number> {
    return this.#client.getTransactionCount({ address: this.#account.address, blockTag: "pending" });
  }

  /**
   * Estimate, take the next nonce and sign (in nonce order, one at a time), then broadcast
   * without holding the lane: the node queues a nonce that arrives before the one below it.
   * Returns the hash once the node has the transaction (or may have it).
   */
  async send(tx: { to: `0x${string}`; data: Hex; value?: bigint }): Promise<Hash> {
    const lane = this.#lane;
    const idle = lane.inFlight.size === 0;
    const sendsBefore = lane.sends;
    // The gas estimate doubles as a simulation: a transfer that would revert is never broadcast.
    const [gas, fees, count] = await Promise.all([
      this.#client.estimateGas({ account: this.#account, to: tx.to, data: tx.data, value: tx.value }),
      this.#feesPerGas(),
      idle ? this.#pendingCount() : undefined,
    ]);
    for (let attempt = 0; ; attempt++) {
      const { nonce, serialized } = await lane.exclusive(async () => {
        if (lane.next === undefined || lane.resync || lane.inFlight.size === 0) {
          const fresh = count !== undefined && attempt === 0 && !lane.resync && lane.sends === sendsBefore;
          lane.next = fresh ? count : await this.#pendingCount();
          lane.resync = false;
        }
        const nonce = lane.next;
        lane.next = nonce + 1;
        lane.sends++;
        lane.inFlight.add(nonce);
        const serialized = await this.#account.signTransaction(
          { chainId: this.#chain.id, type: "eip1559", to: tx.to, data: tx.data, value: tx.value, gas, nonce, ...fees },
          { serializer: this.#chain.serializers?.transaction },
        );
        return { nonce, serialized };
      });
      const hash = keccak256(serialized);
      try {
        await this.#client.request({ method: "eth_sendRawTransaction", params: [serialized] });
      } catch (error) {
        if (anyCause(error, (e) => ALREADY_KNOWN.test(e.message))) {
          // The node has it already (a retried request): broadcast.
        } else if (anyCause(error, (e) => NONCE_CONFLICT.test(e.message)) && attempt < 3) {
          // Another sender of this key (another process) used it: read the nonce again and re-sign.
          this.#log?.warn("settlement nonce taken; reading it again from the chain", { nonce });
          lane.inFlight.delete(nonce);
          lane.resync = true;
          continue;
        } else if (anyCause(error, (e) => e instanceof RpcRequestError)) {
          // The node answered with an error, so nothing was broadcast (as opposed to no answer at all).
          await this.#release(nonce, fees);
          throw error;
        } else {
          // No answer: it may have been broadcast. Wait on the hash; if it never reached the
          // node, the wait reports the nonce stuck and the lane reads its nonce again.
          this.#log?.warn("settlement broadcast unanswered; waiting on its hash", {
            tx: hash,
            nonce,
            error: error instanceof Error ? error : String(error),
          });
        }
      }
      this.#sent.set(hash, { nonce, sentAt: Date.now() });
      return hash;
    }
  }

  /**
   * The node refused the transaction at `nonce`: nothing was broadcast. If no later nonce was
   * handed out, it is simply given back; otherwise the later ones would wait behind a gap, so it
   * is filled with a transfer of nothing to ourselves.
   */
  async #release(nonce: number, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }): Promise<void> {
    const lane = this.#lane;
    const gap = await lane.exclusive(async () => {
      lane.inFlight.delete(nonce);
      if (lane.next !== nonce + 1) return true;
      lane.next = nonce;
      return false;
    });
    if (!gap) return;
    try {
      const filler = await this.#account.signTransaction(
        { chainId: this.#chain.id, type: "eip1559", to: this.#account.address, value: 0n, gas: 21_000n, nonce, ...fees },
        { serializer: this.#chain.serializers?.transaction },
      );
      await this.#client.request({ method: "eth_sendRawTransaction", params: [filler] });
      this.#log?.warn("settlement refused by the node; its nonce filled with an empty transfer", { nonce, tx: keccak256(filler) });
    } catch (error) {
      lane.resync = true;
      this.#log?.error("settlement nonce left as a gap: the filler was refused too", {
        code: "nonce_gap",
        nonce,
        error: error instanceof Error ? error : String(error),
      });
    }
  }

  async #receipt(hash: Hash): Promise<TransactionReceipt | null> {
    try {
      return await this.#client.getTransactionReceipt({ hash });
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return null;
      // A failed poll is not an answer: poll again until the deadline.
      if (error instanceof BaseError) return null;
      throw error;
    }
  }

  /** Poll for `hash`'s receipt: the first poll at once, then every `pollIntervalMs`; stuck nonces end the wait. */
  async waitForReceipt(hash: Hash): Promise<TransactionReceipt> {
    const sent = this.#sent.get(hash);
    const started = Date.now();
    const deadline = started + this.#timing.receiptTimeoutMs;
    let stuckCheck = (sent?.sentAt ?? started) + this.#timing.stuckAfterMs;
    try {
      for (;;) {
        const receipt = await this.#receipt(hash);
        if (receipt) return receipt;
        const now = Date.now();
        if (now >= deadline) throw new WaitForTransactionReceiptTimeoutError({ hash });
        if (sent && now >= stuckCheck) {
          await this.#checkStuck(hash, sent);
          stuckCheck = now + this.#timing.stuckAfterMs;
        }
        await sleep(Math.min(this.#timing.pollIntervalMs, Math.max(0, deadline - Date.now())));
      }
    } finally {
      if (sent) {
        this.#lane.inFlight.delete(sent.nonce);
        this.#sent.delete(hash);
      }
    }
  }

  async #checkStuck(hash: Hash, sent: Sent): Promise<void> {
    let chainNonce: number;
    try {
      chainNonce = await this.#client.getTransactionCount({ address: this.#account.address, blockTag: "latest" });
    } catch {
      return; // the node did not answer; the next check tries again
    }
    const replaced = chainNonce > sent.nonce;
    // The nonce was used: by this transaction (its receipt raced this check) or by another one.
    if (replaced && (await this.#receipt(hash))) return;
    const known = await this.#client.getTransaction({ hash }).then(
      () => true,
      () => false,
    );
    this.#lane.resync = true;
    this.#log?.error(replaced ? "settlement nonce replaced" : "settlement nonce stuck", {
      code: replaced ? "nonce_replaced" : "nonce_stuck",
      tx: hash,
      nonce: sent.nonce,
      chain_nonce: chainNonce,
      known_to_node: known,
      waited_ms: Date.now() - sent.sentAt,
    });
    throw new NonceStuckError(
      replaced
        ? `transaction ${hash} with nonce ${sent.nonce} was replaced: the chain's nonce is ${chainNonce}`
        : `nonce ${sent.nonce} is stuck: transaction ${hash} has not landed and the chain's nonce is still ${chainNonce}`,
    );
  }
}
