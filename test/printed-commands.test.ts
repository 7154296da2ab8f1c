/**
 * Every `npm run buy` command a reader is shown runs as printed: the commands on the free pages
 * (every page the home page links, read from the served HTML) and in README.md's fenced blocks
 * (read at test time, whatever README lands) are each run through bash against the running
 * service, with a devnet buyer's key. Each must parse as one simple command (no `&`, `;` or
 * pipe a shell would split it at), ask for exactly the URL it names, answer 200, and be charged
 * exactly: the settlement transaction's USDC Transfer log moves the route's price from the
 * buyer to payTo, and the buyer's balance falls by that much and no more; a free call moves
 * nothing. `buy` itself is also run on a free GET, a paid GET and a POST without a body.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeHTML } from "entities";
import { parse as parseShell } from "shell-quote";
import { erc20Abi, type PrivateKeyAccount, parseEventLogs, parseUnits } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buy } from "../scripts/buy.ts";
import { atomicUsdc, type RouteDef } from "../spec/route.ts";
import { primarySite } from "../spec/sites.ts";
import { CHECK_NAMES } from "../src/intel/conformance.ts";
import { finishRun, insertRows, startRun, summarise, type TrustRecord } from "../src/intel/leaderboard.ts";
import { notMeasured } from "../src/intel/reputation.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { tryItCommand } from "../src/server/try-it.ts";
import type { Store } from "../src/store/store.ts";
import { buyerAccount, chainClient, devnet, freshSqliteStore, startTestService, usdcBalance } from "./support/service.ts";

const root = path.resolve(import.meta.dirname, "..");

let service: RunningService;
let store: Store;
let buyer: PrivateKeyAccount;

/** One crawl recorded, so the leaderboard's paid reads have rows to answer with. */
async function seedLeaderboard(into: Store): Promise<void> {
  const at = new Date("2026-11-20T00:00:00Z");
  const rows: TrustRecord[] = [0, 1, 2].map((o) => ({
    origin: `https://seller-${o}.example`,
    endpoint: `https://seller-${o}.example/api/x`,
    method: "POST",
    endpoints: 1,
    reachable: true,
    status: 402,
    score: 40 + o * 20,
    verdict: o === 2 ? "pay" : "pay_with_caution",
    penalties: [],
    checks: Object.fromEntries(CHECK_NAMES.map((c) => [c, true])) as TrustRecord["checks"],
    payable: true,
    conformant: true,
    discoverable: false,
    price_usd: 0.01,
    pay_to: null,
    network: base.id,
    x402_version: 2,
    reputation: notMeasured("seeded for the printed-commands test"),
    latency_ms: 20,
    probed_at: at,
  }));
  const id = await startRun(into, "test", at);
  await insertRows(into, id, rows);
  await finishRun(into, id, summarise(rows, rows.length, { test: "ok" }), at);
}

beforeAll(async () => {
  store = await freshSqliteStore();
  await seedLeaderboard(store);
  service = await startTestService({ store, statusFeed: true });
  await service.jobs.runNow("status");
  buyer = buyerAccount(6);
});
afterAll(async () => {
  await service?.close();
  await store?.close();
});

/** This run's environment without what tells `npm run buy` where the service is and whose key to use. */
function bareEnv(): NodeJS.ProcessEnv {
  const { BASE_URL: _url, PORT: _port, DATA_DIR: _dir, BUYER_PRIVATE_KEY: _key, ...rest } = process.env;
  return rest;
}

/**
 * Run `command` through bash in the repository, as a reader pastes it, paying with `buyer`;
 * `told: false` runs it in a terminal that was told nothing, neither the service's URL nor a key.
 */
function runCommand(command: string, told = true): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], {
      cwd: root,
      env: {
        ...bareEnv(),
        ...(told ? { BASE_URL: service.url, BUYER_PRIVATE_KEY: devnet().buyers[6]?.privateKey } : {}),
        npm_config_loglevel: "silent",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

/** The `npm run buy` commands in the code blocks (`<pre><code>`) of an HTML page. */
function commandsInHtml(html: string): string[] {
  return [...html.matchAll(/<pre[^>]*>\s*<code[^>]*>([\s\S]*?)<\/code>/g)]
    .map((m) => decodeHTML((m[1] as string).replace(/<[^>]+>/g, "")).trim())
    .flatMap((text) => text.split("\n"))
    .map((line) => line.trim())
    .filter((line) => line.startsWith("npm run buy"));
}

/** The `npm run buy` lines of a Markdown file's fenced code blocks (a leading `$ ` prompt dropped). */
function commandsInMarkdown(markdown: string): string[] {
  const found: string[] = [];
  let fenced = false;
  for (const raw of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      continue;
    }
    const line = raw.trim().replace(/^\$\s+/, "");
    if (fenced && line.startsWith("npm run buy")) found.push(line);
  }
  return found;
}

/** The free pages: every same-origin HTML page reachable by links from the home page (not the API or documents). */
async function freePages(): Promise<string[]> {
  const seen = ["/"];
  for (let i = 0; i < seen.length && seen.length < 100; i++) {
    const res = await fetch(`${service.url}${seen[i]}`);
    if (!(res.headers.get("content-type") ?? "").startsWith("text/html")) continue;
    for (const m of (await res.text()).matchAll(/href="(\/[^"#?]*)"/g)) {
      const href = m[1] as string;
      if (!href.startsWith("/api/") && !href.startsWith("/.") && !/\.[a-z]+$/.test(href) && !seen.includes(href)) seen.push(href);
    }
  }
  return seen;
}

/** The route a `buy` target names, and what the call should cost in atomic USDC. */
function expectedCharge(method: string, target: string): { route: RouteDef; atomic: bigint } {
  const url = new URL(target, service.url);
  const route = primarySite.routes.find((r) => r.method === method && r.path === url.pathname);
  if (!route) throw new Error(`no route ${method} ${url.pathname}`);
  if (route.price === null) return { route, atomic: 0n };
  const dynamic = route.dynamicPrice ? url.searchParams.get(route.dynamicPrice) : null;
  return { route, atomic: dynamic ? parseUnits(dynamic, 6) : BigInt(atomicUsdc(route.price)) };
}

/** The method and target a `buy` command asks for, as a shell would pass its words. */
function requestOf(command: string): { method: string; target: string; body?: string } {
  const words = parseShell(command);
  const operators = words.filter((w) => typeof w !== "string");
  if (operators.length > 0) throw new Error(`a shell splits it at ${JSON.stringify(operators)}`);
  const args = (words as string[]).slice((words as string[]).indexOf("--") + 1);
  const [first, ...rest] = args;
  if (first === "topup") return { method: "POST", target: `/api/balance/topup?amount=${rest[0] ?? "5"}` };
  if (first === "chat") return { method: "POST", target: "/api/chat" };
  if (first === "balance") return { method: "GET", target: "/api/balance" };
  return { method: (first ?? "").toUpperCase(), target: rest[0] ?? "", ...(rest[1] !== undefined ? { body: rest[1] } : {}) };
}

/** The USDC transfers of a settlement transaction. */
async function transfersOf(tx: `0x${string}`) {
  const receipt = await chainClient().getTransactionReceipt({ hash: tx });
  expect(receipt.status).toBe("success");
  return parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: "Transfer" })
    .filter((l) => l.address.toLowerCase() === devnet().usdc.toLowerCase())
    .map((l) => l.args);
}

/** Run one printed command and check it answers 200 and is charged exactly; returns what went wrong, if anything. */
async function check(command: string): Promise<string | undefined> {
  let request: ReturnType<typeof requestOf>;
  try {
    request = requestOf(command);
  } catch (error) {
    return `${command}: ${(error as Error).message}`;
  }
  const { atomic } = expectedCharge(request.method, request.target);
  const before = await usdcBalance(buyer.address);
  const { code, out } = await runCommand(command);
  const after = await usdcBalance(buyer.address);
  const url = new URL(request.target, service.url).toString();
  const line = out.split("\n").find((l) => / -> \d+ in \d+ ms/.test(l));
  if (!line?.startsWith(`${request.method} ${url} -> 200 `)) return `${command}: expected "${request.method} ${url} -> 200", got:\n${out}`;
  if (code !== 0) return `${command}: exit code ${code}\n${out}`;
  if (before - after !== atomic) return `${command}: the buyer paid ${before - after} atomic USDC, not ${atomic}`;
  const settlement = out.match(new RegExp(`settlement: (0x[0-9a-f]{64}) on ${base.id}`))?.[1] as `0x${string}` | undefined;
  if (atomic === 0n) return settlement ? `${command}: a free call was settled (${settlement})` : undefined;
  if (!settlement) return `${command}: no settlement printed\n${out}`;
  const transfers = await transfersOf(settlement);
  const moved = transfers.map((t) => `${t.from} -> ${t.to}: ${t.value}`);
  const expected = [`${buyer.address} -> ${devnet().payTo}: ${atomic}`];
  if (moved.join("\n") !== expected.join("\n")) return `${command}: settlement ${settlement} moved ${moved.join("; ")}`;
  return undefined;
}

describe("npm run buy", () => {
  it("buys a free GET, a paid GET and a POST without a body, each charged exactly on chain", async () => {
    const slug = "x402-register";
    const failures = [];
    for (const command of [
      "npm run buy -- GET /api/health",
      `npm run buy -- GET /api/howto/${slug}`,
      "npm run buy -- POST /api/gas-tracker",
      `npm run buy -- POST /api/kb/ask '{"question":"who pays the gas for an x402 payment?"}'`,
    ]) {
      failures.push(await check(command));
    }
    expect(failures.filter(Boolean)).toEqual([]);
  }, 120_000);

  it("runs the start banner's Try it line as printed, in a terminal told neither the port nor the data folder", async () => {
    // The service runs on a free port; its data folder is elsewhere, with this file's buyer first.
    const dataDir = mkdtempSync(path.join(tmpdir(), "x402 try it "));
    try {
      writeFileSync(path.join(dataDir, "devnet.json"), JSON.stringify({ ...devnet(), buyers: [devnet().buyers[6]] }));
      const command = tryItCommand(service.url, dataDir);
      const before = await usdcBalance(buyer.address);
      const { code, out } = await runCommand(command, false);
      expect(out).toContain(`POST ${service.url}/api/payment-verify -> 200 `);
      expect(code).toBe(0);
      expect(await usdcBalance(buyer.address)).toBe(before - 100_000n);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    // Started with the defaults, it is the README's command.
    expect(tryItCommand("http://127.0.0.1:4021", "data", root)).toBe(
      `npm run buy -- POST /api/payment-verify '{"tx_hash":"0x${"0".repeat(64)}"}'`,
    );
  }, 60_000);

  it("refuses a command a shell would split, such as an unquoted & in a query", () => {
    expect(() => requestOf("npm run buy -- GET /api/trust-leaderboard?limit=100&order=worst")).toThrow(/a shell splits it/);
    expect(requestOf("npm run buy -- GET '/api/trust-leaderboard?limit=100&order=worst'")).toEqual({
      method: "GET",
      target: "/api/trust-leaderboard?limit=100&order=worst",
    });
  });
});

describe("the commands the free pages and the README print", () => {
  it("finds commands on the pages, one per content page at least", async () => {
    const pages = await freePages();
    for (const p of ["/playbooks", "/howto", "/kb", "/entity-intel", "/leaderboard", "/markets"]) expect(pages).toContain(p);
    const printed = new Set<string>();
    for (const p of pages) for (const c of commandsInHtml(await (await fetch(`${service.url}${p}`)).text())) printed.add(c);
    expect(printed.size).toBeGreaterThanOrEqual(8);
  });

  it("runs each one: 200, the URL it names, charged exactly", async () => {
    const printed = new Map<string, string>();
    for (const p of await freePages()) {
      const res = await fetch(`${service.url}${p}`);
      expect(res.status, p).toBe(200);
      for (const c of commandsInHtml(await res.text())) if (!printed.has(c)) printed.set(c, p);
    }
    for (const c of commandsInMarkdown(readFileSync(path.join(root, "README.md"), "utf8")))
      if (!printed.has(c)) printed.set(c, "README.md");
    const failures: string[] = [];
    for (const [command, where] of printed) {
      const problem = await check(command);
      if (problem) failures.push(`${where}: ${problem}`);
    }
    expect(failures).toEqual([]);
  }, 600_000);
});

/**
 * Inputs for the local chain where a route's example names something only Base mainnet has (the
 * L2 bridge venue) or the route gives none (a search needs its q).
 */
const LOCAL_INPUTS: Record<string, Record<string, unknown>> = {
  "POST /api/entity-intel/venue-users": { venue: "seeded-exchange-x", blocks: 43200 },
  "GET /api/kb/search": { q: "facilitator" },
};

/** The `buy` arguments that call `route` with its example input (a shortcut for the balance routes). */
function argsFor(route: RouteDef): string[] {
  if (route.path === "/api/balance") return ["balance"];
  if (route.path === "/api/balance/topup") return ["topup", "1"];
  const input = LOCAL_INPUTS[`${route.method} ${route.path}`] ?? route.example?.input;
  if (route.method === "GET") {
    const query = input && Object.keys(input).length > 0 ? `?${new URLSearchParams(input as Record<string, string>)}` : "";
    return ["GET", `${route.path}${query}`];
  }
  return input ? ["POST", route.path, JSON.stringify(input)] : ["POST", route.path];
}

describe("npm run buy on every route", () => {
  it("pays each paid route its price exactly and answers each free one without paying", async () => {
    const env = { ...process.env, BASE_URL: service.url, BUYER_PRIVATE_KEY: devnet().buyers[6]?.privateKey };
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const route of primarySite.routes) {
      const args = argsFor(route);
      const before = await usdcBalance(buyer.address);
      const { lines, exitCode } = await buy(args, env);
      const paid = before - (await usdcBalance(buyer.address));
      const status = Number(lines[0]?.match(/ -> (\d+) in /)?.[1]);
      const charge = route.dynamicPrice ? parseUnits(args[1] as string, 6) : route.price === null ? 0n : BigInt(atomicUsdc(route.price));
      outcomes.push(`${route.method} ${route.path}: ${status} exit ${exitCode}, paid ${paid}`);
      // Only a route whose example reaches past the local stand-ins (another seller's URL) may fail, and then it is not charged.
      const outside = ["/api/x402-check", "/api/x402-trust", "/api/x402-directory"].includes(route.path);
      expected.push(
        outside && status !== 200
          ? `${route.method} ${route.path}: ${status} exit 1, paid 0`
          : `${route.method} ${route.path}: 200 exit 0, paid ${charge}`,
      );
    }
    expect(outcomes).toEqual(expected);
    expect(outcomes.filter((o) => o.includes(": 200 ")).length).toBeGreaterThanOrEqual(primarySite.routes.length - 3);
  }, 300_000);
});
