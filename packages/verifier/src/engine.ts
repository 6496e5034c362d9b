import { DnsResolver, type DnsResolverOptions } from './dns/dns.check.js';
import type { DnsOutcome as ResolverOutcome } from './dns/types.js';
import { decodeOutcome, encodeOutcome, outcomeKey, reusableOutcome, type SmtpCacheOptions } from './smtp/outcome-cache.js';
import { SmtpAvailability } from './smtp/availability.js';
import { SmtpProber, createSessionPool, type MailRoute, type SmtpProberOptions } from './smtp/smtp.check.js';
import type { SmtpOutcome as ProbeResult, SmtpStatus } from './smtp/types.js';
import { createVerifier, type MailboxProber, type MailDomainResolver, type ProbeTarget, type Verifier } from './pipeline.js';
import type { DnsKind, DnsOutcome, SmtpKind, SmtpOutcome } from './types.js';

const DNS_KIND: Record<ResolverOutcome['status'], DnsKind> = {
  mx: 'mx',
  implicit_mx: 'implicit',
  null_mx: 'null_mx',
  no_mail_host: 'no_mail',
  // MX records that lead nowhere are no mail host either (RFC 5321 §5.1).
  no_mx_address: 'no_mail',
  not_found: 'nxdomain',
  error: 'error',
};

const SMTP_KIND: Record<SmtpStatus, SmtpKind> = {
  accepted: 'accepted',
  user_unknown: 'rejected',
  mailbox_full: 'full',
  disabled: 'disabled',
  greylisted: 'greylisted',
  rate_limited: 'rate_limited',
  blocked: 'blocked',
  timeout: 'timeout',
  unreachable: 'unreachable',
  unknown: 'unknown',
};

/** The DNS check's answer in the pipeline's terms. */
export function toDnsOutcome(o: ResolverOutcome): DnsOutcome {
  const out: DnsOutcome = { kind: DNS_KIND[o.status], hosts: o.hosts.map((h) => ({ exchange: h.exchange, priority: h.priority })), providers: o.providers };
  if (o.error) out.detail = o.error.code;
  return out;
}

/** The prober's answer in the pipeline's terms. */
export function toSmtpOutcome(o: ProbeResult, catchAllAsked: boolean): SmtpOutcome {
  const out: SmtpOutcome = { kind: SMTP_KIND[o.status], catchAll: catchAllAsked ? o.catchAll : null };
  if (o.reply) {
    out.code = o.reply.code;
    if (o.reply.enhanced) out.enhanced = o.reply.enhanced;
    out.text = o.reply.text;
  }
  if (o.mxHost) out.host = o.mxHost;
  return out;
}

/** An outcome stored under `key` and not expired, else a probe whose outcome is stored when it says something about the mailbox. */
async function probeThroughCache(cache: SmtpCacheOptions, key: string, probe: () => Promise<SmtpOutcome>): Promise<SmtpOutcome> {
  const now = cache.now ?? (() => new Date());
  // A store that fails is a miss: the cache saves probes, it never decides a verdict.
  const stored = await cache.store.get(key, now()).catch(() => null);
  const reused = stored === null ? null : decodeOutcome(stored);
  cache.onLookup?.(reused !== null);
  if (reused) return reused;
  const probed = await probe();
  if (reusableOutcome(probed)) cache.store.put(key, encodeOutcome(probed), new Date(now().getTime() + cache.ttlMs));
  return probed;
}

/**
 * Groups probe calls for one domain made in the same turn of the event loop into one
 * `probeMany`, so that a batch's addresses at one domain share SMTP sessions (RSET between
 * envelopes) instead of opening one connection each.
 */
class CoalescingProber {
  private pending = new Map<string, { route: MailRoute; calls: Array<{ email: string; resolve: (o: ProbeResult) => void; reject: (e: unknown) => void }> }>();

  constructor(private readonly prober: SmtpProber) {}

  probe(email: string, route: MailRoute): Promise<ProbeResult> {
    return new Promise((resolve, reject) => {
      let group = this.pending.get(route.domain);
      if (!group) {
        group = { route, calls: [] };
        this.pending.set(route.domain, group);
        setImmediate(() => this.flush(route.domain));
      }
      group.calls.push({ email, resolve, reject });
    });
  }

  private flush(domain: string): void {
    const group = this.pending.get(domain);
    this.pending.delete(domain);
    if (!group) return;
    this.prober.probeMany(
      group.calls.map((c) => c.email),
      group.route,
    ).then(
      (outcomes) => group.calls.forEach((c, i) => c.resolve(outcomes[i]!)),
      (err: unknown) => group.calls.forEach((c) => c.reject(err)),
    );
  }
}

/** One address's SMTP probe as told to {@link EngineOptions.onSmtpProbe} (for metrics; no address in it). */
export interface SmtpProbeEvent {
  status: SmtpStatus;
  /** Provider id of the domain's MX (`google`, …), null when unrecognised. */
  provider: string | null;
  /** The MX host that answered, else the domain's first MX host; null when it has none. */
  mxHost: string | null;
  /** The prober's machine detail (`connect_timeout`, …), null when the status says it all. */
  detail: string | null;
}

/** Settings of {@link createEngine}. */
export interface EngineOptions {
  dns?: DnsResolverOptions;
  /** SMTP probing settings; absent or null: the engine cannot probe (`smtp: true` is refused by the caller). */
  smtp?: Omit<SmtpProberOptions, 'resolveAddresses' | 'catchAll'> | null;
  /** Told of every address probed over SMTP, after the probe (the engine knows nothing of metrics; services count). */
  onSmtpProbe?: (event: SmtpProbeEvent) => void;
  /**
   * Reuse of SMTP outcomes (decision 28): a verification with a `cacheScope` takes a stored
   * outcome of the same address instead of probing, and stores what it probes. Absent, or a
   * TTL of 0: every verification probes.
   */
  smtpCache?: SmtpCacheOptions;
  /** While it says unavailable, `smtp: true` verifications are answered `smtp_unavailable` at once (issue 23). */
  availability?: SmtpAvailability;
}

/** The engine wired to the real DNS check and SMTP prober. */
export interface Engine {
  verifier: Verifier;
  resolver: DnsResolver;
  /** Null when SMTP probing is not configured. */
  prober: SmtpProber | null;
  /** Whether probing can work (set by the self-check); null when probing is not configured. */
  availability: SmtpAvailability | null;
}

/**
 * Builds the verifier on the real network parts: the caching DNS resolver and, when SMTP
 * settings are given, the prober (one instance with the catch-all probe, one without, so
 * the probe runs only where asked — decision 15).
 */
export function createEngine(options: EngineOptions = {}): Engine {
  const resolver = new DnsResolver(options.dns ?? {});
  // Cached answers are mapped once and returned synchronously, so the pipeline's
  // promise-free path applies to every address of an already-seen domain.
  const mapped = new WeakMap<ResolverOutcome, DnsOutcome>();
  const map = (o: ResolverOutcome): DnsOutcome => {
    let m = mapped.get(o);
    if (!m) mapped.set(o, (m = toDnsOutcome(o)));
    return m;
  };
  const dns: MailDomainResolver = {
    resolveMail: (domain) => {
      const cached = resolver.peekMail(domain);
      return cached ? map(cached) : resolver.lookupMail(domain).then(map);
    },
  };
  if (!options.smtp) return { verifier: createVerifier({ dns }), resolver, prober: null, availability: null };
  // One pool of sessions for both instances: their connections count together against the
  // per-host and per-provider limits, and share pauses and back-offs (issue 23).
  const base = { ...options.smtp, resolveAddresses: (host: string) => resolver.lookupAddresses(host), sessions: options.smtp.sessions ?? createSessionPool(options.smtp.sessionIdleMs) };
  const withCatchAll = new SmtpProber({ ...base, catchAll: true });
  const plain = new CoalescingProber(new SmtpProber({ ...base, catchAll: false }));
  const coalesced = new CoalescingProber(withCatchAll);
  const onSmtpProbe = options.onSmtpProbe;
  const availability = options.availability ?? new SmtpAvailability();
  const probeOnce = async (target: ProbeTarget, outcome: DnsOutcome, catchAll: boolean): Promise<SmtpOutcome> => {
    if (!availability.available) return { kind: 'unavailable', catchAll: null };
    const route: MailRoute = {
      domain: target.domain,
      status: outcome.kind === 'implicit' ? 'implicit_mx' : outcome.kind,
      hosts: outcome.hosts,
      providers: outcome.providers,
    };
    const result = await (catchAll ? coalesced : plain).probe(target.address, route);
    onSmtpProbe?.({ status: result.status, provider: result.provider, mxHost: result.mxHost ?? route.hosts[0]?.exchange ?? null, detail: result.detail });
    return toSmtpOutcome(result, catchAll);
  };
  // A stored outcome is still the mailbox's answer while probing is unavailable: the cache is asked first.
  const cache = options.smtpCache && options.smtpCache.ttlMs > 0 ? options.smtpCache : null;
  const smtp: MailboxProber = {
    probe: (target, outcome, probeOptions) =>
      cache && probeOptions.cacheScope !== undefined
        ? probeThroughCache(cache, outcomeKey(probeOptions.cacheScope, target.address, probeOptions.catchAll), () => probeOnce(target, outcome, probeOptions.catchAll))
        : probeOnce(target, outcome, probeOptions.catchAll),
  };
  return { verifier: createVerifier({ dns, smtp }), resolver, prober: withCatchAll, availability };
}
