/**
 * The x402 conformance checker, used by `x402-check`, `x402-trust` and the leaderboard
 * crawl. It calls the target once without payment (method and JSON body as given), reads
 * the challenge from the `PAYMENT-REQUIRED` header (base64 JSON) and/or the JSON body, and
 * fetches the origin's `/.well-known/x402` and `/openapi.json`, all through the safe
 * fetcher. Each check is a named boolean; `conformant` is their conjunction. A refused
 * target (private, loopback...) throws `TargetNotAllowedError`; an unreachable one is an
 * answer (`reachable: false`, every check false).
 */
import { OutboundError, type OutboundResponse, type SafeFetcher, TargetNotAllowedError } from "../outbound/safe-fetch.ts";
import { isEvmNetwork, isPayToAddress, isUsdc, normaliseNetwork } from "./networks.ts";

/** Every check, in the order reports list them. */
export const CHECK_NAMES = [
  "returns_402",
  "has_challenge",
  "payment_required_header",
  "x402_version_2",
  "has_accepts",
  "accepts_fields",
  "atomic_amount",
  "has_pay_to",
  "eip3009_extra",
  "bazaar_metadata",
  "well_known_x402",
  "openapi",
] as const;

/** The name of one check. */
export type CheckName = (typeof CHECK_NAMES)[number];

/** What each check asks, for documentation and the leaderboard's `what_it_is`. */
export const CHECK_MEANINGS: Readonly<Record<CheckName, string>> = {
  returns_402: "an unpaid call is answered with HTTP 402",
  has_challenge: "a payment challenge is readable from the PAYMENT-REQUIRED header or the JSON body",
  payment_required_header: "the challenge is in the PAYMENT-REQUIRED header as base64 JSON (the x402 v2 transport)",
  x402_version_2: "x402Version is 2",
  has_accepts: "accepts is a non-empty array of payment options",
  accepts_fields:
    "every option has scheme, network, asset, an amount (amount, or v1 maxAmountRequired) and a positive integer maxTimeoutSeconds",
  atomic_amount: 'every amount is an atomic-unit integer written as a string ("10000", not "0.01" or a number)',
  has_pay_to: "every option has a payTo address valid for its network",
  eip3009_extra: "every EVM option names its token's EIP-712 domain in extra.name and extra.version (needed to sign EIP-3009)",
  bazaar_metadata: "Bazaar discovery metadata is present (extensions.bazaar, or a v1 outputSchema)",
  well_known_x402: "the origin serves a JSON /.well-known/x402 document",
  openapi: "the origin serves a JSON /openapi.json document with paths",
};

/** One call to check. */
export interface CheckTarget {
  url: string;
  /** Default POST. */
  method?: string;
  /** JSON body to send (not with GET/HEAD). */
  body?: unknown;
  signal?: AbortSignal;
}

/** Where the challenge was found. */
export type ChallengeSource = "header" | "body" | "both";

/** The checker's answer for one endpoint. */
export interface ConformanceReport {
  url: string;
  method: string;
  /** The URL that answered, after redirects. */
  final_url: string | null;
  reachable: boolean;
  /** HTTP status of the unpaid call; null when there was no HTTP answer. */
  status: number | null;
  /** Why the target could not be reached (kind: message); null when it answered. */
  error: string | null;
  x402Version: number | null;
  challenge_source: ChallengeSource | null;
  /** The challenge's payment options, as sent. */
  accepts: Record<string, unknown>[];
  /** Price in USD of the option used for the price: USDC on Base first, then USDC anywhere. */
  price_usd: number | null;
  pay_to: string | null;
  /** CAIP-2 network of that option. */
  network: string | null;
  asset: string | null;
  checks: Record<CheckName, boolean>;
  failed_checks: CheckName[];
  conformant: boolean;
  discovery: { well_known_url: string; openapi_url: string };
  elapsed_ms: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Decode a PAYMENT-REQUIRED header (base64 or base64url JSON); undefined when it is not one. */
export function decodeChallengeHeader(value: string | undefined): Record<string, unknown> | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  const decoded = parseJson(Buffer.from(text.replaceAll("-", "+").replaceAll("_", "/"), "base64").toString("utf8"));
  return isObject(decoded) ? decoded : undefined;
}

/** A body is a challenge when it is a JSON object with `accepts` or `x402Version`. */
function challengeFromBody(body: Buffer, truncated: boolean): Record<string, unknown> | undefined {
  if (truncated || body.length === 0) return undefined;
  const parsed = parseJson(body.toString("utf8"));
  return isObject(parsed) && ("accepts" in parsed || "x402Version" in parsed) ? parsed : undefined;
}

/** The amount of one option: v2 `amount`, else v1 `maxAmountRequired`. */
function amountOf(option: Record<string, unknown>): unknown {
  return option.amount ?? option.maxAmountRequired;
}

const ATOMIC = /^[0-9]{1,78}$/;

function optionChecks(accepts: Record<string, unknown>[]) {
  const any = accepts.length > 0;
  const every = (test: (o: Record<string, unknown>) => boolean) => any && accepts.every(test);
  const str = (v: unknown) => typeof v === "string" && v.trim() !== "";
  return {
    accepts_fields: every(
      (o) =>
        str(o.scheme) &&
        str(o.network) &&
        str(o.asset) &&
        amountOf(o) !== undefined &&
        amountOf(o) !== null &&
        Number.isInteger(o.maxTimeoutSeconds) &&
        (o.maxTimeoutSeconds as number) > 0,
    ),
    atomic_amount: every((o) => typeof amountOf(o) === "string" && ATOMIC.test(amountOf(o) as string)),
    has_pay_to: every((o) => isPayToAddress(normaliseNetwork(o.network), o.payTo)),
    eip3009_extra: every((o) => {
      const network = normaliseNetwork(o.network);
      if (!isEvmNetwork(network) || typeof o.asset !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(o.asset)) return true;
      return isObject(o.extra) && str(o.extra.name) && str(o.extra.version);
    }),
  };
}

/** The option whose price and payTo the report quotes: USDC on Base first, then USDC anywhere, then the first. */
function quotedOption(accepts: Record<string, unknown>[]): Record<string, unknown> | undefined {
  const usdc = (o: Record<string, unknown>) => isUsdc(normaliseNetwork(o.network), o.asset);
  return accepts.find((o) => usdc(o) && normaliseNetwork(o.network) === "eip155:8453") ?? accepts.find(usdc) ?? accepts[0];
}

/** USD of an atomic USDC amount, or null when the option is not USDC or the amount is not atomic. */
function priceOf(option: Record<string, unknown> | undefined): number | null {
  if (!option || !isUsdc(normaliseNetwork(option.network), option.asset)) return null;
  const amount = amountOf(option);
  if (typeof amount !== "string" || !ATOMIC.test(amount)) return null;
  return Number(BigInt(amount)) / 1e6;
}

/** Discovery documents list every route with its schemas, so they get a larger cap than answers. */
const DISCOVERY_MAX_BYTES = 2 * 1024 * 1024;

async function fetchJsonDocument(
  fetcher: SafeFetcher,
  url: string,
  signal: AbortSignal | undefined,
): Promise<Record<string, unknown> | undefined> {
  try {
    const res = await fetcher({ url, method: "GET", maxBodyBytes: DISCOVERY_MAX_BYTES, ...(signal ? { signal } : {}) });
    if (res.status !== 200 || res.truncated) return undefined;
    const parsed = parseJson(res.body.toString("utf8"));
    return isObject(parsed) ? parsed : undefined;
  } catch (error) {
    // A discovery document that is missing, unreachable or redirects somewhere refused is
    // simply absent; only the endpoint itself decides whether the target is allowed.
    if (error instanceof OutboundError || error instanceof TargetNotAllowedError) return undefined;
    throw error;
  }
}

/** Check one endpoint. Throws `TargetNotAllowedError` when the target (or a redirect) is refused. */
export async function checkConformance(fetcher: SafeFetcher, target: CheckTarget): Promise<ConformanceReport> {
  const started = performance.now();
  const method = (target.method ?? "POST").toUpperCase();
  let origin: string;
  try {
    origin = new URL(target.url).origin;
  } catch {
    throw new TargetNotAllowedError(`"${target.url.slice(0, 200)}" is not a valid absolute URL.`, {
      url: target.url.slice(0, 200),
      reason: "malformed_url",
    });
  }
  const wellKnownUrl = `${origin}/.well-known/x402`;
  const openapiUrl = `${origin}/openapi.json`;
  const sendsBody = target.body !== undefined && method !== "GET" && method !== "HEAD";
  const signal = target.signal;

  const [probe, wellKnown, openapi] = await Promise.allSettled([
    fetcher({
      url: target.url,
      method,
      ...(sendsBody ? { body: JSON.stringify(target.body), headers: { "content-type": "application/json" } } : {}),
      ...(signal ? { signal } : {}),
    }),
    fetchJsonDocument(fetcher, wellKnownUrl, signal),
    fetchJsonDocument(fetcher, openapiUrl, signal),
  ]);
  if (probe.status === "rejected" && !(probe.reason instanceof OutboundError)) throw probe.reason;

  const checks = Object.fromEntries(CHECK_NAMES.map((name) => [name, false])) as Record<CheckName, boolean>;
  const base = {
    url: target.url,
    method,
    discovery: { well_known_url: wellKnownUrl, openapi_url: openapiUrl },
  };
  if (probe.status === "rejected") {
    const failure = probe.reason as OutboundError;
    return {
      ...base,
      final_url: null,
      reachable: false,
      status: null,
      error: `${failure.kind}: ${failure.message}`,
      x402Version: null,
      challenge_source: null,
      accepts: [],
      price_usd: null,
      pay_to: null,
      network: null,
      asset: null,
      checks,
      failed_checks: [...CHECK_NAMES],
      conformant: false,
      elapsed_ms: Math.round(performance.now() - started),
    };
  }

  const res: OutboundResponse = probe.value;
  const doc = (settled: PromiseSettledResult<Record<string, unknown> | undefined>) =>
    settled.status === "fulfilled" ? settled.value : undefined;
  const wellKnownDoc = doc(wellKnown);
  const openapiDoc = doc(openapi);
  checks.well_known_x402 = wellKnownDoc !== undefined;
  checks.openapi =
    openapiDoc !== undefined &&
    (typeof openapiDoc.openapi === "string" || typeof openapiDoc.swagger === "string") &&
    isObject(openapiDoc.paths);

  checks.returns_402 = res.status === 402;
  const fromHeader = checks.returns_402 ? decodeChallengeHeader(res.headers["payment-required"]) : undefined;
  const fromBody = checks.returns_402 ? challengeFromBody(res.body, res.truncated) : undefined;
  const challenge = fromHeader ?? fromBody;
  checks.has_challenge = challenge !== undefined;
  checks.payment_required_header = fromHeader !== undefined;
  const version = challenge && Number.isInteger(challenge.x402Version) ? (challenge.x402Version as number) : null;
  checks.x402_version_2 = version === 2;
  const accepts = challenge && Array.isArray(challenge.accepts) ? challenge.accepts.filter(isObject) : [];
  checks.has_accepts = accepts.length > 0;
  Object.assign(checks, optionChecks(accepts));
  checks.bazaar_metadata =
    challenge !== undefined &&
    ((isObject(challenge.extensions) && isObject(challenge.extensions.bazaar)) || accepts.some((o) => isObject(o.outputSchema)));

  const quoted = quotedOption(accepts);
  const failed = CHECK_NAMES.filter((name) => !checks[name]);
  return {
    ...base,
    final_url: res.url,
    reachable: true,
    status: res.status,
    error: null,
    x402Version: version,
    challenge_source: fromHeader && fromBody ? "both" : fromHeader ? "header" : fromBody ? "body" : null,
    accepts,
    price_usd: priceOf(quoted),
    pay_to: quoted && typeof quoted.payTo === "string" && quoted.payTo !== "" ? quoted.payTo : null,
    network: quoted ? normaliseNetwork(quoted.network) : null,
    asset: quoted && typeof quoted.asset === "string" ? quoted.asset : null,
    checks,
    failed_checks: failed,
    conformant: failed.length === 0,
    elapsed_ms: Math.round(performance.now() - started),
  };
}
