import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openServiceCore, verifyPassword } from '@mailconv/platform';
import { createTestDatabase, freePort, startProcess, stopProcess, testBackends, testRedisUrl } from '@mailconv/platform/testing';
import { EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';

const run = promisify(execFile);
const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const ADMIN = fileURLToPath(new URL('./admin.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));
const ROOT_ADMIN = fileURLToPath(new URL('../../../scripts/admin.mjs', import.meta.url));

/** Runs a command, resolving with its exit code and output whatever the code. */
async function exec(file: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [file, ...args], { env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Servers started here send webhook deliveries (if any) only to loopback. */
const LOOPBACK_WEBHOOKS = { EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128' };

/** Starts `server.js` on a free port and resolves once it logged `ready`. */
async function startServer(env: Record<string, string>): Promise<{ port: number; stop: () => Promise<void>; lines: string[] }> {
  const port = await freePort();
  const { child, lines } = await startProcess(SERVER, { EMAIL_LOG_LEVEL: 'info', ...LOOPBACK_WEBHOOKS, ...env, EMAIL_PORT: String(port) });
  return {
    port,
    lines,
    stop: async () => {
      await stopProcess(child, 'SIGTERM');
    },
  };
}

test('the server refuses to start on bad settings, listing every problem at once', async () => {
  const r = await exec(SERVER, [], { EMAIL_PORT: 'eighty', EMAIL_DATABASE_URL: 'mysql://db/x', EMAIL_TRUST_PROXY: 'maybe', EMAIL_LOG_LEVEL: 'loud' });
  assert.equal(r.code, 1);
  for (const name of ['EMAIL_PORT', 'EMAIL_DATABASE_URL', 'EMAIL_TRUST_PROXY', 'EMAIL_LOG_LEVEL']) assert.match(r.stderr, new RegExp(name), name);
});

// Issue #15: a mistyped URL printed its password in the start-up error.
test('a bad URL setting is named with its rule, its value (and password) never printed', async () => {
  const secrets = { EMAIL_DATABASE_URL: 'mysql://admin:hunter2-db@db.example.test/x', EMAIL_REDIS_URL: 'http://:hunter2-redis@cache.example.test:6379', EMAIL_PUBLIC_BASE_URL: 'ftp://ops:hunter2-base@example.test' };
  for (const file of [SERVER, WORKER]) {
    const r = await exec(file, [], { ...secrets, EMAIL_PORT: 'eighty' });
    assert.equal(r.code, 1, file);
    assert.match(r.stderr, /EMAIL_DATABASE_URL: must be sqlite:PATH or postgres/);
    assert.match(r.stderr, /EMAIL_REDIS_URL: must be redis:\/\/… or rediss:\/\/…/);
    assert.match(r.stderr, /EMAIL_PUBLIC_BASE_URL: must be an absolute http\(s\) URL/);
    assert.match(r.stderr, /EMAIL_PORT: .*"eighty"/, 'a harmless value is still quoted');
    assert.doesNotMatch(r.stderr + r.stdout, /hunter2|example\.test/);
  }
});

for (const backend of testBackends()) {
  describe(`email service processes on ${backend}`, () => {
    let url: string;
    let drop: () => Promise<void>;
    before(async () => ({ url, drop } = await createTestDatabase(backend)));
    after(async () => drop());

    test('admin CLI: create-account prints one JSON line; the key works; bad input exits non-zero', async () => {
      const env = { EMAIL_DATABASE_URL: url };
      const created = await exec(ADMIN, ['create-account', '--email', 'Ops@Example.test', '--plan', 'growth', '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      const lines = created.stdout.trim().split('\n');
      assert.equal(lines.length, 1);
      const acct = JSON.parse(lines[0]!) as Record<string, string>;
      assert.deepEqual(Object.keys(acct), ['account_id', 'email', 'plan', 'api_key']);
      assert.equal(acct.email, 'ops@example.test');
      assert.equal(acct.plan, 'growth');
      assert.match(acct.api_key!, /^ev_live_[0-9A-Za-z]{32}$/);

      const dup = await exec(ADMIN, ['create-account', '--email', 'ops@example.test', '--json'], env);
      assert.equal(dup.code, 1);
      assert.match(dup.stderr, /already exists/);
      for (const args of [
        ['create-account', '--plan', 'growth'],
        ['create-account', '--email', 'not-an-address'],
        ['create-account', '--email', 'x@example.test', '--plan', 'platinum'],
        ['create-account', '--email', 'x@example.test', '--bogus'],
        ['frobnicate'],
        ['set-plan', '--email', 'ops@example.test'],
        ['create-key'],
      ]) {
        const r = await exec(ADMIN, args, env);
        assert.equal(r.code, 2, args.join(' '));
        assert.match(r.stderr, /Usage: npm run admin -- email/);
        assert.equal(r.stdout, '');
      }
      const missing = await exec(ADMIN, ['create-key', '--email', 'nobody@example.test'], env);
      assert.equal(missing.code, 1);

      const key = await exec(ADMIN, ['create-key', '--email', 'ops@example.test', '--name', 'deploy', '--json'], env);
      assert.equal(key.code, 0, key.stderr);
      const k = JSON.parse(key.stdout) as Record<string, string>;
      assert.equal(k.account_id, acct.account_id);
      assert.equal((await exec(ADMIN, ['set-plan', '--account', acct.account_id!, '--plan', 'scale', '--json'], env)).code, 0);
      const list = JSON.parse((await exec(ADMIN, ['list-accounts', '--json'], env)).stdout) as Array<Record<string, string>>;
      assert.deepEqual(list.map((a) => [a.email, a.plan]), [['ops@example.test', 'scale']]);

      const core = await openServiceCore({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      try {
        assert.equal((await core.accounts.findPrincipal(k.api_key!))?.plan, 'scale');
        assert.equal((await core.accounts.listKeys(acct.account_id!)).length, 2);
      } finally {
        await core.close();
      }
    });

    test('the root wrapper `npm run admin -- email …` keeps stdout to the one JSON line', async () => {
      const r = await exec(ROOT_ADMIN, ['email', 'create-account', '--email', 'wrapper@example.test', '--json'], { EMAIL_DATABASE_URL: url });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^\{"account_id":"acct_[0-9a-z]+","email":"wrapper@example.test","plan":"free","api_key":"ev_live_[0-9A-Za-z]{32}"\}\n$/);
      const bad = await exec(ROOT_ADMIN, ['mail', 'create-account'], {});
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /use email or convert/);
      // Asked for, the usage is the answer: on stdout, exit 0 (issue #30).
      for (const args of [['help'], ['email', 'help'], ['convert', '--help']]) {
        const help = await exec(ROOT_ADMIN, args, { EMAIL_DATABASE_URL: url });
        assert.equal(help.code, 0, `${args.join(' ')}: ${help.stderr}`);
        assert.match(help.stdout, /^Usage: npm run admin -- /, args.join(' '));
      }
      assert.match((await exec(ROOT_ADMIN, ['email', 'help'], {})).stdout, /create-key \(--account ID \| --email EMAIL\)/);
    });

    test('admin set-password reads the password piped on stdin, never argv', async () => {
      const env = { EMAIL_DATABASE_URL: url };
      assert.equal((await exec(ADMIN, ['create-account', '--email', 'piped@example.test'], env)).code, 0);
      const child = spawn(process.execPath, [ADMIN, 'set-password', '--email', 'piped@example.test', '--password-stdin', '--json'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdin.end('piped secret phrase\n');
      const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearTimeout(killer);
      assert.equal(code, 0, stderr);
      assert.match(stdout, /^\{"account_id":"acct_[0-9a-z]+","email":"piped@example.test","password_set":true\}\n$/);
      assert.ok(!stdout.includes('piped secret') && !stderr.includes('piped secret'), 'the password is never echoed');
      const core = await openServiceCore({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      try {
        const stored = (await core.accounts.findCredentials('piped@example.test'))!.passwordHash!;
        assert.equal(await verifyPassword('piped secret phrase', stored), true);
      } finally {
        await core.close();
      }
    });

    test('the per-plan rate limit holds across two API processes sharing Redis (and not without it)', async () => {
      const acct = JSON.parse((await exec(ADMIN, ['create-account', '--email', 'two-procs@example.test', '--plan', 'free', '--json'], { EMAIL_DATABASE_URL: url })).stdout) as Record<string, string>;
      const hammer = async (extra: Record<string, string>) => {
        const servers = await Promise.all([startServer({ EMAIL_DATABASE_URL: url, ...extra }), startServer({ EMAIL_DATABASE_URL: url, ...extra })]);
        try {
          const statuses = await Promise.all(
            Array.from({ length: 80 }, (_, i) => fetch(`http://127.0.0.1:${servers[i % 2]!.port}/api/v1/account`, { headers: { authorization: `Bearer ${acct.api_key}` } }).then((r) => r.status)),
          );
          return { ok: statuses.filter((s) => s === 200).length, limited: statuses.filter((s) => s === 429).length };
        } finally {
          await Promise.all(servers.map((s) => s.stop()));
        }
      };
      // Free plan: 60 requests per minute per account.
      assert.deepEqual(await hammer({ EMAIL_REDIS_URL: testRedisUrl() }), { ok: 60, limited: 20 });
      assert.deepEqual(await hammer({}), { ok: 80, limited: 0 }, 'in-process limits count per process');
    });

    // Issue #15: /readyz reported ready while Redis was down.
    test('readiness names a Redis that does not answer (503), liveness stays 200; the password in its URL is not logged', async () => {
      const closed = await freePort(); // nothing listens there
      const server = await startServer({ EMAIL_DATABASE_URL: url, EMAIL_REDIS_URL: `redis://:hunter2-redis@127.0.0.1:${closed}/0`, EMAIL_JOBS_WORKERS: '0', EMAIL_WEBHOOKS_CONCURRENCY: '0' });
      try {
        const base = `http://127.0.0.1:${server.port}`;
        const live = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) });
        assert.equal(live.status, 200);
        const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
        assert.equal(ready.status, 503);
        assert.deepEqual(await ready.json(), { status: 'unavailable', checks: { database: 'ok', storage: 'ok', redis: 'error' }, smtp: null });
        assert.doesNotMatch(server.lines.join('\n'), /hunter2/);
      } finally {
        await server.stop();
      }
    });

    // Issue #15: the worker process has no HTTP, so its counters were never scraped.
    test('a job worker with EMAIL_WORKER_METRICS_PORT serves its own /metrics (token-protected) and nothing else', async () => {
      const port = await freePort();
      const token = 'worker-metrics-token-0123';
      const worker = await startProcess(WORKER, { EMAIL_DATABASE_URL: url, EMAIL_LOG_LEVEL: 'info', EMAIL_WORKER_METRICS_PORT: String(port), EMAIL_METRICS_TOKEN: token, ...LOOPBACK_WEBHOOKS });
      try {
        assert.equal(worker.ready.metrics_port, port);
        const scrape = (headers: Record<string, string> = {}, path = '/metrics') => fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
        const denied = await scrape({ authorization: 'Bearer wrong' });
        assert.equal(denied.status, 401);
        assert.equal(((await denied.json()) as { error: string }).error, 'unauthorized');
        const res = await scrape({ authorization: `Bearer ${token}` });
        assert.equal(res.status, 200);
        const text = await res.text();
        for (const name of ['email_job_backlog_addresses', 'email_job_lease_expiries_total', 'email_job_addresses_processed_total', 'email_webhook_deliveries_pending', 'process_resident_memory_bytes']) assert.match(text, new RegExp(`^${name} \\d+`, 'm'), name);
        assert.equal((await scrape({ authorization: `Bearer ${token}` }, '/api/v1/jobs')).status, 404);
      } finally {
        assert.equal(await stopProcess(worker.child, 'SIGTERM'), 0);
      }
    });

    test('the server serves, then shuts down gracefully on SIGTERM, flushing key usage', async () => {
      const env = { EMAIL_DATABASE_URL: url };
      const acct = JSON.parse((await exec(ADMIN, ['create-account', '--email', 'sigterm@example.test', '--json'], env)).stdout) as Record<string, string>;
      const port = await freePort();
      const { child, lines: logged } = await startProcess(SERVER, { ...LOOPBACK_WEBHOOKS, ...env, EMAIL_PORT: String(port) });
      const lines = () => logged.flatMap((line) => { try { return [JSON.parse(line) as Record<string, unknown>]; } catch { return []; } });
      assert.equal(lines().find((l) => l.event === 'ready')?.url, `http://127.0.0.1:${port}`);
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/account`, { headers: { authorization: `Bearer ${acct.api_key}` } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
      assert.equal(await stopProcess(child, 'SIGTERM'), 0);
      assert.ok(lines().some((l) => l.msg === 'shutting down'));
      const core = await openServiceCore({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      try {
        const keys = await core.accounts.listKeys(acct.account_id!);
        assert.ok(keys[0]?.last_used, 'usage recorded just before SIGTERM was written on the way out');
      } finally {
        await core.close();
      }
    });
  });
}
