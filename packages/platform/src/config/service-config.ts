import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { HttpTimeouts } from '../http/framing.js';
import { parseDatabaseUrl, setting, type DatabaseTarget } from './settings.js';

/** Settings every service has, under its own prefix (`EMAIL_…`, `CONVERT_…`). */
export interface CommonServiceConfig {
  host: string;
  port: number;
  /** Absolute folder for the SQLite file and other local state. */
  dataDir: string;
  database: DatabaseTarget;
  /** Base of absolute URLs in answers, without a trailing slash. */
  publicBaseUrl: string;
  trustProxy: boolean | number | string[];
  /** Redis shared by the service's processes (rate limits, later the job queue); unset = in-process. */
  redisUrl: string | undefined;
  logLevel: string;
  bodyLimitBytes: number;
  plansFile: string | undefined;
  /** How long a client may take to send a request (`…_HEADERS_TIMEOUT_MS`, `…_REQUEST_TIMEOUT_MS`, `…_BODY_IDLE_TIMEOUT_MS`). */
  http: HttpTimeouts;
  /** When set, `GET /metrics` requires it as a bearer token. */
  metricsToken: string | undefined;
  /** Dashboard sign-in: open sign-up (`…_DASHBOARD_SIGNUP`, off by default), and the session cookie marked Secure on every answer (`…_DASHBOARD_SECURE_COOKIE`; it is on HTTPS requests anyway). */
  dashboard: { signup: boolean; secureCookie: boolean };
  /** Port of the `GET /metrics` listener of a worker process (on `host`); unset: none. */
  workerMetricsPort: number | undefined;
  /** Free-space floor of the data and storage folders (`…_MIN_FREE_MB`): under it the service is not ready and refuses uploads that would not fit. */
  minFreeBytes: number;
}

export interface CommonDefaults {
  port: number;
  /** Relative to the project root unless absolute. */
  dataDir: string;
  /** File name of the SQLite database inside the data folder. */
  databaseFile: string;
  /** Default `…_REQUEST_TIMEOUT_MS` (whole request, whatever the progress); 0: none. */
  requestTimeoutMs: number;
}

/** The common settings' zod fields, without their `PREFIX_` (`HOST`, `PORT`, …). */
function commonShape(defaults: CommonDefaults) {
  return {
    HOST: setting.host('127.0.0.1'),
    PORT: setting.port(defaults.port),
    DATA_DIR: z.string().default(defaults.dataDir),
    DATABASE_URL: setting.databaseUrl(),
    PUBLIC_BASE_URL: setting.httpUrl(),
    TRUST_PROXY: setting.trustProxy(),
    REDIS_URL: setting.redisUrl(),
    LOG_LEVEL: setting.logLevel(),
    BODY_LIMIT_BYTES: setting.positiveInt(1_048_576),
    PLANS_FILE: z.string().optional(),
    HEADERS_TIMEOUT_MS: setting.positiveInt(10_000),
    REQUEST_TIMEOUT_MS: z.coerce.number().int('must be a whole number').min(0, 'must be 0 (no limit) or more').default(defaults.requestTimeoutMs),
    BODY_IDLE_TIMEOUT_MS: setting.positiveInt(15_000),
    METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    DASHBOARD_SIGNUP: setting.bool(false),
    DASHBOARD_SECURE_COOKIE: setting.bool(false),
    WORKER_METRICS_PORT: z.coerce.number().int('must be a whole number').min(1, 'must be a port, 1–65535').max(65535, 'must be a port, 1–65535').optional(),
    MIN_FREE_MB: z.coerce.number().int('must be a whole number').min(0, 'must be 0 (no floor) or more').default(128),
  };
}
type CommonShape = ReturnType<typeof commonShape>;

/** The common fields named `${prefix}_HOST` and so on, each keeping its own zod type. */
export type CommonSettingsShape<P extends string> = { [K in keyof CommonShape & string as `${P}_${K}`]: CommonShape[K] };

/** The parsed values of the common settings, as a service's schema outputs them. */
export type CommonSettingsValues<P extends string> = z.output<z.ZodObject<CommonSettingsShape<P>>>;

/** The zod fields of the common settings, named `${prefix}_HOST` and so on (typed per field). */
export function commonSettings<P extends string>(prefix: P, defaults: CommonDefaults): CommonSettingsShape<P> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(commonShape(defaults))) shape[`${prefix}_${name}`] = field;
  // The one assertion: TypeScript cannot follow keys built from a template at run time;
  // the loop above makes exactly the keys CommonSettingsShape<P> names, with their fields.
  return shape as CommonSettingsShape<P>;
}

/** Turns parsed common settings into the typed config, resolving paths against `root`. */
export function commonConfig<P extends string>(prefix: P, parsed: CommonSettingsValues<P>, defaults: CommonDefaults, root: string): CommonServiceConfig {
  const values = parsed as CommonSettingsValues<P> & Record<string, unknown>;
  const v = <K extends keyof CommonShape & string>(name: K): z.output<CommonShape[K]> => values[`${prefix}_${name}`] as z.output<CommonShape[K]>;
  const host = v('HOST');
  const port = v('PORT');
  const dataDir = resolve(root, v('DATA_DIR'));
  const plansFile = v('PLANS_FILE');
  return {
    host,
    port,
    dataDir,
    database: parseDatabaseUrl(v('DATABASE_URL') ?? `sqlite:${join(dataDir, defaults.databaseFile)}`, root),
    publicBaseUrl: v('PUBLIC_BASE_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    trustProxy: v('TRUST_PROXY'),
    redisUrl: v('REDIS_URL'),
    logLevel: v('LOG_LEVEL'),
    bodyLimitBytes: v('BODY_LIMIT_BYTES'),
    plansFile: plansFile ? resolve(root, plansFile) : undefined,
    metricsToken: v('METRICS_TOKEN'),
    dashboard: { signup: v('DASHBOARD_SIGNUP'), secureCookie: v('DASHBOARD_SECURE_COOKIE') },
    workerMetricsPort: v('WORKER_METRICS_PORT'),
    minFreeBytes: v('MIN_FREE_MB') * 1024 * 1024,
    http: { headersMs: v('HEADERS_TIMEOUT_MS'), requestMs: v('REQUEST_TIMEOUT_MS'), bodyIdleMs: v('BODY_IDLE_TIMEOUT_MS') },
  };
}
