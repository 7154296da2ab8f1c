/**
 * Which hosts and addresses the service may connect to on a caller's behalf. Everything
 * that is not a globally routable unicast address is refused: loopback, private, link-local,
 * carrier-grade NAT, multicast, unspecified, reserved and documentation ranges, cloud
 * metadata addresses, and the IPv6 forms that carry an IPv4 address (mapped, compatible,
 * NAT64, 6to4) when the carried address is itself refused. Teredo is refused outright: its
 * embedded address is obfuscated and it tunnels to arbitrary hosts. The ranges are ipaddr.js's
 * `range()`; only the cloud-metadata and documentation addresses are listed here, for their reasons.
 */
import ipaddr from "ipaddr.js";

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

type Cidrs = [ipaddr.IPv4 | ipaddr.IPv6, number][];
const cidrs = (...texts: string[]): Cidrs => texts.map((t) => ipaddr.parseCIDR(t));

/** Addresses refused under a more telling reason than their range's; cloud metadata first. */
const NAMED: Record<"cloud_metadata" | "documentation", Cidrs> = {
  // AWS/GCP link-local, Alibaba Cloud, Azure WireServer, AWS IMDS over IPv6.
  cloud_metadata: cidrs("169.254.169.254/32", "100.100.100.200/32", "168.63.129.16/32", "fd00:ec2::254/128"),
  documentation: cidrs("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"),
};

/** ipaddr.js range names and the reason each is refused for (`unicast` is allowed). */
const RANGE_REASONS: Record<string, RefusalReason> = {
  unspecified: "unspecified",
  loopback: "loopback",
  private: "private",
  uniqueLocal: "private",
  deprecatedSiteLocal: "private",
  linkLocal: "link_local",
  carrierGradeNat: "cgnat",
  multicast: "multicast",
  teredo: "teredo",
};

function refusalOfV4(ip: ipaddr.IPv4, options: AddressPolicyOptions): RefusalReason | null {
  const named = ipaddr.subnetMatch(ip, NAMED, "");
  if (named) return named as RefusalReason;
  const range = ip.range();
  if (range === "unicast") return null;
  if (range === "loopback" && options.allowLoopback) return null;
  return RANGE_REASONS[range] ?? "reserved";
}

function refusalOfV6(ip: ipaddr.IPv6, options: AddressPolicyOptions): RefusalReason | null {
  const named = ipaddr.subnetMatch(ip, NAMED, "");
  if (named) return named as RefusalReason;
  const range = ip.range();
  const g = ip.parts;
  const translated = (hi: number, lo: number): RefusalReason | null => {
    const carried = ipaddr.fromByteArray([(g[hi] ?? 0) >> 8, (g[hi] ?? 0) & 255, (g[lo] ?? 0) >> 8, (g[lo] ?? 0) & 255]) as ipaddr.IPv4;
    const reason = refusalOfV4(carried, options);
    return reason === null ? null : reason === "loopback" || reason === "cloud_metadata" ? reason : "ipv4_translated";
  };
  if (range === "unspecified") return "unspecified";
  if (range === "loopback") return options.allowLoopback ? null : "loopback";
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated), 64:ff9b::a.b.c.d (NAT64) carry an IPv4 address;
  // the rest of 64:ff9b::/32 (local-use NAT64) reaches whatever the local translator reaches.
  if (range === "ipv4Mapped" || range === "rfc6145" || (range === "rfc6052" && g[2] === 0)) return translated(6, 7);
  if (range === "6to4") return translated(1, 2); // a.b.c.d in bits 16-48
  // ::a.b.c.d, the deprecated IPv4-compatible form.
  if (g.slice(0, 6).every((x) => x === 0)) return translated(6, 7);
  if (range === "unicast") return (g[0] ?? 0) >= 0x2000 && (g[0] ?? 0) <= 0x3fff ? null : "reserved"; // global unicast is 2000::/3
  return RANGE_REASONS[range] ?? "reserved";
}

/** The address `text` spells (IPv4 in any inet_aton spelling, IPv6 with brackets or a zone), or null. */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  return ipaddr.isValid(bare) ? ipaddr.parse(bare) : null;
}

/** Why `address` (an IPv4 or IPv6 literal) must not be connected to, or null when it may be. */
export function addressRefusal(address: string, options: AddressPolicyOptions = {}): RefusalReason | null {
  const ip = parseAddress(address);
  // Not an address at all: treat as refused rather than guess.
  if (!ip) return "reserved";
  return ip.kind() === "ipv4" ? refusalOfV4(ip as ipaddr.IPv4, options) : refusalOfV6(ip as ipaddr.IPv6, options);
}

/** True when `host` is written as an address (IPv4 in any inet_aton spelling, or IPv6) rather than a name. */
export function isAddressLiteral(host: string): boolean {
  return parseAddress(host) !== null;
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
