/**
 * The one way the service reaches a URL that a caller (or a third-party directory) chose.
 * The host is resolved once, every resolved address is checked against the address policy,
 * and the connection is pinned to the checked address through a custom `lookup`, so a
 * second DNS answer (rebinding) can never redirect it. TLS still verifies the certificate
 * for the host name (SNI and `Host` keep the name). Redirects are followed by hand, each hop
 * checked the same way, at most three. Connect and whole-response timeouts and a body cap
 * bound what one call can cost.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import { Client, type Dispatcher } from "undici";
import { ServiceError, UpstreamError } from "../errors.ts";
import { withBudget } from "../time-budget.ts";
import { type AddressPolicyOptions, addressRefusal, hostNameRefusal, isAddressLiteral, type RefusalReason } from "./address-policy.ts";

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (default: the system resolver, `dns.lookup` with `all`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** Settings of a safe fetcher; every field has a default. */
export interface SafeFetchOptions extends AddressPolicyOptions {
  /** Replace DNS resolution (tests inject hostile resolvers). */
  resolve?: Resolver;
  /** Time to resolve and open the connection (and finish TLS). Default 3000 ms. */
  connectTimeoutMs?: number;
  /** Time for the whole exchange, redirects, headers and body included. Default 8000 ms. */
  totalTimeoutMs?: number;
}

/** One outbound request. */
export interface OutboundRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** A request body, sent as is. */
  body?: string;
  /** Cancels the request (a crawl's per-origin deadline). */
  signal?: AbortSignal;
  /** Body bytes kept for this request, instead of the 256 KiB cap (discovery documents run larger). */
  maxBodyBytes?: number;
}

/** The answer to an outbound request (the last hop when redirects were followed). */
export interface OutboundResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The body was longer than the cap and was cut. */
  truncated: boolean;
  /** The URLs redirected through, in order (without the final one). */
  redirects: string[];
  /** The address the answering connection was pinned to. */
  address: string;
}

/** Fetch a caller-chosen URL safely. */
export interface SafeFetcher {
  (request: OutboundRequest): Promise<OutboundResponse>;
  /**
   * Check a URL as a fetch would (scheme, name, every resolved address) without connecting:
   * throws `TargetNotAllowedError` for a refused target. A name that does not resolve passes
   * (an unreachable target is an answer, not a refusal).
   */
  preflight(url: string): Promise<void>;
}

/** 400 `target_not_allowed`: the URL (or a redirect) leads somewhere the service must not connect to. Never charged. */
export class TargetNotAllowedError extends ServiceError {
  override name = "TargetNotAllowedError";
  readonly reason: RefusalReason | "scheme" | "credentials" | "malformed_url";
  constructor(
    message: string,
    details: {
      url: string;
      reason: RefusalReason | "scheme" | "credentials" | "malformed_url";
      /** Only an address written in the URL itself; never what a host name resolved to. */
      address?: string;
      hop?: number;
    },
  ) {
    super("target_not_allowed", message, { details });
    this.reason = details.reason;
  }
}

/** How an allowed target failed to answer. */
export type OutboundFailureKind = "dns" | "connect" | "timeout" | "tls" | "protocol" | "too_many_redirects" | "aborted";

/** The target could not be reached or did not answer properly; 502 (504 on a timeout) if it ever reaches a caller. */
export class OutboundError extends UpstreamError {
  override name = "OutboundError";
  readonly kind: OutboundFailureKind;
  constructor(kind: OutboundFailureKind, message: string, cause?: unknown) {
    super(kind === "timeout" ? "upstream_timeout" : "upstream_error", "target", message, { cause });
    this.kind = kind;
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Redirects followed, each re-checked. */
const MAX_REDIRECTS = 3;
/** Body bytes kept; the rest is discarded and `truncated` set. */
const MAX_BODY_BYTES = 256 * 1024;
const USER_AGENT = "x402-chain-data-service conformance checker";

const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Parse and check a URL's scheme, credentials and host name (before any DNS). */
function checkUrl(text: string, policy: AddressPolicyOptions, hop: number): URL {
  const refused = (message: string, url: string, reason: "scheme" | "credentials" | "malformed_url") =>
    new TargetNotAllowedError(message, { url, reason, hop });
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refused(`"${text.slice(0, 200)}" is not a valid absolute URL.`, text.slice(0, 200), "malformed_url");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw refused(`Only http and https URLs can be checked, not ${url.protocol}`, url.href, "scheme");
  }
  if (url.username || url.password) {
    throw refused("URLs with credentials (user:password@) are not fetched.", redactUrl(url), "credentials");
  }
  // WHATWG parsing has already turned 2130706433, 0177.0.0.1 and 0x7f.1 into 127.0.0.1.
  const host = url.hostname;
  if (!isAddressLiteral(host)) {
    const reason = hostNameRefusal(host, policy);
    if (reason) throw refusal(url, reason, { kind: "name" }, hop);
  }
  return url;
}

function redactUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  return copy.href;
}

/** The class of a refused address or host name, in words, for messages. */
const WORDS: Record<RefusalReason, string> = {
  loopback: "a loopback address",
  private: "a private address",
  link_local: "a link-local address",
  cgnat: "a carrier-grade NAT address",
  multicast: "a multicast address",
  unspecified: "the unspecified address",
  reserved: "a reserved address",
  documentation: "a documentation address",
  cloud_metadata: "a cloud metadata address",
  ipv4_translated: "an IPv6 address carrying a refused IPv4 address",
  teredo: "a Teredo tunnel address",
  // Reasons of names only (hostNameRefusal).
  localhost_name: "a localhost name",
  internal_name: "an internal name (a single label or an internal suffix such as .internal or .local)",
};

/**
 * How a refusal was reached: `name` (the host name itself is refused, before DNS),
 * `literal` (the URL's host is an address, which may be echoed: it is already in the URL) or
 * `resolved` (the host name resolves to a refused address). A resolved address is never put in
 * the message or the details, only its class: telling a caller which internal address a name
 * has would map internal DNS for free.
 */
type RefusalSource = { kind: "name" } | { kind: "literal"; address: string } | { kind: "resolved" };

function refusal(url: URL, reason: RefusalReason, source: RefusalSource, hop: number): TargetNotAllowedError {
  const host = `${url.hostname}${hop > 0 ? ` (reached by redirect ${hop})` : ""}`;
  const words = source.kind === "name" && reason === "cloud_metadata" ? "a cloud metadata name" : WORDS[reason];
  const why = source.kind === "resolved" ? `the host ${host} resolves to ${words}` : `${host} is ${words}`;
  return new TargetNotAllowedError(`Refused: ${why}; only public internet hosts can be checked.`, {
    url: url.href,
    reason,
    ...(source.kind === "literal" ? { address: source.address } : {}),
    hop,
  });
}

/** Create a safe fetcher with `options`. */
export function createSafeFetcher(options: SafeFetchOptions = {}): SafeFetcher {
  const policy: AddressPolicyOptions = { allowLoopback: options.allowLoopback === true };
  const resolve = options.resolve ?? systemResolver;
  const connectTimeoutMs = options.connectTimeoutMs ?? 3_000;
  const totalTimeoutMs = options.totalTimeoutMs ?? 8_000;

  /** Resolve once and check every address; the first one is the pinned address. */
  async function pinnedAddress(url: URL, hop: number): Promise<ResolvedAddress> {
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    if (isAddressLiteral(host)) {
      const reason = addressRefusal(host, policy);
      if (reason) throw refusal(url, reason, { kind: "literal", address: host }, hop);
      return { address: host, family: host.includes(":") ? 6 : 4 };
    }
    let answers: ResolvedAddress[];
    try {
      answers = await withBudget(resolve(host), connectTimeoutMs, () => {
        throw new OutboundError("timeout", `Resolving ${host} took longer than ${connectTimeoutMs} ms.`);
      });
    } catch (error) {
      if (error instanceof OutboundError) throw error;
      throw new OutboundError("dns", `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "no address"}).`, error);
    }
    if (answers.length === 0) throw new OutboundError("dns", `${host} has no address.`);
    // Every answer is checked: a name with one public and one private address is refused,
    // because which one a client would use is not ours to predict.
    // The refusal names the class of the address, never the address itself.
    for (const answer of answers) {
      const reason = addressRefusal(answer.address, policy);
      if (reason) throw refusal(url, reason, { kind: "resolved" }, hop);
    }
    return answers[0] as ResolvedAddress;
  }

  /**
   * One HTTP exchange through undici, with the connection pinned to `pinned`: a client of its own
   * whose `lookup` answers with the checked address only. Its connect timeout runs to the end of
   * the TLS handshake; one signal ends the whole exchange at `deadline` or when the caller cancels.
   */
  async function exchange(
    url: URL,
    pinned: ResolvedAddress,
    request: OutboundRequest,
    deadline: number,
  ): Promise<Omit<OutboundResponse, "redirects">> {
    const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
      // Node asks for all addresses when it races IPv4/IPv6; answer with the pinned one only.
      if ((lookupOptions as { all?: boolean }).all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [pinned]);
      else callback(null, pinned.address, pinned.family);
    };
    const client = new Client(url.origin, { connect: { lookup, timeout: connectTimeoutMs } });
    const timeUp = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
    const signal = request.signal ? AbortSignal.any([timeUp, request.signal]) : timeUp;
    /** What went wrong, in the caller's terms; `reading`: the answer had begun. */
    const failure = (error: unknown, reading: boolean): OutboundError => {
      if (timeUp.aborted) return new OutboundError("timeout", `${url.host} did not answer within ${totalTimeoutMs} ms.`);
      if (request.signal?.aborted) return new OutboundError("aborted", `The request to ${url.host} was cancelled.`);
      const { code, message } = error as NodeJS.ErrnoException;
      if (code === "UND_ERR_CONNECT_TIMEOUT")
        return new OutboundError("timeout", `${url.host} did not accept a connection within ${connectTimeoutMs} ms.`);
      if (reading) return new OutboundError("protocol", `The answer from ${url.host} broke off.`, error);
      const kind: OutboundFailureKind = /CERT|SSL|TLS|certificate/i.test(`${code ?? ""} ${message}`)
        ? "tls"
        : code?.startsWith("HPE_") || code === "UND_ERR_HEADERS_OVERFLOW"
          ? "protocol"
          : "connect";
      return new OutboundError(kind, `${url.host}: ${code ?? message}`, error);
    };
    const cap = request.maxBodyBytes ?? MAX_BODY_BYTES;
    try {
      const res = await client
        .request({
          path: `${url.pathname}${url.search}`,
          method: (request.method ?? "GET") as Dispatcher.HttpMethod,
          headers: { "user-agent": USER_AGENT, accept: "application/json, */*;q=0.5", "accept-encoding": "identity", ...request.headers },
          body: request.body ?? null,
          signal,
        })
        .catch((error: unknown) => {
          throw failure(error, false);
        });
      const chunks: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          if (chunk.length > cap - kept) {
            chunks.push(chunk.subarray(0, cap - kept));
            kept = cap;
            truncated = true;
            // Enough: stop reading and drop the connection instead of downloading the rest.
            break;
          }
          chunks.push(chunk);
          kept += chunk.length;
        }
      } catch (error) {
        throw failure(error, true);
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
      }
      return { url: url.href, status: res.statusCode, headers, body: Buffer.concat(chunks), truncated, address: pinned.address };
    } finally {
      client.destroy().catch(() => {});
    }
  }

  async function preflight(url: string): Promise<void> {
    try {
      await pinnedAddress(checkUrl(url, policy, 0), 0);
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
    }
  }

  async function safeFetch(request: OutboundRequest): Promise<OutboundResponse> {
    const redirects: string[] = [];
    let url = checkUrl(request.url, policy, 0);
    let current: OutboundRequest = request;
    // One deadline for the whole exchange, redirects included.
    const deadline = Date.now() + totalTimeoutMs;
    for (let hop = 0; ; hop++) {
      if (request.signal?.aborted) throw new OutboundError("aborted", `The request to ${url.host} was cancelled.`);
      if (Date.now() >= deadline) throw new OutboundError("timeout", `${request.url} did not answer within ${totalTimeoutMs} ms.`);
      const pinned = await pinnedAddress(url, hop);
      const answer = await exchange(url, pinned, current, deadline);
      const location = answer.headers.location;
      if (!REDIRECTS.has(answer.status) || !location) {
        return { ...answer, redirects };
      }
      if (hop >= MAX_REDIRECTS) {
        throw new OutboundError("too_many_redirects", `${request.url} redirected more than ${MAX_REDIRECTS} times.`);
      }
      redirects.push(url.href);
      let next: string;
      try {
        next = new URL(location, url).href;
      } catch {
        throw new OutboundError("protocol", `${url.host} redirected to an invalid location.`);
      }
      url = checkUrl(next, policy, hop + 1);
      // 303, and 301/302 after POST, become GET without a body, as browsers do.
      const keepMethod = answer.status === 307 || answer.status === 308 || (current.method ?? "GET") === "GET";
      const { body: _dropped, ...withoutBody } = current;
      current = keepMethod ? { ...current, url: url.href } : { ...withoutBody, url: url.href, method: "GET" };
    }
  }

  return Object.assign(safeFetch, { preflight });
}
