/**
 * `POST /api/x402-directory`: search the CDP Bazaar and x402 List directories, merged by URL,
 * with each directory's status. When no directory answers the call fails (503, not charged).
 */
import { x402Directory } from "../spec/routes/intel.ts";
import { defineFunction } from "../src/context.ts";
import { ServiceError } from "../src/errors.ts";
import { searchCatalogue } from "../src/intel/catalogue.ts";
import { intelOf } from "../src/intel/intel-services.ts";

/** Endpoints returned when `limit` is not given. */
const DEFAULT_LIMIT = 20;

export default defineFunction(x402Directory, async (input, ctx) => {
  const snapshot = await intelOf(ctx).catalogue.read();
  if (snapshot.sources_ok === 0) {
    const states = Object.entries(snapshot.sources)
      .map(([name, status]) => `${name}: ${status}`)
      .join("; ");
    throw new ServiceError("unavailable", `No x402 directory answered (${states}); you were not charged. Retry in a minute.`, {
      details: { sources: snapshot.sources },
      headers: { "Retry-After": "30" },
    });
  }
  const limit = input.limit ?? DEFAULT_LIMIT;
  const found = searchCatalogue(snapshot, { query: input.query, network: input.network, max_price_usd: input.max_price_usd, limit });
  return {
    query: input.query ?? null,
    network: input.network ?? null,
    max_price_usd: input.max_price_usd ?? null,
    limit,
    sources: snapshot.sources,
    results: found.endpoints.length,
    matched: found.matched,
    fetched_at: snapshot.fetched_at,
    endpoints: found.endpoints.map((e) => ({
      url: e.url,
      price_usd: e.price_usd,
      sources: [...e.sources],
      network: e.network,
      payTo: e.pay_to,
      description: e.description,
      name: e.name,
      method: e.method,
      tags: [...e.tags],
    })),
  };
});
