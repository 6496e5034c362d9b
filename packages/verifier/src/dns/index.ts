// The DNS check of the verifier: exported for the package index (wired by the integrator).
export { DnsResolver, LookupFailure, parseDnsServers, type DnsResolverOptions } from './dns.check.js';
export { mxGrade } from './mx-grade.js';
export { MAIL_PROVIDERS, classifyMxHost, mxProviderLabel, normalizeHost, providerById, registrableDomain, type MailProvider } from './providers.js';
export { TtlCache, type Clock } from './ttl-cache.js';
export type { DnsErrorCode, DnsOutcome, DnsStatus, MxGrade, MxHost } from './types.js';
