/**
 * `@mailconv/verifier`: the email verification engine, a pure library. Checks return their
 * findings as data; DNS and SMTP are injected (`MailDomainResolver`, `MailboxProber`).
 */
export * from './types.js';
export { checkSyntax, SYNTAX_ERRORS, type SyntaxError, type SyntaxOk, type SyntaxFail, type SyntaxOutcome } from './checks/syntax.check.js';
export { normalizeEmail } from './checks/normalize.js';
export { checkLists, isDisposableDomain, isFreeProvider, isRoleAccount, LIST_SIZES, type ListsOutcome } from './checks/lists.check.js';
export { suggestDomain, typoDistance, POPULAR_DOMAINS } from './checks/typo.check.js';
export { verdict, firstReason, gradeOf, mxSummary, VERDICT_TABLE, SUGGESTION_PENALTY, type Verdict, type VerdictInput } from './verdict.js';
export {
  createVerifier,
  type Verifier,
  type VerificationDetail,
  type VerifierDeps,
  type VerifyOptions,
  type MailDomainResolver,
  type MailboxProber,
  type ProbeTarget,
  type ProbeOptions,
} from './pipeline.js';
export { DnsResolver, LookupFailure, MAIL_PROVIDERS, mxProviderLabel, parseDnsServers, registrableDomain, type DnsResolverOptions } from './dns/index.js';
export { SMTP_RULES_VERSION, type SmtpCacheOptions, type SmtpOutcomeStore } from './smtp/outcome-cache.js';
export { SmtpAvailability, DEFAULT_BLOCKLISTS, blocklistName, formatSelfCheck, runSmtpSelfCheck, type EgressCheck, type SelfCheckDns, type SelfCheckOptions, type SmtpSelfCheck } from './smtp/index.js';
export { SmtpProber, SmtpConfigError, EgressPool, applyProviderLimits, createSessionPool, DEFAULT_LIMITS, DEFAULT_RATE_LIMIT_COOLDOWN, RATE_LIMIT_REPLIES, type ProviderLimits, type ProviderRule, type RateLimitedAt, type SessionPool, parseSmtpProxies, parseSourceAddresses, type EgressEvent, type EgressState, type SmtpEgress, type SmtpProberOptions } from './smtp/index.js';
export { createEngine, toDnsOutcome, toSmtpOutcome, type Engine, type EngineOptions, type SmtpProbeEvent } from './engine.js';
