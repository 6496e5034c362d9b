import { randomBytes } from 'node:crypto';
import { BlockList, isIP, isIPv6 } from 'node:net';
import { isPrivateAddress } from '@mailconv/platform/egress';
import { HostLimiter, type HostSlot } from './host-limiter.js';
import { DEFAULT_LIMITS, PROVIDER_RULES, limitsOf, ruleFor, type ProviderLimits, type ProviderRule } from './provider-rules.js';
import { ProviderGate } from './provider-gate.js';
import { classifyRcptReply, classifySessionReply, isRecipientLimit } from './reply-classify.js';
import { SessionFailure, SessionRefused, SmtpSession, type SessionFailureKind } from './smtp-session.js';
import type { Socks5Proxy } from './socks5.js';
import { SmtpConfigError, type SmtpOutcome, type SmtpReply, type SmtpStatus } from './types.js';
import { EgressPool, type SmtpEgress } from './egress.js';

/** The part of the DNS outcome the prober needs (`DnsOutcome` fits). */
export interface MailRoute {
  domain: string;
  status: string;
  hosts: ReadonlyArray<{ exchange: string; priority: number }>;
  providers: readonly string[];
}

/** Settings of {@link SmtpProber}. `helo`, `from` and `resolveAddresses` are required. */
export interface SmtpProberOptions {
  /** EHLO name (`EMAIL_SMTP_HELO`): a host name whose reverse DNS is the prober's address. */
  helo: string;
  /** MAIL FROM address (`EMAIL_SMTP_FROM`), ideally on the HELO name's domain. */
  from: string;
  /** Addresses of an MX host name (e.g. `DnsResolver.lookupAddresses`). */
  resolveAddresses: (host: string) => Promise<string[]>;
  /** Port of the MX hosts (`EMAIL_SMTP_PORT`). Default 25. */
  port?: number;
  /** Let probes reach loopback/private/reserved addresses (`EMAIL_SMTP_ALLOW_PRIVATE`). Default false. */
  allowPrivate?: boolean;
  /**
   * Connect only to addresses inside these networks (CIDR, e.g. `127.0.0.0/8`), on top of
   * the private-address rule: how a test suite or lab keeps `allowPrivate` from reaching
   * anything but its own rig. Unset: no such restriction.
   */
  restrictTo?: readonly string[];
  /**
   * Reach MX hosts through a SOCKS5 proxy (RFC 1928, optional RFC 1929 login), e.g. one
   * whose egress address has the reverse DNS of `helo`. The proxy itself may be private.
   * One egress; `egresses` names several.
   */
  proxy?: Socks5Proxy;
  /**
   * The ways out (issue 23): proxies and local addresses, each with its EHLO name; shared by
   * the prober instances of one engine so that their health is one. Default: `proxy`, else direct.
   */
  egresses?: EgressPool;
  /** Default 10 s. */
  connectTimeoutMs?: number;
  /** Wait for one reply. Default 30 s (security gateways are slow at RCPT). */
  commandTimeoutMs?: number;
  /** Whole session, connect to last reply. Default 60 s. */
  overallTimeoutMs?: number;
  /**
   * Concurrent sessions per MX address: replaces the default limits' `sessionsPerHost`
   * (servers without a provider row) and caps every provider's. Default: the limits' (4).
   */
  perHostConcurrency?: number;
  /**
   * Recipients asked in one session (over every domain it served) before it is closed:
   * replaces the default limits' `recipientsPerSession` and caps every provider's. Default 200.
   */
  maxRecipientsPerSession?: number;
  /**
   * How long an open session waits, parked, for more recipients at its MX address (from any
   * domain) before it is closed. Default 2 s (Postfix's `smtp_connection_cache_time_limit`).
   */
  sessionIdleMs?: number;
  /**
   * Rejected recipients after which a session is closed: servers slow down or drop
   * clients that collect errors (Postfix delays every reply once a client has 10). An envelope never
   * holds more recipients than the errors still allowed. Replaces the default limits'
   * `rejectionsPerSession` and caps every provider's. Default 9.
   */
  maxErrorsPerSession?: number;
  /**
   * Recipients asked in one envelope (MAIL, RCPT…, RSET), pipelined when the server offers
   * PIPELINING. Provider rules may lower it; a 452 4.5.3 lowers it to 1 for the session.
   * Default 10.
   */
  recipientsPerEnvelope?: number;
  /** Use STARTTLS when offered. Default true. */
  starttls?: boolean;
  /** Run the catch-all probe. Default true. */
  catchAll?: boolean;
  /**
   * How long a domain's catch-all answer is reused by later calls instead of probing a
   * random address again (a batch's own unknown user still decides). Default 10 min.
   */
  catchAllTtlMs?: number;
  /** Provider rules, by provider id. Default {@link PROVIDER_RULES}. */
  rules?: Readonly<Record<string, ProviderRule>>;
  /** Politeness towards servers without a provider row (`EMAIL_SMTP_PROVIDER_LIMITS`'s `default`). Default {@link DEFAULT_LIMITS}. */
  defaultLimits?: ProviderLimits;
  /**
   * Sessions shared with other prober instances of one engine (parked connections, per-host
   * and per-provider limits, pauses and back-offs), so that their politeness is one. Default: its own.
   */
  sessions?: SessionPool;
  /** Random local part for the catch-all probe (injectable for tests). */
  randomLocalPart?: () => string;
  /**
   * Cool-down of an MX host after a rate-limit reply (issue 49): no new session to it for
   * `initialMs`, doubled with each further rate limit, up to `maxMs`; its sessions at once
   * are halved. Addresses asked meanwhile answer `rate_limited` (`cooling_down`) at once.
   * Default {@link DEFAULT_RATE_LIMIT_COOLDOWN}; `initialMs` 0: off.
   */
  rateLimitCooldown?: { initialMs: number; maxMs: number };
  /** Told of every rate-limit reply (issue 49), once per session or refused connection: the MX host and the domain's provider. */
  onRateLimited?: (where: RateLimitedAt) => void;
}

/** Where a rate-limit reply came from. */
export interface RateLimitedAt {
  /** The domain's provider id (its provider rules), or null. */
  readonly provider: string | null;
  /** The MX host that answered. */
  readonly mxHost: string;
}

/** Issue 49: a minute at first (Gmail's 4.7.28 lifts within minutes), doubling up to 15 minutes. */
export const DEFAULT_RATE_LIMIT_COOLDOWN = { initialMs: 60_000, maxMs: 900_000 } as const;

export { SmtpConfigError };

/** Open sessions and politeness state, shareable by the prober instances of one engine ({@link createSessionPool}). */
export interface SessionPool {
  readonly limiter: HostLimiter<OpenSession>;
  readonly gate: ProviderGate;
}

/** A pool of sessions parked for `idleMs` between uses; `now` is the clock of pauses and back-offs. */
export function createSessionPool(idleMs = 2000, now: () => number = Date.now): SessionPool {
  return { limiter: new HostLimiter<OpenSession>(Infinity, idleMs, closeSession), gate: new ProviderGate(now) };
}

/** Says QUIT and counts the session closed (once). */
function closeSession(open: OpenSession): void {
  if (open.closed) return;
  open.closed = true;
  open.onClose();
  open.session.quit();
  open.session.whenClosed(open.leave);
}

/** Enhanced status 4.7.x: the server asks us to slow down (rate limits, reputation, greylisting). */
function asksToSlowDown(reply: SmtpReply | null | undefined): boolean {
  return !!reply && (reply.code === 421 || (reply.code >= 400 && reply.code < 500 && /^4\.7\./.test(reply.enhanced ?? '')));
}

interface Target {
  host: string;
  address: string;
  /** Which egress to prefer: the domain's provider, else its first MX host (one provider, one egress). */
  egressKey: string;
  /** The domain's provider id, or null. */
  provider: string | null;
}

/** A session with what it has used of its server's patience, kept across domains. */
interface OpenSession {
  session: SmtpSession;
  address: string;
  /** The politeness it was opened under, and the provider key it counts against. */
  limits: ProviderLimits;
  gateKey: string;
  /** Counts it closed in its prober's stats. */
  onClose: () => void;
  /** Gives its provider slot back: called once its connection has closed, as the server sees it. */
  leave: () => void;
  /** A 421 or 4.7.x reply was seen in it. */
  slowDown: boolean;
  /** A rate-limit reply was seen in it (issue 49): its MX host cools down. */
  rateLimited: boolean;
  /** Its MX host and the provider it was opened for, as {@link SmtpProberOptions.onRateLimited} is told. */
  at: RateLimitedAt;
  /** Rejected recipients so far (the server's error counter). */
  errors: number;
  recipients: number;
  envelopes: number;
  /** Recipients per envelope this server takes (1 after a 452 4.5.3). */
  size: number;
  /** Its last envelope has been sent (without RSET): only QUIT may follow. */
  spent: boolean;
  closed: boolean;
}

/**
 * RSETs per session at most: Postfix counts RSET as a "junk" command and, past
 * `smtpd_junk_command_limit` (100), each one as an error.
 */
const MAX_ENVELOPES_PER_SESSION = 50;
/** A session with at most this share of its error budget left takes one last envelope and closes. */
const RETIRE_AT_BUDGET_SHARE = 1 / 3;
/** Recipients a lane takes from a domain's list at a time (and so how many lanes a list gets). */
const LANE_CHUNK = 50;

/** What one session achieved for a chunk of recipients. */
interface SessionRun {
  answered: Map<number, { status: SmtpStatus; reply: SmtpReply }>;
  /** Recipients of the chunk not asked or not answered. */
  leftover: number[];
  /** Set when the session ended early for a reason that concerns every leftover recipient. */
  failure: { status: SmtpStatus; detail: string | null; reply: SmtpReply | null; kind: SessionFailureKind | 'refused' | null } | null;
  randomReply: SmtpReply | null;
  target: Target | null;
  tls: boolean;
}

const HOSTNAME = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?:\.(?!-)[a-z0-9-]{1,63})+$/i;
/**
 * What may go between < and > of a command: no spaces, brackets, backslashes or control
 * characters, so no address can smuggle a second command into the session.
 */
function isSafeAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at < 1 || at > 64 || address.length - at - 1 < 1 || address.length - at - 1 > 255) return false;
  if (address.indexOf('@') !== at) return address.slice(0, at).startsWith('"') ? safeChars(address) : false;
  return safeChars(address);
}

function safeChars(address: string): boolean {
  for (const ch of address) {
    const c = ch.codePointAt(0) ?? 0;
    if (c <= 0x20 || c === 0x7f || ch === '<' || ch === '>' || ch === '\\') return false;
  }
  return true;
}

const MAILBOX_ANSWERS: ReadonlySet<SmtpStatus> = new Set(['accepted', 'user_unknown', 'mailbox_full', 'disabled']);

function randomLocal(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(16), (b) => alphabet[b % 36]).join('');
}

function failureStatus(kind: SessionFailureKind): { status: SmtpStatus; detail: string } {
  switch (kind) {
    case 'connect_timeout':
    case 'command_timeout':
    case 'overall_timeout':
      return { status: 'timeout', detail: kind };
    case 'connect_refused':
      return { status: 'unreachable', detail: 'connection_refused' };
    case 'tls_failed':
      return { status: 'unreachable', detail: 'tls_failed' };
    case 'proxy_failed':
      return { status: 'unreachable', detail: 'proxy_failed' };
    case 'egress_failed':
      return { status: 'unreachable', detail: 'egress_failed' };
    case 'protocol':
      return { status: 'unknown', detail: 'protocol_error' };
    default:
      return { status: 'unreachable', detail: 'connection_lost' };
  }
}

/** Enhanced status codes (RFC 3463) about a destination mailbox (x.1.1–x.1.6) or the sender (x.1.7, x.1.8). */
const DESTINATION_CODE = /^[245]\.1\.[1-6]$/;
const SENDER_CODE = /^[245]\.1\.[78]$/;

/**
 * Whether each reply can be the answer to the command in its place, as far as the replies
 * say: MAIL is not answered about a recipient, a RCPT not about the sender, and RSET
 * (always last) with a plain success. A reply shifted by one (a server that answered a
 * command twice, or ran two replies together) usually lands on one of these.
 */
export function repliesFit(commands: readonly string[], replies: readonly SmtpReply[]): boolean {
  return replies.every((reply, i) => {
    const command = commands[i] ?? '';
    const enhanced = reply.enhanced ?? '';
    if (command.startsWith('MAIL')) return !DESTINATION_CODE.test(enhanced);
    if (command.startsWith('RCPT')) return !SENDER_CODE.test(enhanced) && !(reply.code >= 200 && reply.code < 300 && /^2\.1\.0$/.test(enhanced) && replies[0]?.enhanced === '2.1.0' && replies[0]?.text === reply.text);
    if (command === 'RSET') return reply.code >= 200 && reply.code < 300 && !/^2\.1\./.test(enhanced);
    return true;
  });
}

/**
 * The SMTP mailbox probe (issue 3, item 6). For the addresses of one domain it connects to
 * the MX hosts in preference order (next host on connection failure or a 421 greeting),
 * says EHLO with the configured name, upgrades with STARTTLS when offered, and asks
 * `RCPT TO` for each address in its own envelope (`MAIL FROM`, `RCPT TO`, `RSET`),
 * several per session and pipelined when the server allows, without ever sending DATA.
 * Then it asks once for a random local part to tell a catch-all domain (same envelope as
 * the first real address, or its own session where the provider rules or a 452 say so).
 *
 * Refuses, by default, to connect to loopback/private/reserved addresses.
 */
export class SmtpProber {
  private readonly o: Required<Omit<SmtpProberOptions, 'rules' | 'randomLocalPart' | 'rateLimitCooldown' | 'onRateLimited' | 'restrictTo' | 'proxy' | 'egresses' | 'defaultLimits' | 'sessions' | 'perHostConcurrency' | 'maxRecipientsPerSession' | 'maxErrorsPerSession'>> & {
    rules: Readonly<Record<string, ProviderRule>>;
    randomLocalPart: () => string;
  };
  private readonly limiter: HostLimiter<OpenSession>;
  private readonly gate: ProviderGate;
  /** Limits for servers without a provider row, and the caps the options put on every provider's. */
  private readonly defaults: ProviderLimits;
  private readonly caps: Partial<ProviderLimits>;
  /**
   * Counters since construction: sessions opened (after a greeting), RCPT commands sent,
   * chunks that reused a session opened for another chunk or domain, sessions the server
   * cut with a 421 in the middle (an error limit we did not know), and the most sessions
   * open at once (greeted and not yet closed, parked ones included).
   */
  readonly stats = { sessions: 0, recipients: 0, reused: 0, cutOff: 0, peakOpen: 0 };
  private open = 0;
  /** Catch-all answers per domain, for `catchAllTtlMs`. */
  private readonly catchAllAnswers = new Map<string, { value: boolean; until: number }>();
  /** TLS sessions per MX address, so the next STARTTLS can resume instead of a full handshake. */
  private readonly tlsSessions = new Map<string, Buffer>();
  private readonly restrictTo: BlockList | null = null;
  private readonly cooldown: { initialMs: number; maxMs: number };
  private readonly onRateLimited: ((where: RateLimitedAt) => void) | undefined;
  /** The ways out to MX hosts and their health. */
  readonly egresses: EgressPool;

  constructor(options: SmtpProberOptions) {
    if (!options.helo || !HOSTNAME.test(options.helo)) {
      throw new SmtpConfigError('SMTP probing needs an EHLO name (EMAIL_SMTP_HELO / --helo): a fully qualified host name of your own');
    }
    if (!options.from || !isSafeAddress(options.from)) {
      throw new SmtpConfigError('SMTP probing needs a MAIL FROM address (EMAIL_SMTP_FROM / --from) on your own domain');
    }
    this.o = {
      port: 25,
      allowPrivate: false,
      connectTimeoutMs: 10_000,
      commandTimeoutMs: 30_000,
      overallTimeoutMs: 60_000,
      sessionIdleMs: 2000,
      catchAllTtlMs: 10 * 60_000,
      recipientsPerEnvelope: 10,
      starttls: true,
      catchAll: true,
      ...options,
      rules: options.rules ?? PROVIDER_RULES,
      randomLocalPart: options.randomLocalPart ?? randomLocal,
    };
    this.caps = {
      ...(options.perHostConcurrency ? { sessionsPerHost: options.perHostConcurrency } : {}),
      ...(options.maxRecipientsPerSession ? { recipientsPerSession: options.maxRecipientsPerSession } : {}),
      ...(options.maxErrorsPerSession ? { rejectionsPerSession: options.maxErrorsPerSession } : {}),
    };
    this.defaults = { ...(options.defaultLimits ?? DEFAULT_LIMITS), ...this.caps };
    this.cooldown = options.rateLimitCooldown ?? DEFAULT_RATE_LIMIT_COOLDOWN;
    this.onRateLimited = options.onRateLimited;
    const pool = options.sessions ?? createSessionPool(this.o.sessionIdleMs);
    this.limiter = pool.limiter;
    this.gate = pool.gate;
    this.egresses = options.egresses ?? new EgressPool([options.proxy ? { name: `socks5://${options.proxy.host}:${options.proxy.port}`, proxy: options.proxy } : { name: 'direct' }]);
    if (options.restrictTo) {
      this.restrictTo = new BlockList();
      for (const cidr of options.restrictTo) {
        const [net, bits] = cidr.split('/');
        const family = isIPv6(net ?? '') ? 'ipv6' : 'ipv4';
        if (!net || !isIP(net)) throw new SmtpConfigError(`restrictTo: "${cidr}" is not a network`);
        this.restrictTo.addSubnet(net, Number(bits ?? (family === 'ipv6' ? 128 : 32)), family);
      }
    }
  }

  /** MX hosts cooling down after a rate limit (issue 49), and the longest time left (ms). */
  coolingHosts(): { hosts: number; longestMs: number } {
    return this.gate.coolingHosts();
  }

  /** Closes the sessions parked for reuse (they would close by themselves after `sessionIdleMs`). */
  close(): void {
    this.limiter.closeIdle();
  }

  /** Probes one address. */
  async probe(email: string, route: MailRoute): Promise<SmtpOutcome> {
    const [outcome] = await this.probeMany([email], route);
    if (!outcome) throw new Error('unreachable: one address in, one outcome out');
    return outcome;
  }

  /**
   * Probes several addresses of one domain (`route` is that domain's DNS outcome),
   * sharing sessions. Outcomes come back in input order.
   */
  async probeMany(emails: readonly string[], route: MailRoute): Promise<SmtpOutcome[]> {
    const provider = route.providers[0] ?? null;
    const results: SmtpOutcome[] = emails.map((email) => ({
      email,
      status: 'unknown',
      catchAll: null,
      reply: null,
      mxHost: null,
      mxAddress: null,
      tls: false,
      provider,
      detail: null,
    }));
    const pending: number[] = [];
    results.forEach((r, i) => {
      if (isSafeAddress(r.email)) pending.push(i);
      else r.detail = 'invalid_address';
    });
    if (route.status !== 'mx' && route.status !== 'implicit_mx') {
      for (const i of pending) Object.assign(results[i] as SmtpOutcome, { status: 'unreachable', detail: 'no_mail_host' });
      return results;
    }
    const { targets, blocked } = await this.targets(route);
    if (targets.length === 0) {
      for (const i of pending) Object.assign(results[i] as SmtpOutcome, { status: 'unreachable', detail: blocked });
      return results;
    }
    const rule = ruleFor(route.providers, this.o.rules);
    const wantCatchAll = this.o.catchAll && rule.catchAllProbe !== 'skip';
    // A domain's catch-all answer found by an earlier call is reused for a while: a bulk job
    // probes a domain in many small batches, and each random address costs an error.
    const knownCatchAll = wantCatchAll ? this.cachedCatchAll(route.domain) : null;
    const randomAddress = `${this.o.randomLocalPart()}@${route.domain}`;
    const perEnvelope = Math.max(1, Math.min(this.o.recipientsPerEnvelope, rule.recipientsPerEnvelope ?? Infinity));
    let randomReply: SmtpReply | null = null;
    let randomAsked = false;
    let fruitlessLosses = 0;
    const limits = this.limitsFor(rule);
    const chunkSize = Math.max(1, Math.min(LANE_CHUNK, limits.recipientsPerSession));

    // Sessions of one domain run side by side (up to the per-host limit), each taking the
    // next chunk of the shared list: a list of one big domain is not probed one session
    // after the other. Recipients a session could not ask go back to the front.
    const lane = async (): Promise<void> => {
      while (pending.length > 0) {
        const chunk = pending.splice(0, chunkSize);
        const probeRandom = wantCatchAll && knownCatchAll === null && rule.catchAllProbe === 'same_session' && !randomAsked ? randomAddress : null;
        if (probeRandom) randomAsked = true;
        const run = await this.session(targets, limits, chunk.map((i) => results[i]?.email ?? ''), probeRandom, perEnvelope);
        for (const [j, answer] of run.answered) {
          const r = results[chunk[j] ?? -1];
          if (r) Object.assign(r, answer, { mxHost: run.target?.host ?? null, mxAddress: run.target?.address ?? null, tls: run.tls });
        }
        randomReply ??= run.randomReply;
        // Not answered (the session ended first): a later session asks it.
        if (probeRandom && !run.randomReply) randomAsked = false;
        pending.unshift(...run.leftover.map((j) => chunk[j] ?? -1));
        if (!run.failure && run.answered.size > 0) continue;
        run.failure ??= { status: 'unknown', detail: 'no_progress', reply: null, kind: null };
        // A dropped connection is retried while sessions make progress, and once more after
        // one that made none (some servers hang up after the first rejection).
        if (run.failure.kind === 'connection_lost' && (run.answered.size > 0 || fruitlessLosses++ < 1)) continue;
        for (const i of pending) {
          const r = results[i];
          if (r) Object.assign(r, { status: run.failure.status, detail: run.failure.detail, reply: run.failure.reply, mxHost: run.target?.host ?? null, mxAddress: run.target?.address ?? null, tls: run.tls });
        }
        pending.length = 0;
      }
    };
    const lanes = Math.max(1, Math.min(limits.sessionsPerHost, limits.sessions, Math.ceil(pending.length / chunkSize)));
    await Promise.all(Array.from({ length: lanes }, lane));

    if (wantCatchAll) {
      // This batch's own evidence (an unknown user) wins over a remembered answer.
      const catchAll = results.some((r) => r.status === 'user_unknown')
        ? false
        : results.some((r) => r.status === 'accepted')
          ? (knownCatchAll ?? (await this.catchAll(results, rule, limits, targets, randomAddress, randomReply)))
          : null;
      if (catchAll !== null) this.rememberCatchAll(route.domain, catchAll);
      for (const r of results) if (MAILBOX_ANSWERS.has(r.status)) r.catchAll = catchAll;
    }
    if (rule.acceptMeansUnknown) {
      for (const r of results) {
        if (r.status === 'accepted') Object.assign(r, { status: 'unknown', detail: 'accept_all_provider', catchAll: null });
      }
    }
    return results;
  }

  /**
   * Catch-all verdict: an unknown user among the real addresses proves "no" (a full or
   * disabled mailbox does not: catch-all domains have those too); else the random
   * address decides.
   */
  private async catchAll(results: SmtpOutcome[], rule: ProviderRule, limits: ProviderLimits, targets: Target[], randomAddress: string, sameSession: SmtpReply | null): Promise<boolean | null> {
    if (results.some((r) => r.status === 'user_unknown')) return false;
    if (!results.some((r) => r.status === 'accepted')) return null;
    let reply = sameSession;
    if (!reply || isRecipientLimit(reply) || rule.catchAllProbe === 'own_session') {
      // `own_session` means a connection of its own, never one that asked real addresses.
      const run = await this.session(targets, limits, [randomAddress], null, 1, rule.catchAllProbe === 'own_session');
      reply = run.answered.get(0)?.reply ?? null;
    }
    if (!reply) return null;
    const status = classifyRcptReply(reply);
    if (status === 'accepted') return true;
    return status === 'user_unknown' ? false : null;
  }

  /** A rule's politeness with the options' caps applied. */
  private limitsFor(rule: ProviderRule): ProviderLimits {
    const limits = limitsOf(rule, this.defaults);
    for (const [field, cap] of Object.entries(this.caps) as Array<[keyof ProviderLimits, number]>) limits[field] = Math.min(limits[field], cap);
    return limits;
  }

  /** MX addresses in preference order, without the ones the prober may not reach. */
  private async targets(route: MailRoute): Promise<{ targets: Target[]; blocked: string }> {
    const targets: Target[] = [];
    const egressKey = route.providers[0] ?? route.hosts[0]?.exchange ?? route.domain;
    let sawPrivate = false;
    let sawOutside = false;
    let lookupFailed = false;
    for (const h of route.hosts) {
      let addresses: string[];
      try {
        addresses = await this.o.resolveAddresses(h.exchange);
      } catch {
        lookupFailed = true;
        continue;
      }
      for (const address of addresses) {
        if (!this.o.allowPrivate && isPrivateAddress(address)) sawPrivate = true;
        else if (this.restrictTo && !this.restrictTo.check(address, isIPv6(address) ? 'ipv6' : 'ipv4')) sawOutside = true;
        else targets.push({ host: h.exchange, address, egressKey, provider: route.providers[0] ?? null });
      }
    }
    const blocked = sawPrivate ? 'private_address' : sawOutside ? 'address_not_allowed' : lookupFailed ? 'mx_lookup_failed' : 'no_mx_address';
    return { targets, blocked };
  }

  /**
   * One session for a chunk of recipients: a parked session at the first MX address that
   * has one, else the first MX address that answers with a greeting; then envelopes of
   * (MAIL, RCPT…, RSET). A session with patience left is parked for the next chunk.
   * `fresh`: a new connection, closed after use (the catch-all probe of `own_session` rules).
   */
  private async session(targets: Target[], limits: ProviderLimits, emails: readonly string[], randomAddress: string | null, perEnvelope: number, fresh = false): Promise<SessionRun> {
    const run: SessionRun = { answered: new Map(), leftover: emails.map((_, j) => j), failure: null, randomReply: null, target: null, tls: false };
    // The session's time starts once it may go ahead: waiting for a slot behind other
    // domains of the same host or provider (a bulk job queues many) is not the server's delay.
    let deadline = 0;
    let open: OpenSession | null = null;
    let slot: HostSlot<OpenSession> | null = null;
    let lastFailure: SessionRun['failure'] = null;
    let sawTimeout = false;
    for (const target of targets) {
      const hostKey = `${target.address}:${this.o.port}`;
      // A host cooling down after a rate limit (issue 49) gets no session: its addresses
      // answer at once, and a bulk job asks them again once the cool-down is over.
      if (this.gate.coolingFor(hostKey) > 0) {
        run.target = target;
        lastFailure = { status: 'rate_limited', detail: 'cooling_down', reply: null, kind: 'refused' };
        continue;
      }
      slot = await this.limiter.acquire(hostKey, this.gate.hostSessions(hostKey, limits.sessionsPerHost));
      const parked = slot.reused;
      // A parked session must have room for one recipient (and the random one) within its
      // error budget, or it would take the chunk and ask nothing.
      const room = parked ? parked.limits.rejectionsPerSession - parked.errors - (randomAddress ? 1 : 0) : 0;
      if (parked && parked.session.usable && !fresh && room >= 1) {
        deadline ||= Date.now() + this.o.overallTimeoutMs;
        parked.session.hold(true);
        parked.session.setDeadline(deadline);
        open = parked;
        run.target = target;
        run.tls = parked.session.tls;
        this.stats.reused++;
        break;
      }
      // Closed by the server while parked, spent, or a fresh one is wanted: the slot is ours to open a new one.
      if (parked) closeSession(parked);
      // A new connection: within the provider's sessions at once, after its pause or back-off.
      // When the provider's sessions are all taken, one of them parked idle at another of
      // its addresses is closed for this one rather than left to hold its place until it
      // times out (Microsoft 365 gives every domain MX hosts of its own).
      if (this.gate.openTo(target.egressKey) >= limits.sessions) this.limiter.closeIdle((o) => o.gateKey === target.egressKey, 1);
      const leave = await this.gate.acquire(target.egressKey, limits);
      deadline ||= Date.now() + this.o.overallTimeoutMs;
      try {
        const session = await this.openThroughEgress(target, deadline);
        if (session.tlsSessionData) this.rememberTls(target.address, session.tlsSessionData);
        const onClose = () => this.open--;
        open = { session, address: target.address, limits, gateKey: target.egressKey, onClose, leave, slowDown: false, rateLimited: false, at: { provider: target.provider, mxHost: target.host }, errors: 0, recipients: 0, envelopes: 0, size: Infinity, spent: false, closed: false };
        this.stats.sessions++;
        this.stats.peakOpen = Math.max(this.stats.peakOpen, ++this.open);
        run.target = target;
        run.tls = session.tls;
        break;
      } catch (err) {
        leave();
        slot.release();
        slot = null;
        run.target = target;
        if (err instanceof SessionRefused && asksToSlowDown(err.reply)) this.gate.backOff(target.egressKey, limits);
        if (err instanceof SessionRefused && classifySessionReply(err.reply) === 'rate_limited') this.coolDown(hostKey, limits, { provider: target.provider, mxHost: target.host });
        if (err instanceof SessionRefused) {
          lastFailure = { status: classifySessionReply(err.reply), detail: null, reply: err.reply, kind: 'refused' };
        } else if (err instanceof SessionFailure) {
          if (err.kind.endsWith('timeout')) sawTimeout = true;
          const { status, detail } = failureStatus(err.kind);
          lastFailure = { status, detail, reply: null, kind: err.kind };
          // Only connection-level failures move on to the next MX; a session that was
          // opened and then stalled (a tarpit) is not retried elsewhere.
          if (err.kind !== 'connect_refused' && err.kind !== 'connect_timeout' && err.kind !== 'connection_lost' && err.kind !== 'tls_failed') break;
        } else {
          throw err;
        }
        if (deadline && Date.now() >= deadline) break;
      }
    }
    if (!open || !slot) {
      // Every host failed: a refusal (421) says more than a refused port; a time-out more than a refusal.
      if (lastFailure?.kind === 'connect_refused' && sawTimeout) lastFailure = { status: 'timeout', detail: 'connect_timeout', reply: null, kind: 'connect_timeout' };
      run.failure = lastFailure ?? { status: 'unreachable', detail: 'connection_refused', reply: null, kind: 'connect_refused' };
      return run;
    }
    let reusable = false;
    try {
      await this.envelopes(open, emails, randomAddress, perEnvelope, run);
      // A server that asked us to slow down is not sent more on this session either.
      reusable = !fresh && !run.failure && open.session.usable && this.patienceLeft(open) && !(open.slowDown && open.limits.backoffMs > 0);
    } finally {
      if (open.slowDown) this.gate.backOff(open.gateKey, open.limits);
      else this.gate.calm(open.gateKey);
      // Rate-limited: its cool-down was started when the reply came; the session is not reused.
      if (open.rateLimited) reusable = false;
      if (reusable) {
        open.session.hold(false);
        slot.park(open);
      } else {
        // Closed for its rejections: the provider gets a pause before the next new session.
        if (open.spent || open.errors >= open.limits.rejectionsPerSession) this.gate.pause(open.gateKey, open.limits.pauseAfterRejectionsMs);
        closeSession(open);
        slot.release();
      }
    }
    return run;
  }

  /**
   * Opens a session to `target` through the egress its provider keeps to. An egress that
   * fails itself (its proxy, its local address) is taken out and the next one tried, so a
   * broken egress never decides a verdict; what the server answers through it (a refusal,
   * a block-list reply, a time-out) is counted against the egress and thrown as usual.
   */
  private async openThroughEgress(target: Target, deadline: number): Promise<SmtpSession> {
    const tried = new Set<string>();
    for (;;) {
      const egress: SmtpEgress | null = this.egresses.pick(target.egressKey, tried);
      if (!egress) throw new SessionFailure('egress_failed', 'every egress failed');
      tried.add(egress.name);
      try {
        const session = await SmtpSession.open({
          address: target.address,
          port: this.o.port,
          hostname: target.host,
          helo: egress.helo ?? this.o.helo,
          connectTimeoutMs: this.o.connectTimeoutMs,
          commandTimeoutMs: this.o.commandTimeoutMs,
          deadline,
          starttls: this.o.starttls,
          tlsSession: this.tlsSessions.get(target.address),
          proxy: egress.proxy,
          localAddress: egress.localAddress,
        });
        this.egresses.succeeded(egress);
        return session;
      } catch (err) {
        if (err instanceof SessionFailure && (err.kind === 'proxy_failed' || err.kind === 'egress_failed')) {
          this.egresses.failed(egress);
          if (tried.size < this.egresses.size && Date.now() < deadline) continue;
        } else if (err instanceof SessionRefused) {
          this.egresses.noted(egress, classifySessionReply(err.reply) === 'blocked' ? 'blocklisted' : 'refused');
        } else if (err instanceof SessionFailure && err.kind === 'connect_timeout') {
          this.egresses.noted(egress, 'timeout');
        }
        throw err;
      }
    }
  }

  /** A rate-limit reply in `open`: its host's cool-down starts now (once per session), so that no other session is opened meanwhile. */
  private rateLimitedBy(open: OpenSession): void {
    if (open.rateLimited) return;
    open.rateLimited = true;
    this.coolDown(`${open.address}:${this.o.port}`, open.limits, open.at);
  }

  /** A rate-limit reply from `hostKey`: its cool-down starts (or grows), shared by every session of the pool. */
  private coolDown(hostKey: string, limits: ProviderLimits, at: RateLimitedAt): void {
    this.gate.coolDown(hostKey, this.cooldown.initialMs, this.cooldown.maxMs, limits.sessionsPerHost);
    this.onRateLimited?.(at);
  }

  /** Whether a session may take another envelope without nearing its server's limits. */
  private patienceLeft(open: OpenSession): boolean {
    return !open.spent && open.errors < open.limits.rejectionsPerSession && open.recipients < open.limits.recipientsPerSession && open.envelopes < MAX_ENVELOPES_PER_SESSION;
  }

  private async envelopes(open: OpenSession, emails: readonly string[], randomAddress: string | null, perEnvelope: number, run: SessionRun): Promise<void> {
    const { session } = open;
    const unanswered = () => emails.map((_, i) => i).filter((i) => !run.answered.has(i));
    const utf8 = emails.some((e) => /[\u0080-\u{10ffff}]/u.test(e));
    if (utf8 && !session.extensions.has('SMTPUTF8')) {
      for (let j = 0; j < emails.length; j++) run.answered.set(j, { status: 'unknown', reply: { code: 0, enhanced: null, text: 'server does not offer SMTPUTF8' } });
      run.leftover = [];
      return;
    }
    const mailFrom = `MAIL FROM:<${this.o.from}>${utf8 ? ' SMTPUTF8' : ''}`;
    const todo = emails.map((_, j) => j);
    let askRandom = randomAddress !== null;
    const hostKey = `${open.address}:${this.o.port}`;
    while (todo.length > 0) {
      // The host was rate-limited (by this session or another one): nothing more is asked of it (issue 49).
      if (open.rateLimited || this.gate.coolingFor(hostKey) > 0) {
        open.rateLimited = true;
        run.failure = { status: 'rate_limited', detail: 'cooling_down', reply: null, kind: 'refused' };
        run.leftover = unanswered();
        return;
      }
      // Worst case every recipient of the envelope is rejected: never go past the budget
      // (Postfix slows every reply down once a client has 10 errors, and cuts it at 20).
      const budget = open.limits.rejectionsPerSession - open.errors - (askRandom ? 1 : 0);
      if (budget <= 0 && open.errors > 0) break;
      if (open.recipients >= open.limits.recipientsPerSession || open.envelopes >= MAX_ENVELOPES_PER_SESSION) break;
      const size = Math.min(perEnvelope, open.size, open.limits.recipientsPerSession - open.recipients);
      // Little budget left: this envelope is the session's last. It may hold one recipient
      // more than the budget, because a server that slows down after N errors (Postfix:
      // "error count >= soft limit" before each reply) still answers the Nth error at
      // once, and the only reply after it is QUIT's, which nobody waits for. Spending the
      // rest of the budget a few recipients per round trip would cost more than a new session.
      const last = !askRandom && open.errors > 0 && budget <= open.limits.rejectionsPerSession * RETIRE_AT_BUDGET_SHARE;
      const batch = todo.splice(0, Math.max(1, Math.min(size, last ? budget + 1 : budget)));
      const commands = [mailFrom];
      batch.forEach((j, k) => {
        commands.push(`RCPT TO:<${emails[j]}>`);
        // The random address follows the first real one, so the real answer comes first.
        if (k === 0 && askRandom) commands.push(`RCPT TO:<${randomAddress}>`);
      });
      if (!last) commands.push('RSET');
      else open.spent = true;
      const withRandom = askRandom;
      askRandom = false;
      const asked = batch.length + (withRandom ? 1 : 0);
      this.stats.recipients += asked;
      open.recipients += asked;
      open.envelopes++;
      let { replies, failure } = await session.exchange(commands);
      if (replies.some(asksToSlowDown)) open.slowDown = true;
      if (!failure && !repliesFit(commands, replies)) {
        // A reply in the wrong place (a MAIL answer where a RCPT answer belongs, a RSET
        // answered like a recipient): the replies cannot be matched to the recipients.
        failure = session.unmatched('replies do not fit the commands');
        replies = [];
      }
      const mail = replies[0];
      if (mail && mail.code !== 250 && mail.code !== 421) {
        // The server refuses our sender: every remaining recipient gets that answer.
        run.failure = { status: classifySessionReply(mail), detail: 'sender_refused', reply: mail, kind: 'refused' };
        if (run.failure.status === 'rate_limited') this.rateLimitedBy(open);
        run.leftover = unanswered();
        return;
      }
      // 421 is the server closing the session (Postfix's "too many errors", an idle or
      // shutdown notice): it answers no recipient, and those from there on are asked again.
      let closing: SmtpReply | null = mail?.code === 421 ? mail : null;
      let r = 1;
      const retry: number[] = [];
      batch.forEach((j, k) => {
        const rcpt = closing ? undefined : replies[r++];
        const random = !closing && k === 0 && withRandom ? replies[r++] : undefined;
        if (rcpt?.code === 421 || random?.code === 421) closing ??= rcpt?.code === 421 ? rcpt : (random ?? null);
        if (closing) return;
        if (random) {
          run.randomReply = random;
          if (random.code >= 400) open.errors++;
        }
        if (!rcpt) return;
        if (k > 0 && isRecipientLimit(rcpt)) {
          // This server takes fewer recipients per message: ask again, one per envelope.
          retry.push(j);
          open.size = 1;
          return;
        }
        const status = classifyRcptReply(rcpt);
        if (status === 'rate_limited') this.rateLimitedBy(open);
        run.answered.set(j, { status, reply: rcpt });
        if (rcpt.code >= 400) open.errors++;
      });
      todo.unshift(...retry);
      if (closing) {
        this.stats.cutOff++;
        session.destroy();
        run.failure = { status: classifySessionReply(closing), detail: null, reply: closing, kind: 'connection_lost' };
        if (run.failure.status === 'rate_limited') this.rateLimitedBy(open);
        run.leftover = unanswered();
        return;
      }
      if (failure) {
        const { status, detail } = failureStatus(failure.kind);
        run.failure = { status, detail, reply: null, kind: failure.kind };
        run.leftover = unanswered();
        return;
      }
      if (open.spent) break;
    }
    run.leftover = unanswered();
  }

  private cachedCatchAll(domain: string): boolean | null {
    const hit = this.catchAllAnswers.get(domain.toLowerCase());
    if (!hit) return null;
    if (hit.until > Date.now()) return hit.value;
    this.catchAllAnswers.delete(domain.toLowerCase());
    return null;
  }

  private rememberCatchAll(domain: string, value: boolean): void {
    if (this.catchAllAnswers.size >= 10_000) this.catchAllAnswers.clear();
    this.catchAllAnswers.set(domain.toLowerCase(), { value, until: Date.now() + this.o.catchAllTtlMs });
  }

  private rememberTls(address: string, data: Buffer): void {
    if (this.tlsSessions.size >= 1000) this.tlsSessions.clear();
    this.tlsSessions.set(address, data);
  }
}
