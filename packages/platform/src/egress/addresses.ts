import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Addresses no outbound connection may reach by default (the egress guard, SMTP probes to MX
 * hosts, webhook deliveries, pages fetched for conversions): loopback,
 * private, link-local, CGNAT, documentation, benchmarking, multicast and other reserved
 * ranges (IANA special-purpose registries). Without this, anyone who can publish an MX
 * record could use the service to scan its own network.
 */
const RESERVED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  RESERVED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  RESERVED.addSubnet(net, prefix, 'ipv6');
}

/** True for loopback, private and otherwise reserved addresses (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  if (isIPv4(address)) return RESERVED.check(address, 'ipv4');
  if (!isIPv6(address)) return true;
  const v4 = mappedIPv4(address);
  return v4 === null ? RESERVED.check(address, 'ipv6') : RESERVED.check(v4, 'ipv4');
}

/**
 * The IPv4 address inside an IPv4-mapped IPv6 address in any spelling (`::ffff:10.0.0.1`,
 * `::ffff:a00:1`, `0:0:0:0:0:ffff:a00:1`), or null. (A `::ffff:0:0/96` rule in a BlockList
 * cannot be used: BlockList matches plain IPv4 addresses against it too.)
 */
function mappedIPv4(address: string): string | null {
  // The URL parser writes IPv6 in its canonical compressed form, mapped part in hex.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!m) return null;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** A set of CIDR networks (`…_RESTRICT_TO`, allow and deny lists): true for an address inside one. */
export function networkFence(cidrs: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split('/');
    const family = isIPv6(net ?? '') ? 'ipv6' : 'ipv4';
    list.addSubnet(net!, Number(bits ?? (family === 'ipv6' ? 128 : 32)), family);
  }
  return (address) => {
    if (isIPv4(address)) return list.check(address, 'ipv4');
    if (!isIPv6(address)) return false;
    const v4 = mappedIPv4(address);
    return v4 === null ? list.check(address, 'ipv6') : list.check(v4, 'ipv4');
  };
}
