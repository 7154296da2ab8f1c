/**
 * Local mode's offline catalogue: a handful of demo sellers on loopback addresses (one of
 * each behaviour) plus this service's own paid routes, listed by local stand-ins of the CDP
 * Bazaar and x402 List directories. With it, `npm start` and `npm run crawl` show a real
 * directory search and leaderboard without the internet.
 */
import { atomicUsdc } from "../../../spec/route.ts";
import { paidRoutes } from "../../../spec/routes.ts";
import { cdpItems, type ListedEndpoint, startLocalDirectories, x402ListItems } from "../../upstreams/directory-fixtures.ts";
import { SELLER_KINDS, startSellers } from "./demo-sellers.ts";

/** A running demo catalogue. */
export interface DemoCatalogue {
  cdpUrl: string;
  x402ListUrl: string;
  /** Origins listed. */
  origins: number;
  close(): Promise<void>;
}

/** Options of the demo catalogue. */
export interface DemoCatalogueOptions {
  /** This service's URL, to list its own paid routes; omitted: not listed. */
  serviceUrl?: string;
  /** The receiving address of this service (and of the conforming demo seller). */
  payTo: `0x${string}`;
}

/** Start the demo sellers and the two local directories listing them. */
export async function startDemoCatalogue(options: DemoCatalogueOptions): Promise<DemoCatalogue> {
  const { sellers, close: closeSellers } = await startSellers(
    // One loopback address (several ports): 127.0.0.2 and up need setup on macOS.
    SELLER_KINDS.map((kind) => ({
      kind,
      host: "127.0.0.1",
      slowMs: 60_000,
      ...(kind === "conforming_v2" ? { payTo: options.payTo } : {}),
    })),
  );
  const listed: ListedEndpoint[] = sellers.map((s) => ({
    url: s.url,
    method: s.method,
    amount: s.spec.kind === "expensive" ? "25000000" : "10000",
    payTo: options.payTo,
    description: `Demo seller: ${s.spec.kind.replaceAll("_", " ")}`,
    name: `demo ${s.spec.kind}`,
    tags: ["demo"],
  }));
  const own: ListedEndpoint[] = options.serviceUrl
    ? paidRoutes.map((r) => ({
        url: `${options.serviceUrl}${r.path}`,
        method: r.method,
        amount: atomicUsdc(r.price as number),
        payTo: options.payTo,
        description: r.summary,
        name: "x402 chain data service (local)",
        tags: [...r.tags],
      }))
    : [];
  // Both directories list this service; the demo sellers are split between them, with overlap.
  const half = Math.ceil(listed.length / 2);
  const directories = await startLocalDirectories({
    cdp: cdpItems([...own, ...listed.slice(0, half + 1)]),
    x402List: x402ListItems([...own.slice(0, 3), ...listed.slice(half - 1)]),
  });
  return {
    cdpUrl: directories.cdpUrl,
    x402ListUrl: directories.x402ListUrl,
    origins: sellers.length + (options.serviceUrl ? 1 : 0),
    close: async () => {
      await directories.close();
      await closeSellers();
    },
  };
}
