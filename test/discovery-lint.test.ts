/**
 * Zero findings from the tools agent directories and API tooling run on a discovery document,
 * against the running local service and offline: @agentcash/discovery (what x402scan registers
 * with), Redocly's recommended lint and Spectral's OpenAPI ruleset. Any error, warning or note
 * fails the test, and so does any attempt to reach the network.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AuditWarning,
  attachProbePayload,
  checkEndpointSchema,
  checkL2ForOpenAPI,
  checkL4ForOpenAPI,
  discoverOriginSchema,
  getOpenAPI,
  getWarningsForFavicon,
  getWarningsForL2,
  getWarningsForL3,
  getWarningsForL4,
  getWarningsForOpenAPI,
  isOpenApiParseFailure,
} from "@agentcash/discovery";
import { Document, type RulesetDefinition, Spectral } from "@stoplight/spectral-core";
import Parsers from "@stoplight/spectral-parsers";
import { oas } from "@stoplight/spectral-rulesets";
import { recoverMessageAddress } from "viem";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { ERROR_DOCS } from "../src/errors.ts";
import type { RunningService } from "../src/server/service.ts";
import { contractKey, PRICE_CONTRACT } from "./support/price-contract.ts";
import { devnet, startTestService } from "./support/service.ts";

/**
 * Routes listed otherwise than "free: unprotected; paid: its fixed price": a route only a
 * signed-in wallet reads, and a top-up whose price is the amount asked (1 to 100 USD).
 */
const LISTED_OTHERWISE: Record<string, [string, string | null, string[] | null]> = {
  "GET /api/balance": ["siwx", null, null],
  "POST /api/balance/topup": ["paid", "1.00-100.00 USD", ["x402"]],
};

const NO_NETWORK = fileURLToPath(new URL("./support/no-network.mjs", import.meta.url));
const REDOCLY = fileURLToPath(new URL("../node_modules/@redocly/cli/bin/cli.js", import.meta.url));

let service: RunningService;
let workDir: string;
beforeAll(async () => {
  service = await startTestService();
  workDir = mkdtempSync(path.join(tmpdir(), "discovery-lint-"));
});
afterAll(async () => {
  await service.close();
  rmSync(workDir, { recursive: true, force: true });
});

// The in-process tools fetch through the global fetch: only the service under test is reachable.
const outside: string[] = [];
beforeEach(() => {
  outside.length = 0;
  const realFetch = globalThis.fetch;
  vi.stubGlobal("fetch", (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    if (new URL(url).origin === service.url) return realFetch(input, init);
    outside.push(url);
    return Promise.reject(new TypeError(`offline test: refused ${url}`));
  });
});
afterEach(() => {
  vi.unstubAllGlobals();
  expect(outside).toEqual([]);
});

/** Run `node <args>` with the no-network guard preloaded and telemetry and update checks off. */
function runOffline(args: string[]) {
  return spawnSync(process.execPath, ["--import", NO_NETWORK, ...args], {
    cwd: workDir,
    encoding: "utf8",
    timeout: 60_000,
    env: {
      ...process.env,
      REDOCLY_TELEMETRY: "off",
      REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
      REDOCLY_SUPPRESS_NOTIFICATIONS: "true",
      DO_NOT_TRACK: "1",
    },
  });
}

async function openApiText(): Promise<string> {
  const res = await fetch(`${service.url}/openapi.json`);
  expect(res.status).toBe(200);
  return res.text();
}

it("/openapi.json is under 150 KB, each repeated schema written once in components and referenced", async () => {
  const text = await openApiText();
  expect(Buffer.byteLength(text)).toBeLessThan(150 * 1024);
  const doc = JSON.parse(text) as {
    paths: Record<string, Record<string, { responses: Record<string, { $ref?: string }> }>>;
    components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
  };
  // The eight how-to operations answer one record: one component, eight references.
  const howto = Object.entries(doc.paths).filter(([p]) => p.startsWith("/api/howto/"));
  expect(howto).toHaveLength(4);
  const refs = howto.flatMap(([, item]) => Object.values(item).map((op) => JSON.stringify(op.responses["200"])));
  expect(new Set(refs).size).toBe(1);
  expect(refs[0]).toMatch(/"\$ref":"#\/components\/schemas\/[A-Za-z0-9]+"/);
  // No subschema of 60 characters or more is written twice anywhere in the document.
  const counts = new Map<string, number>();
  const walk = (v: unknown) => {
    if (!v || typeof v !== "object") return;
    const t = JSON.stringify(v);
    if (!Array.isArray(v) && t.length >= 60 && "type" in v) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const c of Object.values(v)) walk(c);
  };
  walk(doc.paths);
  walk(doc.components.schemas);
  expect([...counts].filter(([, n]) => n > 1).map(([t]) => t.slice(0, 80))).toEqual([]);
  // Error responses come from the error table: each code once, at its status.
  for (const [code, doc_] of Object.entries(ERROR_DOCS)) {
    const response = doc.components.responses[code] as { description: string } | undefined;
    if (response) expect(response.description).toContain(doc_.when);
  }
  // The shared primitives keep their own names, whichever field they were first met under: a
  // client generated from the document types a payer, a token and a recipient as Address.
  expect(doc.components.schemas.Address).toMatchObject({ pattern: "^0x[0-9a-fA-F]{40}$", type: "string" });
  expect(doc.components.schemas.TxHash).toMatchObject({ pattern: "^0x[0-9a-fA-F]{64}$", type: "string" });
  expect(doc.components.schemas.DecimalString).toMatchObject({ pattern: "^-?[0-9]+(\\.[0-9]+)?$", type: "string" });
  const walletProfile = JSON.stringify(doc.paths["/api/wallet-profile"]);
  expect(walletProfile).toContain('"address":{"$ref":"#/components/schemas/Address"}');
  const unpaid = doc.paths["/api/kb/ask"]?.post?.responses;
  expect(unpaid?.["402"]).toEqual({ $ref: "#/components/responses/payment_required" });
  expect(unpaid?.["409"]).toEqual({ $ref: "#/components/responses/payment_in_progress" });
  expect(unpaid?.["413"]).toEqual({ $ref: "#/components/responses/payload_too_large" });
});

it("the no-network guard refuses and names an outgoing connection", () => {
  const run = runOffline(["-e", "fetch('http://198.51.100.7:8080/').catch(() => process.exit(3))"]);
  expect(run.stderr).toContain("no-network: refused a connection to 198.51.100.7:8080");
  expect(run.status).toBe(3);
});

it("@agentcash/discovery finds every route, paid ones as paid with their price, and reports nothing", async () => {
  const origin = service.url;
  // What `npx @agentcash/discovery <origin>` runs (its runDiscover), collected instead of printed.
  const openApi = (await getOpenAPI(origin))._unsafeUnwrap();
  const warnings: AuditWarning[] = [...getWarningsForOpenAPI(openApi), ...(await getWarningsForFavicon(origin))._unsafeUnwrap()];
  if (openApi === null || isOpenApiParseFailure(openApi)) throw new Error(`no OpenAPI document: ${JSON.stringify(warnings)}`);
  const l2 = checkL2ForOpenAPI(openApi);
  warnings.push(...getWarningsForL2(l2), ...getWarningsForL4(checkL4ForOpenAPI(openApi)));
  for (const route of l2.routes) {
    const url = `${origin}${route.path}`;
    const result = await checkEndpointSchema({ url });
    if (!result.found) {
      warnings.push(...getWarningsForL3(null));
      continue;
    }
    const paid = result.advisories.filter((a) => a.source === "openapi" && (a.authMode === "paid" || a.authMode === "apiKey+paid"));
    if (paid.length > 0) await attachProbePayload(url, paid);
    warnings.push(...result.advisories.flatMap((a) => getWarningsForL3(a)));
  }
  // The one advisory left is the size of what we sell: more than 40 operations. The guidance
  // answers it (families share one heading, under 4000 characters), so only its count is allowed.
  const routeCount = warnings.filter((w) => w.code === "L2_ROUTE_COUNT_HIGH");
  expect(routeCount.map((w) => w.message)).toEqual([
    `High route count (${l2.routes.length}) may exceed agent token budgets for zero-hop injection.`,
  ]);
  expect(l2.routes.length).toBe(42);
  expect(warnings.filter((w) => w.code !== "L2_ROUTE_COUNT_HIGH")).toEqual([]);

  const found = await discoverOriginSchema({ target: origin });
  if (!found.found) throw new Error(`discovery found nothing: ${found.cause}`);
  const byKey = (rows: [string, ...unknown[]][]) => [...rows].sort(([a], [b]) => a.localeCompare(b));
  expect(byKey(found.endpoints.map((e) => [`${e.method} ${e.path}`, e.authMode, e.price ?? null, e.protocols ?? null]))).toEqual(
    byKey(
      PRICE_CONTRACT.map((c) => {
        const key = contractKey(c);
        if (key in LISTED_OTHERWISE) return [key, ...(LISTED_OTHERWISE[key] as unknown[])];
        return [
          key,
          c.usd === null ? "unprotected" : "paid",
          c.usd === null ? null : `${c.usd.toFixed(2)} USD`,
          c.usd === null ? null : ["x402"],
        ];
      }),
    ),
  );
  // Local mode publishes the devnet payTo key's proof of this origin, so the origin is ownership-verified.
  expect(found.trustTier).toBe("ownership_verified");
  expect(found.ownershipProofs).toHaveLength(1);
  const signer = await recoverMessageAddress({ message: origin, signature: found.ownershipProofs?.[0] as `0x${string}` });
  expect(signer).toBe(devnet().payTo);
  expect(found.guidanceAvailable).toBe(true);
});

it("Redocly's recommended lint reports no error and no warning, offline", async () => {
  const file = path.join(workDir, "openapi.json");
  writeFileSync(file, await openApiText());
  writeFileSync(path.join(workDir, "redocly.yaml"), "extends:\n  - recommended\ntelemetry: off\n");
  const run = runOffline([REDOCLY, "lint", file, "--format=json", "--config", path.join(workDir, "redocly.yaml")]);
  expect(run.stderr).not.toContain("no-network");
  const report = JSON.parse(run.stdout) as { totals: Record<string, number>; problems: { ruleId: string; message: string }[] };
  expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  expect(run.status).toBe(0);
});

it("Spectral's OpenAPI ruleset reports nothing", async () => {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as RulesetDefinition, "recommended"]] });
  const results = await spectral.run(new Document(await openApiText(), Parsers.Json, "openapi.json"));
  expect(results.map((r) => `${r.code} at ${r.path.join(".")}: ${r.message}`)).toEqual([]);
});
