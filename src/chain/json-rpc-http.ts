/**
 * One JSON-RPC call over node:http(s), its answer handed back as the raw bytes: for the log
 * scanner's `eth_getLogs`, whose answers (a megabyte or more) it decodes itself
 * (src/chain/transfer-answer.ts). viem's transport reads every answer through Node's fetch and
 * `JSON.parse`; fetch moves each chunk of a body through web streams, and `JSON.parse` builds
 * every field of every log, most of which a transfer scan never reads. On the bench chain, 11
 * parallel 2,000-block answers cost 97-148 ms of CPU through fetch, 73-82 ms through node:http
 * (`JSON.parse` included in both).
 *
 * It does what the viem transport did for these calls: the URLs in order, the next one tried
 * when one fails to answer (network error, timeout, an HTTP error without a JSON-RPC answer); a time limit per URL; a
 * cap on the decoded body, passed as soon as it is exceeded; gzip, deflate and brotli answers
 * (asked for, as fetch does: a log answer compresses to about a third); and failures as viem's
 * error classes (`HttpRequestError`, `RpcRequestError`, `TimeoutError`,
 * `ResponseBodyTooLargeError`), so the scanner's rules for refusals and rate limits, and
 * src/chain/rpc-error.ts, read them as before.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { HttpRequestError, ResponseBodyTooLargeError, RpcRequestError, TimeoutError } from "viem";

const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

/** Options of {@link postJsonRpc}. */
export interface JsonRpcHttpOptions {
  /** Time allowed for each URL's whole answer, body included. */
  timeoutMs: number;
  /** The largest decoded body read; a larger one fails with `ResponseBodyTooLargeError`. */
  maxBodyBytes: number;
}

/** A JSON-RPC answer with a 2xx status: its body, not yet parsed, and the call and URL it answers (for errors). */
export interface RawAnswer {
  body: Buffer;
  call: Record<string, unknown>;
  url: string;
}

/**
 * The `RpcRequestError` a parsed answer carries, as viem's transport raises it, when the answer
 * is a JSON-RPC error; undefined otherwise.
 */
export function rpcErrorIn(answer: unknown, call: Record<string, unknown>, url: string): RpcRequestError | undefined {
  const error = (answer as { error?: { code?: unknown; message?: unknown } } | null | undefined)?.error;
  if (!error || typeof error.code !== "number" || typeof error.message !== "string") return undefined;
  return new RpcRequestError({ body: call, error: error as { code: number; message: string }, url });
}

/** The URL as errors show it: without credentials (as viem's errors do). */
function shown(url: URL): string {
  if (!url.username && !url.password) return url.href;
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  return copy.href;
}

function headersOf(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/** The body as the server encoded it, decoded. */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  if (encoding === "gzip" || encoding === "x-gzip") return res.pipe(createGunzip());
  if (encoding === "deflate") return res.pipe(createInflate());
  if (encoding === "br") return res.pipe(createBrotliDecompress());
  return res;
}

/** POST `body` to one URL: status, headers and the decoded body, or a viem error. */
function post(target: URL, body: string, call: unknown, options: JsonRpcHttpOptions) {
  const url = shown(target);
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    let settled = false;
    const finish = (error: unknown, answer?: { status: number; headers: IncomingHttpHeaders; body: Buffer }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(answer as { status: number; headers: IncomingHttpHeaders; body: Buffer });
    };
    const timer = setTimeout(() => finish(new TimeoutError({ body: call as Record<string, unknown>, url })), options.timeoutMs);
    const secure = target.protocol === "https:";
    const req = (secure ? httpsRequest : httpRequest)(
      target,
      {
        method: "POST",
        agent: secure ? httpsAgent : httpAgent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "accept-encoding": "gzip, deflate, br",
        },
      },
      (res) => {
        const tooLarge = (size: number) => new ResponseBodyTooLargeError({ maxSize: options.maxBodyBytes, size });
        const declared = Number(res.headers["content-length"]);
        if (res.headers["content-encoding"] === undefined && declared > options.maxBodyBytes) {
          finish(tooLarge(declared));
          return;
        }
        // A connection lost mid-body is an error of `res`, which piping into a decompressor does
        // not pass on: listened to on both, so a cut compressed answer fails at once.
        const failed = (cause: Error) => finish(new HttpRequestError({ body: call as Record<string, unknown>, cause, url }));
        res.on("error", failed);
        const stream = decoded(res);
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBodyBytes) {
            stream.destroy();
            finish(tooLarge(size));
          } else chunks.push(chunk);
        });
        if (stream !== res) stream.on("error", failed);
        stream.on("end", () => finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks, size) }));
      },
    );
    req.on("error", (cause) => finish(new HttpRequestError({ body: call as Record<string, unknown>, cause, url })));
    req.end(body);
  });
}

/**
 * A failure the next URL may not have: no answer, a timeout, or an HTTP error without a
 * JSON-RPC answer (a rate limit, a server error, a refused key or a wrong path), as viem's
 * fallback transport moves on. A JSON-RPC error (a refused range) is the node's answer.
 */
function worthAnotherUrl(error: unknown): boolean {
  return error instanceof TimeoutError || error instanceof HttpRequestError;
}

/**
 * Call `method` on the first of `urls` that answers, and hand back the raw body of a 2xx answer.
 * A JSON-RPC error answer throws `RpcRequestError` (whatever its HTTP status); any other
 * non-2xx answer `HttpRequestError`.
 */
export async function postJsonRpc(
  urls: readonly string[],
  method: string,
  params: unknown[],
  options: JsonRpcHttpOptions,
): Promise<RawAnswer> {
  const call = { jsonrpc: "2.0", id: 1, method, params };
  const body = JSON.stringify(call);
  let last: unknown;
  for (const href of urls) {
    const target = new URL(href);
    try {
      const answer = await post(target, body, call, options);
      if (answer.status >= 200 && answer.status < 300) return { body: answer.body, call, url: shown(target) };
      let parsed: unknown;
      try {
        parsed = JSON.parse(answer.body.toString("utf8"));
      } catch {
        parsed = undefined;
      }
      const rpcError = rpcErrorIn(parsed, call, shown(target));
      if (rpcError) throw rpcError;
      throw new HttpRequestError({
        body: call,
        details: answer.body.toString("utf8").slice(0, 500) || `HTTP ${answer.status}`,
        headers: headersOf(answer.headers),
        status: answer.status,
        url: shown(target),
      });
    } catch (error) {
      if (!worthAnotherUrl(error)) throw error;
      last = error;
    }
  }
  throw last;
}
