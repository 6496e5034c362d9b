import { isDisposableDomain, isFreeProvider, isRoleAccount } from './checks/lists.check.js';
import { normalizeEmail } from './checks/normalize.js';
import { checkSyntax, type SyntaxOutcome } from './checks/syntax.check.js';
import { suggestDomain } from './checks/typo.check.js';
import type { DnsOutcome, SmtpOutcome, VerificationResult } from './types.js';
import { verdict } from './verdict.js';

/**
 * Looks up how a domain receives mail. The real implementation (`src/dns/`) resolves MX,
 * null MX and implicit MX with a cache; it may answer synchronously from that cache.
 * Expected failures (time-outs, SERVFAIL) come back as `{kind: 'error'}`, not as exceptions.
 */
export interface MailDomainResolver {
  /** @param domain ASCII (punycode), lowercase, no trailing dot. */
  resolveMail(domain: string): DnsOutcome | Promise<DnsOutcome>;
}

/** The address being probed, split the way SMTP needs it. */
export interface ProbeTarget {
  /** The address for RCPT TO: local part as given, ASCII domain. */
  address: string;
  local: string;
  /** ASCII (punycode), lowercase. */
  domain: string;
  /** The local part needs SMTPUTF8. */
  smtputf8: boolean;
}

/** Options of one probe. */
export interface ProbeOptions {
  /** Run the catch-all probe too (decision 15: only where the plan has `catch_all`). */
  catchAll: boolean;
  /** Whose earlier outcomes may be reused (an account id); absent: always probe. */
  cacheScope?: string;
}

/** Probes a mailbox over SMTP (`src/smtp/`): RCPT TO on the MX hosts, then the catch-all probe. */
export interface MailboxProber {
  probe(target: ProbeTarget, dns: DnsOutcome, options: ProbeOptions): Promise<SmtpOutcome>;
}

/** The engine's collaborators, injected: the engine itself does no I/O. */
export interface VerifierDeps {
  dns: MailDomainResolver;
  /** Needed only for `smtp: true` verifications. */
  smtp?: MailboxProber;
  /** Entries of the per-domain memo of list and typo results (default 50,000). */
  domainMemoSize?: number;
}

/** Options of one verification (the API's `use_smtp` and the plan's `catch_all` feature). */
export interface VerifyOptions {
  smtp?: boolean;
  catchAll?: boolean;
  /** Whose earlier SMTP outcomes may be reused (an account id; decision 28); absent: always probe. */
  cacheScope?: string;
}

/**
 * A verification with the evidence behind it, for logs, the CLI and support: the syntax
 * sub-reason (`invalid_syntax` alone does not say which rule broke) and the raw DNS and SMTP
 * outcomes. Not part of the API contract.
 */
export interface VerificationDetail {
  result: VerificationResult;
  syntax: SyntaxOutcome;
  /** Null when DNS did not run (bad syntax, IP literal). */
  dns: DnsOutcome | null;
  /** Null when no probe ran. */
  smtp: SmtpOutcome | null;
}

/** The engine: one address in, the contract's VerificationResult out. */
export interface Verifier {
  verify(email: string, options?: VerifyOptions): Promise<VerificationResult>;
  /** Same verification, with its evidence. */
  inspect(email: string, options?: VerifyOptions): Promise<VerificationDetail>;
}

interface DomainFacts {
  disposable: boolean;
  free: boolean;
  suggestion: string | null;
}

const NO_LISTS = Object.freeze({ disposable: false, roleBased: false, freeProvider: false });
const DNS_EXCEPTION: DnsOutcome = Object.freeze({ kind: 'error', hosts: [], providers: [], detail: 'exception' });
const SMTP_EXCEPTION: SmtpOutcome = Object.freeze({ kind: 'unknown', catchAll: null });

/**
 * Builds the verification pipeline: syntax → normalisation → lists → typo → DNS → optional
 * SMTP → verdict. Domain-level facts (disposable, free, suggestion) are memoised per domain
 * because bulk lists repeat domains heavily; the memo is bounded and simply starts over when full.
 */
export function createVerifier(deps: VerifierDeps): Verifier {
  const memoSize = deps.domainMemoSize ?? 50_000;
  let memo = new Map<string, DomainFacts>();

  function domainFacts(domain: string): DomainFacts {
    let f = memo.get(domain);
    if (f === undefined) {
      f = { disposable: isDisposableDomain(domain), free: isFreeProvider(domain), suggestion: suggestDomain(domain) };
      if (memo.size >= memoSize) memo = new Map();
      memo.set(domain, f);
    }
    return f;
  }

  /** The resolver's answer; a cached answer given synchronously costs no extra promise. */
  function resolve(domain: string): DnsOutcome | Promise<DnsOutcome> {
    try {
      const answer = deps.dns.resolveMail(domain);
      // A resolver bug or an unexpected failure must not turn into "invalid".
      return answer instanceof Promise ? answer.catch(() => DNS_EXCEPTION) : answer;
    } catch {
      return DNS_EXCEPTION;
    }
  }

  /**
   * The pipeline. Returns synchronously when DNS answered from its cache and no probe was
   * asked: the common case in bulk, where a promise per stage would cost more than the checks.
   */
  function run(email: string, options: VerifyOptions): VerificationDetail | Promise<VerificationDetail> {
    const syntax = checkSyntax(email);
    const normalized = normalizeEmail(email, syntax);
    if (!syntax.ok || syntax.ipLiteral) {
      const roleBased = syntax.ok && !syntax.quoted && isRoleAccount(syntax.local);
      const lists = roleBased ? { ...NO_LISTS, roleBased } : NO_LISTS;
      const v = verdict({ syntax: { ok: syntax.ok, ipLiteral: syntax.ok && syntax.ipLiteral }, dns: null, lists, smtp: null, suggestion: false });
      return { result: result(email, normalized, syntax.ok, lists, null, v), syntax, dns: null, smtp: null };
    }

    const facts = domainFacts(syntax.domain);
    const lists = { disposable: facts.disposable, roleBased: !syntax.quoted && isRoleAccount(syntax.local), freeProvider: facts.free };
    const suggestion = facts.suggestion === null ? null : `${syntax.local}@${facts.suggestion}`;
    const finish = (dns: DnsOutcome, smtp: SmtpOutcome | null): VerificationDetail => {
      const v = verdict({ syntax: { ok: true, ipLiteral: false }, dns, lists, smtp, suggestion: suggestion !== null });
      const r = result(email, normalized, true, lists, suggestion, v);
      if (smtp?.cached) r.cached = true;
      return { result: r, syntax, dns, smtp };
    };
    const pending = resolve(syntax.domain);
    if (options.smtp !== true) return pending instanceof Promise ? pending.then((dns) => finish(dns, null)) : finish(pending, null);

    return (async () => {
      const dns = await pending;
      if (dns.kind !== 'mx' && dns.kind !== 'implicit') return finish(dns, null);
      if (deps.smtp === undefined) throw new Error('SMTP verification asked but no MailboxProber was given');
      const target: ProbeTarget = { address: `${syntax.local}@${syntax.domain}`, local: syntax.local, domain: syntax.domain, smtputf8: syntax.smtputf8 };
      let smtp: SmtpOutcome;
      try {
        smtp = await deps.smtp.probe(target, dns, options.cacheScope === undefined ? { catchAll: options.catchAll === true } : { catchAll: options.catchAll === true, cacheScope: options.cacheScope });
      } catch {
        smtp = SMTP_EXCEPTION;
      }
      return finish(dns, smtp);
    })();
  }

  const NO_OPTIONS: VerifyOptions = {};
  const resultOf = (d: VerificationDetail): VerificationResult => d.result;

  return {
    inspect(email, options = NO_OPTIONS) {
      try {
        return Promise.resolve(run(email, options));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    verify(email, options = NO_OPTIONS) {
      try {
        const d = run(email, options);
        return d instanceof Promise ? d.then(resultOf) : Promise.resolve(d.result);
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
}

function result(
  email: string,
  normalized: string,
  syntaxOk: boolean,
  lists: { disposable: boolean; roleBased: boolean; freeProvider: boolean },
  suggestion: string | null,
  v: ReturnType<typeof verdict>,
): VerificationResult {
  return {
    email,
    normalized,
    is_valid: v.is_valid,
    status: v.status,
    reason: v.reason,
    confidence: v.confidence,
    score: v.score,
    grade: v.grade,
    suggestion,
    checks: {
      syntax: syntaxOk,
      dns: v.dns,
      smtp: v.smtp,
      catch_all: v.catch_all,
      is_disposable: lists.disposable,
      disposable: lists.disposable,
      role_based: lists.roleBased,
      free_provider: lists.freeProvider,
      mx: v.mx,
    },
  };
}
