/**
 * The edge between viem and the service: any failure talking to a chain node becomes an
 * `UpstreamError` (502/503/504, never charged) with the viem error kept as `cause` and
 * none of its text in the message a caller sees.
 */
import {
  BaseError,
  CallExecutionError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  HttpRequestError,
  RpcRequestError,
  TimeoutError,
} from "viem";
import { ServiceError, UpstreamError } from "../errors.ts";

/** `error` and the causes it wraps, outermost first (only `Error`s: the chain stops at anything else). */
export function causeChain(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause) chain.push(e);
  return chain;
}

/**
 * Re-wrap a failed chain read as the right upstream error; `what` says what was being read.
 * Only viem's errors are upstream failures: anything else is our own bug and stays a 500.
 */
export function toChainError(error: unknown, what: string): unknown {
  if (error instanceof ServiceError || !(error instanceof BaseError)) return error;
  const chain = causeChain(error);
  // viem's own timeout, or the fetch deadline (a DOMException named TimeoutError) ending a stalled body.
  if (chain.some((e) => e instanceof TimeoutError || e.name === "TimeoutError")) {
    return new UpstreamError("upstream_timeout", "rpc", `The chain node did not answer in time while ${what}; retry shortly.`, {
      cause: error,
    });
  }
  const http = chain.find((e): e is HttpRequestError => e instanceof HttpRequestError);
  if (http?.status === 429 || chain.some((e) => e instanceof RpcRequestError && e.code === -32005)) {
    return new UpstreamError("unavailable", "rpc", `The chain node is rate-limiting us while ${what}; retry in a few seconds.`, {
      cause: error,
      retryAfterSeconds: 5,
    });
  }
  if (http && (http.status === undefined || http.status >= 500)) {
    return new UpstreamError("unavailable", "rpc", `The chain node is unreachable while ${what}; retry shortly.`, {
      cause: error,
    });
  }
  return new UpstreamError("upstream_error", "rpc", `The chain node answered with an error while ${what}.`, {
    cause: error,
  });
}

/**
 * A failed read's error as the caller should see it: `toChainError`, and also a plain
 * `SyntaxError`/`TypeError`/`RangeError` (anything not viem's nor ours) is the node's doing. A read is
 * only viem calls, and viem decodes the node's `result` with `BigInt()`, `hexToNumber` and
 * property access that throw these on an answer of the wrong shape (`"0xzz"`, `null`, an object
 * for a quantity): that is a broken answer (502), not a bug of the service (500).
 */
function readFailure(error: unknown, what: string): unknown {
  if (error instanceof ServiceError || error instanceof BaseError || !(error instanceof Error)) return toChainError(error, what);
  return new UpstreamError("upstream_error", "rpc", `The chain node answered in an unexpected shape while ${what}.`, { cause: error });
}

/** Run a chain read, re-wrapping any failure with `readFailure`. */
export async function readChain<T>(what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw readFailure(error, what);
  }
}

/** One answer of a `multicall({ allowFailure: true })`. */
interface MulticallAnswer {
  status: "success" | "failure";
  error?: unknown;
}

/**
 * Whether a failed multicall answer is the whole batch failing rather than its own call
 * reverting. With failures allowed, viem does not throw when the `aggregate3` request itself
 * fails (timeout, 5xx, 429, a node error): it marks every call of that batch as failed with the
 * request's error, a `ContractFunctionExecutionError` for `aggregate3` wrapping the
 * `CallExecutionError` of the `eth_call`. A call's own revert or empty answer is decoded from
 * the batch's answer, is named after the call's function, and never passed through `eth_call`'s
 * error path.
 */
export function isBatchFailure(error: unknown): boolean {
  if (!(error instanceof ContractFunctionExecutionError) || error.functionName === "aggregate3") return true;
  return causeChain(error).some((e) => e instanceof CallExecutionError);
}

/**
 * Run a multicall with failures allowed, failing like `readChain`, and throw the chain error
 * (`toChainError`) when any answer failed because the batch's request failed, so a node's blip
 * is never read as "these contracts do not answer"; otherwise return the answers, per-call
 * failures included.
 */
export async function readMulticall<T extends readonly MulticallAnswer[]>(what: string, read: () => Promise<T>): Promise<T> {
  const answers = await readChain(what, read);
  const failed = answers.find((a) => a.status === "failure" && isBatchFailure(a.error));
  if (failed) throw toChainError(failed.error, what);
  return answers;
}

/**
 * Read one contract function whose failure in the contract means "no answer" (a revert, no
 * code, an answer that does not decode): null then; a failure on the way to the node (the
 * `eth_call` failing without the node saying the call reverted) throws `toChainError`.
 */
export async function readOrNull<T>(what: string, read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    const chain = causeChain(error);
    const contractFailure =
      error instanceof ContractFunctionExecutionError &&
      (chain.some((e) => e instanceof ContractFunctionRevertedError) || !chain.some((e) => e instanceof CallExecutionError));
    if (contractFailure) return null;
    throw readFailure(error, what);
  }
}
