import { BlockList, isIP, isIPv6 } from 'node:net';
import { isPrivateAddress } from '@mailconv/platform/egress';
import { SessionFailure, SessionRefused, SmtpSession } from './smtp-session.js';
import type { SmtpEgress } from './egress.js';

/**
 * The SMTP self-check (issue 23): for each egress, whether it reaches port 25 of a probe
 * host of the operator's, whether the probe host offers STARTTLS through it, whether its
 * HELO name and address agree both ways (FCrDNS), and whether its address is on the DNS
 * block lists. Knows nothing of HTTP; the service runs it on a timer and `smtp-check` once.
 */

/** DNS the self-check needs (`DnsResolver` fits): every lookup goes to the configured resolvers. */
export interface SelfCheckDns {
  lookupAddresses(host: string): Promise<string[]>;
  lookupPtr(address: string): Promise<string[]>;
  lookupListed(name: string): Promise<string[]>;
}

/** Settings of {@link runSmtpSelfCheck}. */
export interface SelfCheckOptions {
  egresses: readonly SmtpEgress[];
  /** The prober's EHLO name (`EMAIL_SMTP_HELO`), used where an egress has none of its own. */
  helo: string;
  /** `EMAIL_SMTP_PROBE_HOST`: an SMTP server of the operator's to connect to; null: not configured. */
  probeHost: { host: string; port: number } | null;
  /** DNS block-list zones (`EMAIL_SMTP_BLOCKLISTS`). */
  blocklists: readonly string[];
  dns: SelfCheckDns;
  /** Connect to the probe host only inside these networks (the prober's `restrictTo`, e.g. tests' `127.0.0.0/8`). */
  restrictTo?: readonly string[] | null;
  /** Connect and reply time-out. Default 5 s. */
  timeoutMs?: number;
  now?: () => Date;
}

/** Port 25 of the probe host through one egress. */
export type PortStatus = 'open' | 'refused_greeting' | 'closed' | 'timeout' | 'egress_failed' | 'not_configured' | 'error';
export type StarttlsStatus = 'offered' | 'not_offered' | 'failed' | 'not_checked';
export type FcrdnsStatus = 'pass' | 'fail' | 'unknown';
export type ListStatus = 'listed' | 'not_listed' | 'error';

export interface EgressCheck {
  egress: string;
  /** The address mail servers see (configured, or the connection's own); null when not known. */
  address: string | null;
  helo: string;
  port25: { status: PortStatus; detail: string | null };
  starttls: StarttlsStatus;
  fcrdns: { status: FcrdnsStatus; ptr: string[]; detail: string };
  blocklists: Array<{ zone: string; status: ListStatus; detail: string | null }>;
}

export interface SmtpSelfCheck {
  checkedAt: string;
  probeHost: string | null;
  /** true: an egress reaches port 25; false: none does (probing unavailable); null: not known (no probe host). */
  available: boolean | null;
  /** Why probing is unavailable or not known, in a sentence; null when available. */
  reason: string | null;
  egresses: EgressCheck[];
}

/** Default block lists (`EMAIL_SMTP_BLOCKLISTS`): the ones large mail providers consult. */
export const DEFAULT_BLOCKLISTS = ['zen.spamhaus.org', 'bl.spamcop.net', 'b.barracudacentral.org'] as const;

/** `4.3.2.1.zone` for 1.2.3.4; the 32 reversed nibbles for IPv6 (RFC 5782). */
export function blocklistName(address: string, zone: string): string {
  if (isIPv6(address)) {
    const groups = expandIPv6(address);
    return `${groups.join('').split('').reverse().join('.')}.${zone}`;
  }
  return `${address.split('.').reverse().join('.')}.${zone}`;
}

function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => g.padStart(4, '0'));
}

/** Runs every check for every egress, side by side; never throws for what it finds. */
export async function runSmtpSelfCheck(options: SelfCheckOptions): Promise<SmtpSelfCheck> {
  const now = options.now ?? (() => new Date());
  const egresses: readonly SmtpEgress[] = options.egresses.length ? options.egresses : [{ name: 'direct' }];
  const probe = options.probeHost;
  const fence = fenceOf(options.restrictTo ?? null);
  const checks = await Promise.all(egresses.map((e) => checkEgress(e, options, fence)));
  let available: boolean | null;
  let reason: string | null;
  if (!probe) {
    available = null;
    reason = 'port 25 not checked: EMAIL_SMTP_PROBE_HOST is not configured';
  } else if (checks.some((c) => c.port25.status === 'open' || c.port25.status === 'refused_greeting')) {
    available = true;
    reason = null;
  } else {
    available = false;
    reason = `no egress reaches port ${probe.port} of the probe host ${probe.host} (${checks.map((c) => `${c.egress}: ${c.port25.status}`).join(', ')})`;
  }
  return { checkedAt: now().toISOString(), probeHost: probe ? `${probe.host}:${probe.port}` : null, available, reason, egresses: checks };
}

function fenceOf(cidrs: readonly string[] | null): BlockList | null {
  if (!cidrs) return null;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net = '', bits] = cidr.split('/');
    const family = isIPv6(net) ? 'ipv6' : 'ipv4';
    list.addSubnet(net, Number(bits ?? (family === 'ipv6' ? 128 : 32)), family);
  }
  return list;
}

async function checkEgress(egress: SmtpEgress, o: SelfCheckOptions, fence: BlockList | null): Promise<EgressCheck> {
  const helo = egress.helo ?? o.helo;
  const port = await checkPort(egress, helo, o, fence);
  const address = egress.address ?? (egress.proxy ? null : port.seenFrom);
  const [fcrdns, blocklists] = await Promise.all([checkFcrdns(address, helo, o.dns), checkBlocklists(address, o.blocklists, o.dns)]);
  return { egress: egress.name, address, helo, port25: port.port25, starttls: port.starttls, fcrdns, blocklists };
}

async function checkPort(
  egress: SmtpEgress,
  helo: string,
  o: SelfCheckOptions,
  fence: BlockList | null,
): Promise<{ port25: EgressCheck['port25']; starttls: StarttlsStatus; seenFrom: string | null }> {
  const probe = o.probeHost;
  if (!probe) return { port25: { status: 'not_configured', detail: 'EMAIL_SMTP_PROBE_HOST is not set' }, starttls: 'not_checked', seenFrom: null };
  let target: string;
  try {
    target = isIP(probe.host) ? probe.host : ((await o.dns.lookupAddresses(probe.host))[0] ?? '');
  } catch (err) {
    return { port25: { status: 'error', detail: `cannot resolve ${probe.host}: ${(err as Error).message}` }, starttls: 'not_checked', seenFrom: null };
  }
  if (!target) return { port25: { status: 'error', detail: `${probe.host} has no address` }, starttls: 'not_checked', seenFrom: null };
  if (fence && !fence.check(target, isIPv6(target) ? 'ipv6' : 'ipv4')) {
    return { port25: { status: 'error', detail: `${target} is outside EMAIL_SMTP_RESTRICT_TO` }, starttls: 'not_checked', seenFrom: null };
  }
  const timeoutMs = o.timeoutMs ?? 5000;
  try {
    const session = await SmtpSession.open({
      address: target,
      port: probe.port,
      hostname: probe.host,
      helo,
      connectTimeoutMs: timeoutMs,
      commandTimeoutMs: timeoutMs,
      deadline: Date.now() + 3 * timeoutMs,
      starttls: true,
      proxy: egress.proxy,
      localAddress: egress.localAddress,
    });
    const seenFrom = session.localAddress;
    const offered = session.tls;
    session.quit();
    return { port25: { status: 'open', detail: `${target}:${probe.port} answered 220` }, starttls: offered ? 'offered' : 'not_offered', seenFrom };
  } catch (err) {
    if (err instanceof SessionRefused) {
      return { port25: { status: 'refused_greeting', detail: `${target}:${probe.port} answered ${err.message}` }, starttls: 'not_checked', seenFrom: null };
    }
    if (err instanceof SessionFailure) {
      const status: PortStatus =
        err.kind === 'connect_refused' ? 'closed' : err.kind.endsWith('timeout') ? 'timeout' : err.kind === 'proxy_failed' || err.kind === 'egress_failed' ? 'egress_failed' : err.kind === 'tls_failed' ? 'open' : 'error';
      return { port25: { status, detail: err.message }, starttls: err.kind === 'tls_failed' ? 'failed' : 'not_checked', seenFrom: null };
    }
    return { port25: { status: 'error', detail: (err as Error).message }, starttls: 'not_checked', seenFrom: null };
  }
}

/** Forward-confirmed reverse DNS: the address's PTR names the HELO name, and the HELO name's A/AAAA has the address. */
async function checkFcrdns(address: string | null, helo: string, dns: SelfCheckDns): Promise<EgressCheck['fcrdns']> {
  if (!address) return { status: 'unknown', ptr: [], detail: 'egress address not known (a proxy needs ?address=, a direct egress a reachable probe host)' };
  let ptr: string[];
  let forward: string[];
  try {
    [ptr, forward] = await Promise.all([dns.lookupPtr(address), dns.lookupAddresses(helo)]);
  } catch (err) {
    return { status: 'unknown', ptr: [], detail: `DNS could not answer: ${(err as Error).message}` };
  }
  const name = helo.toLowerCase();
  if (!ptr.includes(name)) return { status: 'fail', ptr, detail: ptr.length ? `PTR of ${address} is ${ptr.join(', ')}, not ${helo}` : `${address} has no PTR record` };
  if (!forward.includes(address)) return { status: 'fail', ptr, detail: `${helo} resolves to ${forward.join(', ') || 'nothing'}, not ${address}` };
  return { status: 'pass', ptr, detail: `${address} <-> ${helo}` };
}

async function checkBlocklists(address: string | null, zones: readonly string[], dns: SelfCheckDns): Promise<EgressCheck['blocklists']> {
  if (!address) return zones.map((zone) => ({ zone, status: 'error' as const, detail: 'egress address not known' }));
  if (isPrivateAddress(address) && !address.startsWith('127.')) {
    // A private source address is behind NAT: the lists know its public side, not this one.
    return zones.map((zone) => ({ zone, status: 'error' as const, detail: `${address} is a private address (behind NAT): set the public one` }));
  }
  return Promise.all(
    zones.map(async (zone) => {
      try {
        const answers = await dns.lookupListed(blocklistName(address, zone));
        if (answers.length === 0) return { zone, status: 'not_listed' as const, detail: null };
        // 127.255.255.x: the list refuses the query (a public or unregistered resolver), it lists nothing.
        if (answers.every((a) => a.startsWith('127.255.255.'))) return { zone, status: 'error' as const, detail: `the list refused the query (${answers.join(', ')}): use a resolver of your own` };
        return { zone, status: 'listed' as const, detail: answers.join(', ') };
      } catch (err) {
        return { zone, status: 'error' as const, detail: (err as Error).message };
      }
    }),
  );
}

const PORT_TEXT: Record<PortStatus, string> = {
  open: 'open',
  refused_greeting: 'open, but the greeting refuses us',
  closed: 'CLOSED (connection refused)',
  timeout: 'CLOSED (no answer: blocked outbound?)',
  egress_failed: 'egress failed',
  not_configured: 'not checked (EMAIL_SMTP_PROBE_HOST is not set)',
  error: 'not checked',
};

/** The self-check as `smtp-check` prints it: one block per egress, then the verdict. */
export function formatSelfCheck(c: SmtpSelfCheck): string {
  const lines = [`SMTP self-check at ${c.checkedAt}, probe host ${c.probeHost ?? 'not configured'}`];
  for (const e of c.egresses) {
    lines.push(`egress ${e.egress} (address ${e.address ?? 'not known'}, HELO ${e.helo})`);
    lines.push(`  port 25     ${PORT_TEXT[e.port25.status]}${e.port25.detail ? `: ${e.port25.detail}` : ''}`);
    lines.push(`  STARTTLS    ${e.starttls.replace('_', ' ')}`);
    lines.push(`  FCrDNS      ${e.fcrdns.status}: ${e.fcrdns.detail}`);
    for (const l of e.blocklists) lines.push(`  block list  ${l.zone}: ${l.status.replace('_', ' ')}${l.detail ? ` (${l.detail})` : ''}`);
    if (e.blocklists.length === 0) lines.push('  block list  none configured');
  }
  lines.push(c.available === true ? 'SMTP probing: available' : c.available === false ? `SMTP probing: UNAVAILABLE: ${c.reason}` : `SMTP probing: not known: ${c.reason}`);
  return lines.join('\n');
}
