/**
 * The edge between viem and the service: any failure talking to a chain node becomes an
 * `UpstreamError` (502/503/504, never charged) with the viem error kept as `cause` and
 * none of its text in the message a caller sees.
 */
import { BaseError, HttpRequestError, RpcRequestError, TimeoutError } from "viem";
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
  if (chain.some((e) => e instanceof TimeoutError)) {
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

/** Run a chain read, re-wrapping any failure with `toChainError`. */
export async function readChain<T>(what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw toChainError(error, what);
  }
}
