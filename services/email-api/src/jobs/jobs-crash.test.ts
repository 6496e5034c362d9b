import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { openServiceCore, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, freePort, startProcess, stopProcess, testBackends, testRedisUrl } from '@mailconv/platform/testing';
import { D, loadDomains, useRig } from '@mailconv/test-rig';
import { EMAIL_KEY_PREFIX } from '../app.js';
import { loadEmailConfig } from '../config.js';
import { EMAIL_MIGRATIONS } from '../db/migrations.js';
import type { EmailTables } from '../db/schema.js';
import { jobsEnv, slowAddresses } from './jobs.test-support.js';

const SERVER = fileURLToPath(new URL('../server.js', import.meta.url));
const WORKER = fileURLToPath(new URL('../worker.js', import.meta.url));

/** Submits the job and waits until it is part-way done (the moment to kill a process). */
async function submitAndWaitMidway(base: string, auth: Record<string, string>, get: (path: string) => Promise<Record<string, unknown>>, emails: readonly string[]): Promise<string> {
  const res = await fetch(`${base}/api/v1/jobs`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ emails }) });
  assert.equal(res.status, 202);
  const id = ((await res.json()) as { job_id: string }).job_id;
  for (;;) {
    const s = await get(`/api/v1/jobs/${id}`);
    assert.notEqual(s.status, 'completed', 'the job must still be running when the process is killed');
    if ((s.processed as number) >= 20) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return id;
}

/** The kill really hit a running job: still `processing`, not all addresses stored. */
async function assertStoppedMidJob(admin: ServiceCore<EmailTables>, id: string): Promise<void> {
  const killed = await admin.database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  assert.equal(killed.status, 'processing');
  assert.ok(killed.processed < 50);
}

/**
 * After the restart: the job completes with every address exactly once and in order, exact
 * counters, quota charged once per address, nothing refunded, one completion event.
 */
async function assertRecovered(
  get: (path: string) => Promise<Record<string, unknown>>,
  admin: ServiceCore<EmailTables>,
  accountId: string,
  id: string,
  emails: readonly string[],
): Promise<void> {
  let done: Record<string, unknown>;
  for (;;) {
    done = await get(`/api/v1/jobs/${id}`);
    if (done.status !== 'processing' && done.status !== 'queued') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(done.status, 'completed');
  const results = ((await get(`/api/v1/jobs/${id}/results?per_page=5000`)).results as Array<{ email: string; status: 'valid' | 'invalid' | 'risky' | 'unknown' }>);
  assert.deepEqual(results.map((r) => r.email), emails, 'every address once, in input order');
  const tally = { valid: 0, invalid: 0, risky: 0, unknown: 0 };
  for (const r of results) tally[r.status] += 1;
  assert.deepEqual([done.processed, done.valid, done.invalid, done.risky, done.unknown], [50, tally.valid, tally.invalid, tally.risky, tally.unknown]);
  assert.equal(tally.unknown, 5, 'the slow addresses are undecided');
  assert.equal(await admin.quota.used(accountId), 50, 'charged once per address');
  const reservation = await admin.database.db.selectFrom('quota_reservations').select(['units', 'refunded']).where('account_id', '=', accountId).execute();
  assert.deepEqual(reservation, [{ units: 50, refunded: 0 }]);
  const events = await admin.database.db.selectFrom('events').select('type').where('account_id', '=', accountId).execute();
  assert.deepEqual(events, [{ type: 'job.completed' }]);
}

/** Fifty addresses in five chunks of ten; one slow address per chunk keeps each chunk busy for a while. */
function crashList(tag: string): string[] {
  const slow = slowAddresses(5, tag);
  const domains = loadDomains();
  return Array.from({ length: 50 }, (_, i) => (i % 10 === 5 ? slow[Math.floor(i / 10)]! : i % 2 ? `a${i}@${D.valid}` : `u${i}@${domains[i]!}`));
}

/** A free port for the API process and a JSON getter against it with the key. */
async function client(apiKey: string) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${apiKey}` };
  const get = async (path: string) => (await fetch(`${base}${path}`, { headers: auth })).json() as Promise<Record<string, unknown>>;
  return { port, base, auth, get };
}

/** Starts `server.js` (or `worker.js`) on `port` and resolves once it logged `ready`. */
async function start(env: Record<string, string>, port: number, file = SERVER): Promise<ChildProcess> {
  return (await startProcess(file, { ...env, EMAIL_LOG_LEVEL: 'info', EMAIL_PORT: String(port) })).child;
}

const stop = stopProcess;

for (const backend of testBackends()) {
  test(`SIGKILL mid-job, restart: the job completes with every address stored exactly once, counters and quota exact (${backend})`, async () => {
    const rig = await useRig();
    const db = await createTestDatabase(backend);
    const env = jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '1', EMAIL_JOBS_LEASE_MS: '600' });
    const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    let child: ChildProcess | null = null;
    try {
      const acct = await admin.accounts.createAccount({ email: 'crash@example.test', plan: 'growth' });
      assert.ok(acct.ok);
      const emails = crashList('k');
      const { port, base, auth, get } = await client(acct.apiKey);

      child = await start(env, port);
      const id = await submitAndWaitMidway(base, auth, get, emails);
      await stop(child, 'SIGKILL');
      child = null;
      await assertStoppedMidJob(admin, id);

      child = await start(env, port);
      await assertRecovered(get, admin, acct.account.id, id, emails);
      assert.equal(await stop(child, 'SIGTERM'), 0);
      child = null;
    } finally {
      if (child) await stop(child, 'SIGKILL');
      await admin.close();
      await db.drop();
      await rig.release();
    }
  });
}

/**
 * Scale-out on PostgreSQL: an API process without a worker stores the job, a worker process
 * is SIGKILLed mid-job, another finishes it exactly once. `extra` adds settings (Redis).
 */
async function scaleOutCrash(tag: string, extra: (env: Record<string, string>) => Record<string, string>): Promise<void> {
  const rig = await useRig();
  const db = await createTestDatabase('postgres');
  const env = extra(jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '1', EMAIL_JOBS_LEASE_MS: '600' }));
  const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
  let child: ChildProcess | null = null;
  let api: ChildProcess | null = null;
  try {
    const acct = await admin.accounts.createAccount({ email: `${tag}@example.test`, plan: 'growth' });
    assert.ok(acct.ok);
    const emails = crashList(tag);
    const { port, base, auth, get } = await client(acct.apiKey);

    api = await start({ ...env, EMAIL_JOBS_WORKERS: '0' }, port);
    child = await start(env, 0, WORKER);
    const id = await submitAndWaitMidway(base, auth, get, emails);
    await stop(child, 'SIGKILL');
    child = null;
    await assertStoppedMidJob(admin, id);

    child = await start(env, 0, WORKER);
    await assertRecovered(get, admin, acct.account.id, id, emails);
    assert.equal(await stop(child, 'SIGTERM'), 0);
    child = null;
  } finally {
    if (child) await stop(child, 'SIGKILL');
    if (api) await stop(api, 'SIGTERM');
    await admin.close();
    await db.drop();
    await rig.release();
  }
}

if (testBackends().includes('postgres')) {
  test('scale-out: a job stored by an API process without a worker is done by worker processes; one SIGKILLed mid-job, another finishes it exactly once (postgres)', () => scaleOutCrash('k', (env) => env));

  /** Settings of the scale-out setup: PostgreSQL and Redis, a queue of this test's own. */
  const scaleOut = (env: Record<string, string>) => ({ ...env, EMAIL_REDIS_URL: testRedisUrl(), EMAIL_JOBS_QUEUE: `test-${randomUUID()}` });

  test('scale-out with Redis: BullMQ messages bring the chunks to two worker processes (their database poll is hours apart)', async () => {
    const rig = await useRig();
    const db = await createTestDatabase('postgres');
    // A fallback poll of ten hours: only queue messages can bring the work in time.
    const env = scaleOut(jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '1', EMAIL_JOBS_POLL_MS: '3600000' }));
    const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    const children: ChildProcess[] = [];
    try {
      const acct = await admin.accounts.createAccount({ email: 'bull@example.test', plan: 'growth' });
      assert.ok(acct.ok);
      const domains = loadDomains();
      const emails = Array.from({ length: 60 }, (_, i) => (i % 2 ? `a${i}@${D.valid}` : `u${i}@${domains[i]!}`));
      const { port, base, auth, get } = await client(acct.apiKey);
      children.push(await start({ ...env, EMAIL_JOBS_WORKERS: '0' }, port));
      children.push(await start(env, 0, WORKER), await start(env, 0, WORKER));
      const res = await fetch(`${base}/api/v1/jobs`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ emails }) });
      assert.equal(res.status, 202);
      const id = ((await res.json()) as { job_id: string }).job_id;
      let done: Record<string, unknown>;
      const deadline = Date.now() + 30_000;
      do {
        assert.ok(Date.now() < deadline, 'the job did not finish: no message reached a worker');
        await new Promise((r) => setTimeout(r, 20));
        done = await get(`/api/v1/jobs/${id}`);
      } while (done.status === 'queued' || done.status === 'processing');
      assert.equal(done.status, 'completed');
      const results = (await get(`/api/v1/jobs/${id}/results?per_page=5000`)).results as Array<{ email: string }>;
      assert.deepEqual(results.map((r) => r.email), emails, 'every address once, in input order');
      assert.equal(await admin.quota.used(acct.account.id), 60);
    } finally {
      for (const c of children.reverse()) await stop(c, 'SIGTERM');
      await admin.close();
      await db.drop();
      await rig.release();
    }
  });

  test('scale-out with Redis: a worker process SIGKILLed mid-job, another finishes the job exactly once', () => scaleOutCrash('b', scaleOut));
}
