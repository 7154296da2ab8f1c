/**
 * The HTTP side shared by the two directory adapters: one GET of a JSON page with a
 * deadline and a size cap, failures re-wrapped as `DirectoryError` with a short status the
 * directory search reports (`timeout`, `error: HTTP 503`, ...). Directory URLs come from the
 * operator's configuration, not from callers, so they do not go through the safe fetcher.
 */
import { UpstreamError } from "../errors.ts";

/** A directory could not be read; `status` is what the search reports for it. */
export class DirectoryError extends UpstreamError {
  override name = "DirectoryError";
  /** What the directory search reports: `timeout` or `error: <short reason>`. */
  readonly report: string;
  constructor(directory: string, status: string, cause?: unknown) {
    super(
      status === "timeout" ? "upstream_timeout" : "upstream_error",
      directory,
      `The ${directory} directory could not be read (${status}).`,
      { cause },
    );
    this.report = status;
  }
}

/** Options of one page read. */
export interface DirectoryFetchOptions {
  signal: AbortSignal;
  /** Bytes read at most (directories page large lists). Default 16 MiB. */
  maxBytes?: number;
}

/** GET `url` and parse its JSON body; throws `DirectoryError`. */
export async function fetchDirectoryJson(directory: string, url: string, options: DirectoryFetchOptions): Promise<unknown> {
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json" }, signal: options.signal, redirect: "follow" });
  } catch (error) {
    throw failure(directory, error, options.signal);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new DirectoryError(directory, `error: HTTP ${res.status}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    const reader = res.body?.getReader();
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) {
        await reader?.cancel().catch(() => {});
        throw new DirectoryError(directory, `error: page larger than ${Math.round(maxBytes / 1048576)} MiB`);
      }
      chunks.push(next.value);
    }
  } catch (error) {
    if (error instanceof DirectoryError) throw error;
    throw failure(directory, error, options.signal);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (error) {
    throw new DirectoryError(directory, "error: the answer is not JSON", error);
  }
}

function failure(directory: string, error: unknown, signal: AbortSignal): DirectoryError {
  if (signal.aborted || (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))) {
    return new DirectoryError(directory, "timeout", error);
  }
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as NodeJS.ErrnoException)?.code;
  return new DirectoryError(
    directory,
    `error: ${code === "ECONNREFUSED" ? "connection refused" : code === "ENOTFOUND" || code === "EAI_AGAIN" ? "host not found" : (code ?? (cause instanceof Error ? cause.message.slice(0, 80) : "network failure"))}`,
    error,
  );
}
