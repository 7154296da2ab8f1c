/**
 * `/openapi.json` of the site the request came to, built from its routes once per service and origin: the origin and the
 * ownership proofs are known only at run time (PUBLIC_URL, OWNERSHIP_PROOFS, local mode's own
 * proof), so the document is served from here rather than written at build time.
 */
import type { APIRoute } from "astro";
import { LRUCache } from "lru-cache";
import { type SiteDef, siteById } from "../../spec/sites.ts";
import type { FunctionConfig, Services } from "../context.ts";
import { buildOpenApi } from "../discovery/openapi.ts";
import { devnetOwnershipProof, provesOwnership } from "../discovery/ownership-proof.ts";

/** Documents by site and origin, per service configuration; the 8 last used (saneHost bounds the Host header's shape). */
const documents = new WeakMap<FunctionConfig, LRUCache<string, Promise<string>>>();

async function proofsFor(services: Services, origin: string): Promise<readonly string[]> {
  const { config, log } = services;
  const configured = config.ownershipProofs ?? [];
  if (configured.length === 0) {
    // Proofs are EIP-191 signatures by an EVM payTo; a site paid on another family publishes none.
    const local =
      config.mode === "local" && config.network.startsWith("eip155:") ? await devnetOwnershipProof(config.payTo, origin) : undefined;
    return local ? [local] : [];
  }
  for (const [index, proof] of configured.entries()) {
    if (!(await provesOwnership(proof, origin, config.payTo))) {
      log.warn("ownership proof does not verify", { index, origin, pay_to: config.payTo, fix: "npm run ownership-proof" });
    }
  }
  return configured;
}

async function documentFor(services: Services, site: SiteDef, origin: string): Promise<string> {
  const ownershipProofs = await proofsFor(services, origin);
  const doc = buildOpenApi(site.routes, { version: services.config.version, origin, ownershipProofs, site });
  // Compact: agents and directories download it first, and indentation alone would double it.
  return `${JSON.stringify(doc)}\n`;
}

/** The document of the site for the origin it is reached at (its public URL when set). */
export const GET: APIRoute = async ({ url, locals }) => {
  const { services } = locals;
  const site = siteById(locals.site);
  const origin = services.config.publicUrl ? new URL(services.config.publicUrl).origin : url.origin;
  const byOrigin = documents.get(services.config) ?? new LRUCache<string, Promise<string>>({ max: 8 });
  documents.set(services.config, byOrigin);
  const key = `${site.id} ${origin}`;
  const body = byOrigin.get(key) ?? documentFor(services, site, origin);
  byOrigin.set(key, body);
  return new Response(await body, {
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "public, max-age=300" },
  });
};
