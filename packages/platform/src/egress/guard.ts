import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { isPrivateAddress } from './addresses.js';

/**
 * The one egress guard (issue 22): every URL either service fetches or calls — webhook
 * deliveries, pages and their sub-resources for conversions, imports from a URL — is
 * checked here, and the connection then goes to exactly the address that was checked.
 */

/** An address a connection must go to: the one that was checked (no second lookup). */
export interface PinnedTarget {
  address: string;
  family: 4 | 6;
}

export type EgressProblem =
  | 'invalid_url'
  | 'not_https'
  | 'scheme_not_allowed'
  | 'credentials'
  | 'unresolvable'
  | 'private_address'
  | 'denied'
  | 'outside_restrict_to';

export type TargetCheck = { ok: true; url: URL; target: PinnedTarget } | { ok: false; problem: EgressProblem; message: string };

export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** Who may be reached. */
export interface EgressPolicy {
  /** Schemes allowed, as `URL.protocol` spells them (`https:`, `http:`). */
  readonly schemes: readonly string[];
  /** Non-public addresses allowed (development settings such as `EMAIL_WEBHOOKS_ALLOW_INSECURE`). */
  readonly allowPrivate?: boolean;
  /** The operator's allow list: networks reachable even though they are not public. */
  readonly allow?: (address: string) => boolean;
  /** The operator's deny list: networks never reached, public or not. */
  readonly deny?: (address: string) => boolean;
  /** Host names never reached, each with its subdomains (lower case). */
  readonly denyHosts?: readonly string[];
  /** A fence (`…_RESTRICT_TO`): when set, nothing outside it is connected to, whatever else allows. */
  readonly fence?: (address: string) => boolean;
  /** Host lookup (the system resolver when absent). */
  readonly lookup?: Lookup;
}

const systemLookup: Lookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * Host lookups through the given resolvers (`host:port`) instead of the system's: IPv4 and
 * IPv6 addresses, asked afresh every time (nothing cached), so a name is judged by what it
 * answers now. Tests point it at a DNS server on loopback.
 */
export function resolverLookup(servers: readonly string[], timeoutMs = 2000): Lookup {
  const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
  resolver.setServers([...servers]);
  const quiet = (p: Promise<string[]>) => p.catch(() => [] as string[]);
  return async (hostname) => {
    const [v4, v6] = await Promise.all([quiet(resolver.resolve4(hostname)), quiet(resolver.resolve6(hostname))]);
    return [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
  };
}

/** The host of a URL without IPv6 brackets. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Decides whether a URL may be fetched or called, and where to. The URL is parsed by the
 * WHATWG parser first, so upper-case schemes, decimal, octal and hex IPv4 forms
 * (`http://2130706433/`, `http://0x7f.1/`) and IPv6 spellings all arrive normalised. The
 * scheme must be allowed; credentials in the URL are refused; the host is resolved and
 * every address it answers must be public (not loopback, private, link-local, CGNAT,
 * multicast, reserved, IPv4-mapped private or cloud metadata) unless the policy allows
 * private addresses or the operator's allow list names its network; the deny lists and the
 * fence apply to every address. The first address is answered so that the connection goes
 * to exactly what was checked: a rebinding DNS cannot change it between check and connect.
 */
export async function checkUrl(raw: string, policy: EgressPolicy): Promise<TargetCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'invalid_url', message: 'The URL is not a valid absolute URL.' };
  }
  if (!policy.schemes.includes(url.protocol)) {
    const httpsOnly = policy.schemes.length === 1 && policy.schemes[0] === 'https:';
    return httpsOnly
      ? { ok: false, problem: 'not_https', message: 'The URL must use https://.' }
      : { ok: false, problem: 'scheme_not_allowed', message: `The URL must use ${policy.schemes.map((s) => `${s}//`).join(' or ')}; ${url.protocol} is not fetched.` };
  }
  if (url.username || url.password) return { ok: false, problem: 'credentials', message: 'The URL must not carry credentials.' };
  const host = bareHost(url);
  const name = host.toLowerCase().replace(/\.$/, '');
  if (policy.denyHosts?.some((d) => name === d || name.endsWith(`.${d}`))) {
    return { ok: false, problem: 'denied', message: `The host ${host} is on the operator's deny list.` };
  }
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await (policy.lookup ?? systemLookup)(host);
    } catch {
      addresses = [];
    }
  }
  if (addresses.length === 0) return { ok: false, problem: 'unresolvable', message: `The host ${host} does not resolve.` };
  for (const { address } of addresses) {
    if (policy.deny?.(address)) return { ok: false, problem: 'denied', message: `The host ${host} resolves to ${address}, on the operator's deny list.` };
    if (!policy.allowPrivate && isPrivateAddress(address) && !policy.allow?.(address)) {
      return { ok: false, problem: 'private_address', message: `The host ${host} resolves to a non-public address (${address}); only public addresses are reached.` };
    }
  }
  // The fence last: a name refused for what it is (private, denied) is reported as such.
  for (const { address } of addresses) {
    if (policy.fence && !policy.fence(address)) {
      return { ok: false, problem: 'outside_restrict_to', message: `The host ${host} resolves to ${address}, outside the networks this service may reach.` };
    }
  }
  const first = addresses[0]!;
  return { ok: true, url, target: { address: first.address, family: first.family === 6 ? 6 : 4 } };
}
