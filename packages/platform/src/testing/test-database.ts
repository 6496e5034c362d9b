import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { randomBase62 } from '../ids.js';

export type Backend = 'sqlite' | 'postgres';

const ALL_BACKENDS: readonly Backend[] = ['sqlite', 'postgres'];

/** Whether `env` is a CI run (`CI=true`, as CI systems set it; `CI=false`/`0`/empty is not). */
export function isCi(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const ci = (env.CI ?? '').trim().toLowerCase();
  return ci !== '' && ci !== 'false' && ci !== '0';
}

/**
 * The database engines suites run against: `TEST_BACKENDS` (comma-separated), both by
 * default. `TEST_BACKENDS` only narrows a local run: under `CI=true` both engines always
 * run, whatever it says (issue 16), so a leftover variable cannot shrink what CI checks.
 * The test command makes sure PostgreSQL is up and fails loudly when it is not; a suite
 * never skips a backend on its own. `scripts/test.mjs` uses this same function.
 */
export function testBackends(env: Readonly<Record<string, string | undefined>> = process.env): Backend[] {
  const names = (env.TEST_BACKENDS ?? ALL_BACKENDS.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) if (n !== 'sqlite' && n !== 'postgres') throw new Error(`TEST_BACKENDS: unknown backend ${n}`);
  if (isCi(env)) return [...ALL_BACKENDS];
  return names as Backend[];
}

/** Admin connection used to create and drop throw-away databases. */
export function testPostgresAdminUrl(): string {
  return process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/**
 * A fresh, empty database of `backend` for one suite, and the way to remove it. PostgreSQL
 * databases are made through `adminUrl` (the test server by default; a fault test gives its
 * own server's, see `startOwnPostgres`).
 */
export async function createTestDatabase(backend: Backend, adminUrl = testPostgresAdminUrl()): Promise<{ url: string; drop(): Promise<void> }> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mailconv-test-'));
    return { url: `sqlite:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `t_${randomBase62(12).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${adminUrl} (${(err as Error).message}); the test command starts it, or set TEST_POSTGRES_URL`);
  }
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
