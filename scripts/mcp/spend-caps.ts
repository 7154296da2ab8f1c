/**
 * The spending limits of one stdio MCP session: a cap per call and a cap for the whole session,
 * in atomic USDC. A payment is reserved before it is signed and refused if either cap would be
 * passed, so an over-cap call signs nothing; a call that fails (never charged) gives its
 * reservation back, and one whose settlement may have landed keeps it.
 */
import { usd } from "../../src/mcp/tools.ts";

/** A reserved payment: `commit` once it is (or may be) charged, `release` when it surely was not. */
export interface Reservation {
  readonly amount: bigint;
  commit(): void;
  release(): void;
}

/** Per-call and per-session limits, in atomic USDC. */
export interface SpendCapsOptions {
  maxPerCall: bigint;
  maxSession: bigint;
}

/** The limits and what this session has spent or holds reserved. */
export class SpendCaps {
  readonly maxPerCall: bigint;
  readonly maxSession: bigint;
  #spent = 0n;
  #reserved = 0n;

  constructor({ maxPerCall, maxSession }: SpendCapsOptions) {
    this.maxPerCall = maxPerCall;
    this.maxSession = maxSession;
  }

  /** Settled (or possibly settled) payments of this session. */
  get spent(): bigint {
    return this.#spent;
  }

  /** Why a payment of `amount` may not be made now, or undefined when it may. */
  refusal(amount: bigint): string | undefined {
    if (amount > this.maxPerCall) {
      return `This call costs ${usd(amount)}, over the per-call cap of ${usd(this.maxPerCall)} (MCP_MAX_PRICE_USD). Nothing was paid.`;
    }
    const committed = this.#spent + this.#reserved;
    if (committed + amount > this.maxSession) {
      return `This call costs ${usd(amount)} and this session has already committed ${usd(committed)} of its ${usd(this.maxSession)} cap (MCP_MAX_SPEND_USD). Nothing was paid.`;
    }
    return undefined;
  }

  /**
   * Reserve `amount` for a payment about to be signed. The caller asks `refusal(amount)` first,
   * with no await in between, so nothing else can have reserved meanwhile: a cap passed here is a
   * bug in the caller, and throws rather than letting the payment be signed.
   */
  reserve(amount: bigint): Reservation {
    const refused = this.refusal(amount);
    if (refused) throw new Error(`reserve() called without checking refusal() first: ${refused}`);
    this.#reserved += amount;
    let open = true;
    const close = (spent: boolean) => {
      if (!open) return;
      open = false;
      this.#reserved -= amount;
      if (spent) this.#spent += amount;
    };
    return { amount, commit: () => close(true), release: () => close(false) };
  }
}
