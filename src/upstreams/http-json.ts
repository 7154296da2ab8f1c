/**
 * The one way the service calls a third-party JSON API: a time limit, and every failure
 * re-wrapped as an `UpstreamError` (502 malformed or failed answer, 503 unreachable or
 * rate-limited, 504 too slow; none is charged) with the cause kept for the log and none of
 * the upstream's text in what the caller sees. Response shapes are checked against TypeBox
 * schemas, so a changed or broken API is a clear 502 rather than a wrong answer.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { UpstreamError } from "../errors.ts";
import { checkerFor } from "../validate.ts";

/** One call to a JSON API. */
export interface UpstreamRequest {
  /** Short name of the upstream for errors and logs, e.g. `dexscreener`. */
  upstream: string;
  url: string;
  method?: "GET" | "POST";
  /** JSON body (POST). */
  body?: unknown;
  timeoutMs: number;
}

const RETRY_AFTER_DEFAULT_S = 30;

function retryAfterSeconds(header: string | null): number {
  const n = Number(header);
  return Number.isFinite(n) && n > 0 ? Math.min(Math.ceil(n), 3600) : RETRY_AFTER_DEFAULT_S;
}

/**
 * GET or POST `url` and parse its JSON: `status` is 2xx, or a 404 returned (not thrown) when
 * `allowNotFound` is set, so an adapter can say which thing was not found; every other failure throws.
 */
export async function fetchUpstreamJson(request: UpstreamRequest, allowNotFound = false): Promise<{ status: number; body: unknown }> {
  const { upstream, url, timeoutMs } = request;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: request.method ?? "GET",
      headers: { accept: "application/json", ...(request.body === undefined ? {} : { "content-type": "application/json" }) },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The body is read under the same time limit: a server that sends headers and then stalls is slow too.
    text = await response.text();
  } catch (error) {
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
      throw new UpstreamError("upstream_timeout", upstream, `${upstream} did not answer within ${timeoutMs} ms; retry shortly.`, {
        cause: error,
      });
    }
    throw new UpstreamError("unavailable", upstream, `${upstream} is unreachable; retry shortly.`, { cause: error });
  }

  if (response.status === 429) {
    const retryAfter = retryAfterSeconds(response.headers.get("retry-after"));
    throw new UpstreamError("unavailable", upstream, `${upstream} is rate-limiting us; retry in ${retryAfter} s.`, {
      retryAfterSeconds: retryAfter,
    });
  }
  if (response.status === 404 && allowNotFound) return { status: 404, body: undefined };
  if (response.status === 503) {
    throw new UpstreamError("unavailable", upstream, `${upstream} is temporarily unavailable; retry shortly.`);
  }
  if (response.status < 200 || response.status > 299) {
    throw new UpstreamError("upstream_error", upstream, `${upstream} answered HTTP ${response.status}.`);
  }
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch (error) {
    throw new UpstreamError("upstream_error", upstream, `${upstream} answered with malformed JSON.`, { cause: error });
  }
}

/** Check an upstream answer against the shape its adapter relies on; a mismatch is a 502 naming the upstream. */
export function expectShape<S extends TSchema>(upstream: string, schema: S, value: unknown): Static<S> {
  const check = checkerFor(schema);
  if (check.Check(value)) return value as Static<S>;
  const problems = [...check.Errors(value)].slice(0, 3).map((e) => `${e.path || "/"}: ${e.message}`);
  throw new UpstreamError("upstream_error", upstream, `${upstream} answered in an unexpected shape.`, {
    cause: new Error(problems.join("; ")),
  });
}
