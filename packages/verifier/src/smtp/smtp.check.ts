import { randomBytes } from 'node:crypto';
import { BlockList, isIP, isIPv6 } from 'node:net';
import { isPrivateAddress } from './address-guard.js';
import { HostLimiter } from './host-limiter.js';
import { PROVIDER_RULES, ruleFor, type ProviderRule } from './provider-rules.js';
import { classifyRcptReply, classifySessionReply, isRecipientLimit } from './reply-classify.js';
import { SessionFailure, SessionRefused, SmtpSession, type SessionFailureKind } from './smtp-session.js';
import type { Socks5Proxy } from './socks5.js';
import type { SmtpOutcome, SmtpReply, SmtpStatus } from './types.js';

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
   */
  proxy?: Socks5Proxy;
  /** Default 10 s. */
  connectTimeoutMs?: number;
  /** Wait for one reply. Default 30 s (security gateways are slow at RCPT). */
  commandTimeoutMs?: number;
  /** Whole session, connect to last reply. Default 60 s. */
  overallTimeoutMs?: number;
  /** Concurrent sessions per MX address. Default 2. */
  perHostConcurrency?: number;
  /** Recipients asked in one session before a new one is opened. Default 50. */
  maxRecipientsPerSession?: number;
  /**
   * Rejected recipients after which a session is closed: servers slow down or drop
   * clients that collect errors (Postfix delays every reply once a client has 10). An envelope never
   * holds more recipients than the errors still allowed. Default 9.
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
  /** Provider rules, by provider id. Default {@link PROVIDER_RULES}. */
  rules?: Readonly<Record<string, ProviderRule>>;
  /** Random local part for the catch-all probe (injectable for tests). */
  randomLocalPart?: () => string;
}

/** Thrown at construction when the prober is not configured to probe honestly. */
export class SmtpConfigError extends Error {}

interface Target {
  host: string;
  address: string;
}

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
    case 'protocol':
      return { status: 'unknown', detail: 'protocol_error' };
    default:
      return { status: 'unreachable', detail: 'connection_lost' };
  }
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
  private readonly o: Required<Omit<SmtpProberOptions, 'rules' | 'randomLocalPart' | 'restrictTo' | 'proxy'>> & {
    rules: Readonly<Record<string, ProviderRule>>;
    randomLocalPart: () => string;
  };
  private readonly limiter: HostLimiter;
  /**
   * Counters since construction: sessions opened (after a greeting), RCPT commands sent, and
   * the most sessions holding a per-host slot at once (connecting or open).
   */
  readonly stats = { sessions: 0, recipients: 0, peakOpen: 0 };
  private open = 0;
  /** TLS sessions per MX address, so the next STARTTLS can resume instead of a full handshake. */
  private readonly tlsSessions = new Map<string, Buffer>();
  private readonly restrictTo: BlockList | null = null;
  private readonly proxy: Socks5Proxy | undefined;

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
      perHostConcurrency: 2,
      maxRecipientsPerSession: 50,
      maxErrorsPerSession: 9,
      recipientsPerEnvelope: 10,
      starttls: true,
      catchAll: true,
      ...options,
      rules: options.rules ?? PROVIDER_RULES,
      randomLocalPart: options.randomLocalPart ?? randomLocal,
    };
    this.limiter = new HostLimiter(this.o.perHostConcurrency);
    this.proxy = options.proxy;
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
    const randomAddress = `${this.o.randomLocalPart()}@${route.domain}`;
    const perEnvelope = Math.max(1, Math.min(this.o.recipientsPerEnvelope, rule.recipientsPerEnvelope ?? Infinity));
    let randomReply: SmtpReply | null = null;
    let randomAsked = false;
    let fruitlessLosses = 0;

    // Sessions of one domain run side by side (up to the per-host limit), each taking the
    // next chunk of the shared list: a list of one big domain is not probed one session
    // after the other. Recipients a session could not ask go back to the front.
    const lane = async (): Promise<void> => {
      while (pending.length > 0) {
        const chunk = pending.splice(0, this.o.maxRecipientsPerSession);
        const probeRandom = wantCatchAll && rule.catchAllProbe === 'same_session' && !randomAsked ? randomAddress : null;
        if (probeRandom) randomAsked = true;
        const run = await this.session(targets, chunk.map((i) => results[i]?.email ?? ''), probeRandom, perEnvelope);
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
    const lanes = Math.max(1, Math.min(this.o.perHostConcurrency, Math.ceil(pending.length / this.o.maxRecipientsPerSession)));
    await Promise.all(Array.from({ length: lanes }, lane));

    if (wantCatchAll) {
      const catchAll = await this.catchAll(results, rule, targets, randomAddress, randomReply);
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
  private async catchAll(results: SmtpOutcome[], rule: ProviderRule, targets: Target[], randomAddress: string, sameSession: SmtpReply | null): Promise<boolean | null> {
    if (results.some((r) => r.status === 'user_unknown')) return false;
    if (!results.some((r) => r.status === 'accepted')) return null;
    let reply = sameSession;
    if (!reply || isRecipientLimit(reply) || rule.catchAllProbe === 'own_session') {
      const run = await this.session(targets, [randomAddress], null, 1);
      reply = run.answered.get(0)?.reply ?? null;
    }
    if (!reply) return null;
    const status = classifyRcptReply(reply);
    if (status === 'accepted') return true;
    return status === 'user_unknown' ? false : null;
  }

  /** MX addresses in preference order, without the ones the prober may not reach. */
  private async targets(route: MailRoute): Promise<{ targets: Target[]; blocked: string }> {
    const targets: Target[] = [];
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
        else targets.push({ host: h.exchange, address });
      }
    }
    const blocked = sawPrivate ? 'private_address' : sawOutside ? 'address_not_allowed' : lookupFailed ? 'mx_lookup_failed' : 'no_mx_address';
    return { targets, blocked };
  }

  /**
   * One session for a chunk of recipients: the first MX address that answers with a
   * greeting, then envelopes of (MAIL, RCPT…, RSET).
   */
  private async session(targets: Target[], emails: readonly string[], randomAddress: string | null, perEnvelope: number): Promise<SessionRun> {
    const run: SessionRun = { answered: new Map(), leftover: emails.map((_, j) => j), failure: null, randomReply: null, target: null, tls: false };
    const deadline = Date.now() + this.o.overallTimeoutMs;
    let session: SmtpSession | null = null;
    let release: (() => void) | null = null;
    let lastFailure: SessionRun['failure'] = null;
    let sawTimeout = false;
    for (const target of targets) {
      release = this.counted(await this.limiter.acquire(`${target.address}:${this.o.port}`));
      try {
        session = await SmtpSession.open({
          address: target.address,
          port: this.o.port,
          hostname: target.host,
          helo: this.o.helo,
          connectTimeoutMs: this.o.connectTimeoutMs,
          commandTimeoutMs: this.o.commandTimeoutMs,
          deadline,
          starttls: this.o.starttls,
          tlsSession: this.tlsSessions.get(target.address),
          proxy: this.proxy,
        });
        if (session.tlsSessionData) this.rememberTls(target.address, session.tlsSessionData);
        run.target = target;
        run.tls = session.tls;
        this.stats.sessions++;
        break;
      } catch (err) {
        release();
        release = null;
        run.target = target;
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
        if (Date.now() >= deadline) break;
      }
    }
    if (!session || !release) {
      // Every host failed: a refusal (421) says more than a refused port; a time-out more than a refusal.
      if (lastFailure?.kind === 'connect_refused' && sawTimeout) lastFailure = { status: 'timeout', detail: 'connect_timeout', reply: null, kind: 'connect_timeout' };
      run.failure = lastFailure ?? { status: 'unreachable', detail: 'connection_refused', reply: null, kind: 'connect_refused' };
      return run;
    }
    try {
      await this.envelopes(session, emails, randomAddress, perEnvelope, run);
    } finally {
      session.quit();
      release();
    }
    return run;
  }

  private async envelopes(session: SmtpSession, emails: readonly string[], randomAddress: string | null, perEnvelope: number, run: SessionRun): Promise<void> {
    const unanswered = () => emails.map((_, i) => i).filter((i) => !run.answered.has(i));
    const utf8 = emails.some((e) => /[\u0080-\u{10ffff}]/u.test(e));
    if (utf8 && !session.extensions.has('SMTPUTF8')) {
      for (let j = 0; j < emails.length; j++) run.answered.set(j, { status: 'unknown', reply: { code: 0, enhanced: null, text: 'server does not offer SMTPUTF8' } });
      run.leftover = [];
      return;
    }
    const mailFrom = `MAIL FROM:<${this.o.from}>${utf8 ? ' SMTPUTF8' : ''}`;
    const todo = emails.map((_, j) => j);
    let size = perEnvelope;
    let errors = 0;
    let askRandom = randomAddress !== null;
    while (todo.length > 0) {
      // Worst case every recipient of the envelope is rejected: never go past the budget.
      const budget = this.o.maxErrorsPerSession - errors - (askRandom ? 1 : 0);
      if (budget <= 0 && errors > 0) break;
      const batch = todo.splice(0, Math.max(1, Math.min(size, budget)));
      const commands = [mailFrom];
      batch.forEach((j, k) => {
        commands.push(`RCPT TO:<${emails[j]}>`);
        // The random address follows the first real one, so the real answer comes first.
        if (k === 0 && askRandom) commands.push(`RCPT TO:<${randomAddress}>`);
      });
      commands.push('RSET');
      const withRandom = askRandom;
      askRandom = false;
      this.stats.recipients += batch.length + (withRandom ? 1 : 0);
      const { replies, failure } = await session.exchange(commands);
      const mail = replies[0];
      if (mail && mail.code !== 250) {
        // The server refuses our sender: every remaining recipient gets that answer.
        run.failure = { status: classifySessionReply(mail), detail: 'sender_refused', reply: mail, kind: 'refused' };
        run.leftover = unanswered();
        return;
      }
      let r = 1;
      const retry: number[] = [];
      batch.forEach((j, k) => {
        const rcpt = replies[r++];
        const random = k === 0 && withRandom ? replies[r++] : undefined;
        if (random) {
          run.randomReply = random;
          if (random.code >= 400) errors++;
        }
        if (!rcpt) return;
        if (k > 0 && isRecipientLimit(rcpt)) {
          // This server takes fewer recipients per message: ask again, one per envelope.
          retry.push(j);
          size = 1;
          return;
        }
        const status = classifyRcptReply(rcpt);
        run.answered.set(j, { status, reply: rcpt });
        if (rcpt.code >= 400) errors++;
      });
      todo.unshift(...retry);
      if (failure) {
        const { status, detail } = failureStatus(failure.kind);
        run.failure = { status, detail, reply: null, kind: failure.kind };
        run.leftover = unanswered();
        return;
      }
    }
    run.leftover = unanswered();
  }

  /** Counts a held per-host slot in `stats.peakOpen` until it is released. */
  private counted(release: () => void): () => void {
    this.stats.peakOpen = Math.max(this.stats.peakOpen, ++this.open);
    let held = true;
    return () => {
      if (held) this.open--;
      held = false;
      release();
    };
  }

  private rememberTls(address: string, data: Buffer): void {
    if (this.tlsSessions.size >= 1000) this.tlsSessions.clear();
    this.tlsSessions.set(address, data);
  }
}
