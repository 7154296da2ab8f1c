/**
 * Configuration from the environment. With no production settings the service runs in
 * local mode on an embedded anvil chain; setting any production variable switches to
 * production mode, where every required variable is checked at start and each problem is
 * reported in one clear line. Secrets are held here and never logged.
 */
import { createPrivateKey } from "node:crypto";
import bs58 from "bs58";
import { getAddress, isAddress, isHex } from "viem";
import { chatConfigFromEnv } from "./chat/config.ts";
import { parseInteger, parsePort, parseUrl, parseUrlList } from "./config-parse.ts";
import { OWNERSHIP_PROOF } from "./discovery/ownership-proof.ts";
import { purchaseConfigFromEnv } from "./intel/purchase-config.ts";
import type { LogLevel } from "./log.ts";
import { DEFAULT_NETWORK, evmNetworks } from "./networks/index.ts";
import type { EvmNetwork } from "./networks/types.ts";

/** The CAIP-2 id of an EVM network of the registry (src/networks/): the one the primary and Base-tools sites settle on. */
export type NetworkId = EvmNetwork["id"];

/** The service's whole configuration: what `loadConfig` reads, each part documented where it is read. */
export type Config = ReturnType<typeof loadConfig>;

/** Where the chain analytics read third-party market data. */
export type UpstreamsConfig = Config["upstreams"];

/** How payments are verified and settled. */
export type FacilitatorSetting =
  /** Local mode: in-process facilitator paying gas with the devnet's account 0. */
  | { kind: "devnet" }
  /** Production, self-hosted: in-process facilitator paying gas with this key. */
  | { kind: "self"; privateKey: `0x${string}` }
  /** Production, remote facilitator over HTTP; CDP keys when it is Coinbase's. */
  | { kind: "remote"; url: string; cdp: { keyId: string; keySecret: string } | undefined };

/** How the Solana site settles: local mode's fee payer, a fee-payer key of ours, or a remote facilitator. */
export type SolanaFacilitatorSetting =
  | { kind: "devnet" }
  /** SOLANA_FEE_PAYER_KEY: the 64-byte secret key (base58, or a JSON array of 64 numbers); never logged. */
  | { kind: "self"; secretKey: string }
  /** SOLANA_FACILITATOR_URL: a facilitator that supports exact on Solana and names its fee payer. */
  | { kind: "remote"; url: string };

/**
 * The Solana site. Production: on when SOLANA_HOST or SOLANA_PUBLIC_URL names its host, chosen by
 * host name on PORT, and then SOLANA_RPC_URL, SOLANA_PAY_TO and a facilitator are required. Local
 * mode: always on, on its own port, with the in-process chain.
 */
export interface SolanaSiteConfig {
  /** Production: whether the site is served (a host name is set); local mode: always. */
  enabled: boolean;
  host: string | undefined;
  publicUrl: string | undefined;
  /** SOLANA_PORT, local mode: its own listener (default 4023; 0, a free port, when PORT is 0). */
  port: number;
  /** SOLANA_RPC_PORT, local mode: the local chain's JSON-RPC (default 8899, Solana's own; 0 when PORT is 0). */
  rpcPort: number;
  /** SOLANA_RPC_URL (production): one or more comma-separated RPC URLs; the first is used. */
  rpcUrls: string[];
  /** SOLANA_PAY_TO (production): the wallet whose USDC account receives payments. */
  payTo: string | undefined;
  facilitator: SolanaFacilitatorSetting;
}

/**
 * Where the secondary site is reached. Production: by host name on the primary's port
 * (SECONDARY_HOST, or the host of SECONDARY_PUBLIC_URL; neither set: no secondary site). Local
 * mode: on its own port on 127.0.0.1 (SECONDARY_PORT).
 */
export interface SecondarySiteConfig {
  /** SECONDARY_HOST, lower case: requests whose Host names it go to the secondary site. Undefined: none do. */
  host: string | undefined;
  /** SECONDARY_PUBLIC_URL (default in production: `https://` + SECONDARY_HOST): the origin its challenges and documents name. */
  publicUrl: string | undefined;
  /** SECONDARY_PORT, local mode: its own listener (default 4022; 0, a free port, when PORT is 0). */
  port: number;
}

/** Start-up refused: one line per problem. */
export class ConfigError extends Error {
  override name = "ConfigError";
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Configuration problems:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.problems = problems;
  }
}

/**
 * Production refuses to start when routes a wallet uses by signing in (a balance, content it
 * bought) have no public origin to bind the sign-ins to: the Host header is the caller's to choose.
 */
export function checkSignInOrigin(config: Pick<Config, "mode" | "publicUrl">, signInRoutes: readonly string[]): void {
  if (config.mode !== "production" || config.publicUrl || signInRoutes.length === 0) return;
  throw new ConfigError([
    `PUBLIC_URL is required in production: sign-ins (${signInRoutes.slice(0, 3).join(", ")}${signInRoutes.length > 3 ? ", ..." : ""}) must name the service's public origin, and an origin read from the Host header is the caller's to choose`,
  ]);
}

/**
 * What the CDP facilitator's JWT signer (@coinbase/cdp-sdk, through @coinbase/x402) accepts: an
 * EC P-256 key in PKCS#8 PEM, or an Ed25519 key in base64 of 64 bytes. Anything else is refused
 * at every signing, so every paid call would answer 503 as if the facilitator were down.
 */
function isCdpKeySecret(text: string): boolean {
  if (text.startsWith("-----BEGIN PRIVATE KEY-----")) {
    try {
      const key = createPrivateKey(text);
      return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1";
    } catch {
      return false;
    }
  }
  return Buffer.from(text, "base64").length === 64;
}

const PRODUCTION_VARS = ["NETWORK", "RPC_URL", "PAY_TO", "FACILITATOR_URL", "FACILITATOR_PRIVATE_KEY"] as const;
const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];
const CDP_FACILITATOR_HOST = "api.cdp.coinbase.com";

/** Read and check the configuration; throws `ConfigError` listing every problem at once. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const problems: string[] = [];
  const set = (name: string) => env[name] !== undefined && env[name] !== "";
  const production = PRODUCTION_VARS.some(set);

  // The primary and Base-tools sites settle on an EVM network of the registry.
  const settleable = evmNetworks();
  const chosen = env.NETWORK ? settleable.find((n) => n.id === env.NETWORK) : DEFAULT_NETWORK;
  if (!chosen) problems.push(`NETWORK must be one of ${settleable.map((n) => n.id).join(", ")}, got "${env.NETWORK}"`);
  const net = chosen ?? DEFAULT_NETWORK;
  const network: NetworkId = net.id;

  const logLevel = (env.LOG_LEVEL || "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${env.LOG_LEVEL}"`);

  const port = parsePort("PORT", env.PORT, 4021, problems);
  const anvilPort = parsePort("ANVIL_PORT", env.ANVIL_PORT, 8545, problems);
  let publicUrl: string | undefined;
  if (set("PUBLIC_URL")) publicUrl = parseUrl("PUBLIC_URL", env.PUBLIC_URL as string, problems);

  const ownershipProofs = (env.OWNERSHIP_PROOFS ?? "").split(/[\s,]+/).filter(Boolean);
  for (const proof of ownershipProofs) {
    if (!OWNERSHIP_PROOF.test(proof))
      problems.push(`OWNERSHIP_PROOFS must be signatures (0x + 130 hex digits) printed by \`npm run ownership-proof\`, got "${proof}"`);
  }

  let rpcUrls: string[] = [];
  let payTo: `0x${string}` | undefined;
  let facilitator: FacilitatorSetting = { kind: "devnet" };
  let host = env.HOST || "127.0.0.1";

  if (production) {
    host = env.HOST || "0.0.0.0";
    if (!set("RPC_URL"))
      problems.push(`RPC_URL is required in production: one or more comma-separated ${net.name} RPC URLs (e.g. ${net.publicRpc})`);
    else rpcUrls = parseUrlList("RPC_URL", env.RPC_URL as string, problems);
    if (!set("PAY_TO")) problems.push("PAY_TO is required in production: the address that receives USDC payments");
    else if (!isAddress(env.PAY_TO as string, { strict: false }))
      problems.push(`PAY_TO must be an EVM address (0x + 40 hex digits), got "${env.PAY_TO}"`);
    else payTo = getAddress(env.PAY_TO as string);

    if (set("FACILITATOR_URL") && set("FACILITATOR_PRIVATE_KEY")) {
      problems.push("set either FACILITATOR_URL (a remote facilitator) or FACILITATOR_PRIVATE_KEY (settle ourselves), not both");
    } else if (set("FACILITATOR_URL")) {
      const url = parseUrl("FACILITATOR_URL", env.FACILITATOR_URL as string, problems);
      let cdp: { keyId: string; keySecret: string } | undefined;
      if (url && new URL(url).host === CDP_FACILITATOR_HOST) {
        if (!set("CDP_API_KEY_ID") || !set("CDP_API_KEY_SECRET")) {
          problems.push("CDP_API_KEY_ID and CDP_API_KEY_SECRET are required when FACILITATOR_URL is the Coinbase CDP facilitator");
        } else if (!isCdpKeySecret(env.CDP_API_KEY_SECRET as string)) {
          problems.push(
            "CDP_API_KEY_SECRET must be a CDP API key secret: an EC P-256 private key in PEM (-----BEGIN PRIVATE KEY-----, with its line breaks) or an Ed25519 key in base64 (64 bytes); its value is not shown",
          );
        } else cdp = { keyId: env.CDP_API_KEY_ID as string, keySecret: env.CDP_API_KEY_SECRET as string };
      }
      if (url) facilitator = { kind: "remote", url, cdp };
    } else if (set("FACILITATOR_PRIVATE_KEY")) {
      const key = (env.FACILITATOR_PRIVATE_KEY as string).trim();
      const normalised = (key.startsWith("0x") ? key : `0x${key}`) as `0x${string}`;
      if (!isHex(normalised) || normalised.length !== 66)
        problems.push("FACILITATOR_PRIVATE_KEY must be a 32-byte hex private key (64 hex digits); its value is not shown");
      else facilitator = { kind: "self", privateKey: normalised };
    } else {
      problems.push(
        "a facilitator is required in production: FACILITATOR_URL (with CDP_API_KEY_ID/CDP_API_KEY_SECRET for Coinbase's) or FACILITATOR_PRIVATE_KEY to settle ourselves",
      );
    }
    // Listed with the others, so one run names every missing setting (startService checks it again for configurations built by hand).
    if (!set("PUBLIC_URL"))
      problems.push(
        "PUBLIC_URL is required in production: the public origin (e.g. https://api.example.com) that challenges and sign-ins name; an origin read from the Host header is the caller's to choose",
      );
  } else if (host !== "127.0.0.1" && host !== "localhost") {
    problems.push(
      `local mode binds to 127.0.0.1 only (it runs a development chain with public keys); HOST="${host}" needs production settings`,
    );
  }

  let databaseUrl: string | undefined;
  if (set("DATABASE_URL")) {
    const url = env.DATABASE_URL as string;
    if (!/^postgres(ql)?:\/\//.test(url)) problems.push("DATABASE_URL must be a postgres:// or postgresql:// URL (its value is not shown)");
    else databaseUrl = url;
  }

  /** Settings of the x402 intelligence routes and the trust crawl. */
  const intel = {
    /** CDP_DISCOVERY_URL; undefined: the public CDP Bazaar discovery API (local mode: a local stub). */
    cdpDiscoveryUrl: set("CDP_DISCOVERY_URL") ? parseUrl("CDP_DISCOVERY_URL", env.CDP_DISCOVERY_URL as string, problems) : undefined,
    /** X402_LIST_URL; undefined: the public x402 List API (local mode: a local stub). */
    x402ListUrl: set("X402_LIST_URL") ? parseUrl("X402_LIST_URL", env.X402_LIST_URL as string, problems) : undefined,
    /** CRAWL_INTERVAL_MINUTES: the service crawls on this schedule; 0 (default) disables it. */
    crawlIntervalMinutes: set("CRAWL_INTERVAL_MINUTES")
      ? parseInteger("CRAWL_INTERVAL_MINUTES", env.CRAWL_INTERVAL_MINUTES, 0, 0, 10_080, problems)
      : undefined,
    /** CRAWL_CONCURRENCY: origins probed at once (default 32). */
    crawlConcurrency: parseInteger("CRAWL_CONCURRENCY", env.CRAWL_CONCURRENCY, 32, 1, 256, problems),
    /** CRAWL_ORIGIN_TIMEOUT_SECONDS: time allowed per origin (default 10). */
    crawlOriginTimeoutSeconds: parseInteger("CRAWL_ORIGIN_TIMEOUT_SECONDS", env.CRAWL_ORIGIN_TIMEOUT_SECONDS, 10, 1, 120, problems),
    /** ALLOW_LOOPBACK_TARGETS=1, local mode only: caller-chosen URLs may reach 127.0.0.0/8 and ::1. */
    allowLoopbackTargets: false,
    /** Verified by purchase (TRUST_PURCHASES and its budget; src/intel/purchase-config.ts). */
    purchases: purchaseConfigFromEnv(env, production, problems),
  };
  if (set("ALLOW_LOOPBACK_TARGETS")) {
    // Reaching loopback on a caller's behalf is a development convenience; a public service must never do it.
    if (production) problems.push("ALLOW_LOOPBACK_TARGETS is for local development only; production never fetches loopback targets");
    else if (env.ALLOW_LOOPBACK_TARGETS !== "1" && env.ALLOW_LOOPBACK_TARGETS !== "0")
      problems.push(`ALLOW_LOOPBACK_TARGETS must be 1 or 0, got "${env.ALLOW_LOOPBACK_TARGETS}"`);
    else intel.allowLoopbackTargets = env.ALLOW_LOOPBACK_TARGETS === "1";
  }

  const upstreamUrl = (name: string) => (set(name) ? parseUrl(name, env[name] as string, problems) : undefined);
  // Undefined URL: the public API (local mode: a local stub).
  const upstreams = {
    /** DEXSCREENER_URL; undefined: https://api.dexscreener.com. */
    dexscreenerUrl: upstreamUrl("DEXSCREENER_URL"),
    /** DEFILLAMA_URL; undefined: https://api.llama.fi (protocols and TVL). */
    defillamaUrl: upstreamUrl("DEFILLAMA_URL"),
    /** DEFILLAMA_COINS_URL; undefined: https://coins.llama.fi (token prices, the price fallback). */
    defillamaCoinsUrl: upstreamUrl("DEFILLAMA_COINS_URL"),
    /** HYPERLIQUID_URL; undefined: https://api.hyperliquid.xyz (funding and open interest). */
    hyperliquidUrl: upstreamUrl("HYPERLIQUID_URL"),
    /** UPSTREAM_TIMEOUT_MS: how long one call to a market API may take before the answer is a 504 (default 8000). */
    timeoutMs: parseInteger("UPSTREAM_TIMEOUT_MS", env.UPSTREAM_TIMEOUT_MS, 8_000, 100, 60_000, problems),
  };

  /** Time limits of the payment path (src/payments/gate.ts). */
  const payments = {
    /**
     * PAYMENT_TIMEOUT_MS: how long verifying a payment, or reading the chain to resolve an earlier
     * attempt, may take before the call is refused with 503 `payment_unavailable` (default 10000); a
     * settlement past it is `settlement_unknown`.
     */
    timeoutMs: parseInteger("PAYMENT_TIMEOUT_MS", env.PAYMENT_TIMEOUT_MS, 10_000, 500, 120_000, problems),
    /** PAYMENT_LEASE_SECONDS: the in-flight claim's lease, renewed while its request runs; a dead instance's claim is taken over after it (default 15). */
    leaseSeconds: parseInteger("PAYMENT_LEASE_SECONDS", env.PAYMENT_LEASE_SECONDS, 15, 2, 600, problems),
    /** How long a settled payment whose answer was lost can be redeemed (24 hours). */
    redeemHours: 24,
  };

  /** Budget of one entity-intelligence answer: past it, the answer says truncated: true. */
  const entityIntel = {
    /** ENTITY_INTEL_MAX_LOGS: Transfer logs one answer may read (default 250000). */
    maxLogs: parseInteger("ENTITY_INTEL_MAX_LOGS", env.ENTITY_INTEL_MAX_LOGS, 250_000, 1, 10_000_000, problems),
    /** ENTITY_INTEL_MAX_MS: milliseconds one answer may spend reading the chain (default 20000). */
    maxMs: parseInteger("ENTITY_INTEL_MAX_MS", env.ENTITY_INTEL_MAX_MS, 20_000, 1, 600_000, problems),
  };

  const chatLlm = chatConfigFromEnv(env, problems);

  /**
   * RATE_LIMIT_PER_MINUTE: free requests per client address and minute, a token bucket that
   * holds a minute's worth (default 120); 0 turns every limit off.
   */
  const freePerMinute = parseInteger("RATE_LIMIT_PER_MINUTE", env.RATE_LIMIT_PER_MINUTE, 120, 0, 1_000_000, problems);
  /** Per-client limits on free routes and on one payer's calls in flight. */
  const limits = {
    freePerMinute,
    /** Unpaid 402 challenges per client address and minute: far above any paying client's pace (50 × the free budget). */
    challengePerMinute: freePerMinute * 50,
    /** Paid calls one payer may have in flight from one client address on one instance (8). */
    paidInFlightPerPayer: freePerMinute === 0 ? 0 : 8,
  };

  let metricsToken: string | undefined;
  if (set("METRICS_TOKEN")) {
    // A short token could be guessed; the metrics name routes, payers' volumes and revenue.
    if ((env.METRICS_TOKEN as string).length < 16) problems.push("METRICS_TOKEN must be at least 16 characters (its value is not shown)");
    else metricsToken = env.METRICS_TOKEN as string;
  }
  const secondary = secondaryFromEnv(env, production, port, publicUrl, problems);
  const solana = solanaFromEnv(
    env,
    production,
    port,
    [publicUrl ? new URL(publicUrl).hostname.toLowerCase() : undefined, secondary.host],
    problems,
  );

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    mode: production ? ("production" as const) : ("local" as const),
    network,
    chainId: net.chainId,
    usdc: { address: net.usdc.address, name: net.usdc.eip712.name, version: net.usdc.eip712.version, decimals: net.usdc.decimals },
    /** RPC URLs in order of preference (production); local mode fills in the anvil URL. */
    rpcUrls,
    /** Receiving address; in local mode it is the devnet's account 1 until the devnet starts. */
    payTo,
    facilitator,
    publicUrl,
    /**
     * OWNERSHIP_PROOFS: signatures of the public origin by the `payTo` key (`npm run
     * ownership-proof` prints the value), published in `/openapi.json` for x402scan; comma- or
     * space-separated. Empty: none published (local mode signs with the devnet key itself).
     */
    ownershipProofs,
    host,
    port,
    dataDir: env.DATA_DIR || "data",
    logLevel,
    /** Local mode only: anvil's port (0 picks a free one). */
    anvilPort,
    /** How long a quoted challenge stays payable. */
    maxTimeoutSeconds: 300,
    payments,
    /** PostgreSQL server URL; undefined: the embedded SQLite database `${dataDir}/store.sqlite`. */
    databaseUrl,
    /** x402 intelligence: directories, the trust crawl, outbound targets. */
    intel,
    /** The trading-assistant chat's LLM engine (CHAT_LLM_*; null: the built-in engine). */
    chatLlm,
    /** Market-data APIs of the chain analytics. */
    upstreams,
    /** Limits on what is free (src/server/middleware/rate-limit.ts). */
    limits,
    /** METRICS_TOKEN: a bearer token that opens `/metrics` beyond loopback; undefined: loopback only. */
    metricsToken,
    /** The entity-intelligence routes' budget per answer. */
    entityIntel,
    /** The secondary site (Base token-risk tools under `/v1/`, spec/sites.ts). */
    secondary,
    /** The Solana site (token-risk and market tools under `/v1/`, paid in USDC on Solana). */
    solana,
  };
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A site's host name: the variable `name` (a bare host name, lower-cased), else the host of its public URL; problems name `name`. */
function siteHost(name: string, text: string | undefined, example: string, publicUrl: string | undefined, problems: string[]) {
  if (text === undefined || text === "") return publicUrl ? new URL(publicUrl).hostname.toLowerCase() : undefined;
  const host = text.trim().toLowerCase();
  if (HOST_NAME.test(host)) return host;
  problems.push(`${name} must be a host name such as ${example} (no scheme, port or path), got "${text}"`);
  return undefined;
}

/** The secondary site's settings; problems go to `problems`. */
function secondaryFromEnv(
  env: Record<string, string | undefined>,
  production: boolean,
  port: number,
  primaryUrl: string | undefined,
  problems: string[],
): SecondarySiteConfig {
  const set = (name: string) => env[name] !== undefined && env[name] !== "";
  // Tests and benchmarks start several services with PORT=0: each secondary site takes a free port too.
  const secondaryPort = parsePort("SECONDARY_PORT", env.SECONDARY_PORT, port === 0 ? 0 : 4022, problems);
  let publicUrl = set("SECONDARY_PUBLIC_URL") ? parseUrl("SECONDARY_PUBLIC_URL", env.SECONDARY_PUBLIC_URL as string, problems) : undefined;
  const host = siteHost("SECONDARY_HOST", env.SECONDARY_HOST, "tools.example.com", publicUrl, problems);
  if (production && host && !publicUrl) publicUrl = `https://${host}`;
  if (production && set("SECONDARY_PORT")) {
    problems.push("SECONDARY_PORT is for local mode; in production the secondary site is chosen by SECONDARY_HOST on PORT");
  }
  if (host && primaryUrl && new URL(primaryUrl).hostname.toLowerCase() === host) {
    problems.push("SECONDARY_HOST names the same host as PUBLIC_URL; the two sites need two host names");
  }
  return { host, publicUrl, port: secondaryPort };
}

const SOLANA_PRODUCTION_VARS = [
  "SOLANA_HOST",
  "SOLANA_PUBLIC_URL",
  "SOLANA_RPC_URL",
  "SOLANA_PAY_TO",
  "SOLANA_FEE_PAYER_KEY",
  "SOLANA_FACILITATOR_URL",
];

/** The Solana site's settings; problems go to `problems`, each naming its variable. */
function solanaFromEnv(
  env: Record<string, string | undefined>,
  production: boolean,
  port: number,
  otherHosts: (string | undefined)[],
  problems: string[],
): SolanaSiteConfig {
  const set = (name: string) => env[name] !== undefined && env[name] !== "";
  const sitePort = parsePort("SOLANA_PORT", env.SOLANA_PORT, port === 0 ? 0 : 4023, problems);
  const rpcPort = parsePort("SOLANA_RPC_PORT", env.SOLANA_RPC_PORT, port === 0 ? 0 : 8899, problems);
  const local: SolanaSiteConfig = {
    enabled: true,
    host: undefined,
    publicUrl: undefined,
    port: sitePort,
    rpcPort,
    rpcUrls: [],
    payTo: undefined,
    facilitator: { kind: "devnet" },
  };
  if (!production) {
    for (const name of SOLANA_PRODUCTION_VARS.filter(set)) {
      problems.push(`${name} is a production setting; local mode runs its own Solana chain (set the production variables to use it)`);
    }
    return local;
  }
  for (const name of ["SOLANA_PORT", "SOLANA_RPC_PORT"].filter(set)) {
    problems.push(`${name} is for local mode; in production the Solana site is chosen by SOLANA_HOST on PORT and reads SOLANA_RPC_URL`);
  }
  let publicUrl = set("SOLANA_PUBLIC_URL") ? parseUrl("SOLANA_PUBLIC_URL", env.SOLANA_PUBLIC_URL as string, problems) : undefined;
  const host = siteHost("SOLANA_HOST", env.SOLANA_HOST, "solana.example.com", publicUrl, problems);
  if (host && !publicUrl) publicUrl = `https://${host}`;
  if (!host) {
    const stray = SOLANA_PRODUCTION_VARS.filter((n) => n !== "SOLANA_HOST" && n !== "SOLANA_PUBLIC_URL" && set(n));
    if (stray.length > 0)
      problems.push(`${stray.join(", ")} set without SOLANA_HOST or SOLANA_PUBLIC_URL: the Solana site needs its own host name`);
    return { ...local, enabled: false };
  }
  if (otherHosts.includes(host))
    problems.push("SOLANA_HOST names the host of another site (PUBLIC_URL or SECONDARY_HOST); each site needs its own host name");

  let rpcUrls: string[] = [];
  if (!set("SOLANA_RPC_URL")) {
    problems.push(
      "SOLANA_RPC_URL is required for the Solana site: a Solana mainnet RPC serving getAccountInfo, getLatestBlockhash, simulateTransaction, sendTransaction, getSignatureStatuses, getBalance, getTokenAccountsByOwner, getTokenLargestAccounts, getTokenAccountBalance, getSignaturesForAddress and getTransaction",
    );
  } else rpcUrls = parseUrlList("SOLANA_RPC_URL", env.SOLANA_RPC_URL as string, problems);
  let payTo: string | undefined;
  if (!set("SOLANA_PAY_TO"))
    problems.push("SOLANA_PAY_TO is required for the Solana site: the Solana wallet whose USDC account receives payments");
  else if (bs58.decodeUnsafe((env.SOLANA_PAY_TO as string).trim())?.length !== 32)
    problems.push(`SOLANA_PAY_TO must be a Solana address (base58 of 32 bytes), got "${env.SOLANA_PAY_TO}"`);
  else payTo = (env.SOLANA_PAY_TO as string).trim();

  let facilitator: SolanaFacilitatorSetting = { kind: "devnet" };
  if (set("SOLANA_FEE_PAYER_KEY") && set("SOLANA_FACILITATOR_URL")) {
    problems.push("set either SOLANA_FACILITATOR_URL (a remote facilitator) or SOLANA_FEE_PAYER_KEY (settle ourselves), not both");
  } else if (set("SOLANA_FACILITATOR_URL")) {
    const url = parseUrl("SOLANA_FACILITATOR_URL", env.SOLANA_FACILITATOR_URL as string, problems);
    if (url) facilitator = { kind: "remote", url };
  } else if (set("SOLANA_FEE_PAYER_KEY")) {
    const key = (env.SOLANA_FEE_PAYER_KEY as string).trim();
    let length = -1;
    if (key.startsWith("[")) {
      try {
        const bytes = JSON.parse(key) as unknown;
        if (Array.isArray(bytes) && bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256)) length = bytes.length;
      } catch {
        length = -1;
      }
    } else length = bs58.decodeUnsafe(key)?.length ?? -1;
    if (length !== 64)
      problems.push(
        "SOLANA_FEE_PAYER_KEY must be a 64-byte Solana secret key, in base58 or as a JSON array of 64 numbers; its value is not shown",
      );
    else facilitator = { kind: "self", secretKey: key };
  } else {
    problems.push(
      "a Solana facilitator is required for the Solana site: SOLANA_FEE_PAYER_KEY (a funded fee payer, to settle ourselves) or SOLANA_FACILITATOR_URL",
    );
  }
  return { enabled: true, host, publicUrl, port: sitePort, rpcPort, rpcUrls, payTo, facilitator };
}
