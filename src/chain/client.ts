/**
 * The viem client for the chain the service settles on: several RPC URLs used in order
 * with fallback, per-request timeouts, retries with backoff, and JSON-RPC batching.
 */
import { type Chain, createPublicClient, defineChain, fallback, http, type PublicClient, type Transport } from "viem";
import { base } from "viem/chains";

/**
 * Base (chain id 8453) reached through `rpcUrls`. Multicall3's creation block is dropped:
 * viem would refuse multicalls pinned below it, which on the local chain is every block.
 */
export function baseChain(rpcUrls: string[]): Chain {
  return defineChain({
    ...base,
    rpcUrls: { default: { http: rpcUrls } },
    contracts: { ...base.contracts, multicall3: { address: "0xcA11bde05977b3631167028862bE2a173976CA11" } },
  });
}

/** A fallback transport over `rpcUrls`: each URL batched, timed out and retried before the next is tried. */
export function rpcTransport(rpcUrls: string[], { timeoutMs = 10_000, retryCount = 2 } = {}): Transport {
  const transports = rpcUrls.map((url) => http(url, { timeout: timeoutMs, retryCount, retryDelay: 250, batch: { wait: 0 } }));
  return transports.length === 1 ? (transports[0] as Transport) : fallback(transports, { retryCount: 0 });
}

/** A public client for reads. */
export function createChainClient(chain: Chain, transport: Transport): PublicClient {
  return createPublicClient({ chain, transport, cacheTime: 1_000 }) as PublicClient;
}
