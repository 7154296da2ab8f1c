/**
 * The CDP Bazaar discovery API (`GET .../x402/discovery/resources?type=http&limit=&offset=`)
 * as directory entries. The item shape differs between the x402 spec, the docs and the live
 * API, so every documented variant is read: `items` (or `resources`) at the top, `amount`
 * (v2) or `maxAmountRequired` (v1), networks as CAIP-2 ids (`eip155:…`) or v1 names (`base`), `lastUpdated` as
 * unix seconds or ISO text, description on the item, in `metadata` or on the option, and the
 * method in `extensions.bazaar.info.input` (v2) or the option's `outputSchema.input` (v1).
 */
import { isUsdc, normaliseNetwork } from "../intel/networks.ts";
import { isObject } from "../json.ts";
import { DEFAULT_NETWORK } from "../networks/index.ts";
import { type DirectoryEntry, type DirectorySource, normaliseEndpointUrl, text } from "./directory-entry.ts";
import { DirectoryError, fetchDirectoryJson } from "./directory-http.ts";

/** The public discovery endpoint. */
export const CDP_DISCOVERY_URL = "https://api.cdp.coinbase.com/platform/v2/x402/discovery/resources";

/** Page size asked for (the API clamps to 20..1000). */
const PAGE = 1000;
/** Pages read at most. */
const MAX_PAGES = 20;

function methodOf(item: Record<string, unknown>, option: Record<string, unknown> | undefined): "GET" | "POST" | null {
  const bazaar = isObject(item.extensions) && isObject(item.extensions.bazaar) ? item.extensions.bazaar : undefined;
  const v2 = bazaar && isObject(bazaar.info) && isObject(bazaar.info.input) ? bazaar.info.input.method : undefined;
  const v1 = option && isObject(option.outputSchema) && isObject(option.outputSchema.input) ? option.outputSchema.input.method : undefined;
  const method = text(v2) ?? text(v1);
  const upper = method?.toUpperCase();
  return upper === "GET" || upper === "POST" ? upper : null;
}

/** One Bazaar item as an entry, or null when it has no usable URL. */
export function cdpItemToEntry(item: unknown): DirectoryEntry | null {
  if (!isObject(item)) return null;
  const url = normaliseEndpointUrl(item.resource ?? item.url);
  if (!url) return null;
  const accepts = Array.isArray(item.accepts) ? item.accepts.filter(isObject) : [];
  const usdcOn = (o: Record<string, unknown>, network?: string) =>
    isUsdc(normaliseNetwork(o.network), o.asset) && (network === undefined || normaliseNetwork(o.network) === network);
  const option = accepts.find((o) => usdcOn(o, DEFAULT_NETWORK.id)) ?? accepts.find((o) => usdcOn(o)) ?? accepts[0];
  const amount = option ? (option.amount ?? option.maxAmountRequired) : undefined;
  const atomic =
    typeof amount === "string" && /^[0-9]{1,78}$/.test(amount)
      ? amount
      : typeof amount === "number" && Number.isSafeInteger(amount)
        ? String(amount)
        : null;
  const price = option && atomic !== null && usdcOn(option) ? Number(BigInt(atomic)) / 1e6 : null;
  const metadata = isObject(item.metadata) ? item.metadata : {};
  return {
    url,
    origin: new URL(url).origin,
    name: text(item.serviceName) ?? text(metadata.name) ?? null,
    description: text(item.description) ?? text(metadata.description) ?? (option ? text(option.description) : null),
    network: option ? normaliseNetwork(option.network) : null,
    price_usd: price,
    pay_to: option ? text(option.payTo) : null,
    method: methodOf(item, option),
    tags: Array.isArray(item.tags) ? item.tags.filter((t): t is string => typeof t === "string") : [],
  };
}

/** The CDP Bazaar discovery directory at `discoveryUrl`. */
export function cdpBazaarDirectory(discoveryUrl: string): DirectorySource {
  return {
    name: "cdp_bazaar",
    async list(signal) {
      const entries: DirectoryEntry[] = [];
      let offset = 0;
      for (let page = 0; page < MAX_PAGES; page++) {
        const url = new URL(discoveryUrl);
        url.searchParams.set("type", "http");
        url.searchParams.set("limit", String(PAGE));
        url.searchParams.set("offset", String(offset));
        const body = await fetchDirectoryJson("cdp_bazaar", url.href, { signal });
        const items = isObject(body) ? (body.items ?? body.resources) : Array.isArray(body) ? body : undefined;
        if (!Array.isArray(items)) throw new DirectoryError("cdp_bazaar", "error: unexpected response shape (no items array)");
        for (const item of items) {
          const entry = cdpItemToEntry(item);
          if (entry) entries.push(entry);
        }
        // The API may clamp the page size, so the next offset follows what actually came.
        offset += items.length;
        const pagination = isObject(body) && isObject(body.pagination) ? body.pagination : {};
        const total = typeof pagination.total === "number" ? pagination.total : undefined;
        if (items.length === 0 || (total !== undefined ? offset >= total : items.length < PAGE)) break;
      }
      return entries;
    },
  };
}
