// The SMTP mailbox probe of the verifier: exported for the package index (wired by the integrator).
export { SmtpProber, SmtpConfigError, createSessionPool, DEFAULT_RATE_LIMIT_COOLDOWN, type MailRoute, type RateLimitedAt, type SessionPool, type SmtpProberOptions } from './smtp.check.js';
export { ProviderGate, type CoolDownListener } from './provider-gate.js';
export { RATE_LIMIT_REPLIES, rateLimitRow, type RateLimitReply } from './rate-limit-replies.js';
export { classifyRcptReply, classifySessionReply, isRecipientLimit, parseReply } from './reply-classify.js';
export { DEFAULT_LIMITS, DEFAULT_RULE, PROVIDER_RULES, applyProviderLimits, limitsOf, ruleFor, type ProviderLimits, type ProviderRule } from './provider-rules.js';
export { HostLimiter } from './host-limiter.js';
export { EgressPool, EGRESS_COOLDOWN_MS, MAX_COOLDOWN_MS, parseSmtpProxies, parseSourceAddresses, type EgressEvent, type EgressState, type SmtpEgress } from './egress.js';
export { Socks5Error, connectViaSocks5, type Socks5Proxy } from './socks5.js';
export type { SmtpOutcome, SmtpReply, SmtpStatus } from './types.js';
export { SmtpAvailability } from './availability.js';
export { DEFAULT_BLOCKLISTS, blocklistName, formatSelfCheck, runSmtpSelfCheck, type EgressCheck, type SelfCheckDns, type SelfCheckOptions, type SmtpSelfCheck } from './self-check.js';
