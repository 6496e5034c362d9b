import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { CredentialError, loadPkcs12, type SigningCredential } from '@mailconv/converter';
import { ConfigError, commonConfig, commonSettings, findProjectRoot, parseSettings, setting, webhookConfig, webhookSettings, type CommonServiceConfig, type WebhookConfig } from '@mailconv/platform';

const DEFAULTS = { port: 8081, dataDir: 'data/convert', databaseFile: 'convert.db', requestTimeoutMs: 0 };

/**
 * Every setting of the conversion service, each `CONVERT_…` (documented with its default
 * in `.env.example`). The names fixed by convert-decisions.md are used as written.
 */
const ConvertSettings = z.object({
  ...commonSettings('CONVERT', DEFAULTS),
  CONVERT_STORAGE_DIR: z.string().optional(),
  CONVERT_RETENTION_HOURS: z.coerce.number().positive().max(24 * 365).default(24),
  CONVERT_SWEEP_INTERVAL_SECONDS: setting.positiveInt(300),
  CONVERT_RECONCILE_GRACE_SECONDS: setting.positiveInt(900),
  CONVERT_MAX_RUNNING: z.coerce.number().int('must be a whole number').positive('must be positive').optional(),
  CONVERT_TIMEOUT_SECONDS: setting.positiveInt(120),
  CONVERT_LIBREOFFICE_INSTANCES: z.coerce.number().int('must be a whole number').positive('must be positive').optional(),
  CONVERT_CHROMIUM_INSTANCES: z.coerce.number().int('must be a whole number').positive('must be positive').default(1),
  CONVERT_ENGINE_USER: z.string().regex(/^[a-z_][a-z0-9_-]{0,31}$/, 'must be a user name').optional(),
  CONVERT_ENGINES_DISABLED: z
    .string()
    .transform((v, ctx) => {
      const names = v.split(',').map((x) => x.trim()).filter(Boolean);
      const bad = names.find((x) => !/^[a-z0-9-]{1,40}$/.test(x));
      if (bad === undefined) return names;
      ctx.addIssue({ code: 'custom', message: `must be comma-separated engine names as /readyz lists them after engine_ (${JSON.stringify(bad)} is not one)` });
      return z.NEVER;
    })
    .optional(),
  CONVERT_OCR_CONCURRENCY: z.coerce.number().int('must be a whole number').positive('must be positive').max(64, 'must be at most 64').optional(),
  CONVERT_PRESTART: setting.bool(false),
  CONVERT_ROLE: z.enum(['all', 'api', 'worker'], { message: 'must be all, api or worker' }).default('all'),
  CONVERT_LEASE_MS: setting.positiveInt(30_000),
  CONVERT_POLL_MS: setting.positiveInt(1000),
  CONVERT_URL_ALLOW_PRIVATE: setting.bool(false),
  CONVERT_URL_ALLOW: setting.cidrList(),
  CONVERT_URL_DENY: z
    .string()
    .transform((v, ctx) => {
      const items = v.split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
      const bad = items.find((x) => !/^[0-9a-f:.]+\/\d{1,3}$/.test(x) && !/^(?=.{1,253}$)[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*$/.test(x));
      if (bad === undefined) return items;
      ctx.addIssue({ code: 'custom', message: `must be comma-separated CIDR networks or host names (${JSON.stringify(bad)} is neither)` });
      return z.NEVER;
    })
    .optional(),
  CONVERT_URL_RESTRICT_TO: setting.cidrList(),
  CONVERT_URL_TIMEOUT_SECONDS: setting.positiveInt(30),
  CONVERT_URL_MAX_REDIRECTS: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more').max(20, 'must be at most 20').default(5),
  CONVERT_DNS_SERVERS: setting.dnsServers(),
  ...webhookSettings('CONVERT'),
  CONVERT_SHARE_RPM: setting.positiveInt(60),
  CONVERT_EXPORT_ALLOW_INSECURE: setting.bool(false),
  CONVERT_EXPORT_PART_MB: z.coerce.number().int('must be a whole number').min(5, 'must be at least 5 (S3’s smallest part)').max(5120, 'must be at most 5120').default(16),
  CONVERT_EXPORT_TIMEOUT_SECONDS: setting.positiveInt(300),
  CONVERT_SECRETS_KEY_FILE: z.string().min(1).optional(),
  CONVERT_SIGNING_P12: z.string().min(1).optional(),
  CONVERT_SIGNING_P12_PASSWORD_FILE: z.string().min(1).optional(),
  CONVERT_SIGNING_UPLOAD_RPM: setting.positiveInt(10),
  CONVERT_QUEUE: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1–100 letters, digits, - or _').default('convert-conversions'),
});

/** What a process does: serve the API, run conversions, or both (the default). */
export type ConvertRole = 'all' | 'api' | 'worker';

export interface ConvertConfig extends CommonServiceConfig {
  /** Where uploads and outputs live (a shared volume in scale-out). */
  storageDir: string;
  /** Lifetime of uploads and outputs, in ms (`CONVERT_RETENTION_HOURS`, default 24 h). */
  retentionMs: number;
  /** How often the retention sweeper runs, in ms. */
  sweepIntervalMs: number;
  /** Files no record owns are removed once idle this long (`CONVERT_RECONCILE_GRACE_SECONDS`). */
  reconcileGraceMs: number;
  /** Conversions running at once in this process, all accounts together (default: the core count). */
  maxRunning: number;
  /** Time-out of one engine step, in ms. */
  timeoutMs: number;
  /** Warm LibreOffice instances; the converter's default (cores / 2) when unset. */
  libreofficeInstances: number | undefined;
  /** Browsers of the Chromium pool (HTML → PDF and images); each renders two pages at a time. */
  chromiumInstances: number;
  /** Pages one OCR conversion recognises at once (tesseract processes); default min(4, cores). */
  ocrConcurrency: number | undefined;
  /** The user engines run as (`CONVERT_ENGINE_USER`); see docs/operations.md, "Users". */
  engineUser: string | undefined;
  /** Engines left off (`CONVERT_ENGINES_DISABLED`): not probed, not routed, not in `/readyz`. */
  disabledEngines: string[];
  /** Start the LibreOffice pool at start-up rather than on the first office job. */
  prestart: boolean;
  /** `api`: HTTP only; `worker`: conversions and the retention sweeper, no HTTP; `all` (default): both. */
  role: ConvertRole;
  /** How long a running conversion's claim holds without renewal; a killed process's conversions are retried after it. */
  leaseMs: number;
  /** How often a worker looks in the database for work nobody announced (with Redis: ten times less often, at least every 5 s). */
  pollMs: number;
  /** BullMQ queue name (with `CONVERT_REDIS_URL`). */
  queueName: string;
  /** Fetching URLs (pages to render, imports): the egress guard's settings (issue 22). */
  urls: {
    /** `CONVERT_URL_ALLOW_PRIVATE`: non-public addresses too (development only). */
    allowPrivate: boolean;
    /** Non-public networks reachable all the same (`CONVERT_URL_ALLOW`). */
    allow: string[];
    /** Networks and host names never fetched (`CONVERT_URL_DENY`). */
    denyNetworks: string[];
    denyHosts: string[];
    /** When set, nothing outside these networks is connected to (`CONVERT_URL_RESTRICT_TO`). */
    restrictTo: string[] | null;
    /** A whole fetch, redirects and body included. */
    timeoutMs: number;
    maxRedirects: number;
    /** Resolvers for the guard's lookups; empty: the system's. */
    dnsServers: string[];
  };
  /** Completion webhooks (issue 24; `CONVERT_WEBHOOKS_…`, the email service's rules); their host lookups use `urls.dnsServers`. */
  webhooks: WebhookConfig;
  /** Downloads through share links per minute from one client address (`CONVERT_SHARE_RPM`). */
  shareRpm: number;
  /** Exports to S3-compatible storage (issue 24); their endpoints go through the egress guard of `urls`. */
  exports: {
    /** `CONVERT_EXPORT_ALLOW_INSECURE`: http:// endpoints and non-public addresses (a store on the LAN; development). */
    allowInsecure: boolean;
    /** Part size of multipart uploads, in bytes (`CONVERT_EXPORT_PART_MB`). */
    partBytes: number;
    /** One request to the store at most, in ms. */
    timeoutMs: number;
  };
  /**
   * The key that seals secrets kept for a while (an export's credentials): `CONVERT_SECRETS_KEY_FILE`,
   * or `<data dir>/secrets.key`, made at the first start. Every process of one service shares it.
   */
  secretsKey: { file: string; create: boolean };
  /**
   * The operator's signing certificate for the `sign` option (issue 25): `CONVERT_SIGNING_P12`
   * opened with the password in `CONVERT_SIGNING_P12_PASSWORD_FILE`, at start-up; null: signing
   * with the operator's certificate is off. The password is not kept.
   */
  signing: SigningCredential | null;
  /** Uploads of signing certificates per minute per account (`CONVERT_SIGNING_UPLOAD_RPM`, issue 45): each may keep a core busy for seconds. */
  signingUploadRpm: number;
}

/** Reads the conversion service's settings from `env`; throws ConfigError listing every problem. */
export function loadConvertConfig(env: Readonly<Record<string, string | undefined>> = process.env, root = findProjectRoot()): ConvertConfig {
  // The signing files are read whatever else is wrong, so that every problem is reported at once.
  const given = (name: string): string | undefined => env[name]?.trim() || undefined;
  const signingProblems: string[] = [];
  let signing: SigningCredential | null = null;
  try {
    signing = operatorSigning(given('CONVERT_SIGNING_P12'), given('CONVERT_SIGNING_P12_PASSWORD_FILE'), root);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    signingProblems.push(...err.problems);
  }
  let settings: z.output<typeof ConvertSettings>;
  try {
    settings = parseSettings(ConvertSettings, env);
  } catch (err) {
    throw err instanceof ConfigError ? new ConfigError([...err.problems, ...signingProblems]) : err;
  }
  if (signingProblems.length) throw new ConfigError(signingProblems);
  const parsed = settings as Record<string, unknown>;
  const common = commonConfig('CONVERT', settings, DEFAULTS, root);
  const storage = parsed.CONVERT_STORAGE_DIR as string | undefined;
  return {
    ...common,
    storageDir: storage ? resolve(root, storage) : resolve(common.dataDir, 'storage'),
    retentionMs: Math.round((parsed.CONVERT_RETENTION_HOURS as number) * 3_600_000),
    sweepIntervalMs: (parsed.CONVERT_SWEEP_INTERVAL_SECONDS as number) * 1000,
    reconcileGraceMs: (parsed.CONVERT_RECONCILE_GRACE_SECONDS as number) * 1000,
    maxRunning: (parsed.CONVERT_MAX_RUNNING as number | undefined) ?? availableParallelism(),
    timeoutMs: (parsed.CONVERT_TIMEOUT_SECONDS as number) * 1000,
    libreofficeInstances: parsed.CONVERT_LIBREOFFICE_INSTANCES as number | undefined,
    chromiumInstances: parsed.CONVERT_CHROMIUM_INSTANCES as number,
    ocrConcurrency: parsed.CONVERT_OCR_CONCURRENCY as number | undefined,
    engineUser: parsed.CONVERT_ENGINE_USER as string | undefined,
    disabledEngines: (parsed.CONVERT_ENGINES_DISABLED as string[] | undefined) ?? [],
    prestart: parsed.CONVERT_PRESTART as boolean,
    role: parsed.CONVERT_ROLE as ConvertRole,
    leaseMs: parsed.CONVERT_LEASE_MS as number,
    pollMs: parsed.CONVERT_POLL_MS as number,
    queueName: parsed.CONVERT_QUEUE as string,
    urls: {
      allowPrivate: parsed.CONVERT_URL_ALLOW_PRIVATE as boolean,
      allow: (parsed.CONVERT_URL_ALLOW as string[] | undefined) ?? [],
      denyNetworks: ((parsed.CONVERT_URL_DENY as string[] | undefined) ?? []).filter((x) => x.includes('/')),
      denyHosts: ((parsed.CONVERT_URL_DENY as string[] | undefined) ?? []).filter((x) => !x.includes('/')).map((x) => x.replace(/\.$/, '')),
      restrictTo: (parsed.CONVERT_URL_RESTRICT_TO as string[] | undefined) ?? null,
      timeoutMs: (parsed.CONVERT_URL_TIMEOUT_SECONDS as number) * 1000,
      maxRedirects: parsed.CONVERT_URL_MAX_REDIRECTS as number,
      dnsServers: (parsed.CONVERT_DNS_SERVERS as string[] | undefined) ?? [],
    },
    webhooks: webhookConfig('CONVERT', settings),
    shareRpm: parsed.CONVERT_SHARE_RPM as number,
    exports: {
      allowInsecure: parsed.CONVERT_EXPORT_ALLOW_INSECURE as boolean,
      partBytes: (parsed.CONVERT_EXPORT_PART_MB as number) * 1024 * 1024,
      timeoutMs: (parsed.CONVERT_EXPORT_TIMEOUT_SECONDS as number) * 1000,
    },
    secretsKey: parsed.CONVERT_SECRETS_KEY_FILE
      ? { file: resolve(root, parsed.CONVERT_SECRETS_KEY_FILE as string), create: false }
      : { file: resolve(common.dataDir, 'secrets.key'), create: true },
    signing,
    signingUploadRpm: parsed.CONVERT_SIGNING_UPLOAD_RPM as number,
  };
}

/**
 * Opens the operator's PKCS#12 file; every problem of the pair in one ConfigError. Messages
 * name the settings and the files' problems, never the password or the files' contents.
 */
function operatorSigning(p12: string | undefined, passwordFile: string | undefined, root: string): SigningCredential | null {
  if (p12 === undefined && passwordFile === undefined) return null;
  const problems: string[] = [];
  if (p12 === undefined) problems.push('CONVERT_SIGNING_P12: must be set with CONVERT_SIGNING_P12_PASSWORD_FILE');
  if (passwordFile === undefined) problems.push('CONVERT_SIGNING_P12_PASSWORD_FILE: must be set with CONVERT_SIGNING_P12 (a file holding the password)');
  const read = (name: string, path: string | undefined): Buffer | undefined => {
    if (path === undefined) return undefined;
    try {
      return readFileSync(resolve(root, path));
    } catch (err) {
      problems.push(`${name}: cannot read ${JSON.stringify(path)} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return undefined;
    }
  };
  const bytes = read('CONVERT_SIGNING_P12', p12);
  const password = read('CONVERT_SIGNING_P12_PASSWORD_FILE', passwordFile);
  if (bytes && password) {
    try {
      // One trailing line break is the file's, not the password's.
      return loadPkcs12(bytes, password.toString('utf8').replace(/\r?\n$/, ''));
    } catch (err) {
      problems.push(`CONVERT_SIGNING_P12: ${err instanceof CredentialError ? err.message : 'the file could not be opened'}`);
    }
  }
  throw new ConfigError(problems);
}
