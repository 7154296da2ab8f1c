/**
 * The x402 checker, used by `x402-check`, `x402-trust` and the leaderboard crawl. It calls the
 * target once without payment (method and JSON body as given) and, in parallel and within a
 * shorter time budget, fetches the origin's `/.well-known/x402` and `/openapi.json`, all
 * through the safe fetcher. Three separate answers come out of one call:
 *
 * - `payable`: the default client a buyer runs (src/intel/x402-clients.ts: @x402/fetch's setup,
 *   spend controls at their defaults) signs a payment for the option it pays (the first its
 *   spend controls let through), and a facilitator would settle it; when not, the real cause and who refuses it.
 * - `conformant`: every protocol rule of the challenge's version holds (PROTOCOL_CHECKS);
 *   discovery is not part of the protocol.
 * - `discoverable`: Bazaar metadata, a `/.well-known/x402` that is one, and an OpenAPI document
 *   listing the route with a price (DISCOVERY_CHECKS).
 *
 * A refused target (private, loopback...) throws `TargetNotAllowedError`; an unreachable one is
 * an answer (`reachable: false`, not payable, every check false). Slow discovery documents
 * never hold up the answer: they get their own budget and are then reported as `timeout`.
 */

import { isDeepStrictEqual } from "node:util";
import type { ConformanceReportSchema } from "../../spec/routes/intel.ts";
import { isObject, parseJsonOrUndefined } from "../json.ts";
import { base } from "../networks/base.ts";
import { OutboundError, type SafeFetcher, TargetNotAllowedError } from "../outbound/safe-fetch.ts";
import { isAddressForNetwork, isCaip2, isEvmNetwork, isUsdc, isV1NetworkName, knownTokenDomain, normaliseNetwork } from "./networks.ts";
import { assessPayability, type Eip3009Probe, notPayable, type Payability } from "./x402-clients.ts";

/** The version of the rules below and of the trust score built on them (src/intel/trust-score.ts); stored with every crawl run. */
export const RULES_VERSION = 3;

/** Every check with what it requires, one sentence each (the documentation and the message of a failure), in the order reports list them. */
export const CHECK_MEANINGS = {
  returns_402: "An unpaid call is answered with HTTP 402.",
  has_challenge: "A payment challenge is readable from the PAYMENT-REQUIRED header or the JSON body.",
  challenge_transport:
    "The challenge travels where its version puts it: x402 v2 in the PAYMENT-REQUIRED header as base64 JSON (v2 clients read nothing else), v1 in the JSON body.",
  x402_version: "x402Version is 1 or 2.",
  has_accepts: "accepts is a non-empty array of payment options.",
  accepts_fields:
    "Every option has scheme, network, asset, payTo and a positive integer maxTimeoutSeconds; v1 options also resource, description and mimeType.",
  network_id: `Every network is written as its version requires: a CAIP-2 id for v2 (${base.id}, not ${base.v1Name}), a v1 network name for v1 (${base.v1Name}, not ${base.id}).`,
  amount_field:
    "Every option carries its version's amount field: amount for v2 (maxAmountRequired is the v1 field), maxAmountRequired for v1.",
  atomic_amount: 'Every amount is an atomic-unit integer written as a string ("10000", not "0.01" or a number).',
  asset_for_network:
    "Every asset is valid for its network's family: a token contract address on eip155 networks, a base58 mint on solana networks.",
  has_pay_to: "Every option has a payTo address valid for its network.",
  eip712_domain:
    "Every EIP-3009 option on an EVM network names the token's EIP-712 domain in extra.name and extra.version (the name and version the token contract signs with, for a token this checker knows).",
  body_matches_header:
    "For v2, a body that also carries a v2 challenge carries the same accepts as the PAYMENT-REQUIRED header (a v1 challenge in the body is a separate offer to v1 clients).",
  bazaar_metadata: "Bazaar discovery metadata is present: extensions.bazaar in a v2 challenge, an outputSchema in a v1 option.",
  well_known_x402:
    "The origin serves /.well-known/x402 as an x402 discovery document: a JSON object with an integer version and a non-empty resources list.",
  openapi:
    "The origin serves /openapi.json as a valid OpenAPI 3 document (openapi, info.title, info.version, paths) that lists this route and method with a price in x-payment-info.",
} as const satisfies Record<string, string>;

/** The name of one check. */
export type CheckName = keyof typeof CHECK_MEANINGS;

/** Every check, in the order reports list them. */
export const CHECK_NAMES = Object.keys(CHECK_MEANINGS) as CheckName[];

/** Every check failed: a report's checks before any is run, and the row of an origin never probed. */
export const NO_CHECKS = Object.fromEntries(CHECK_NAMES.map((name) => [name, false])) as Readonly<Record<CheckName, boolean>>;

/** Discovery: `discoverable` is their conjunction. Not required by the protocol. */
export const DISCOVERY_CHECKS: readonly CheckName[] = ["bazaar_metadata", "well_known_x402", "openapi"];

/** The protocol's required rules, every other check: `conformant` is their conjunction. */
export const PROTOCOL_CHECKS = CHECK_NAMES.filter((name) => !DISCOVERY_CHECKS.includes(name));

/** One call to check. */
export interface CheckTarget {
  url: string;
  /** Default POST. */
  method?: string;
  /** JSON body to send (not with GET/HEAD). */
  body?: unknown;
  signal?: AbortSignal;
  /** Time allowed for the unpaid call and the chain reads judging its tokens, counted from the start; default 8 s. */
  probeTimeoutMs?: number;
  /** Time allowed for the discovery documents, counted from the same start; default 3 s, and never more than the probe's. */
  discoveryTimeoutMs?: number;
  /** Reads whether a token the EVM scheme does not know has an EIP-3009 transfer (a chain read); without it, such a token is not judged. */
  eip3009Probe?: Eip3009Probe;
}

/** Default budget of the unpaid call. */
export const PROBE_TIMEOUT_MS = 8_000;
/** Default budget of the discovery documents. */
export const DISCOVERY_TIMEOUT_MS = 3_000;

/** The checker's answer for one endpoint: its schema, with what each field means, is the x402-check route's response. */
export type ConformanceReport = ConformanceReportSchema;

/** Decode a PAYMENT-REQUIRED header (base64 or base64url JSON); undefined when it is not one. */
export function decodeChallengeHeader(value: string | undefined): Record<string, unknown> | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  const decoded = parseJsonOrUndefined(Buffer.from(text.replaceAll("-", "+").replaceAll("_", "/"), "base64").toString("utf8"));
  return isObject(decoded) ? decoded : undefined;
}

/** A body carries a challenge when it is a JSON object with `accepts` or `x402Version`. */
function challengeOf(parsed: unknown): Record<string, unknown> | undefined {
  return isObject(parsed) && ("accepts" in parsed || "x402Version" in parsed) ? parsed : undefined;
}

const ATOMIC = /^[0-9]{1,78}$/;
const str = (v: unknown) => typeof v === "string" && v.trim() !== "";

/** The amount field of an option under `version`'s rules. */
const amountOf = (version: number | null, o: Record<string, unknown>): unknown => (version === 1 ? o.maxAmountRequired : o.amount);

/** The per-option rules of `version` (anything but 1 is read as v2): for each, the index of the first failing option, or -1. */
function optionRules(version: number | null, accepts: Record<string, unknown>[]) {
  const v1 = version === 1;
  const first = (test: (o: Record<string, unknown>) => boolean) => (accepts.length === 0 ? 0 : accepts.findIndex((o) => !test(o)));
  return {
    accepts_fields: first(
      (o) =>
        str(o.scheme) &&
        str(o.network) &&
        str(o.asset) &&
        str(o.payTo) &&
        Number.isInteger(o.maxTimeoutSeconds) &&
        (o.maxTimeoutSeconds as number) > 0 &&
        (!v1 || (str(o.resource) && typeof o.description === "string" && typeof o.mimeType === "string")),
    ),
    network_id: first((o) => (v1 ? isV1NetworkName(o.network) : isCaip2(o.network))),
    amount_field: first((o) => amountOf(version, o) !== undefined && amountOf(version, o) !== null),
    atomic_amount: first((o) => typeof amountOf(version, o) === "string" && ATOMIC.test(amountOf(version, o) as string)),
    asset_for_network: first((o) => isAddressForNetwork(normaliseNetwork(o.network), o.asset)),
    has_pay_to: first((o) => isAddressForNetwork(normaliseNetwork(o.network), o.payTo)),
    eip712_domain: first((o) => eip712DomainState(o) === "ok"),
  };
}

/** An EVM EIP-3009 option's signing domain: absent (no extra.name/extra.version), present but not the token's, or fine (or not applicable). */
export function eip712DomainState(option: Record<string, unknown>): "missing" | "wrong" | "ok" {
  const network = normaliseNetwork(option.network);
  const extra = isObject(option.extra) ? option.extra : undefined;
  if (!isEvmNetwork(network) || extra?.assetTransferMethod === "permit2") return "ok";
  if (!extra || !str(extra.name) || !str(extra.version)) return "missing";
  const known = knownTokenDomain(network, option.asset);
  return !known || (known.name === extra.name && known.version === extra.version) ? "ok" : "wrong";
}

/** The option whose price and payTo the report quotes: USDC on Base first, then USDC anywhere, then the first. */
function quotedOption(accepts: Record<string, unknown>[]): Record<string, unknown> | undefined {
  const usdc = (o: Record<string, unknown>) => isUsdc(normaliseNetwork(o.network), o.asset);
  return accepts.find((o) => usdc(o) && normaliseNetwork(o.network) === base.id) ?? accepts.find(usdc) ?? accepts[0];
}

/** USD of an atomic USDC amount, or null when the option is not USDC or the amount is not atomic. */
function priceOf(version: number | null, option: Record<string, unknown> | undefined): number | null {
  if (!option || !isUsdc(normaliseNetwork(option.network), option.asset)) return null;
  const amount = amountOf(version, option) ?? option.amount ?? option.maxAmountRequired;
  if (typeof amount !== "string" || !ATOMIC.test(amount)) return null;
  return Number(BigInt(amount)) / 1e6;
}

/** Discovery documents list every route with its schemas, so they get a larger cap than answers. */
const DISCOVERY_MAX_BYTES = 2 * 1024 * 1024;

/** A discovery document: its JSON object, absent, or not fetched within the budget. */
type DocumentResult = { kind: "json"; value: Record<string, unknown> } | { kind: "absent" } | { kind: "timeout" };

async function fetchJsonDocument(fetcher: SafeFetcher, url: string, signal: AbortSignal): Promise<DocumentResult> {
  try {
    const res = await fetcher({ url, method: "GET", maxBodyBytes: DISCOVERY_MAX_BYTES, signal });
    if (res.status !== 200 || res.truncated) return { kind: "absent" };
    const parsed = parseJsonOrUndefined(res.body.toString("utf8"));
    return isObject(parsed) ? { kind: "json", value: parsed } : { kind: "absent" };
  } catch (error) {
    // A discovery document that is missing, unreachable or redirects somewhere refused is
    // simply absent; only the endpoint itself decides whether the target is allowed.
    if (signal.aborted) return { kind: "timeout" };
    if (error instanceof OutboundError || error instanceof TargetNotAllowedError) return { kind: "absent" };
    throw error;
  }
}

/** True when `doc` is an x402 discovery document: an integer version and a non-empty list of resources (strings or objects). */
function isWellKnownDocument(doc: Record<string, unknown> | undefined): boolean {
  if (!doc) return false;
  return (
    Number.isInteger(doc.version) &&
    Array.isArray(doc.resources) &&
    doc.resources.length > 0 &&
    doc.resources.every((r) => str(r) || (isObject(r) && (str(r.url) || str(r.resource) || str(r.path))))
  );
}

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** True when `doc` is a valid OpenAPI 3 document listing `method` on `pathname` with a price in `x-payment-info`. */
function openApiListsRoute(doc: Record<string, unknown> | undefined, pathname: string, method: string): boolean {
  if (!doc || typeof doc.openapi !== "string" || !/^3\.\d+\.\d+$/.test(doc.openapi)) return false;
  if (!isObject(doc.info) || !str(doc.info.title) || !str(doc.info.version)) return false;
  if (!isObject(doc.paths)) return false;
  for (const [template, item] of Object.entries(doc.paths)) {
    if (!template.startsWith("/") || !isObject(item)) return false;
    for (const [key, op] of Object.entries(item)) if (HTTP_METHODS.includes(key) && !isObject(op)) return false;
  }
  for (const [template, item] of Object.entries(doc.paths)) {
    const pattern = new RegExp(
      `^${template
        .split(/\{[^/}]+\}/)
        .map((s) => s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
        .join("[^/]+")}/?$`,
    );
    if (!pattern.test(pathname)) continue;
    const op = (item as Record<string, unknown>)[method.toLowerCase()];
    if (!isObject(op)) continue;
    const info = op["x-payment-info"];
    if (isObject(info) && (info.price !== undefined || info.amount !== undefined || info.price_usd !== undefined)) return true;
  }
  return false;
}

/** Headers of the unpaid answer, case-insensitive. */
function headerReader(headers: Record<string, string | string[] | undefined>) {
  return (name: string): string | undefined => {
    const value = headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
}

/** Each failed check, with what it requires and, for option rules, the first option failing it. */
function failuresOf(checks: Record<CheckName, boolean>, details: Partial<Record<CheckName, string>>): ConformanceReport["failures"] {
  return CHECK_NAMES.filter((name) => !checks[name]).map((check) => ({
    check,
    message: details[check] ? `${CHECK_MEANINGS[check]} ${details[check]}` : CHECK_MEANINGS[check],
  }));
}

/** True when every protocol rule in `checks` holds (missing rules fail). */
export function isConformant(checks: Readonly<Record<string, boolean>>): boolean {
  return PROTOCOL_CHECKS.every((name) => checks[name] === true);
}

/** True when every discovery check in `checks` holds (missing checks fail). */
export function isDiscoverable(checks: Readonly<Record<string, boolean>>): boolean {
  return DISCOVERY_CHECKS.every((name) => checks[name] === true);
}

/** Check one endpoint. Throws `TargetNotAllowedError` when the target (or a redirect) is refused. */
export async function checkConformance(fetcher: SafeFetcher, target: CheckTarget): Promise<ConformanceReport> {
  const started = performance.now();
  const method = (target.method ?? "POST").toUpperCase();
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(target.url);
  } catch {
    throw new TargetNotAllowedError(`"${target.url.slice(0, 200)}" is not a valid absolute URL.`, {
      url: target.url.slice(0, 200),
      reason: "malformed_url",
    });
  }
  const { origin } = parsedUrl;
  const wellKnownUrl = `${origin}/.well-known/x402`;
  const openapiUrl = `${origin}/openapi.json`;
  const sendsBody = target.body !== undefined && method !== "GET" && method !== "HEAD";
  const probeBudget = target.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  const discoveryBudget = Math.min(target.discoveryTimeoutMs ?? DISCOVERY_TIMEOUT_MS, probeBudget);
  const within = (ms: number) => (target.signal ? AbortSignal.any([target.signal, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms));

  const discoverySignal = within(discoveryBudget);
  const documents = Promise.all([
    fetchJsonDocument(fetcher, wellKnownUrl, discoverySignal),
    fetchJsonDocument(fetcher, openapiUrl, discoverySignal),
  ]);
  // Handled at once so that a failing document never becomes an unhandled rejection while the
  // probe runs; awaited below, where its failure is thrown.
  documents.catch(() => {});
  const probeSignal = within(probeBudget);
  const probe = await fetcher({
    url: target.url,
    method,
    ...(sendsBody ? { body: JSON.stringify(target.body), headers: { "content-type": "application/json" } } : {}),
    signal: probeSignal,
  }).catch((error: unknown) => {
    if (!(error instanceof OutboundError)) throw error;
    return probeSignal.aborted && !target.signal?.aborted
      ? new OutboundError("timeout", `${parsedUrl.host} did not answer within ${probeBudget} ms.`, error)
      : error;
  });

  const checks = { ...NO_CHECKS };
  const details: Partial<Record<CheckName, string>> = {};
  const res = probe instanceof OutboundError ? undefined : probe;
  const reachable = res !== undefined;

  // The clients run while the discovery documents may still be on their way.
  let payability: Payability;
  let fromHeader: Record<string, unknown> | undefined;
  let fromBody: Record<string, unknown> | undefined;
  if (!res) payability = notPayable("the endpoint did not answer");
  else if (res.status !== 402) payability = notPayable(`the endpoint answered ${res.status}, not 402 Payment Required`);
  else {
    const header = headerReader(res.headers);
    const body = res.truncated ? undefined : parseJsonOrUndefined(res.body.toString("utf8"));
    fromHeader = decodeChallengeHeader(header("payment-required"));
    fromBody = challengeOf(body);
    // Within what is left of the call's budget: a chain read not answered by then is not judged.
    payability = await assessPayability({ header, body }, target.eip3009Probe, probeSignal);
  }

  const [wellKnown, openapi] = await documents;
  const discovery = wellKnown.kind === "timeout" || openapi.kind === "timeout" ? "timeout" : "complete";
  checks.well_known_x402 = isWellKnownDocument(wellKnown.kind === "json" ? wellKnown.value : undefined);
  checks.openapi = openApiListsRoute(openapi.kind === "json" ? openapi.value : undefined, parsedUrl.pathname, method);
  if (wellKnown.kind === "timeout") details.well_known_x402 = `It did not answer within ${discoveryBudget} ms.`;
  if (openapi.kind === "timeout") details.openapi = `It did not answer within ${discoveryBudget} ms.`;

  // An unreachable target is judged like an answer without a challenge: every check false but discovery's.
  checks.returns_402 = res?.status === 402;
  const challenge = fromHeader ?? fromBody;
  checks.has_challenge = challenge !== undefined;
  const version = challenge && Number.isInteger(challenge.x402Version) ? (challenge.x402Version as number) : null;
  checks.x402_version = version === 1 || version === 2;
  if (challenge) {
    checks.challenge_transport = version === 1 ? fromBody !== undefined : fromHeader !== undefined;
    // A v1 challenge in the body beside a v2 header is the v1 offer of a seller serving both
    // versions (v1 clients read only the body); it is judged by what v1 clients make of it.
    const v1Offer = fromBody?.x402Version === 1 && fromHeader?.x402Version === 2;
    checks.body_matches_header =
      version === 1 ||
      !fromHeader ||
      !fromBody ||
      v1Offer ||
      ((fromBody.x402Version === undefined || fromBody.x402Version === fromHeader.x402Version) &&
        // The same JSON value, key order aside.
        isDeepStrictEqual(fromBody.accepts, fromHeader.accepts));
  }
  const listed: unknown[] = challenge && Array.isArray(challenge.accepts) ? challenge.accepts : [];
  const accepts = listed.filter(isObject);
  checks.has_accepts = accepts.length > 0 && accepts.length === listed.length;
  for (const [rule, index] of Object.entries(optionRules(version, accepts)) as [CheckName, number][]) {
    checks[rule] = index === -1;
    const option = accepts[index];
    if (option) details[rule] = `Option ${index} fails it (network ${JSON.stringify(option.network ?? null)}).`;
    if (option && rule === "eip712_domain" && eip712DomainState(option) === "wrong") {
      const known = knownTokenDomain(normaliseNetwork(option.network), option.asset);
      const extra = option.extra as Record<string, unknown>;
      details[rule] =
        `Option ${index} names the domain name ${JSON.stringify(extra.name)}, version ${JSON.stringify(extra.version)}; the token signs with name ${JSON.stringify(known?.name)}, version ${JSON.stringify(known?.version)}.`;
    }
  }
  checks.bazaar_metadata =
    challenge !== undefined &&
    (version === 1
      ? accepts.some((o) => isObject(o.outputSchema))
      : isObject(challenge.extensions) && isObject(challenge.extensions.bazaar));

  const quoted = quotedOption(accepts);
  const failed = CHECK_NAMES.filter((name) => !checks[name]);
  return {
    url: target.url,
    method,
    discovery,
    discovery_urls: { well_known_url: wellKnownUrl, openapi_url: openapiUrl },
    rules_version: RULES_VERSION,
    final_url: res ? res.url : null,
    reachable,
    status: res ? res.status : null,
    error: probe instanceof OutboundError ? `${probe.kind}: ${probe.message}` : null,
    x402Version: version,
    challenge_source: fromHeader && fromBody ? "both" : fromHeader ? "header" : fromBody ? "body" : null,
    accepts,
    price_usd: priceOf(version, quoted),
    pay_to: quoted && typeof quoted.payTo === "string" && quoted.payTo !== "" ? quoted.payTo : null,
    network: quoted ? normaliseNetwork(quoted.network) : null,
    asset: quoted && typeof quoted.asset === "string" ? quoted.asset : null,
    ...payability,
    conformant: isConformant(checks),
    discoverable: isDiscoverable(checks),
    checks,
    failed_checks: failed,
    failures: failuresOf(checks, details),
    elapsed_ms: Math.round(performance.now() - started),
  };
}
