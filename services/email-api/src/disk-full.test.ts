// A full disk under the email service (issue 28), for real: its data folder (the SQLite
// database) on a small tmpfs the test mounts and fills. While the disk is full, writes —
// a job, a verification (its quota charge), a new key — answer 507 `insufficient_storage`
// (never a 500) and store nothing; /readyz says the database cannot write and the folder is
// under its floor; the process keeps running. Once space is back everything works again
// without a restart: a job completes with every address exactly once, quota and request
// counts are exact. DNS goes to a silent resolver of the test's own on loopback. Needs root
// for the mount (CI has it); fails, never skips, without. Bounded: a 32 MiB volume, one
// server process with a capped heap, every wait a deadline.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServiceCore, type ServiceCore } from '@mailconv/platform';
import { freePort, mountSmallVolume, startProcess, stopProcess, type SmallVolume, type StartedProcess } from '@mailconv/platform/testing';
import { EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const MiB = 1024 * 1024;

describe('a full disk under the email service', { timeout: 180_000 }, () => {
  let volume: SmallVolume;
  let dns: Socket;
  let server: StartedProcess;
  let core: ServiceCore<EmailTables>;
  let base: string;
  let auth: Record<string, string>;
  let accountId: string;
  let keyId: string;
  let keyed = 0;

  const call = async (method: string, path: string, json?: unknown) => {
    keyed++;
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...auth, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const ready = async () => {
    const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
    return { status: res.status, checks: ((await res.json()) as { checks: Record<string, string> }).checks };
  };

  before(async () => {
    volume = await mountSmallVolume(32 * MiB);
    // A resolver that never answers: verifications end as unknown/dns_error, on loopback only.
    dns = createSocket('udp4');
    await new Promise<void>((resolve) => dns.bind(0, '127.0.0.1', () => resolve()));
    const port = await freePort();
    const env = {
      EMAIL_DATA_DIR: join(volume.path, 'data'),
      EMAIL_PORT: String(port),
      EMAIL_MIN_FREE_MB: '4',
      EMAIL_DNS_SERVERS: `127.0.0.1:${dns.address().port}`,
      EMAIL_DNS_TIMEOUT_MS: '100',
      EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
      EMAIL_JOBS_POLL_MS: '50',
      EMAIL_LOG_LEVEL: 'info',
      NODE_OPTIONS: '--max-old-space-size=256',
    };
    server = await startProcess(SERVER, env);
    base = `http://127.0.0.1:${port}`;
    core = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    const acct = await core.accounts.createAccount({ email: 'disk-full@example.test', plan: 'growth' });
    assert.ok(acct.ok);
    auth = { authorization: `Bearer ${acct.apiKey}` };
    accountId = acct.account.id;
    keyId = (await core.database.db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).executeTakeFirstOrThrow()).id;
  });

  after(async () => {
    if (server) await stopProcess(server.child, 'SIGKILL');
    await core?.close();
    dns?.close();
    await volume?.unmount();
  });

  test('while full: 507 for every write, nothing stored or charged, /readyz not ready, the process up; once freed: ready again, a job completes exactly once, counts exact', async () => {
    assert.deepEqual(await ready(), { status: 200, checks: { database: 'ok', storage: 'ok' } });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /^disk_free_bytes\{folder="data"\} \d+/m);

    await volume.fill(0);
    const job = await call('POST', '/api/v1/jobs', { emails: ['a@full.test', 'b@full.test'] });
    assert.deepEqual([job.status, job.body.error], [507, 'insufficient_storage'], JSON.stringify(job.body));
    const single = await call('POST', '/api/v1/verify-single', { email: 'solo@full.test' });
    assert.deepEqual([single.status, single.body.error], [507, 'insufficient_storage'], JSON.stringify(single.body));
    const key = await call('POST', '/api/dashboard/api-keys', { name: 'while full' });
    assert.deepEqual([key.status, key.body.error], [507, 'insufficient_storage'], JSON.stringify(key.body));
    assert.deepEqual(await ready(), { status: 503, checks: { database: 'error', storage: 'error' } });
    for (const deadline = Date.now() + 10_000; !server.lines.some((l) => l.includes('background write failed')); await sleep(100)) {
      assert.ok(Date.now() < deadline, 'the request counts were written while the disk was full');
    }
    assert.equal(server.child.exitCode, null, 'the process is still running');
    assert.equal((await core.database.db.selectFrom('jobs').select('id').where('account_id', '=', accountId).execute()).length, 0, 'no job stored');
    assert.equal(await core.quota.used(accountId), 0, 'nothing charged');

    await volume.drain();
    for (const deadline = Date.now() + 10_000; (await ready()).status !== 200; await sleep(100)) assert.ok(Date.now() < deadline, 'ready again once space is back');
    const emails = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? `not-an-address-${i}` : `user${i}@after-${i}.test`));
    const accepted = await call('POST', '/api/v1/jobs', { emails });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const id = accepted.body.job_id as string;
    for (const deadline = Date.now() + 60_000; ; await sleep(200)) {
      const view = await call('GET', `/api/v1/jobs/${id}`);
      if (view.body.status === 'completed') break;
      assert.ok(Date.now() < deadline && ['queued', 'processing'].includes(view.body.status as string), JSON.stringify(view.body));
    }
    const results = (await call('GET', `/api/v1/jobs/${id}/results?per_page=100`)).body.results as Array<{ email: string }>;
    assert.deepEqual(results.map((r) => r.email), emails, 'every address once, in order');
    assert.equal(await core.quota.used(accountId), emails.length, 'charged once per address, nothing for the refused requests');
    let counted = 0;
    for (const deadline = Date.now() + 15_000; counted !== keyed; await sleep(200)) {
      counted = Number((await core.database.db.selectFrom('api_key_usage').select((eb) => eb.fn.sum<number>('requests').as('n')).where('key_id', '=', keyId).executeTakeFirst())?.n ?? 0);
      assert.ok(Date.now() < deadline, `api_key_usage counts ${counted} requests, the test made ${keyed}`);
    }
    assert.equal(server.child.exitCode, null);
  });
});
