/**
 * The HTTP side shared by the two directory adapters: one GET of a JSON page with a
 * deadline and a size cap, failures re-wrapped as `DirectoryError` with a short status the
 * directory search reports (`timeout`, `error: HTTP 503`, ...). Directory URLs come from the
 * operator's configuration, not from callers, so they do not go through the safe fetcher.
 */
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import getRawBody from "raw-body";
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

/** The largest page read: directories page large lists, but a page past this is no directory's. */
const MAX_PAGE_BYTES = 16 * 1024 * 1024;

/** GET `url` and parse its JSON body; throws `DirectoryError`. */
export async function fetchDirectoryJson(directory: string, url: string, options: { signal: AbortSignal }): Promise<unknown> {
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
  const body = Readable.fromWeb((res.body ?? new ReadableStream()) as NodeReadableStream);
  let text: string;
  try {
    text = await getRawBody(body, { limit: MAX_PAGE_BYTES, encoding: "utf8" });
  } catch (error) {
    body.destroy();
    if ((error as { type?: string }).type === "entity.too.large") {
      throw new DirectoryError(directory, `error: page larger than ${MAX_PAGE_BYTES / 1048576} MiB`);
    }
    throw failure(directory, error, options.signal);
  }
  try {
    return JSON.parse(text);
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
