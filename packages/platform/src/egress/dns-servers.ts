import { isIP } from 'node:net';

/**
 * Parses `host:port` resolver strings (`EMAIL_DNS_SERVERS`, `CONVERT_DNS_SERVERS`, `--dns-server`) into the form
 * `Resolver.setServers` takes, rejecting anything else so a typo fails at start-up rather
 * than as a stream of `dns_error` results.
 */
export function parseDnsServers(value: string | readonly string[]): string[] {
  const items = (typeof value === 'string' ? value.split(',') : [...value]).map((s) => s.trim()).filter(Boolean);
  return items.map((item) => {
    let host = item;
    let port = '53';
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(item);
    if (v6) {
      host = v6[1] ?? '';
      port = v6[2] ?? '53';
    } else if (isIP(item) !== 6) {
      const m = /^([^:]+)(?::(\d+))?$/.exec(item);
      if (!m) throw new Error(`DNS server "${item}" is not host:port`);
      host = m[1] ?? '';
      port = m[2] ?? '53';
    }
    const n = Number(port);
    if (!isIP(host)) throw new Error(`DNS server "${item}": the host must be an IP address`);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`DNS server "${item}": bad port`);
    return isIP(host) === 6 ? `[${host}]:${n}` : `${host}:${n}`;
  });
}
