/**
 * x402 List (`GET https://x402-list.com/api/v1/services?page=&per_page=`, no key) as
 * directory entries. Its items describe services rather than challenges: `url`, `name`,
 * `description`, `network` (`base`), `price_per_request` as a "$0.01" string, `endpoints`
 * (a count), `status`, `tags`; there is no payTo. Prices are read from "$0.01", "0.01 USDC",
 * plain numbers and "free"; anything else is an unknown price.
 */
import { normaliseNetwork } from "../intel/networks.ts";
import { isObject } from "../json.ts";
import { type DirectoryEntry, type DirectorySource, normaliseEndpointUrl, text } from "./directory-entry.ts";
import { DirectoryError, fetchDirectoryJson } from "./directory-http.ts";

/** The public service list. */
export const X402_LIST_URL = "https://x402-list.com/api/v1/services";

/** Page size asked for (the documented maximum). */
const PER_PAGE = 100;
/** Pages read at most. */
const MAX_PAGES = 50;

/** USD of a listed price: 0.01 from "$0.01", "0.01", "0.01 USDC", "$0.01/request" or 0.01; 0 from "free"; else null. */
export function parseListedPrice(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : null;
  if (typeof value !== "string") return null;
  const s = value.trim().toLowerCase();
  if (s === "free") return 0;
  const match = /^\$?\s*([0-9]+(?:\.[0-9]+)?)\s*(usd|usdc)?\s*(\/\s*(request|call|req))?$/.exec(s);
  return match ? Number(match[1]) : null;
}

/** One x402 List item as an entry, or null when it has no usable URL. */
export function x402ListItemToEntry(item: unknown): DirectoryEntry | null {
  if (!isObject(item)) return null;
  const url = normaliseEndpointUrl(item.url ?? item.resource ?? item.endpoint);
  if (!url) return null;
  return {
    url,
    origin: new URL(url).origin,
    name: text(item.name) ?? text(item.slug),
    description: text(item.description),
    network: normaliseNetwork(item.network),
    price_usd: parseListedPrice(item.price_per_request ?? item.price),
    pay_to: text(item.payTo) ?? text(item.pay_to),
    method: null,
    tags: Array.isArray(item.tags) ? item.tags.filter((t): t is string => typeof t === "string") : [],
  };
}

/** The x402 List directory at `servicesUrl`. */
export function x402ListDirectory(servicesUrl: string): DirectorySource {
  return {
    name: "x402_list",
    async list(signal) {
      const entries: DirectoryEntry[] = [];
      for (let page = 1; page <= MAX_PAGES; page++) {
        const url = new URL(servicesUrl);
        url.searchParams.set("page", String(page));
        url.searchParams.set("per_page", String(PER_PAGE));
        const body = await fetchDirectoryJson("x402_list", url.href, { signal });
        const items = isObject(body) ? (body.data ?? body.services ?? body.items) : Array.isArray(body) ? body : undefined;
        if (!Array.isArray(items)) throw new DirectoryError("x402_list", "error: unexpected response shape (no data array)");
        for (const item of items) {
          const entry = x402ListItemToEntry(item);
          if (entry) entries.push(entry);
        }
        const meta = isObject(body) && isObject(body.meta) ? body.meta : {};
        const totalPages = typeof meta.total_pages === "number" ? meta.total_pages : undefined;
        if (items.length === 0 || (totalPages !== undefined ? page >= totalPages : items.length < PER_PAGE)) break;
      }
      return entries;
    },
  };
}
