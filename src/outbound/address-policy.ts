/**
 * Which hosts and addresses the service may connect to on a caller's behalf. Everything
 * that is not a globally routable unicast address is refused: loopback, private, link-local,
 * carrier-grade NAT, multicast, unspecified, reserved and documentation ranges, cloud
 * metadata addresses, and the IPv6 forms that carry an IPv4 address (mapped, compatible,
 * NAT64, 6to4) when the carried address is itself refused. Teredo is refused outright: its
 * embedded address is obfuscated and it tunnels to arbitrary hosts.
 */
import { isIPv4, isIPv6 } from "node:net";

/** Why an address or host name is refused; stable snake_case codes shown in `details.reason`. */
export type RefusalReason =
  | "loopback"
  | "private"
  | "link_local"
  | "cgnat"
  | "multicast"
  | "unspecified"
  | "reserved"
  | "documentation"
  | "cloud_metadata"
  | "ipv4_translated"
  | "teredo"
  | "localhost_name"
  | "internal_name";

/** What the policy lets through beyond public addresses. */
export interface AddressPolicyOptions {
  /** Let loopback addresses and `localhost` names through (tests and local development only). */
  allowLoopback?: boolean;
}

interface V4Range {
  base: number;
  bits: number;
  reason: RefusalReason;
}

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

// Cloud metadata first, so the reason names it rather than "link_local".
const V4_REFUSED: readonly V4Range[] = [
  { base: v4(169, 254, 169, 254), bits: 32, reason: "cloud_metadata" },
  { base: v4(100, 100, 100, 200), bits: 32, reason: "cloud_metadata" }, // Alibaba Cloud
  { base: v4(168, 63, 129, 16), bits: 32, reason: "cloud_metadata" }, // Azure WireServer
  { base: v4(0, 0, 0, 0), bits: 32, reason: "unspecified" },
  { base: v4(0, 0, 0, 0), bits: 8, reason: "reserved" }, // "this network"
  { base: v4(10, 0, 0, 0), bits: 8, reason: "private" },
  { base: v4(100, 64, 0, 0), bits: 10, reason: "cgnat" },
  { base: v4(127, 0, 0, 0), bits: 8, reason: "loopback" },
  { base: v4(169, 254, 0, 0), bits: 16, reason: "link_local" },
  { base: v4(172, 16, 0, 0), bits: 12, reason: "private" },
  { base: v4(192, 0, 0, 0), bits: 24, reason: "reserved" }, // IETF protocol assignments
  { base: v4(192, 0, 2, 0), bits: 24, reason: "documentation" },
  { base: v4(192, 88, 99, 0), bits: 24, reason: "reserved" }, // 6to4 relay anycast
  { base: v4(192, 168, 0, 0), bits: 16, reason: "private" },
  { base: v4(198, 18, 0, 0), bits: 15, reason: "reserved" }, // benchmarking
  { base: v4(198, 51, 100, 0), bits: 24, reason: "documentation" },
  { base: v4(203, 0, 113, 0), bits: 24, reason: "documentation" },
  { base: v4(224, 0, 0, 0), bits: 4, reason: "multicast" },
  { base: v4(240, 0, 0, 0), bits: 4, reason: "reserved" }, // includes 255.255.255.255
];

const inV4 = (ip: number, { base, bits }: V4Range) => bits === 0 || ip >>> (32 - bits) === base >>> (32 - bits);

/**
 * Parse an IPv4 address the way `inet_aton` does: one to four parts, each decimal, octal
 * (leading 0) or hex (0x), the last part filling the remaining bytes. So `2130706433`,
 * `0177.0.0.1`, `0x7f.1` and `127.1` are all 127.0.0.1. Returns the address as a 32-bit
 * unsigned integer, or null when `text` is not such an address.
 */
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length === 0 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = Number.parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number(part);
    else return null;
    if (!Number.isSafeInteger(value)) return null;
    values.push(value);
  }
  const last = values.pop() as number;
  if (values.some((v) => v > 255)) return null;
  const lastBytes = 4 - values.length;
  if (last >= 2 ** (8 * lastBytes)) return null;
  let ip = 0;
  for (const [i, v] of values.entries()) ip += v * 2 ** (8 * (3 - i));
  return ip + last;
}

/** Dotted-quad text of a 32-bit address. */
export function formatIPv4(ip: number): string {
  return [ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255].join(".");
}

/** Parse IPv6 text (with `::`, an IPv4 tail, brackets or a zone) into eight 16-bit groups, or null. */
export function parseIPv6(text: string): number[] | null {
  let s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!isIPv6(s)) return null;
  const lastColon = s.lastIndexOf(":");
  const lastPart = s.slice(lastColon + 1);
  if (lastPart.includes(".")) {
    // Rewrite an IPv4 tail (::ffff:1.2.3.4) as its two hex groups, then parse uniformly.
    const ip = parseIPv4(lastPart);
    if (ip === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(ip >>> 16).toString(16)}:${(ip & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const head = parse(halves[0] ?? "");
  const rest = halves.length === 2 ? parse(halves[1] ?? "") : [];
  const missing = 8 - head.length - rest.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function refusalOfV4(ip: number, options: AddressPolicyOptions): RefusalReason | null {
  for (const range of V4_REFUSED) {
    if (!inV4(ip, range)) continue;
    if (range.reason === "loopback" && options.allowLoopback) return null;
    return range.reason;
  }
  return null;
}

const prefix = (g: number[], words: number[]) => words.every((w, i) => g[i] === w);

function refusalOfV6(g: number[], options: AddressPolicyOptions): RefusalReason | null {
  const [g0 = 0, g1 = 0] = g;
  const embedded = (hi: number, lo: number) => (((g[hi] ?? 0) << 16) | (g[lo] ?? 0)) >>> 0;
  const translated = (ip: number): RefusalReason | null => {
    const reason = refusalOfV4(ip, options);
    return reason === null ? null : reason === "loopback" || reason === "cloud_metadata" ? reason : "ipv4_translated";
  };
  if (g.every((x) => x === 0)) return "unspecified";
  if (prefix(g, [0, 0, 0, 0, 0, 0, 0]) && g[7] === 1) return options.allowLoopback ? null : "loopback";
  if (prefix(g, [0xfd00, 0x0ec2, 0, 0, 0, 0, 0]) && g[7] === 0x254) return "cloud_metadata"; // AWS IMDS over IPv6
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated), 64:ff9b::a.b.c.d (NAT64).
  if (
    prefix(g, [0, 0, 0, 0, 0, 0xffff]) ||
    prefix(g, [0, 0, 0, 0, 0, 0]) ||
    prefix(g, [0, 0, 0, 0, 0xffff, 0]) ||
    prefix(g, [0x64, 0xff9b, 0, 0, 0, 0])
  ) {
    return translated(embedded(6, 7));
  }
  if (g0 === 0x64 && g1 === 0xff9b) return "reserved"; // 64:ff9b:1::/48 local-use NAT64 and the rest of the block
  if (g0 === 0x2002) return translated(embedded(1, 2)) ?? null; // 6to4 carries a.b.c.d in bits 16-48
  if (g0 === 0x2001 && g1 === 0) return "teredo";
  if (g0 === 0x2001 && g1 === 0x0db8) return "documentation";
  if (g0 === 0x0100 && prefix(g, [0x0100, 0, 0, 0])) return "reserved"; // discard-only
  if ((g0 & 0xfe00) === 0xfc00) return "private"; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return "link_local";
  if ((g0 & 0xffc0) === 0xfec0) return "private"; // deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 < 0x2000 || g0 > 0x3fff) return "reserved"; // outside global unicast 2000::/3
  return null;
}

/** Why `address` (an IPv4 or IPv6 literal) must not be connected to, or null when it may be. */
export function addressRefusal(address: string, options: AddressPolicyOptions = {}): RefusalReason | null {
  const text = address.startsWith("[") ? address.slice(1, -1) : address;
  if (isIPv4(text) || /^[0-9a-fx.]+$/i.test(text)) {
    const ip = parseIPv4(text);
    if (ip !== null) return refusalOfV4(ip, options);
  }
  const groups = parseIPv6(text);
  if (groups) return refusalOfV6(groups, options);
  // Not an address at all: treat as refused rather than guess.
  return "reserved";
}

/** True when `host` is written as an address (IPv4 in any inet_aton spelling, or IPv6) rather than a name. */
export function isAddressLiteral(host: string): boolean {
  const text = host.startsWith("[") ? host.slice(1, -1) : host;
  return parseIPv4(text) !== null || parseIPv6(text) !== null;
}

const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"]);

/**
 * Why a host NAME must not be resolved at all, or null. Names are checked before DNS so
 * that `localhost`, metadata names and internal suffixes never reach a resolver; whatever
 * a name resolves to is checked address by address afterwards.
 */
export function hostNameRefusal(hostname: string, options: AddressPolicyOptions = {}): RefusalReason | null {
  const name = hostname.toLowerCase().replace(/\.+$/, "");
  if (METADATA_NAMES.has(name)) return "cloud_metadata";
  if (name === "localhost" || name.endsWith(".localhost") || name === "localhost.localdomain") {
    return options.allowLoopback ? null : "localhost_name";
  }
  if (name.endsWith(".internal") || name.endsWith(".local") || name.endsWith(".home.arpa") || name.endsWith(".lan")) return "internal_name";
  // A single label is completed by the resolver's search domains: an internal name.
  if (!name.includes(".")) return "internal_name";
  return null;
}
