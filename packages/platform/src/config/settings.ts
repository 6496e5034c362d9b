import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { parseDnsServers } from '../egress/dns-servers.js';

/** Every problem found in the environment, reported together so an operator fixes them in one go. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Settings whose values are credentials or may carry them (a URL's `user:password@`). */
const SECRET_SETTING = /URL|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|KEY/i;

/**
 * Whether a setting's value may be quoted back in an error: never for a URL or anything
 * named like a secret, nor for any value that looks like a URL (issue #15: a mistyped
 * `EMAIL_DATABASE_URL` printed its password), and only short values.
 */
export function mayEchoSetting(name: string, value: string): boolean {
  return !SECRET_SETTING.test(name) && !/:\/\/|@/.test(value) && value.length <= 64;
}

/**
 * Removes the `user:password@` part of any URL in `text` (an error from a database or
 * Redis client may quote the address it was given).
 */
export function redactUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1[redacted]@');
}

/**
 * Parses `env` with a service's settings schema. Empty values count as unset, as in most
 * `.env` tooling. Throws {@link ConfigError} listing every invalid setting at once, each
 * naming the setting and the rule; the value is quoted only when harmless ({@link mayEchoSetting}).
 */
export function parseSettings<S extends z.ZodType>(schema: S, env: Readonly<Record<string, string | undefined>>): z.output<S> {
  const cleaned: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value.trim() !== '') cleaned[key] = value.trim();
  }
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.');
    const given = cleaned[name];
    return `${name}: ${issue.message}${given === undefined || !mayEchoSetting(name, given) ? '' : ` (got ${JSON.stringify(given)})`}`;
  });
  throw new ConfigError(problems);
}

/** Field builders shared by the services' schemas. */
export const setting = {
  port: (fallback: number) => z.coerce.number().int('must be a whole number').min(0).max(65535).default(fallback),
  host: (fallback: string) => z.string().min(1).default(fallback),
  bool: (fallback: boolean) =>
    z
      .string()
      .transform((v, ctx) => {
        const s = v.toLowerCase();
        if (['1', 'true', 'yes', 'on'].includes(s)) return true;
        if (['0', 'false', 'no', 'off'].includes(s)) return false;
        ctx.addIssue({ code: 'custom', message: 'must be true or false' });
        return z.NEVER;
      })
      .default(fallback),
  /** Comma-separated CIDR networks (fences, allow and deny lists), e.g. `127.0.0.0/8,::1/128`. */
  cidrList: () =>
    z
      .string()
      .transform((v, ctx) => {
        const list = v.split(',').map((x) => x.trim()).filter(Boolean);
        if (list.every((x) => /^[0-9a-fA-F:.]+\/\d{1,3}$/.test(x))) return list;
        ctx.addIssue({ code: 'custom', message: 'must be comma-separated CIDR networks, e.g. 127.0.0.0/8' });
        return z.NEVER;
      })
      .optional(),
  /** Comma-separated DNS resolvers, `host:port`, `host` or `[v6]:port`. */
  dnsServers: () => setting.parsed(parseDnsServers),
  /**
   * A value read by `parse`, refused with the parser's own words (never the value, which
   * may hold a password: parsers must not quote it either).
   */
  parsed: <T>(parse: (value: string) => T) =>
    z
      .string()
      .transform((v, ctx) => {
        try {
          return parse(v);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
          return z.NEVER;
        }
      })
      .optional(),
  /**
   * A length of time in milliseconds, written as whole seconds or with a unit: `90`, `90s`,
   * `30m`, `24h`, `7d`; `0` is allowed (callers read it as "off").
   */
  duration: (fallbackMs: number, maxMs = 365 * 86_400_000) =>
    z
      .string()
      .transform((v, ctx) => {
        const m = /^\s*(\d{1,9})\s*([smhd]?)\s*$/i.exec(v);
        const ms = m ? Number(m[1]) * { '': 1_000, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]!.toLowerCase() as '' | 's' | 'm' | 'h' | 'd'] : NaN;
        if (!Number.isFinite(ms)) {
          ctx.addIssue({ code: 'custom', message: 'must be a length of time: whole seconds, or a number with s, m, h or d (e.g. 24h)' });
          return z.NEVER;
        }
        if (ms > maxMs) {
          ctx.addIssue({ code: 'custom', message: `must be at most ${maxMs / 86_400_000} days` });
          return z.NEVER;
        }
        return ms;
      })
      .optional()
      .transform((v) => v ?? fallbackMs),
  positiveInt: (fallback: number) => z.coerce.number().int('must be a whole number').positive('must be positive').default(fallback),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  databaseUrl: () =>
    z
      .string()
      .refine((v) => /^sqlite:.+/.test(v) || /^postgres(ql)?:\/\/.+/.test(v), 'must be sqlite:PATH or postgres://…')
      .optional(),
  httpUrl: () =>
    z
      .string()
      .refine((v) => {
        try {
          const u = new URL(v);
          return u.protocol === 'http:' || u.protocol === 'https:';
        } catch {
          return false;
        }
      }, 'must be an absolute http(s) URL')
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
  /** Which proxies' forwarded headers give the client address: off, on (all), a hop count, or addresses/CIDRs. */
  trustProxy: () =>
    z
      .string()
      .default('off')
      .transform((v, ctx): boolean | number | string[] => {
        const s = v.toLowerCase();
        if (['off', 'false', '0', 'no'].includes(s)) return false;
        if (['on', 'true', 'all', 'yes'].includes(s)) return true;
        if (/^[1-9][0-9]?$/.test(s)) return Number(s);
        const list = v.split(',').map((x) => x.trim()).filter(Boolean);
        if (list.length && list.every((x) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(x) || ['loopback', 'linklocal', 'uniquelocal'].includes(x))) return list;
        ctx.addIssue({ code: 'custom', message: 'must be off, on, a hop count (1-99), or comma-separated proxy addresses/CIDRs' });
        return z.NEVER;
      }),
  redisUrl: () =>
    z
      .string()
      .refine((v) => /^rediss?:\/\/.+/.test(v), 'must be redis://… or rediss://…')
      .optional(),
};

/** Where the database lives: an embedded SQLite file or a PostgreSQL server. */
export type DatabaseTarget = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** Resolves `sqlite:PATH` (relative to `baseDir`; `sqlite::memory:` for a private in-memory DB) or `postgres://…`. */
export function parseDatabaseUrl(url: string, baseDir: string): DatabaseTarget {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { kind: 'postgres', url };
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    return { kind: 'sqlite', path: path === ':memory:' ? path : resolve(baseDir, path) };
  }
  throw new ConfigError(['database URL must be sqlite:PATH or postgres://…']);
}

/**
 * The repository root (the folder whose package.json declares workspaces), so that default
 * data folders are the same whichever workspace a command runs from. Falls back to `start`.
 */
export function findProjectRoot(start: string = process.cwd()): string {
  let dir = resolve(start);
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ('workspaces' in (JSON.parse(readFileSync(manifest, 'utf8')) as object)) return dir;
      } catch {
        // an unreadable manifest is not the root; keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return resolve(start);
    dir = parent;
  }
}
