import type { ListsOutcome } from './checks/lists.check.js';
import { REASON_STATUS, type DnsOutcome, type Grade, type MxSummary, type Reason, type SmtpOutcome, type Status } from './types.js';

/** Everything the verdict looks at: the checks' outcomes as data. */
export interface VerdictInput {
  /** Syntax check: well-formed, and whether the domain is an address literal. */
  syntax: { ok: boolean; ipLiteral: boolean };
  /** DNS outcome; null when DNS did not run (bad syntax, IP literal). */
  dns: DnsOutcome | null;
  lists: ListsOutcome;
  /** SMTP outcome; null when no probe was asked (decision 9: `smtp`/`catch_all` stay null). */
  smtp: SmtpOutcome | null;
  /** A did-you-mean suggestion exists for the domain. */
  suggestion: boolean;
}

/** The verdict's part of a VerificationResult. */
export interface Verdict {
  status: Status;
  reason: Reason | null;
  is_valid: boolean;
  score: number;
  grade: Grade;
  confidence: number;
  dns: boolean;
  smtp: boolean | null;
  catch_all: boolean | null;
  mx: MxSummary;
}

/**
 * Score and confidence per reported reason (`null` rows: no finding). The README prints
 * this table; `verdict.test.ts` checks it row by row.
 */
export const VERDICT_TABLE = {
  invalid_syntax: { score: 0, confidence: 100 },
  domain_not_found: { score: 0, confidence: 99 },
  domain_no_mx: { score: 2, confidence: 97 },
  user_unknown: { score: 5, confidence: 95 },
  mailbox_disabled: { score: 5, confidence: 90 },
  disposable: { score: 20, confidence: 95 },
  mailbox_full: { score: 40, confidence: 85 },
  catch_all: { score: 60, confidence: 80 },
  role_based: { score: 70, confidence: 85 },
  greylisted: { score: 50, confidence: 40 },
  smtp_rate_limited: { score: 50, confidence: 35 },
  smtp_blocked: { score: 50, confidence: 30 },
  smtp_timeout: { score: 45, confidence: 30 },
  smtp_unreachable: { score: 40, confidence: 30 },
  smtp_unavailable: { score: 50, confidence: 30 },
  dns_error: { score: 40, confidence: 30 },
  unverifiable: { score: 50, confidence: 20 },
  /** Valid, the mailbox accepted by SMTP (not a catch-all domain). */
  valid_smtp: { score: 97, confidence: 95 },
  /** Valid without a probe, domain with MX records. */
  valid_mx: { score: 85, confidence: 70 },
  /** Valid without a probe, mail only through the domain's address record (implicit MX). */
  valid_implicit_mx: { score: 75, confidence: 60 },
} as const satisfies Record<Reason | 'valid_smtp' | 'valid_mx' | 'valid_implicit_mx', { score: number; confidence: number }>;

/** A valid address at a domain that looks like a slip of a popular one loses this much. */
export const SUGGESTION_PENALTY = { score: 15, confidence: 20 } as const;

/** Decision 10: A 90–100, B 80–89, C 70–79, D 60–69, F 0–59. */
export function gradeOf(score: number): Grade {
  if (score >= 90) return 'A';
  if (score >= 80) return 'B';
  if (score >= 70) return 'C';
  if (score >= 60) return 'D';
  return 'F';
}

/**
 * Decision 11: A two or more MX hosts at a recognised major provider, B two or more MX
 * hosts, C one MX host, D mail falls back to the address record (implicit MX), F none or
 * a null MX (and when DNS could not answer).
 */
export function mxSummary(dns: DnsOutcome | null): MxSummary {
  if (dns === null) return { count: 0, providers: [], grade: 'F' };
  if (dns.kind === 'mx') {
    const count = dns.hosts.length;
    const providers = dns.providers.slice();
    const grade: Grade = count >= 2 ? (providers.length > 0 ? 'A' : 'B') : count === 1 ? 'C' : 'F';
    return { count, providers, grade };
  }
  if (dns.kind === 'implicit') return { count: dns.hosts.length, providers: dns.providers.slice(), grade: 'D' };
  return { count: 0, providers: [], grade: 'F' };
}

/**
 * The first finding in the precedence order of decision 9 (the order of `REASONS`), or null.
 * Written as one chain of tests, in that order, so it allocates nothing.
 */
export function firstReason(input: VerdictInput): Reason | null {
  const { syntax, dns, lists, smtp } = input;
  if (!syntax.ok) return 'invalid_syntax';
  const d = dns?.kind;
  if (d === 'nxdomain') return 'domain_not_found';
  if (d === 'null_mx' || d === 'no_mail') return 'domain_no_mx';
  const s = smtp?.kind;
  if (s === 'rejected') return 'user_unknown';
  if (s === 'disabled') return 'mailbox_disabled';
  if (lists.disposable) return 'disposable';
  if (s === 'full') return 'mailbox_full';
  if (s === 'accepted' && smtp?.catchAll === true) return 'catch_all';
  if (lists.roleBased) return 'role_based';
  if (s === 'greylisted') return 'greylisted';
  if (s === 'rate_limited') return 'smtp_rate_limited';
  if (s === 'blocked') return 'smtp_blocked';
  if (s === 'timeout') return 'smtp_timeout';
  if (s === 'unreachable') return 'smtp_unreachable';
  if (s === 'unavailable') return 'smtp_unavailable';
  if (d === 'error') return 'dns_error';
  if (syntax.ipLiteral || dns === null || s === 'unknown') return 'unverifiable';
  return null;
}

/**
 * The one verdict function: checks' outcomes in, `status`, `reason`, `is_valid`, `score`,
 * `grade`, `confidence` and the derived sub-checks out. Pure; the table is in the README.
 */
export function verdict(input: VerdictInput): Verdict {
  const reason = firstReason(input);
  const { dns, smtp } = input;
  const status: Status = reason === null ? 'valid' : REASON_STATUS[reason];
  let row: { readonly score: number; readonly confidence: number };
  if (reason !== null) row = VERDICT_TABLE[reason];
  else if (smtp?.kind === 'accepted') row = VERDICT_TABLE.valid_smtp;
  else if (dns?.kind === 'implicit') row = VERDICT_TABLE.valid_implicit_mx;
  else row = VERDICT_TABLE.valid_mx;
  let score: number = row.score;
  let confidence: number = row.confidence;
  if (status === 'valid' && input.suggestion) {
    score -= SUGGESTION_PENALTY.score;
    confidence -= SUGGESTION_PENALTY.confidence;
  }
  const s = smtp?.kind;
  return {
    status,
    reason,
    is_valid: status === 'valid',
    score,
    grade: gradeOf(score),
    confidence,
    dns: dns?.kind === 'mx' || dns?.kind === 'implicit',
    smtp: smtp === null ? null : s === 'accepted' || s === 'full' ? true : s === 'rejected' || s === 'disabled' ? false : null,
    catch_all: smtp === null ? null : smtp.catchAll,
    mx: mxSummary(dns),
  };
}
