import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { parseDnsServers } from '@mailconv/platform/egress';
import { mxGrade } from './mx-grade.js';
import { classifyMxHost, normalizeHost } from './providers.js';
import { TtlCache, type Clock } from './ttl-cache.js';
import type { DnsErrorCode, DnsOutcome, DnsStatus, MxHost } from './types.js';

/** Settings of {@link DnsResolver}; every field has a default. */
export interface DnsResolverOptions {
  /**
   * Resolvers as `host:port`, `host` (port 53) or `[v6]:port` (`EMAIL_DNS_SERVERS`).
   * Empty or unset: the system's resolvers.
   */
  servers?: readonly string[];
  /** Time-out of one query attempt, in ms (c-ares doubles it on each retry). Default 2,000. */
  timeoutMs?: number;
  /** Attempts per query, per server. Default 2. */
  tries?: number;
  /** How long answers with mail hosts (and host addresses) are kept. Default 10 min. */
  positiveTtlMs?: number;
  /** How long NXDOMAIN, null MX and "no mail host" answers are kept. Default 2 min. */
  negativeTtlMs?: number;
  /** How long errors (time-out, SERVFAIL) are kept; 0 = only shared while in flight. Default 0. */
  errorTtlMs?: number;
  /** Cache capacity in names. Default 50,000. */
  maxEntries?: number;
  /** Injected clock (ms). Default `Date.now`. */
  clock?: Clock;
}

/** The DNS error codes c-ares reports for "the name does not exist" and "no record of this type". */
const NXDOMAIN = new Set(['ENOTFOUND']);
const NODATA = new Set(['ENODATA']);


function errorCodeOf(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
}

function dnsErrorCode(code: string): DnsErrorCode {
  if (code === 'ETIMEOUT') return 'timeout';
  if (code === 'ESERVFAIL') return 'servfail';
  if (code === 'EREFUSED' || code === 'ECONNREFUSED') return 'refused';
  return 'other';
}

/** Thrown for answers that mean "could not find out" (time-out, SERVFAIL, refused). */
export class LookupFailure extends Error {
  constructor(
    readonly code: DnsErrorCode,
    message: string,
  ) {
    super(message);
  }
}

interface AddressAnswer {
  addresses: string[];
  failure: LookupFailure | null;
}

function outcome(domain: string, status: DnsStatus, hosts: MxHost[] = [], error: DnsOutcome['error'] = null): DnsOutcome {
  const providers: string[] = [];
  for (const h of hosts) if (h.provider && !providers.includes(h.provider)) providers.push(h.provider);
  return { domain, status, hosts, providers, grade: mxGrade(status, hosts), error };
}

/**
 * The DNS check: where does mail for a domain go? Wraps a `node:dns` `Resolver` with its
 * own servers, time-outs and retries, and a cache that keeps positive and negative answers
 * for their own TTLs and shares in-flight queries (one query per name at a time).
 *
 * It never reports an unreachable resolver as a missing domain: time-outs, SERVFAIL and
 * refusals are `status: 'error'` (reason `dns_error`), never `not_found`.
 */
export class DnsResolver {
  private readonly resolver: dns.Resolver;
  private readonly mailCache: TtlCache<DnsOutcome>;
  private readonly addressCache: TtlCache<AddressAnswer>;
  private readonly positiveTtlMs: number;
  private readonly negativeTtlMs: number;
  private readonly errorTtlMs: number;

  constructor(options: DnsResolverOptions = {}) {
    this.resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
    if (options.servers && options.servers.length > 0) this.resolver.setServers(parseDnsServers(options.servers));
    const clock = options.clock ?? Date.now;
    const max = options.maxEntries ?? 50_000;
    this.mailCache = new TtlCache(max, clock);
    this.addressCache = new TtlCache(max, clock);
    this.positiveTtlMs = options.positiveTtlMs ?? 10 * 60_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 2 * 60_000;
    this.errorTtlMs = options.errorTtlMs ?? 0;
  }

  /** The resolver addresses in use, as `host:port`. */
  servers(): string[] {
    return this.resolver.getServers();
  }

  /** Mail routing of `domain` (ASCII/punycode): MX, null MX, implicit MX, NXDOMAIN or error. */
  lookupMail(domain: string): Promise<DnsOutcome> {
    const name = normalizeHost(domain);
    return this.mailCache.get(`mail:${name}`, () => this.resolveMail(name), (o) => this.ttlFor(o.status));
  }

  /**
   * The cached mail routing of `domain`, synchronously, or `undefined` when it is not cached
   * (or expired): lets callers skip a promise on the common, cached path.
   */
  peekMail(domain: string): DnsOutcome | undefined {
    return this.mailCache.peek(`mail:${normalizeHost(domain)}`);
  }

  /**
   * IPv4 then IPv6 addresses of a host (an MX exchange). Empty when the host has none;
   * throws on DNS errors so the SMTP prober can tell "no address" from "could not ask".
   */
  async lookupAddresses(host: string): Promise<string[]> {
    const name = normalizeHost(host);
    if (isIP(name)) return [name];
    const result = await this.addressCache.get(
      `addr:${name}`,
      async (): Promise<AddressAnswer> => {
        try {
          return { addresses: await this.addressesOf(name), failure: null };
        } catch (err) {
          if (err instanceof LookupFailure) return { addresses: [], failure: err };
          throw err;
        }
      },
      (a) => (a.failure ? this.errorTtlMs : a.addresses.length === 0 ? this.negativeTtlMs : this.positiveTtlMs),
    );
    if (result.failure) throw result.failure;
    return result.addresses;
  }

  /**
   * Names of an address's PTR records, without the trailing dot (the SMTP self-check's
   * FCrDNS, issue 23). Empty when there are none; throws {@link LookupFailure} when the
   * resolver cannot answer. Not cached: the self-check runs every few minutes.
   */
  async lookupPtr(address: string): Promise<string[]> {
    try {
      return (await this.resolver.reverse(address)).map((n) => normalizeHost(n));
    } catch (err) {
      const code = errorCodeOf(err);
      if (NXDOMAIN.has(code) || NODATA.has(code)) return [];
      throw new LookupFailure(dnsErrorCode(code), `PTR ${address}: ${code || String(err)}`);
    }
  }

  /**
   * The A records of a DNS block-list query name (`4.3.2.1.zen.example`): empty when the
   * address is not listed (NXDOMAIN); throws {@link LookupFailure} when the list cannot be asked.
   */
  async lookupListed(name: string): Promise<string[]> {
    try {
      return await this.resolver.resolve4(name);
    } catch (err) {
      const code = errorCodeOf(err);
      if (NXDOMAIN.has(code) || NODATA.has(code)) return [];
      throw new LookupFailure(dnsErrorCode(code), `A ${name}: ${code || String(err)}`);
    }
  }

  private ttlFor(status: DnsStatus): number {
    if (status === 'mx' || status === 'implicit_mx') return this.positiveTtlMs;
    if (status === 'error') return this.errorTtlMs;
    return this.negativeTtlMs;
  }

  private async resolveMail(domain: string): Promise<DnsOutcome> {
    let records: Array<{ exchange: string; priority: number }>;
    try {
      records = await this.resolver.resolveMx(domain);
    } catch (err) {
      const code = errorCodeOf(err);
      if (NXDOMAIN.has(code)) return outcome(domain, 'not_found');
      if (!NODATA.has(code)) return outcome(domain, 'error', [], { code: dnsErrorCode(code), message: `MX ${domain}: ${code || String(err)}` });
      records = [];
    }
    // RFC 7505: a null MX is a single record with the root as exchange. Should a domain
    // publish it next to real MX records (it must not), the real ones win.
    const real = records.filter((r) => normalizeHost(r.exchange) !== '');
    if (records.length > 0 && real.length === 0) return outcome(domain, 'null_mx');
    if (real.length > 0) {
      // Stable sort: equal preferences keep the order the server gave (it may rotate them).
      const hosts = real
        .map((r) => ({ exchange: normalizeHost(r.exchange), priority: r.priority, provider: classifyMxHost(r.exchange)?.id ?? null }))
        .sort((a, b) => a.priority - b.priority);
      // RFC 5321 §5.1: MX records none of whose hosts has an address leave no mail host —
      // an error, not something to find out by connecting (issue 23).
      if (!(await this.someHostHasAddress(hosts))) return outcome(domain, 'no_mx_address', hosts);
      return outcome(domain, 'mx', hosts);
    }
    // No MX at all: RFC 5321 §5.1 makes the domain's own address record the mail host.
    try {
      const addresses = await this.addressesOf(domain);
      if (addresses.length === 0) return outcome(domain, 'no_mail_host');
      return outcome(domain, 'implicit_mx', [{ exchange: domain, priority: 0, provider: null }]);
    } catch (err) {
      if (err instanceof LookupFailure) return outcome(domain, 'error', [], { code: err.code, message: err.message });
      throw err;
    }
  }

  /**
   * Whether the MX hosts, in preference order, lead to an address: true at the first that has
   * one, and when a lookup fails (nothing can be concluded then); false only when every host
   * answered for certain that it has none (NXDOMAIN, or neither A nor AAAA). Usually one
   * lookup (the first host's), cached, which the SMTP probe then reuses.
   */
  private async someHostHasAddress(hosts: readonly MxHost[]): Promise<boolean> {
    for (const h of hosts) {
      try {
        if ((await this.lookupAddresses(h.exchange)).length > 0) return true;
      } catch {
        return true;
      }
    }
    return false;
  }

  private async addressesOf(name: string): Promise<string[]> {
    const settle = async (kind: 'A' | 'AAAA'): Promise<string[]> => {
      try {
        return kind === 'A' ? await this.resolver.resolve4(name) : await this.resolver.resolve6(name);
      } catch (err) {
        const code = errorCodeOf(err);
        if (NXDOMAIN.has(code) || NODATA.has(code)) return [];
        throw new LookupFailure(dnsErrorCode(code), `${kind} ${name}: ${code || String(err)}`);
      }
    };
    const [v4, v6] = await Promise.all([settle('A'), settle('AAAA')]);
    return [...v4, ...v6];
  }
}

export { parseDnsServers };
