/**
 * Local stand-ins for the market-data APIs (DexScreener, DefiLlama TVL and coins, Hyperliquid)
 * on one loopback HTTP server, answering from the recorded-looking fixtures in
 * `fixtures/upstreams/` in each API's documented shape. Local mode points the service at
 * them; tests do too, and can make one upstream slow, malformed or failing.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The upstreams the stub server imitates, by URL prefix. */
export type StubUpstream = "dexscreener" | "defillama" | "defillama-coins" | "hyperliquid";

/** Ways a stubbed upstream can misbehave. */
export type StubFault =
  /** Answers only after `slowMs` (longer than any sane timeout). */
  | "slow"
  /** 200 with a body that is not JSON. */
  | "malformed"
  /** 200 with valid JSON of the wrong shape. */
  | "wrong_shape"
  /** HTTP 500. */
  | "error"
  /** HTTP 429 with Retry-After. */
  | "rate_limited";

/** A running stub server. */
export interface UpstreamStubs {
  /** Base URLs to configure the service with (DEXSCREENER_URL and friends). */
  urls: { dexscreener: string; defillama: string; defillamaCoins: string; hyperliquid: string };
  /** Requests received, in order. */
  requests: { upstream: StubUpstream; method: string; path: string }[];
  /** Make `upstream` misbehave (null: answer normally again). */
  setFault(upstream: StubUpstream, fault: StubFault | null): void;
  close(): Promise<void>;
}

/** Options of {@link startUpstreamStubs}. */
export interface UpstreamStubOptions {
  faults?: Partial<Record<StubUpstream, StubFault>>;
  /** Delay of the `slow` fault (default 30 s). */
  slowMs?: number;
}

/** Where the fixtures live. */
const FIXTURES_DIR = new URL("../../../fixtures/upstreams/", import.meta.url);

interface Fixtures {
  pairs: { chainId: string; baseToken: { address: string }; quoteToken: { address: string }; pairAddress: string }[];
  coinPrices: Record<string, unknown>;
  coinPercentages: Record<string, unknown>;
  protocols: unknown[];
  protocolDetails: Record<string, unknown>;
  hyperliquid: unknown;
  /** DexScreener's latest token profiles (`/token-profiles/latest/v1`). */
  profiles: unknown[];
}

function loadFixtures(dir: URL): Fixtures {
  const read = (name: string) => JSON.parse(readFileSync(new URL(name, dir), "utf8")) as Record<string, unknown>;
  // GET /protocol/{slug} answers from defillama-protocol-{slug}.json (a parent's slug answers its aggregate).
  const protocolDetails: Record<string, unknown> = {};
  for (const file of readdirSync(dir).filter((f) => /^defillama-protocol-[a-z0-9.-]+\.json$/.test(f))) {
    const detail = read(file);
    delete detail._comment;
    protocolDetails[file.slice("defillama-protocol-".length, -".json".length)] = detail;
  }
  return {
    pairs: [
      ...(read("dexscreener-pairs.json").pairs as Fixtures["pairs"]),
      ...(read("dexscreener-solana-pairs.json").pairs as Fixtures["pairs"]),
    ],
    profiles: read("dexscreener-token-profiles.json").profiles as unknown[],
    coinPrices: read("defillama-coins-prices.json").coins as Record<string, unknown>,
    coinPercentages: read("defillama-coins-percentage.json").coins as Record<string, unknown>,
    protocols: read("defillama-protocols.json").protocols as unknown[],
    protocolDetails,
    hyperliquid: read("hyperliquid-meta-and-asset-ctxs.json").response,
  };
}

const PREFIXES: [string, StubUpstream][] = [
  ["/dexscreener", "dexscreener"],
  ["/defillama-coins", "defillama-coins"],
  ["/defillama", "defillama"],
  ["/hyperliquid", "hyperliquid"],
];

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

// The answer of a healthy upstream, or undefined for an unknown path (404).
function answer(fixtures: Fixtures, upstream: StubUpstream, method: string, path: string): { status: number; body: unknown } | undefined {
  const url = new URL(path, "http://stub");
  const parts = url.pathname.split("/").filter(Boolean);
  if (upstream === "dexscreener" && method === "GET") {
    if (url.pathname === "/token-profiles/latest/v1") return { status: 200, body: fixtures.profiles };
    // /token-pairs/v1/{chain}/{token} and /tokens/v1/{chain}/{a,b,...}
    const [kind, version, chain, list] = parts;
    if (version !== "v1" || !chain || !list || (kind !== "token-pairs" && kind !== "tokens")) return undefined;
    const wanted = new Set(list.toLowerCase().split(","));
    const pairs = fixtures.pairs.filter(
      (p) => p.chainId === chain && (wanted.has(p.baseToken.address.toLowerCase()) || wanted.has(p.quoteToken.address.toLowerCase())),
    );
    return { status: 200, body: pairs };
  }
  if (upstream === "defillama" && method === "GET") {
    if (parts.length === 1 && parts[0] === "protocols") return { status: 200, body: fixtures.protocols };
    // /tvl/{slug}: the current TVL as a bare number (the status feed's probe).
    if (parts.length === 2 && parts[0] === "tvl") {
      const found = (fixtures.protocols as { slug?: string; tvl?: number }[]).find((p) => p.slug === (parts[1] as string).toLowerCase());
      return found ? { status: 200, body: found.tvl ?? 0 } : { status: 400, body: { message: "Protocol not found" } };
    }
    if (parts.length === 2 && parts[0] === "protocol") {
      const detail = fixtures.protocolDetails[(parts[1] as string).toLowerCase()];
      return detail ? { status: 200, body: detail } : { status: 404, body: { message: "Protocol not found" } };
    }
    return undefined;
  }
  if (upstream === "defillama-coins" && method === "GET") {
    const [kind, maybeCurrent, maybeList] = parts;
    const list = kind === "prices" && maybeCurrent === "current" ? maybeList : kind === "percentage" ? maybeCurrent : undefined;
    if (!list) return undefined;
    const table = kind === "prices" ? fixtures.coinPrices : fixtures.coinPercentages;
    // DefiLlama echoes each requested key exactly, including its case, and omits unknown coins.
    const coins: Record<string, unknown> = {};
    for (const key of decodeURIComponent(list).split(",")) {
      const value = table[key.toLowerCase()];
      if (value !== undefined) coins[key] = value;
    }
    return { status: 200, body: { coins } };
  }
  if (upstream === "hyperliquid" && method === "POST" && parts.length === 1 && parts[0] === "info") {
    return { status: 200, body: fixtures.hyperliquid };
  }
  return undefined;
}

/** Start the stub server on loopback, on a free port. */
export async function startUpstreamStubs(options: UpstreamStubOptions = {}): Promise<UpstreamStubs> {
  const fixtures = loadFixtures(FIXTURES_DIR);
  const faults = new Map<StubUpstream, StubFault>(Object.entries(options.faults ?? {}) as [StubUpstream, StubFault][]);
  const slowMs = options.slowMs ?? 30_000;
  const timers = new Set<NodeJS.Timeout>();
  const requests: UpstreamStubs["requests"] = [];

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    const match = PREFIXES.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`));
    if (!match) return json(res, 404, { error: "unknown upstream" });
    const [prefix, upstream] = match;
    const rest = path.slice(prefix.length) || "/";
    const method = req.method ?? "GET";
    requests.push({ upstream, method, path: rest });
    const fault = faults.get(upstream);
    const respond = () => {
      if (fault === "malformed") return res.writeHead(200, { "content-type": "application/json" }).end('{"pairs": [{"chainId": "base", ');
      if (fault === "wrong_shape") return json(res, 200, { unexpected: true, data: "shape changed" });
      if (fault === "error") return json(res, 500, { error: "internal error" });
      if (fault === "rate_limited")
        return res.writeHead(429, { "retry-after": "7", "content-type": "text/plain" }).end("Too Many Requests");
      const found = answer(fixtures, upstream, method, rest);
      if (!found) return json(res, 404, { error: `no such ${upstream} endpoint in the stub: ${method} ${rest}` });
      return json(res, found.status, found.body);
    };
    if (fault === "slow") {
      const timer = setTimeout(() => {
        timers.delete(timer);
        respond();
      }, slowMs);
      timers.add(timer);
    } else respond();
  };

  const server = createServer((req, res) => {
    req.resume(); // bodies (Hyperliquid's POST) are not needed: one query type is served
    req.on("end", () => handle(req, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    urls: {
      dexscreener: `${base}/dexscreener`,
      defillama: `${base}/defillama`,
      defillamaCoins: `${base}/defillama-coins`,
      hyperliquid: `${base}/hyperliquid`,
    },
    requests,
    setFault(upstream, fault) {
      if (fault) faults.set(upstream, fault);
      else faults.delete(upstream);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
