/**
 * The viem client for the chain the service settles on (its definition comes from the network
 * registry, src/networks/): several RPC URLs used in order with fallback, per-request
 * timeouts, retries with backoff, and JSON-RPC batching for small calls. `eth_getLogs` is never batched: viem's batching folds every request issued in the
 * same tick into one HTTP request, so chunks meant to be read in parallel would travel (and be
 * answered) as one, and their answers would add up in a single response body.
 */
import { type Chain, createPublicClient, fallback, http, type PublicClient, type Transport } from "viem";

/** Methods sent as HTTP requests of their own, never folded into a JSON-RPC batch. */
const UNBATCHED = new Set(["eth_getLogs"]);

/**
 * The largest `eth_getLogs` answer read (viem's default limit is 10 MB): a larger one is cut
 * off and fails like a refused range, so the log scanner splits it.
 */
export const LOGS_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * fetch under `timeoutMs` for the whole exchange, body included: viem's own timeout ends when
 * the headers arrive, so a node that sends them and then stalls its body would hold the read,
 * and the paid call waiting on it, until undici's five-minute body timeout.
 */
function fetchWithin(timeoutMs: number): typeof fetch {
  return (input, init) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline });
  };
}

/** One URL: small calls batched, log queries as separate requests. */
function splitHttp(url: string, timeoutMs: number, retryCount: number): Transport {
  const fetchFn = fetchWithin(timeoutMs);
  const batched = http(url, { timeout: timeoutMs, retryCount, retryDelay: 250, batch: { wait: 0 }, fetchFn });
  const single = http(url, { timeout: timeoutMs, retryCount, retryDelay: 250, maxResponseBodySize: LOGS_MAX_RESPONSE_BYTES, fetchFn });
  return (params) => {
    const many = batched(params);
    const one = single(params);
    return {
      config: many.config,
      value: many.value,
      request: ((args: { method: string }, options?: unknown) =>
        (UNBATCHED.has(args.method) ? one : many).request(args as never, options as never)) as typeof many.request,
    };
  };
}

/** A fallback transport over `rpcUrls`: each URL timed out and retried before the next is tried. */
export function rpcTransport(rpcUrls: string[], { timeoutMs = 10_000, retryCount = 2 } = {}): Transport {
  const transports = rpcUrls.map((url) => splitHttp(url, timeoutMs, retryCount));
  return transports.length === 1 ? (transports[0] as Transport) : fallback(transports, { retryCount: 0 });
}

/** A public client for reads. */
export function createChainClient(chain: Chain, transport: Transport): PublicClient {
  return createPublicClient({ chain, transport, cacheTime: 1_000 }) as PublicClient;
}
