/**
 * A JSON-RPC proxy in front of the shared devnet that behaves like a picky public provider:
 * it can refuse `eth_getLogs` ranges above a limit (with the provider's wording), rate-limit
 * log queries with HTTP 429, answer wide log queries with bodies too large to read, add
 * latency, be down, or fail the HTTP requests carrying given methods or calls of given function
 * selectors; it counts what it was asked, and each HTTP request with the methods it
 * carried and how many requests were in flight when it arrived. Batches are handled like
 * single calls.
 */
import type { ServerResponse } from "node:http";
import { type Stub, startStub } from "./stub-server.ts";

/** How the proxy misbehaves. */
export interface RpcProxyOptions {
  /** Refuse eth_getLogs over more blocks than this. */
  maxLogRange?: number;
  /** The refusal's message (default: mainnet.base.org-style, no number). */
  refusalMessage?: (limit: number) => string;
  /** Answer every request with HTTP 503. */
  down?: boolean;
  /** Answer every HTTP request carrying one of these methods with HTTP 503 (a batch fails whole, as at a provider). */
  failMethods?: string[];
  /** Answer every HTTP request carrying an eth_call of one of these 4-byte selectors (e.g. "0x313ce567") with HTTP 503. */
  failSelectors?: string[];
  /** Hold every HTTP request this long before answering (a distant provider). */
  latencyMs?: number;
  /** Answer this many of the next HTTP requests carrying eth_getLogs with HTTP 429. */
  rateLimitGetLogs?: number;
  /** The Retry-After header of those 429s (none when unset). */
  retryAfter?: string;
  /** Pad answers to eth_getLogs over more blocks than this to 5 MiB (valid JSON, trailing spaces). */
  oversizeAbove?: number;
}

/** One HTTP request the proxy received. */
export interface ProxiedRequest {
  methods: string[];
  /** HTTP requests in flight when this one arrived, itself included. */
  inFlight: number;
  /** Of those, the ones asking for eth_getLogs. */
  logsInFlight: number;
  status: number;
}

/** A running proxy with the eth_getLogs ranges it was asked for. */
export interface RpcProxy extends Stub {
  getLogs: { from: number; to: number; refused: boolean }[];
  http: ProxiedRequest[];
  options: RpcProxyOptions;
}

interface Call {
  id: number;
  jsonrpc: string;
  method: string;
  params?: { fromBlock?: string; toBlock?: string; data?: string; input?: string }[];
}

/** Start a proxy to `rpcUrl`. */
export async function startRpcProxy(rpcUrl: string, options: RpcProxyOptions = {}): Promise<RpcProxy> {
  const getLogs: RpcProxy["getLogs"] = [];
  const http: ProxiedRequest[] = [];
  const state = { ...options };
  let inFlight = 0;
  let logsInFlight = 0;
  const stub = await startStub(async (_req, res, body) => {
    const calls = (Array.isArray(body) ? body : [body]) as Call[];
    const methods = calls.map((c) => c.method);
    const logs = methods.includes("eth_getLogs") ? 1 : 0;
    logsInFlight += logs;
    const record: ProxiedRequest = { methods, inFlight: ++inFlight, logsInFlight, status: 200 };
    http.push(record);
    try {
      await answer(res, body, calls, record);
    } finally {
      inFlight--;
      logsInFlight -= logs;
    }
  });
  const answer = async (res: ServerResponse, body: unknown, calls: Call[], record: ProxiedRequest) => {
    if (state.latencyMs) await new Promise((resolve) => setTimeout(resolve, state.latencyMs));
    if (state.down) {
      record.status = 503;
      res.writeHead(503).end("service unavailable");
      return;
    }
    const selectorFails = (c: Call) =>
      c.method === "eth_call" && state.failSelectors?.some((s) => (c.params?.[0]?.data ?? c.params?.[0]?.input ?? "").startsWith(s));
    if (state.failMethods?.some((m) => record.methods.includes(m)) || calls.some(selectorFails)) {
      record.status = 503;
      res.writeHead(503).end("service unavailable");
      return;
    }
    if (state.rateLimitGetLogs && record.methods.includes("eth_getLogs")) {
      state.rateLimitGetLogs--;
      record.status = 429;
      res.writeHead(429, state.retryAfter ? { "retry-after": state.retryAfter } : {}).end("Too Many Requests");
      return;
    }
    let oversize = false;
    const answers = await Promise.all(
      calls.map(async (call) => {
        if (call.method === "eth_getLogs" && call.params?.[0]?.fromBlock && call.params[0].toBlock) {
          const from = Number(BigInt(call.params[0].fromBlock));
          const to = Number(BigInt(call.params[0].toBlock));
          const refused = state.maxLogRange !== undefined && to - from + 1 > state.maxLogRange;
          if (state.oversizeAbove !== undefined && to - from + 1 > state.oversizeAbove) oversize = true;
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
    const text = JSON.stringify(Array.isArray(body) ? answers : answers[0]);
    res.writeHead(200, { "content-type": "application/json" }).end(oversize ? text.padEnd(5 * 1024 * 1024) : text);
  };
  return Object.assign(stub, { getLogs, http, options: state });
}
