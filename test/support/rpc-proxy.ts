/**
 * A JSON-RPC proxy in front of the shared devnet that behaves like a picky public provider:
 * it can refuse `eth_getLogs` ranges above a limit (with the provider's wording), add
 * latency, or be down; it counts what it was asked. Batches are handled like single calls.
 */
import { type Stub, startStub } from "./stub-server.ts";

/** How the proxy misbehaves. */
export interface RpcProxyOptions {
  /** Refuse eth_getLogs over more blocks than this. */
  maxLogRange?: number;
  /** The refusal's message (default: mainnet.base.org-style, no number). */
  refusalMessage?: (limit: number) => string;
  /** Answer every request with HTTP 503. */
  down?: boolean;
}

/** A running proxy with the eth_getLogs ranges it was asked for. */
export interface RpcProxy extends Stub {
  getLogs: { from: number; to: number; refused: boolean }[];
  options: RpcProxyOptions;
}

interface Call {
  id: number;
  jsonrpc: string;
  method: string;
  params?: { fromBlock?: string; toBlock?: string }[];
}

/** Start a proxy to `rpcUrl`. */
export async function startRpcProxy(rpcUrl: string, options: RpcProxyOptions = {}): Promise<RpcProxy> {
  const getLogs: RpcProxy["getLogs"] = [];
  const state = { ...options };
  const stub = await startStub(async (_req, res, body) => {
    if (state.down) {
      res.writeHead(503).end("service unavailable");
      return;
    }
    const calls = (Array.isArray(body) ? body : [body]) as Call[];
    const answers = await Promise.all(
      calls.map(async (call) => {
        if (call.method === "eth_getLogs" && call.params?.[0]?.fromBlock && call.params[0].toBlock) {
          const from = Number(BigInt(call.params[0].fromBlock));
          const to = Number(BigInt(call.params[0].toBlock));
          const refused = state.maxLogRange !== undefined && to - from + 1 > state.maxLogRange;
          getLogs.push({ from, to, refused });
          if (refused) {
            const message = state.refusalMessage?.(state.maxLogRange as number) ?? "block range too large";
            return { jsonrpc: "2.0", id: call.id, error: { code: -32000, message } };
          }
        }
        const res = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(call) });
        return res.json();
      }),
    );
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
  });
  return Object.assign(stub, { getLogs, options: state });
}
