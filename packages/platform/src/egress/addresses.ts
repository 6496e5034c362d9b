import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Addresses no outbound connection may reach by default (the egress guard, SMTP probes to MX
 * hosts, webhook deliveries, pages fetched for conversions, exports): everything the IANA
 * special-purpose registries set apart — loopback, private, link-local, CGNAT, documentation,
 * benchmarking, multicast, NAT64, 6to4, Teredo and the other reserved ranges — as ipaddr.js
 * classifies them (a maintained library, not a hand-kept list: issue 29). An IPv6 address
 * that carries an IPv4 one is judged by what it reaches: IPv4-mapped (`::ffff:a.b.c.d`) by
 * its IPv4 address; IPv4-compatible (`::a.b.c.d`, deprecated) and IPv4-translated
 * (`::ffff:0:a.b.c.d`) never. Without this, anyone who can publish an MX record or a
 * webhook URL could use the service to reach its own network.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** IPv4-compatible IPv6 (RFC 4291 §2.5.5.1, deprecated), which ipaddr.js files under no range. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** A literal address as the URL parser or a resolver writes it, or null (only `isIP` forms: no `0x7f.1` and the like). */
function parse(address: string): Address | null {
  const family = isIP(address);
  if (!family) return null;
  try {
    // IPv6 in the URL parser's canonical form first, any IPv4 part in hex: ipaddr.js would read
    // `::a.b.c.d` (IPv4-compatible) as if it were `::ffff:a.b.c.d` (IPv4-mapped).
    const ip = ipaddr.parse(family === 6 ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address);
    // Judged by the IPv4 address it reaches (any spelling: `::ffff:10.0.0.1`, `::ffff:a00:1`, …).
    return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
  } catch {
    return null;
  }
}

/** True for every address that is not public unicast, and for anything that is not an address. */
export function isPrivateAddress(address: string): boolean {
  const ip = parse(address);
  if (!ip) return true;
  if (ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE)) return true;
  return ip.range() !== 'unicast';
}

/** A set of CIDR networks (`…_RESTRICT_TO`, allow and deny lists): true for an address inside one. */
export function networkFence(cidrs: readonly string[]): (address: string) => boolean {
  const networks = cidrs.map((cidr): [Address, number] => {
    if (cidr.includes('/')) return ipaddr.parseCIDR(cidr);
    const ip = ipaddr.parse(cidr);
    return [ip, ip.kind() === 'ipv6' ? 128 : 32];
  });
  return (address) => {
    const ip = parse(address);
    return ip !== null && networks.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  };
}
