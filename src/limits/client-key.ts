/**
 * The key a client's budget is kept under: its address as Express resolved it (behind the
 * proxies `trust proxy` names, the forwarded address; otherwise the socket's). An IPv6 client
 * is keyed by its /64, since one host is usually handed a whole /64 and could otherwise take a
 * fresh budget with every address in it.
 */
import { isIPv4, isIPv6 } from "node:net";
import ipaddr from "ipaddr.js";

/** The rate-limit key of client address `address`. */
export function clientKey(address: string | undefined): string {
  if (!address) return "unknown";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  // isIPv4 decides nothing isIPv6 would not, but it answers the usual IPv4 client about three
  // times faster than isIPv6 alone (measured: ~17 ns against ~50 ns), on every request.
  if (isIPv4(address) || !isIPv6(address)) return address;
  return `${ipaddr.IPv6.parse(address).toNormalizedString().split(":").slice(0, 4).join(":")}::/64`;
}

/** Whether `address` is a loopback address (127.0.0.0/8, ::1, or IPv4 loopback mapped into IPv6). */
export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && ipaddr.isValid(address) && ipaddr.process(address).range() === "loopback";
}
