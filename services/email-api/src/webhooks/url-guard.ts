import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { DnsResolver, isPrivateAddress } from '@mailconv/verifier';

/** An address the delivery must connect to: the one that was checked (no second lookup). */
export interface PinnedTarget {
  address: string;
  family: 4 | 6;
}

export type TargetCheck =
  | { ok: true; url: URL; target: PinnedTarget }
  | { ok: false; problem: 'invalid_url' | 'not_https' | 'credentials' | 'unresolvable' | 'private_address'; message: string };

export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemLookup: Lookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * Host lookups through the given resolvers (`host:port`) instead of the system's: IPv4
 * then IPv6 addresses, asked afresh every time (nothing cached), so a name is judged by
 * what it answers now. Tests point it at the rig's DNS server.
 */
export function resolverLookup(servers: readonly string[], timeoutMs = 2000): Lookup {
  const resolver = new DnsResolver({ servers, timeoutMs, positiveTtlMs: 0, negativeTtlMs: 0, errorTtlMs: 0 });
  return async (hostname) => (await resolver.lookupAddresses(hostname)).map((address) => ({ address, family: isIP(address) }));
}

/**
 * Decides whether a webhook URL may be called, and where to (decision 23): public HTTPS
 * only; the host is resolved and every address must be public (not loopback, private,
 * link-local, CGNAT, multicast, reserved, IPv4-mapped private, metadata); the first
 * address is returned so the delivery connects to exactly what was checked, which a
 * rebinding DNS cannot change between check and connect. `allowInsecure`
 * (`EMAIL_WEBHOOKS_ALLOW_INSECURE`) permits `http://` and private targets for development.
 */
export async function checkWebhookTarget(raw: string, options: { allowInsecure: boolean; lookup?: Lookup }): Promise<TargetCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'invalid_url', message: 'The webhook URL is not a valid absolute URL.' };
  }
  if (url.protocol !== 'https:' && !(options.allowInsecure && url.protocol === 'http:')) {
    return { ok: false, problem: 'not_https', message: 'Webhook URLs must use https://.' };
  }
  if (url.username || url.password) return { ok: false, problem: 'credentials', message: 'Webhook URLs must not carry credentials; authenticate deliveries by their signature.' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await (options.lookup ?? systemLookup)(host);
    } catch {
      addresses = [];
    }
  }
  if (addresses.length === 0) return { ok: false, problem: 'unresolvable', message: `The webhook host ${host} does not resolve.` };
  if (!options.allowInsecure) {
    const blocked = addresses.find((a) => isPrivateAddress(a.address));
    if (blocked) return { ok: false, problem: 'private_address', message: `The webhook host ${host} resolves to a non-public address (${blocked.address}); only public endpoints are called.` };
  }
  const first = addresses[0]!;
  return { ok: true, url, target: { address: first.address, family: first.family === 6 ? 6 : 4 } };
}

/** A fence of CIDR networks (`EMAIL_WEBHOOKS_RESTRICT_TO`): deliveries connect only inside it. */
export function networkFence(cidrs: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split('/');
    const family = isIP(net ?? '') === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(net!, Number(bits), family);
  }
  return (address) => list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}
