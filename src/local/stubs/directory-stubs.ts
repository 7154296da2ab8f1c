/**
 * Local stand-ins for the two directories, serving fixtures in their documented shapes with
 * their paging (CDP: `limit`/`offset` with `pagination.total`; x402 List: `page`/`per_page`
 * with `meta.total_pages`). CDP items rotate through the documented variants (v2 `amount`
 * with an ISO `lastUpdated`; v1 `maxAmountRequired`, network `base`, unix `lastUpdated`, the
 * description on the option and the method in `outputSchema`; v2 with `metadata`). Used by
 * local mode (so search and crawl work offline), the crawl benchmark and the tests.
 */
import { createServer } from "node:http";
import { DEFAULT_NETWORK } from "../../networks/index.ts";
import { KNOWN_NETWORKS } from "../../networks/known.ts";
import { closeServer, listen } from "./loopback.ts";

/** One endpoint to list. */
export interface ListedEndpoint {
  url: string;
  method: "GET" | "POST";
  /** Atomic USDC. */
  amount: string;
  payTo: string;
  description: string;
  name: string;
  /** CAIP-2 network; default the service's own (src/networks/). */
  network?: string;
  tags?: string[];
}

const USDC_BASE = DEFAULT_NETWORK.usdc.address;
const V1_NAMES: Record<string, string> = Object.fromEntries(KNOWN_NETWORKS.map((n) => [n.id, n.v1Names[0]]));
const EXTRA = { name: "USD Coin", version: "2" };

/** An x402 v2 payment option of `amount` atomic USDC (Base's), as the directories and the demo sellers quote it. */
export function v2Option(network: string, amount: string, payTo: string): Record<string, unknown> {
  return { scheme: "exact", network, amount, payTo, asset: USDC_BASE, maxTimeoutSeconds: 300, extra: EXTRA };
}

/** An x402 v1 payment option: `maxAmountRequired`, and the resource and its description on the option. */
export function v1Option(e: Pick<ListedEndpoint, "url" | "amount" | "payTo" | "description">, network: string, more = {}) {
  return {
    scheme: "exact",
    network,
    maxAmountRequired: e.amount,
    resource: e.url,
    description: e.description,
    mimeType: "application/json",
    payTo: e.payTo,
    maxTimeoutSeconds: 60,
    asset: USDC_BASE,
    ...more,
    extra: EXTRA,
  };
}

/** The CDP Bazaar items of `endpoints`, rotating through the documented variants. */
export function cdpItems(endpoints: readonly ListedEndpoint[]): Record<string, unknown>[] {
  return endpoints.map((e, i) => {
    const network = e.network ?? DEFAULT_NETWORK.id;
    const bazaar = { bazaar: { info: { input: { type: "http", method: e.method } }, schema: {} } };
    const quality = { l30DaysTotalCalls: 42 + i, l30DaysUniquePayers: 15, lastCalledAt: "2026-01-15T10:30:00Z" };
    switch (i % 3) {
      case 0:
        return {
          resource: e.url,
          description: e.description,
          type: "http",
          x402Version: 2,
          lastUpdated: "2026-01-15T10:30:00Z",
          accepts: [v2Option(network, e.amount, e.payTo)],
          extensions: bazaar,
          quality,
          serviceName: e.name,
          tags: e.tags ?? [],
        };
      case 1:
        return {
          resource: e.url,
          type: "http",
          x402Version: 1,
          lastUpdated: 1768473000,
          accepts: [v1Option(e, V1_NAMES[network] ?? network, { outputSchema: { input: { type: "http", method: e.method }, output: {} } })],
        };
      default:
        return {
          resource: e.url,
          type: "http",
          x402Version: 2,
          lastUpdated: "2026-01-16T08:00:00.000Z",
          accepts: [v2Option(network, e.amount, e.payTo)],
          extensions: bazaar,
          metadata: { name: e.name, description: e.description },
          tags: e.tags ?? [],
        };
    }
  });
}

/** The x402 List items of `endpoints` (price as a "$" string, no payTo). */
export function x402ListItems(endpoints: readonly ListedEndpoint[]): Record<string, unknown>[] {
  return endpoints.map((e) => ({
    slug: e.name.toLowerCase().replace(/[^a-z0-9]+/g, "-"),
    name: e.name,
    description: e.description,
    url: e.url,
    network: V1_NAMES[e.network ?? DEFAULT_NETWORK.id] ?? e.network,
    status: "online",
    endpoints: 1,
    price_per_request: `$${(Number(e.amount) / 1e6).toString()}`,
    uptime_24h: 99.8,
    tags: e.tags ?? [],
  }));
}

/** Running local directories. */
export interface LocalDirectories {
  cdpUrl: string;
  x402ListUrl: string;
  /** Requests served, by directory. */
  requests: { cdp: number; x402List: number };
  close(): Promise<void>;
}

/** Serve `cdp` and `x402List` items as the two directories on `host` (default 127.0.0.1). */
export async function startLocalDirectories(items: { cdp: unknown[]; x402List: unknown[] }, host = "127.0.0.1"): Promise<LocalDirectories> {
  const requests = { cdp: 0, x402List: 0 };
  // A directory counts its requests and answers JSON from their query.
  const serve = (directory: keyof typeof requests, answer: (query: URLSearchParams) => unknown) =>
    createServer((req, res) => {
      requests[directory]++;
      const body = JSON.stringify(answer(new URL(req.url ?? "/", "http://local").searchParams));
      res.writeHead(200, { "content-type": "application/json" }).end(body);
    });
  const cdp = serve("cdp", (query) => {
    const asked = Number(query.get("limit") ?? 100);
    // As documented: rounded to 10 and clamped to 20..1000.
    const limit = Math.min(1000, Math.max(20, Math.round((Number.isFinite(asked) ? asked : 100) / 10) * 10));
    const offset = Math.max(0, Number(query.get("offset") ?? 0) || 0);
    return { x402Version: 2, items: items.cdp.slice(offset, offset + limit), pagination: { limit, offset, total: items.cdp.length } };
  });
  const list = serve("x402List", (query) => {
    const perPage = Math.min(100, Math.max(1, Number(query.get("per_page") ?? 20) || 20));
    const page = Math.max(1, Number(query.get("page") ?? 1) || 1);
    return {
      data: items.x402List.slice((page - 1) * perPage, page * perPage),
      meta: {
        page,
        per_page: perPage,
        total: items.x402List.length,
        total_pages: Math.max(1, Math.ceil(items.x402List.length / perPage)),
      },
    };
  });
  const [cdpPort, listPort] = await Promise.all([listen(cdp, host), listen(list, host)]);
  return {
    cdpUrl: `http://${host}:${cdpPort}/platform/v2/x402/discovery/resources`,
    x402ListUrl: `http://${host}:${listPort}/api/v1/services`,
    requests,
    close: async () => void (await Promise.all([cdp, list].map(closeServer))),
  };
}
