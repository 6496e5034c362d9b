import { join, resolve } from 'node:path';
import { z } from 'zod';
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
}

export interface CommonDefaults {
  port: number;
  /** Relative to the project root unless absolute. */
  dataDir: string;
  /** File name of the SQLite database inside the data folder. */
  databaseFile: string;
}

/** The zod fields of the common settings, named `${prefix}_HOST` and so on. */
export function commonSettings(prefix: string, defaults: CommonDefaults) {
  return {
    [`${prefix}_HOST`]: setting.host('127.0.0.1'),
    [`${prefix}_PORT`]: setting.port(defaults.port),
    [`${prefix}_DATA_DIR`]: z.string().default(defaults.dataDir),
    [`${prefix}_DATABASE_URL`]: setting.databaseUrl(),
    [`${prefix}_PUBLIC_BASE_URL`]: setting.httpUrl(),
    [`${prefix}_TRUST_PROXY`]: setting.trustProxy(),
    [`${prefix}_REDIS_URL`]: setting.redisUrl(),
    [`${prefix}_LOG_LEVEL`]: setting.logLevel(),
    [`${prefix}_BODY_LIMIT_BYTES`]: setting.positiveInt(1_048_576),
    [`${prefix}_PLANS_FILE`]: z.string().optional(),
  };
}

/** Turns parsed common settings into the typed config, resolving paths against `root`. */
export function commonConfig(prefix: string, parsed: Record<string, unknown>, defaults: CommonDefaults, root: string): CommonServiceConfig {
  const get = <T>(name: string) => parsed[`${prefix}_${name}`] as T;
  const host = get<string>('HOST');
  const port = get<number>('PORT');
  const dataDir = resolve(root, get<string>('DATA_DIR'));
  const plansFile = get<string | undefined>('PLANS_FILE');
  return {
    host,
    port,
    dataDir,
    database: parseDatabaseUrl(get<string | undefined>('DATABASE_URL') ?? `sqlite:${join(dataDir, defaults.databaseFile)}`, root),
    publicBaseUrl: get<string | undefined>('PUBLIC_BASE_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    trustProxy: get<boolean | number | string[]>('TRUST_PROXY'),
    redisUrl: get<string | undefined>('REDIS_URL'),
    logLevel: get<string>('LOG_LEVEL'),
    bodyLimitBytes: get<number>('BODY_LIMIT_BYTES'),
    plansFile: plansFile ? resolve(root, plansFile) : undefined,
  };
}
