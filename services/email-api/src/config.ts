import { z } from 'zod';
import { commonConfig, commonSettings, findProjectRoot, parseSettings, setting, webhookConfig, webhookSettings, type CommonServiceConfig, type WebhookConfig } from '@mailconv/platform';
import { readFileSync } from 'node:fs';
import { DEFAULT_BLOCKLISTS, DEFAULT_RATE_LIMIT_COOLDOWN, MAIL_PROVIDERS, applyProviderLimits, parseSmtpProxies, parseSourceAddresses, type ProviderLimits, type ProviderRule, type SmtpEgress } from '@mailconv/verifier';

/** `EMAIL_SMTP_PROBE_HOST`: `host[:port]` (port 25 by default), `[v6]:port` for an IPv6 literal. */
function parseProbeHost(value: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:\s]+))(?::(\d{1,5}))?$/i.exec(value.trim());
  const port = Number(m?.[3] ?? 25);
  if (!m || port < 1 || port > 65535) throw new Error('must be host[:port], e.g. mx.example.net:25');
  return { host: (m[1] ?? m[2]) as string, port };
}

/** `EMAIL_SMTP_BLOCKLISTS`: comma-separated DNS block-list zones; `none` for none. */
function parseBlocklists(value: string): string[] {
  if (value.trim() === 'none') return [];
  const zones = value.split(',').map((z) => z.trim().toLowerCase()).filter(Boolean);
  const bad = zones.find((z) => !/^(?=.{1,200}$)[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+$/.test(z));
  if (bad !== undefined) throw new Error(`"${bad}" is not a DNS zone (comma-separated zones, or none)`);
  return zones;
}

/**
 * `EMAIL_SMTP_PROVIDER_LIMITS`: JSON (starts with `{`) or the path of a file holding it,
 * applied over the built-in provider table; refused with the problem named.
 */
function parseProviderLimits(value: string): { rules: Record<string, ProviderRule>; defaults: ProviderLimits } {
  let text = value.trim();
  if (!text.startsWith('{')) {
    try {
      text = readFileSync(text, 'utf8');
    } catch {
      throw new Error(`cannot read the file ${JSON.stringify(value.trim())} (give JSON starting with { or the path of a JSON file)`);
    }
  }
  return applyProviderLimits(text, new Set(MAIL_PROVIDERS.map((p) => p.id)));
}

const DEFAULTS = { port: 8080, dataDir: 'data/email', databaseFile: 'email.db', requestTimeoutMs: 120_000 };

/**
 * Every setting of the email service, each `EMAIL_…` (documented with its default in
 * `.env.example`). The names fixed by email-decisions.md are used as written.
 */
const EmailSettings = z.object({
  ...commonSettings('EMAIL', DEFAULTS),
  EMAIL_BATCH_BODY_LIMIT_BYTES: setting.positiveInt(6 * 1_048_576),
  EMAIL_BATCH_CONCURRENCY: setting.positiveInt(64),
  EMAIL_JOBS_BODY_LIMIT_BYTES: setting.positiveInt(64 * 1_048_576),
  ...webhookSettings('EMAIL'),
  EMAIL_JOBS_CHUNK_SIZE: setting.positiveInt(1000),
  EMAIL_JOBS_WORKERS: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more').default(2),
  EMAIL_JOBS_LEASE_MS: setting.positiveInt(60_000),
  EMAIL_JOBS_POLL_MS: setting.positiveInt(1000),
  EMAIL_JOBS_QUEUE: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1–100 letters, digits, - or _').default('email-chunks'),
  EMAIL_JOBS_GREYLIST_RETRY_MS: setting.positiveInt(300_000),
  EMAIL_JOBS_GREYLIST_RETRIES: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more').default(2),
  EMAIL_JOBS_RATE_LIMIT_RETRIES: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more').default(5),
  EMAIL_JOB_RETENTION_DAYS: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more').max(36_500, 'must be at most 36500').default(30),
  EMAIL_PUBLIC_RPM: setting.positiveInt(20),
  EMAIL_PUBLIC_SMTP_PER_DAY: setting.positiveInt(50),
  EMAIL_DNS_SERVERS: setting.dnsServers(),
  EMAIL_DNS_TIMEOUT_MS: setting.positiveInt(2000),
  EMAIL_SMTP_PORT: setting.port(25),
  EMAIL_SMTP_HELO: z.string().regex(/^(?=.{1,253}$)[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+$/i, 'must be a fully qualified host name of your own').optional(),
  EMAIL_SMTP_FROM: z.string().regex(/^[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+$/, 'must be an e-mail address on your own domain').optional(),
  EMAIL_SMTP_ALLOW_PRIVATE: setting.bool(false),
  EMAIL_SMTP_RESTRICT_TO: setting.cidrList(),
  EMAIL_SMTP_PROXIES: setting.parsed(parseSmtpProxies),
  EMAIL_SMTP_SOURCE_ADDRESSES: setting.parsed(parseSourceAddresses),
  EMAIL_SMTP_CACHE_TTL: setting.duration(86_400_000, 30 * 86_400_000),
  EMAIL_SMTP_PROBE_HOST: setting.parsed(parseProbeHost),
  EMAIL_SMTP_BLOCKLISTS: setting.parsed(parseBlocklists),
  EMAIL_SMTP_CHECK_INTERVAL_MS: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more').default(300_000),
  EMAIL_SMTP_PROVIDER_LIMITS: setting.parsed(parseProviderLimits),
  EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MS: setting.positiveInt(DEFAULT_RATE_LIMIT_COOLDOWN.initialMs),
  EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MAX_MS: setting.positiveInt(DEFAULT_RATE_LIMIT_COOLDOWN.maxMs),
}).superRefine((s, ctx) => {
  if (s.EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MAX_MS < s.EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MS) {
    ctx.addIssue({ code: 'custom', path: ['EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MAX_MS'], message: 'must be at least EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MS' });
  }
  if (Boolean(s.EMAIL_SMTP_HELO) !== Boolean(s.EMAIL_SMTP_FROM)) {
    ctx.addIssue({ code: 'custom', path: [s.EMAIL_SMTP_HELO ? 'EMAIL_SMTP_FROM' : 'EMAIL_SMTP_HELO'], message: 'SMTP probing needs both EMAIL_SMTP_HELO and EMAIL_SMTP_FROM' });
  }
});

export interface EmailConfig extends CommonServiceConfig {
  /** Body limit of `POST /api/v1/verify-batch` (10,000 addresses fit in about 3.3 MB). */
  batchBodyLimitBytes: number;
  /** Addresses of one batch verified at the same time. */
  batchConcurrency: number;
  /** Webhook delivery (decisions 20–23; `EMAIL_WEBHOOKS_…`). */
  webhooks: WebhookConfig;

  /**
   * Bulk jobs: body limit of `POST /api/v1/jobs`, addresses per stored chunk, chunks
   * verified at once by this process (0: none), lease and poll intervals, greylisting
   * retries, the BullMQ queue name (used with `EMAIL_REDIS_URL` on PostgreSQL), and the
   * days a finished job's data is kept (`EMAIL_JOB_RETENTION_DAYS`, 0: until deleted).
   */
  jobs: { bodyLimitBytes: number; chunkSize: number; workers: number; leaseMs: number; pollMs: number; greylistRetryMs: number; greylistRetries: number; rateLimitRetries: number; queueName: string; retentionDays: number };
  /** `POST /api/validate-email`: requests per minute per client IP. */
  publicRpm: number;
  /** `POST /api/validate-email`: SMTP probes per day per client IP. */
  publicSmtpPerDay: number;
  /** Resolvers as `host:port`; empty: the system's. */
  dnsServers: string[];
  dnsTimeoutMs: number;
  /** SMTP probing settings; null when EMAIL_SMTP_HELO/EMAIL_SMTP_FROM are not set (probing off). */
  /** `egresses`: the ways out to MX hosts (`EMAIL_SMTP_PROXIES`, `EMAIL_SMTP_SOURCE_ADDRESSES`); empty: straight from this host. */
  /** `providerLimits`: the provider table with `EMAIL_SMTP_PROVIDER_LIMITS` applied; null: the built-in one. */
  smtp: {
    helo: string;
    from: string;
    port: number;
    allowPrivate: boolean;
    restrictTo: string[] | null;
    egresses: SmtpEgress[];
    /** The self-check (issue 23): probe host (null: not configured), block lists, and how often it runs (0: never in the service). */
    selfCheck: { probeHost: { host: string; port: number } | null; blocklists: string[]; intervalMs: number };
    providerLimits: { rules: Record<string, ProviderRule>; defaults: ProviderLimits } | null;
    /** Issue 49: an MX host's cool-down after a rate-limit reply, first and longest (`EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MS`, `…_MAX_MS`). */
    rateLimitCooldown: { initialMs: number; maxMs: number };
  } | null;
  /** How long an address's SMTP outcome is reused for the same account (decision 28, `EMAIL_SMTP_CACHE_TTL`); 0: never. */
  smtpCacheTtlMs: number;
}

/** Reads the email service's settings from `env`; throws ConfigError listing every problem. */
export function loadEmailConfig(env: Readonly<Record<string, string | undefined>> = process.env, root = findProjectRoot()): EmailConfig {
  const s = parseSettings(EmailSettings, env);
  return {
    ...commonConfig('EMAIL', s, DEFAULTS, root),
    batchBodyLimitBytes: s.EMAIL_BATCH_BODY_LIMIT_BYTES,
    batchConcurrency: s.EMAIL_BATCH_CONCURRENCY,
    webhooks: webhookConfig('EMAIL', s),
    jobs: {
      bodyLimitBytes: s.EMAIL_JOBS_BODY_LIMIT_BYTES,
      chunkSize: s.EMAIL_JOBS_CHUNK_SIZE,
      workers: s.EMAIL_JOBS_WORKERS,
      leaseMs: s.EMAIL_JOBS_LEASE_MS,
      pollMs: s.EMAIL_JOBS_POLL_MS,
      greylistRetryMs: s.EMAIL_JOBS_GREYLIST_RETRY_MS,
      greylistRetries: s.EMAIL_JOBS_GREYLIST_RETRIES,
      rateLimitRetries: s.EMAIL_JOBS_RATE_LIMIT_RETRIES,
      queueName: s.EMAIL_JOBS_QUEUE,
      retentionDays: s.EMAIL_JOB_RETENTION_DAYS,
    },
    publicRpm: s.EMAIL_PUBLIC_RPM,
    publicSmtpPerDay: s.EMAIL_PUBLIC_SMTP_PER_DAY,
    dnsServers: s.EMAIL_DNS_SERVERS ?? [],
    dnsTimeoutMs: s.EMAIL_DNS_TIMEOUT_MS,
    // The schema refuses HELO without FROM and the reverse.
    smtp:
      s.EMAIL_SMTP_HELO && s.EMAIL_SMTP_FROM
        ? {
            helo: s.EMAIL_SMTP_HELO,
            from: s.EMAIL_SMTP_FROM,
            port: s.EMAIL_SMTP_PORT,
            allowPrivate: s.EMAIL_SMTP_ALLOW_PRIVATE,
            restrictTo: s.EMAIL_SMTP_RESTRICT_TO ?? null,
            egresses: [...(s.EMAIL_SMTP_PROXIES ?? []), ...(s.EMAIL_SMTP_SOURCE_ADDRESSES ?? [])],
            selfCheck: { probeHost: s.EMAIL_SMTP_PROBE_HOST ?? null, blocklists: s.EMAIL_SMTP_BLOCKLISTS ?? [...DEFAULT_BLOCKLISTS], intervalMs: s.EMAIL_SMTP_CHECK_INTERVAL_MS },
            providerLimits: s.EMAIL_SMTP_PROVIDER_LIMITS ?? null,
            rateLimitCooldown: { initialMs: s.EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MS, maxMs: s.EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MAX_MS },
          }
        : null,
    smtpCacheTtlMs: s.EMAIL_SMTP_CACHE_TTL,
  };
}
