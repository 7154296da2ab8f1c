/**
 * Local stand-ins for the market-data APIs (DexScreener, DefiLlama TVL and coins, Hyperliquid)
 * on one loopback HTTP server, answering from the recorded-looking fixtures in
 * `fixtures/upstreams/` in each API's documented shape. Local mode points the service at
 * them; tests do too, and can make one upstream slow, malformed, empty, oversized, reset or failing.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import express, { type NextFunction, type Request, type Response, Router } from "express";
import { closeServer, listen } from "./loopback.ts";

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
  | "rate_limited"
  /** 200 with an empty body. */
  | "empty"
  /** 200 with valid JSON far larger than any real answer (64 MiB). */
  | "huge"
  /** The connection closed without an answer. */
  | "reset";

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

/** A DexScreener pair, as far as the stub reads it. */
type Pair = { chainId: string; baseToken: { address: string }; quoteToken: { address: string } };

function loadFixtures(dir: URL) {
  const read = (name: string) => JSON.parse(readFileSync(new URL(name, dir), "utf8")) as Record<string, unknown>;
  // GET /protocol/{slug} answers from defillama-protocol-{slug}.json (a parent's slug answers its aggregate).
  const protocolDetails: Record<string, unknown> = {};
  for (const file of readdirSync(dir).filter((f) => /^defillama-protocol-[a-z0-9.-]+\.json$/.test(f))) {
    const detail = read(file);
    delete detail._comment;
    protocolDetails[file.slice("defillama-protocol-".length, -".json".length)] = detail;
  }
  return {
    pairs: [...(read("dexscreener-pairs.json").pairs as Pair[]), ...(read("dexscreener-solana-pairs.json").pairs as Pair[])],
    // DexScreener's latest token profiles (`/token-profiles/latest/v1`).
    profiles: read("dexscreener-token-profiles.json").profiles as unknown[],
    coinPrices: read("defillama-coins-prices.json").coins as Record<string, unknown>,
    coinPercentages: read("defillama-coins-percentage.json").coins as Record<string, unknown>,
    protocols: read("defillama-protocols.json").protocols as unknown[],
    protocolDetails,
    hyperliquid: read("hyperliquid-meta-and-asset-ctxs.json").response,
  };
}

// Each upstream's documented endpoints; any other path falls through to a 404 naming it.
function routes(fixtures: ReturnType<typeof loadFixtures>): Record<StubUpstream, Router> {
  const dexscreener = Router();
  dexscreener.get("/token-profiles/latest/v1", (_req, res) => void res.json(fixtures.profiles));
  dexscreener.get(["/token-pairs/v1/:chain/:list", "/tokens/v1/:chain/:list"], (req: Request<{ chain: string; list: string }>, res) => {
    const wanted = new Set(req.params.list.toLowerCase().split(","));
    const { chain } = req.params;
    res.json(
      fixtures.pairs.filter(
        (p) => p.chainId === chain && (wanted.has(p.baseToken.address.toLowerCase()) || wanted.has(p.quoteToken.address.toLowerCase())),
      ),
    );
  });
  const defillama = Router();
  defillama.get("/protocols", (_req, res) => void res.json(fixtures.protocols));
  // The current TVL as a bare number (the status feed's probe).
  defillama.get("/tvl/:slug", (req, res) => {
    const found = (fixtures.protocols as { slug?: string; tvl?: number }[]).find((p) => p.slug === req.params.slug.toLowerCase());
    res.status(found ? 200 : 400).json(found ? (found.tvl ?? 0) : { message: "Protocol not found" });
  });
  defillama.get("/protocol/:slug", (req, res) => {
    const detail = fixtures.protocolDetails[req.params.slug.toLowerCase()];
    res.status(detail ? 200 : 404).json(detail ?? { message: "Protocol not found" });
  });
  const coins = Router();
  coins.get(["/prices/current/:list", "/percentage/:list"], (req: Request<{ list: string }>, res) => {
    const table = req.path.startsWith("/prices/") ? fixtures.coinPrices : fixtures.coinPercentages;
    // DefiLlama echoes each requested key exactly, including its case, and omits unknown coins.
    const found: Record<string, unknown> = {};
    for (const key of req.params.list.split(",")) {
      const value = table[key.toLowerCase()];
      if (value !== undefined) found[key] = value;
    }
    res.json({ coins: found });
  });
  const hyperliquid = Router();
  hyperliquid.post("/info", (_req, res) => void res.json(fixtures.hyperliquid));
  return { dexscreener, defillama, "defillama-coins": coins, hyperliquid };
}

/** Start the stub server on loopback, on a free port. */
export async function startUpstreamStubs(options: UpstreamStubOptions = {}): Promise<UpstreamStubs> {
  const faults = new Map<StubUpstream, StubFault>(Object.entries(options.faults ?? {}) as [StubUpstream, StubFault][]);
  const slowMs = options.slowMs ?? 30_000;
  const timers = new Set<NodeJS.Timeout>();
  const requests: UpstreamStubs["requests"] = [];

  const app = express();
  for (const [upstream, router] of Object.entries(routes(loadFixtures(FIXTURES_DIR))) as [StubUpstream, Router][]) {
    const misbehave = (req: Request, res: Response, next: NextFunction) => {
      requests.push({ upstream, method: req.method, path: req.url });
      const fault = faults.get(upstream);
      if (fault === "malformed") return res.writeHead(200, { "content-type": "application/json" }).end('{"pairs": [{"chainId": "base", ');
      if (fault === "wrong_shape") return res.json({ unexpected: true, data: "shape changed" });
      if (fault === "error") return res.status(500).json({ error: "internal error" });
      if (fault === "rate_limited")
        return res.writeHead(429, { "retry-after": "7", "content-type": "text/plain" }).end("Too Many Requests");
      if (fault === "empty") return res.writeHead(200, { "content-type": "application/json" }).end();
      if (fault === "reset") return req.socket.destroy();
      if (fault === "huge") {
        res.writeHead(200, { "content-type": "application/json" });
        const chunk = `"${"x".repeat(1024 * 1024 - 3)}",`;
        res.write("[");
        for (let i = 0; i < 64; i++) res.write(chunk);
        return res.end("0]");
      }
      if (fault !== "slow") return next();
      const timer = setTimeout(() => {
        timers.delete(timer);
        next();
      }, slowMs);
      timers.add(timer);
    };
    app.use(`/${upstream}`, misbehave, router, (req: Request, res: Response) => {
      res.status(404).json({ error: `no such ${upstream} endpoint in the stub: ${req.method} ${req.url}` });
    });
  }
  app.use((_req: Request, res: Response) => void res.status(404).json({ error: "unknown upstream" }));

  const server = createServer(app);
  const port = await listen(server);
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
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return closeServer(server);
    },
  };
}
