/**
 * The engine's data shapes: the contract's VerificationResult (`email-verification-api.md`,
 * with `email-decisions.md` items 1 and 8–13) and the outcomes that the individual checks
 * hand to the verdict. Checks never throw for a verdict-worthy finding: they return data.
 */

/** The four verdicts of the contract, decision 9. */
export const STATUSES = ['valid', 'invalid', 'risky', 'unknown'] as const;
/** One of {@link STATUSES}. */
export type Status = (typeof STATUSES)[number];

/**
 * The closed list of `reason` values (decision 8), in precedence order (decision 9): when
 * several findings apply, the first one in this array is reported. `unverifiable` is our
 * addition to the "at least" list: the checks ran but cannot tell (an IP-literal domain, a
 * provider that accepts every recipient at RCPT). Exported as a const array so the API can
 * enumerate it in its OpenAPI document.
 */
export const REASONS = [
  'invalid_syntax',
  'domain_not_found',
  'domain_no_mx',
  'user_unknown',
  'mailbox_disabled',
  'disposable',
  'mailbox_full',
  'catch_all',
  'role_based',
  'greylisted',
  'smtp_rate_limited',
  'smtp_blocked',
  'smtp_timeout',
  'smtp_unreachable',
  'smtp_unavailable',
  'dns_error',
  'unverifiable',
] as const;
/** One of {@link REASONS}. */
export type Reason = (typeof REASONS)[number];

/** Which status each reason implies; the precedence of {@link REASONS} keeps invalid > risky > unknown. */
export const REASON_STATUS: Readonly<Record<Reason, Exclude<Status, 'valid'>>> = {
  invalid_syntax: 'invalid',
  domain_not_found: 'invalid',
  domain_no_mx: 'invalid',
  user_unknown: 'invalid',
  mailbox_disabled: 'invalid',
  disposable: 'risky',
  mailbox_full: 'risky',
  catch_all: 'risky',
  role_based: 'risky',
  greylisted: 'unknown',
  smtp_rate_limited: 'unknown',
  smtp_blocked: 'unknown',
  smtp_timeout: 'unknown',
  smtp_unreachable: 'unknown',
  smtp_unavailable: 'unknown',
  dns_error: 'unknown',
  unverifiable: 'unknown',
};

/** Letter grades, decision 10 (score) and decision 11 (`checks.mx.grade`). */
export const GRADES = ['A', 'B', 'C', 'D', 'F'] as const;
/** One of {@link GRADES}. */
export type Grade = (typeof GRADES)[number];

/** `checks.mx` of the contract. */
export interface MxSummary {
  /** Number of MX hosts (the domain itself counts as one host for an implicit MX). */
  count: number;
  /** Recognised mail providers behind the MX hosts (e.g. `google`, `microsoft365`). */
  providers: string[];
  /** Decision 11. */
  grade: Grade;
}

/** `checks` of the contract (decision 1 names the field). */
export interface VerificationChecks {
  syntax: boolean;
  /** The domain accepts mail (MX or implicit MX). */
  dns: boolean;
  /** Mailbox probe: true accepted (or full: it exists), false rejected, null not run or undecided. */
  smtp: boolean | null;
  /** Null unless the catch-all probe ran and answered. */
  catch_all: boolean | null;
  is_disposable: boolean;
  /** Alias of `is_disposable`. */
  disposable: boolean;
  role_based: boolean;
  free_provider: boolean;
  mx: MxSummary;
}

/** The contract's VerificationResult, as the engine produces it (no `success`/`quota`: the API adds them). */
export interface VerificationResult {
  /** The input as received. */
  email: string;
  /** Decision 12. */
  normalized: string;
  is_valid: boolean;
  status: Status;
  reason: Reason | null;
  confidence: number;
  score: number;
  grade: Grade;
  suggestion: string | null;
  checks: VerificationChecks;
  /** Extension (decision 28): present, and true, only when the SMTP outcome was reused from an earlier probe. */
  cached?: true;
}

/** One MX host as DNS gives it. */
export interface MxHost {
  /** Host name, lowercase, without the trailing dot. */
  exchange: string;
  /** MX preference; lower is tried first. */
  priority: number;
}

/**
 * What the DNS check found, as data (filled by `src/dns/`):
 * - `mx`: MX records, `hosts` sorted by preference;
 * - `implicit`: no MX but an A/AAAA record (RFC 5321 §5.1), `hosts` = the domain itself;
 * - `null_mx`: a null MX (RFC 7505): the domain says it takes no mail;
 * - `no_mail`: the name exists but has neither MX nor address records;
 * - `nxdomain`: the name does not exist;
 * - `error`: time-out, SERVFAIL, refused… the answer is unknown, never "invalid".
 */
export type DnsKind = 'mx' | 'implicit' | 'null_mx' | 'no_mail' | 'nxdomain' | 'error';

/** Outcome of the DNS check for one domain. */
export interface DnsOutcome {
  kind: DnsKind;
  /** Mail hosts in preference order; empty unless `kind` is `mx` or `implicit`. */
  hosts: readonly MxHost[];
  /** Recognised major mail providers behind `hosts` (ids from the provider table), deduplicated. */
  providers: readonly string[];
  /** Short machine detail for `error` (e.g. `timeout`, `servfail`); informational. */
  detail?: string;
}

/**
 * What the SMTP probe found for one address, as data (filled by `src/smtp/`):
 * `accepted` 250/251; `rejected` 5.1.x user unknown; `full` 552/5.2.2 (or 4.2.2);
 * `disabled` 5.2.1; `greylisted` 450/451/4.7.x temporary; `rate_limited` a rate limit
 * (4.7.28, 4.7.650, a 421…: slow down and come back, issue 49); `blocked` our client refused
 * (block lists, reputation); `timeout`; `unreachable` no MX host could be reached;
 * `unknown` the provider's answer is meaningless (accept-everything providers, unparsable replies).
 */
export type SmtpKind =
  | 'accepted'
  | 'rejected'
  | 'full'
  | 'disabled'
  | 'greylisted'
  | 'rate_limited'
  | 'blocked'
  | 'timeout'
  | 'unreachable'
  | 'unknown'
  /** Not probed: the self-check found no egress that reaches port 25 (issue 23). */
  | 'unavailable';

/** Outcome of the SMTP probe for one address. */
export interface SmtpOutcome {
  kind: SmtpKind;
  /** Catch-all probe: true the random address was accepted, false rejected, null not run/undecided. */
  catchAll: boolean | null;
  /** Basic reply code of the deciding reply, when there was one. */
  code?: number;
  /** RFC 3463 enhanced status code of the deciding reply (e.g. `5.1.1`). */
  enhanced?: string;
  /** Reply text, for debugging only. */
  text?: string;
  /** MX host that gave the deciding reply. */
  host?: string;
  /** Reused from an earlier probe of the same address (`EMAIL_SMTP_CACHE_TTL`), not probed now. */
  cached?: true;
}
