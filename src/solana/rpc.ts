/**
 * The service's Solana JSON-RPC client: kit's RPC (its API, its request and answer transforms)
 * over undici's `request` instead of kit's default transport, which is WHATWG `fetch`. Every paid
 * Solana call makes four RPC requests from the facilitator (two simulations, the send, the
 * status), and fetch's Request/Response/stream objects cost about 0.7 ms of CPU per paid call
 * there (docs/solana.md). The wire is the same: kit's own JSON with bigints, POST, compressed
 * answers accepted, redirects followed; an HTTP error is kit's own `SolanaError`, so callers see
 * what they would see with kit's. Unlike fetch, a stalled provider cannot hold a request longer
 * than REQUEST_TIMEOUT_MS. Not kept from kit's transport: merging identical requests of one tick.
 */
import {
  createSolanaRpcFromTransport,
  type Rpc,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  SolanaError,
  type SolanaRpcApi,
} from "@solana/kit";
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from "@solana/rpc-spec-types";
import { Agent, interceptors, request } from "undici";

/** The longest one RPC request may wait for its answer's headers, or between parts of its body. */
const REQUEST_TIMEOUT_MS = 30_000;

// Providers may compress what they answer (kit's transport asks for it too; a loopback RPC does
// not), and an RPC URL may redirect (http to https, a moved endpoint), which fetch would follow.
const dispatcher = new Agent({ headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS }).compose(
  interceptors.decompress(),
  interceptors.redirect({ maxRedirections: 3 }),
);

/** A Solana RPC client for `url`. */
export function solanaRpc(url: string): Rpc<SolanaRpcApi> {
  return createSolanaRpcFromTransport(async <T>({ payload, signal }: { payload: unknown; signal?: AbortSignal }): Promise<T> => {
    const body = stringifyJsonWithBigInts(payload);
    const response = await request(url, {
      method: "POST",
      body,
      headers: { accept: "application/json", "accept-encoding": "br, gzip, deflate", "content-type": "application/json; charset=utf-8" },
      signal,
      dispatcher,
    });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw new SolanaError(SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, {
        headers: new Headers(response.headers as Record<string, string>),
        message: text.slice(0, 200),
        statusCode: response.statusCode,
      });
    }
    return parseJsonWithBigInts(text) as T;
  });
}
