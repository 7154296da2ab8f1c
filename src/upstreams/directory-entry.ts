/**
 * What every directory adapter produces: one entry per paid endpoint, in one shape whatever
 * the directory's own item shape, and the interface the catalogue reads adapters through.
 */

/** The directories the service reads, by the names reported in `sources`. */
export type DirectoryName = "cdp_bazaar" | "x402_list";

/** One paid endpoint as a directory lists it. */
export interface DirectoryEntry {
  /** The endpoint's URL, normalised (see `normaliseEndpointUrl`). */
  url: string;
  /** `scheme://host[:port]` of `url`. */
  origin: string;
  name: string | null;
  description: string | null;
  /** CAIP-2 network of the quoted option (v1 names such as `base` normalised). */
  network: string | null;
  price_usd: number | null;
  pay_to: string | null;
  /** HTTP method when the directory says (Bazaar `info.input.method`). */
  method: "GET" | "POST" | null;
  tags: string[];
}

/** A directory the catalogue can read. */
export interface DirectorySource {
  name: DirectoryName;
  /** Every entry the directory lists (all pages); throws `DirectoryError`. */
  list(signal: AbortSignal): Promise<DirectoryEntry[]>;
}

/** A non-empty string, trimmed; else null. */
export const text = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);

/**
 * The key endpoints are merged by: the URL with its fragment dropped, scheme and host lower
 * case (the URL parser does both), default port dropped and a trailing slash removed from
 * the path. Null when `text` is not an http(s) URL.
 */
export function normaliseEndpointUrl(text: unknown): string | null {
  if (typeof text !== "string") return null;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  url.hash = "";
  if (url.pathname.length > 1 && url.pathname.endsWith("/")) url.pathname = url.pathname.replace(/\/+$/, "");
  return url.href;
}
