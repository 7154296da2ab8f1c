/**
 * The secondary site (Base token-risk tools under `/v1/`) served by the same process on its own
 * origin: its own port in local mode, its host name on the primary's port when SECONDARY_HOST is
 * set. Its discovery documents, landing page and challenges are its own and quote its origin;
 * each site refuses the other's paths with 404 JSON; payments and the ledger are shared. Prices
 * are checked against the price contract written out in test/support/price-contract.ts.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkL2ForOpenAPI, getOpenAPI, getWarningsForL2, getWarningsForOpenAPI, isOpenApiParseFailure } from "@agentcash/discovery";
import { compileErrors, validate } from "@readme/openapi-parser";
import { Document, type RulesetDefinition, Spectral } from "@stoplight/spectral-core";
import Parsers from "@stoplight/spectral-parsers";
import { oas } from "@stoplight/spectral-rulesets";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConfigError, loadConfig } from "../src/config.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { contractKey, PRICE_CONTRACT, SECONDARY_PAID_CONTRACT, SECONDARY_PRICE_CONTRACT } from "./support/price-contract.ts";
import { paidPost, wallet } from "./support/scenario.ts";
import { chainClient, devnet, startTestService, testConfig } from "./support/service.ts";

const NO_NETWORK = fileURLToPath(new URL("./support/no-network.mjs", import.meta.url));
const REDOCLY = fileURLToPath(new URL("../node_modules/@redocly/cli/bin/cli.js", import.meta.url));

type OpenApiDoc = {
  info: { title: string; contact: { url: string }; "x-guidance": string };
  paths: Record<string, Record<string, { "x-price-usd": number; "x-payment-info"?: unknown; security: unknown[] }>>;
};

let service: RunningService;
let secondary: string;
beforeAll(async () => {
  service = await startTestService();
  secondary = service.secondaryUrl as string;
});
afterAll(() => service.close());

describe("the secondary site's configuration", () => {
  const production = {
    RPC_URL: "https://mainnet.base.org",
    PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    FACILITATOR_URL: "https://facilitator.payai.network",
    PUBLIC_URL: "https://api.example.com",
  };
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };

  it("listens on port 4022 in local mode, on a free port when PORT is 0, and on SECONDARY_PORT when set", () => {
    expect(loadConfig({}).secondary).toEqual({ host: undefined, publicUrl: undefined, port: 4022 });
    expect(loadConfig({ PORT: "0" }).secondary.port).toBe(0);
    expect(loadConfig({ SECONDARY_PORT: "5022" }).secondary.port).toBe(5022);
  });

  it("is chosen by host name in production, its public URL defaulting to https and that host", () => {
    expect(loadConfig({ ...production }).secondary).toEqual({ host: undefined, publicUrl: undefined, port: 4022 });
    expect(loadConfig({ ...production, SECONDARY_HOST: "Tools.Example.com" }).secondary).toMatchObject({
      host: "tools.example.com",
      publicUrl: "https://tools.example.com",
    });
    expect(loadConfig({ ...production, SECONDARY_PUBLIC_URL: "https://v1.example.com/" }).secondary).toMatchObject({
      host: "v1.example.com",
      publicUrl: "https://v1.example.com",
    });
  });

  it("names each bad setting", () => {
    expect(problems({ ...production, SECONDARY_HOST: "https://tools.example.com" })).toEqual([
      'SECONDARY_HOST must be a host name such as tools.example.com (no scheme, port or path), got "https://tools.example.com"',
    ]);
    expect(problems({ ...production, SECONDARY_HOST: "tools.example.com", SECONDARY_PORT: "4022" })).toEqual([
      "SECONDARY_PORT is for local mode; in production the secondary site is chosen by SECONDARY_HOST on PORT",
    ]);
    expect(problems({ ...production, PUBLIC_URL: "https://api.example.com", SECONDARY_HOST: "api.example.com" })).toEqual([
      "SECONDARY_HOST names the same host as PUBLIC_URL; the two sites need two host names",
    ]);
    expect(problems({ SECONDARY_PORT: "70000" })).toEqual(['SECONDARY_PORT must be a port number 0-65535, got "70000"']);
  });
});

describe("the secondary site on its own port", () => {
  it("listens on a port of its own, beside the primary", () => {
    expect(secondary).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
    expect(secondary).not.toBe(service.url);
  });

  it("publishes an /openapi.json listing exactly its routes with their prices, which the OpenAPI validator accepts", async () => {
    const res = await fetch(`${secondary}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OpenApiDoc;
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? "valid" : compileErrors(result)).toBe("valid");
    expect(doc.info.title).toBe("Token-risk tools on Base");
    expect(doc.info.contact.url).toBe(`${secondary}/`);
    const listed = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    expect(listed.sort()).toEqual(SECONDARY_PRICE_CONTRACT.map(contractKey).sort());
    for (const c of SECONDARY_PRICE_CONTRACT) {
      const op = doc.paths[c.path]?.[c.method.toLowerCase()];
      expect(op?.["x-price-usd"], contractKey(c)).toBe(c.usd ?? 0);
      expect(op?.security, contractKey(c)).toEqual([]);
      expect(op?.["x-payment-info"], contractKey(c)).toEqual(
        c.usd === null ? undefined : { price: { mode: "fixed", currency: "USD", amount: c.usd.toFixed(2) }, protocols: [{ x402: {} }] },
      );
    }
    expect(doc.info["x-guidance"]).toContain(
      "- Health of the Base token-risk tools: network, chain head and its age: GET /health (free)\n",
    );
    expect(doc.info["x-guidance"]).not.toContain("/api/");
  });

  it("passes Spectral's OpenAPI ruleset and Redocly's recommended lint with nothing reported", async () => {
    const text = await (await fetch(`${secondary}/openapi.json`)).text();
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[oas as RulesetDefinition, "recommended"]] });
    const results = await spectral.run(new Document(text, Parsers.Json, "openapi.json"));
    expect(results.map((r) => `${r.code} at ${r.path.join(".")}: ${r.message}`)).toEqual([]);

    const workDir = mkdtempSync(path.join(tmpdir(), "secondary-lint-"));
    try {
      const file = path.join(workDir, "openapi.json");
      writeFileSync(file, text);
      writeFileSync(path.join(workDir, "redocly.yaml"), "extends:\n  - recommended\ntelemetry: off\n");
      const run = spawnSync(
        process.execPath,
        ["--import", NO_NETWORK, REDOCLY, "lint", file, "--format=json", "--config", path.join(workDir, "redocly.yaml")],
        {
          cwd: workDir,
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", DO_NOT_TRACK: "1" },
        },
      );
      const report = JSON.parse(run.stdout) as { totals: Record<string, number>; problems: { ruleId: string; message: string }[] };
      expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
      expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it("is read by @agentcash/discovery with every route and no warning", async () => {
    const openApi = (await getOpenAPI(secondary))._unsafeUnwrap();
    if (openApi === null || isOpenApiParseFailure(openApi)) throw new Error("no OpenAPI document");
    const l2 = checkL2ForOpenAPI(openApi);
    expect([...getWarningsForOpenAPI(openApi), ...getWarningsForL2(l2)]).toEqual([]);
    expect(l2.routes.map((r) => `${r.method} ${r.path}`).sort()).toEqual(SECONDARY_PRICE_CONTRACT.map(contractKey).sort());
  });

  it("publishes /.well-known/x402 with its own paid routes only", async () => {
    const doc = (await (await fetch(`${secondary}/.well-known/x402`)).json()) as {
      resources: string[];
      network: string;
      endpoints: { method: string; path: string; price_usd: number; amount: string }[];
    };
    expect([...doc.resources].sort()).toEqual(SECONDARY_PAID_CONTRACT.map(contractKey).sort());
    expect(doc.network).toBe(base.id);
    expect(doc.endpoints.map((e) => [contractKey(e), e.price_usd, e.amount]).sort()).toEqual(
      SECONDARY_PAID_CONTRACT.map((c) => [contractKey(c), c.usd, c.atomic]).sort(),
    );
  });

  it("has its own landing page listing its routes and prices, and none of the primary's", async () => {
    const res = await fetch(`${secondary}/`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const rows = [
      ...html.matchAll(
        /<tr[^>]*>\s*<td[^>]*>\s*<span class="method"[^>]*>(GET|POST)<\/span>\s*<code[^>]*>([^<]+)<\/code>[\s\S]*?<td class="price"[^>]*>([\s\S]*?)<\/td>\s*<\/tr>/g,
      ),
    ].map((m) => [`${m[1]} ${m[2]}`, (m[3] ?? "").replace(/<[^>]*>/g, "").trim()]);
    expect(rows.sort()).toEqual(
      SECONDARY_PRICE_CONTRACT.map((c) => [contractKey(c), c.usd === null ? "free" : `$${c.usd.toFixed(2)}`]).sort(),
    );
    expect(html).toContain("<title>Token-risk tools on Base</title>");
    expect(html).not.toContain("/api/");
    expect(html).not.toContain('href="/playbooks"');
    // The primary's landing page does not list the secondary's routes.
    const primary = await (await fetch(`${service.url}/`)).text();
    expect(primary).not.toContain("<code>/v1/");
    expect(primary).toContain("<code>/api/wallet-profile</code>");
  });

  it("serves its own /errors, whose header links only its own pages and whose footer names Base", async () => {
    const res = await fetch(`${secondary}/errors`);
    expect(res.status).toBe(200);
    const page = await res.text();
    const links = [...page.matchAll(/<nav[^>]*>([\s\S]*?)<\/nav>/g)].flatMap((m) =>
      [...(m[1] as string).matchAll(/href="([^"]+)"/g)].map((h) => h[1]),
    );
    expect(links).toEqual(["/", "/openapi.json", "/.well-known/x402", "/errors"]);
    for (const link of links) expect([link, (await fetch(`${secondary}${link}`)).status]).toEqual([link, 200]);
    expect(page).toContain(`Paid routes settle per call in USDC on Base (${base.id}) with x402 v2.`);
    expect(page).toContain('id="payment_required"');
  });

  it("answers 402 on every paid route with a challenge quoting its own origin and the contract's amount", async () => {
    for (const c of SECONDARY_PAID_CONTRACT) {
      const res = await fetch(`${secondary}${c.path}`, { method: c.method, headers: { "content-type": "application/json" }, body: "{}" });
      expect(res.status, contractKey(c)).toBe(402);
      const header = decodePaymentRequiredHeader(res.headers.get("payment-required") as string);
      expect(await res.json()).toEqual(JSON.parse(JSON.stringify(header)));
      expect(header.resource?.url).toBe(`${secondary}${c.path}`);
      expect(header.accepts).toEqual([
        {
          scheme: "exact",
          network: base.id,
          asset: base.usdc.address,
          amount: c.atomic,
          payTo: devnet().payTo,
          maxTimeoutSeconds: 300,
          extra: { name: "USD Coin", version: "2", primaryType: "TransferWithAuthorization" },
        },
      ]);
    }
  });

  it("answers GET /health with the network, the chain head and its age", async () => {
    const before = Number(await chainClient().getBlockNumber({ cacheTime: 0 }));
    const res = await fetch(`${secondary}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { chain_head: number; head_age_seconds: number };
    const head = await chainClient().getBlock({ blockNumber: BigInt(body.chain_head) });
    expect(body).toEqual({
      status: "ok",
      network: base.id,
      chain_head: expect.any(Number),
      head_age_seconds: expect.any(Number),
      version: "1.0.0",
    });
    expect(body.chain_head).toBeGreaterThanOrEqual(before);
    const age = Math.floor(Date.now() / 1000) - Number(head.timestamp);
    expect(body.head_age_seconds).toBeGreaterThanOrEqual(Math.max(0, age - 2));
    expect(body.head_age_seconds).toBeLessThanOrEqual(Math.max(0, age));
  });
});

describe("each site refuses the other's paths", () => {
  const notFound = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, init);
    const body = (await res.json()) as { error: { code: string } };
    return [res.status, res.headers.get("content-type"), body.error.code];
  };
  const json = ["not_found"];

  it("the primary answers 404 JSON for /v1/ paths, /health and the secondary's built landing page, never charging", async () => {
    for (const p of ["/v1/wallet-profile", "/v1/defi-sentiment", "/v1/unknown"]) {
      expect(await notFound(`${service.url}${p}`, { method: "POST", body: "{}" }), p).toEqual([
        404,
        expect.stringMatching(/^application\/json/),
        ...json,
      ]);
    }
    expect(await notFound(`${service.url}/health`)).toEqual([404, expect.stringMatching(/^application\/json/), ...json]);
    expect(await notFound(`${service.url}/sites/base-tools`)).toEqual([404, expect.stringMatching(/^application\/json/), ...json]);
  });

  it("the secondary answers 404 JSON for /api/ paths and the primary's reader pages", async () => {
    for (const [method, p] of [
      ["POST", "/api/wallet-profile"],
      ["GET", "/api/health"],
      ["GET", "/api/pricing"],
      ["GET", "/playbooks"],
      ["GET", "/kb"],
    ] as const) {
      expect(await notFound(`${secondary}${p}`, { method, ...(method === "POST" ? { body: "{}" } : {}) }), p).toEqual([
        404,
        expect.stringMatching(/^application\/json/),
        ...json,
      ]);
    }
    // The pages it does serve: error codes and the icons.
    expect((await fetch(`${secondary}/errors`)).status).toBe(200);
    expect((await fetch(`${secondary}/favicon.svg`)).status).toBe(200);
  });

  it("the primary still lists only its own routes", async () => {
    const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as OpenApiDoc;
    const listed = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    expect(listed.sort()).toEqual(PRICE_CONTRACT.map(contractKey).sort());
  });
});

describe("the secondary site by host name on the primary's port", () => {
  let hosted: RunningService;
  beforeAll(async () => {
    const config = testConfig({ SECONDARY_HOST: "tools.example.test", SECONDARY_PUBLIC_URL: "https://tools.example.test" });
    hosted = await startTestService({ config });
  });
  afterAll(() => hosted.close());

  it("routes a request naming SECONDARY_HOST to the secondary site, whose challenges and documents name SECONDARY_PUBLIC_URL", async () => {
    const { rawRequest } = await import("./support/service.ts");
    const health = await rawRequest(hosted.url, "GET", "/health", { host: "tools.example.test" });
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ status: "ok", network: base.id });

    const unpaid = await rawRequest(
      hosted.url,
      "POST",
      "/v1/wallet-profile",
      { host: "tools.example.test", "content-type": "application/json" },
      "{}",
    );
    expect(unpaid.status).toBe(402);
    const challenge = decodePaymentRequiredHeader(unpaid.headers["payment-required"] as string);
    expect(challenge.resource?.url).toBe("https://tools.example.test/v1/wallet-profile");

    const wellKnown = JSON.parse((await rawRequest(hosted.url, "GET", "/.well-known/x402", { host: "tools.example.test" })).body) as {
      resource_urls: string[];
    };
    expect(wellKnown.resource_urls.sort()).toEqual(SECONDARY_PAID_CONTRACT.map((c) => `https://tools.example.test${c.path}`).sort());
    const doc = JSON.parse((await rawRequest(hosted.url, "GET", "/openapi.json", { host: "tools.example.test" })).body) as OpenApiDoc;
    expect(doc.info.contact.url).toBe("https://tools.example.test/");

    // Any other host gets the primary site, which does not answer /v1/.
    const primary = await rawRequest(hosted.url, "POST", "/v1/wallet-profile", { host: "other.example.test" }, "{}");
    expect(primary.status).toBe(404);
    const api = await rawRequest(hosted.url, "GET", "/api/health", { host: "tools.example.test" });
    expect(api.status).toBe(404);
  });
});

describe("the shared analytics routes", () => {
  it("POST /v1/wallet-profile answers what /api/wallet-profile answers, and charges its price once", async () => {
    const address = wallet("cold").address;
    const moving = (body: Record<string, unknown>) => {
      const {
        block_number: _b,
        recent_usdc_activity,
        ...rest
      } = body as { block_number: number; recent_usdc_activity: Record<string, unknown> };
      const { from_block: _f, to_block: _t, window_blocks: _w, ...activity } = recent_usdc_activity;
      return { ...rest, recent_usdc_activity: activity };
    };
    const primary = await paidPost(service, "/api/wallet-profile", { address });
    const v1 = await paidPost({ ...service, url: secondary }, "/v1/wallet-profile", { address }, 7);
    expect(v1.status).toBe(200);
    expect(v1.spent).toBe(100_000n);
    expect(v1.headers.get("payment-response")).toBeTruthy();
    expect(moving(v1.body)).toEqual(moving(primary.body));
    expect(v1.body.address).toBe(address);
  });

  it("POST /v1/defi-sentiment answers a DefiLlama parent slug with the parent's aggregate (its /protocol answer)", async () => {
    const aave = await paidPost({ ...service, url: secondary }, "/v1/defi-sentiment", { protocol: "aave" }, 7);
    expect(aave.status).toBe(200);
    expect(aave.spent).toBe(100_000n);
    // fixtures/upstreams/defillama-protocol-aave.json: chain TVLs without borrowed and staking;
    // the change between the current point and the last one a day before it.
    const change = (28_153 / 28_400 - 1) * 100;
    expect(aave.body).toMatchObject({
      asset: null,
      protocol: "aave",
      protocol_tvl: {
        slug: "aave",
        name: "Aave",
        tvl_usd: 23_100_000_000 + 2_200_000_000 + 1_310_000_000 + 1_100_000_000,
        change_24h_pct: change,
        change_source: "tvl_series",
        members: ["aave-v2", "aave-v3"],
      },
      score: Number((change * 10).toFixed(2)),
      sentiment: "neutral",
    });
  });

  it("sums a parent's versions from the protocol list when DefiLlama has no aggregate for it", async () => {
    const { status, body } = await paidPost(service, "/api/defi-sentiment", { protocol: "Uniswap" }, 7);
    expect(status).toBe(200);
    // fixtures/upstreams/defillama-protocols.json: Uniswap V3 (4,101,220,330.2, +0.45 %) and V2 (1,480,500,000.5, -2 %).
    const tvl = 4_101_220_330.2 + 1_480_500_000.5;
    const before = 4_101_220_330.2 / 1.0045 + 1_480_500_000.5 / 0.98;
    expect(body.protocol_tvl).toEqual({
      slug: "uniswap",
      name: "Uniswap",
      tvl_usd: tvl,
      change_24h_pct: (tvl / before - 1) * 100,
      change_source: "protocols_list",
      members: ["uniswap-v2", "uniswap-v3"],
    });
  });

  it("an invalid body on the secondary site is a 400 naming the field, not charged", async () => {
    const bad = await paidPost({ ...service, url: secondary }, "/v1/wallet-profile", { address: "0x1234" }, 7);
    expect(bad.status).toBe(400);
    expect(bad.spent).toBe(0n);
    expect(JSON.stringify(bad.body)).toContain("address");
  });
});
