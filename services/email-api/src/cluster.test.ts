import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { openServiceCore } from '@mailconv/platform';
import { createTestDatabase, freePort, startProcess, stopProcess, testBackends, testRedisUrl, type StartedProcess } from '@mailconv/platform/testing';
import { loadDomains, useRig } from '@mailconv/test-rig';
import { EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { jobsEnv, parseCsv } from './jobs/jobs.test-support.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));
const ADDRESSES = 50_000;
const LEASE_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue #15, the cluster proof: the email service as an operator scales it out — two API
 * processes without workers and two worker processes, on PostgreSQL + Redis (BullMQ). DNS
 * goes to the loopback rig; no SMTP (a DNS-only job keeps 50,000 addresses within a
 * minute on two cores). Bounded: at most 4 service processes at a time (512 MB of heap each), 240 s.
 */
test('cluster on PostgreSQL + Redis: two API and two worker processes; a 50,000-address job completes with exact counts and quota while a worker is SIGKILLed and restarted; rate limit and quota hold across both API processes', { skip: !testBackends().includes('postgres'), timeout: 240_000 }, async () => {
  const rig = await useRig();
  const db = await createTestDatabase('postgres');
  const dir = await mkdtemp(join(tmpdir(), 'email-cluster-'));
  const queue = `email-cluster-${randomUUID()}`;
  const plansFile = join(dir, 'plans.json');
  await writeFile(
    plansFile,
    JSON.stringify({
      plans: {
        bulk: { name: 'Bulk', monthlyQuota: ADDRESSES, rateLimitRpm: 100_000, batchCap: 100, features: { smtp: false, webhooks: false, catch_all: false } },
        tiny: { name: 'Tiny', monthlyQuota: 25, rateLimitRpm: 40, batchCap: 10, features: { smtp: false, webhooks: false, catch_all: false } },
      },
    }),
  );
  const env = jobsEnv(rig, db.url, {
    EMAIL_REDIS_URL: testRedisUrl(),
    EMAIL_JOBS_QUEUE: queue,
    EMAIL_PLANS_FILE: plansFile,
    EMAIL_JOBS_CHUNK_SIZE: '500',
    EMAIL_JOBS_LEASE_MS: String(LEASE_MS),
    EMAIL_JOBS_POLL_MS: '200',
    EMAIL_JOBS_WORKERS: '2',
    EMAIL_DNS_TIMEOUT_MS: '2000',
    EMAIL_LOG_LEVEL: 'warn',
    // Memory bound of each service process (the 50,000-address body is about 1.5 MB).
    NODE_OPTIONS: '--max-old-space-size=512',
  });
  const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
  const running = new Set<StartedProcess>();
  const track = async (p: Promise<StartedProcess>) => {
    const started = await p;
    running.add(started);
    return started;
  };
  // startProcess waits for the `ready` line, logged at info.
  const api = (port: number) => track(startProcess(SERVER, { ...env, EMAIL_LOG_LEVEL: 'info', EMAIL_JOBS_WORKERS: '0', EMAIL_PORT: String(port) }));
  const worker = () => track(startProcess(WORKER, { ...env, EMAIL_LOG_LEVEL: 'info' }));
  try {
    const ports = [await freePort(), await freePort()];
    await Promise.all([api(ports[0]!), api(ports[1]!)]);
    const workers = [await worker(), await worker()];
    const call = async (i: number, key: string, path: string, init: RequestInit = {}) => {
      const res = await fetch(`http://127.0.0.1:${ports[i % 2]!}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
      return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
    };

    // Rate limit and quota are shared by both API processes (Redis, PostgreSQL).
    const tiny = await admin.accounts.createAccount({ email: 'tiny@example.test', plan: 'tiny' });
    assert.ok(tiny.ok);
    const reads = await Promise.all(Array.from({ length: 60 }, (_, i) => call(i, tiny.apiKey, '/api/v1/account')));
    assert.equal(reads.filter((r) => r.status === 200).length, 40, 'the sum of 200s over both processes is the plan\'s 40 per minute');
    assert.ok(reads.filter((r) => r.status !== 200).every((r) => r.status === 429 && r.body.error === 'rate_limited' && Number(r.headers.get('retry-after')) >= 1));
    const tinyQuota = await admin.accounts.createAccount({ email: 'tiny-quota@example.test', plan: 'tiny' });
    assert.ok(tinyQuota.ok);
    const verifies = await Promise.all(Array.from({ length: 36 }, (_, i) => call(i, tinyQuota.apiKey, '/api/v1/verify-single', { method: 'POST', body: JSON.stringify({ email: `q${i}@${loadDomains()[i]!}` }) })));
    assert.equal(verifies.filter((r) => r.status === 200).length, 25, 'the quota of 25 holds across both processes');
    assert.ok(verifies.filter((r) => r.status !== 200).every((r) => r.status === 429 && r.body.error === 'quota_exceeded'));
    assert.equal(await admin.quota.used(tinyQuota.account.id), 25);

    // The 50,000-address job, submitted through API 1.
    const bulk = await admin.accounts.createAccount({ email: 'bulk@example.test', plan: 'bulk' });
    assert.ok(bulk.ok);
    const domains = loadDomains();
    const emails = Array.from({ length: ADDRESSES }, (_, i) => `user${i}@${domains[i % domains.length]!}`);
    const submitted = await call(0, bulk.apiKey, '/api/v1/jobs', { method: 'POST', body: JSON.stringify({ emails }) });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    const id = submitted.body.job_id as string;
    const chunks = () => admin.database.db.selectFrom('job_chunks').select(['idx', 'state', 'lease_token']).where('job_id', '=', id).execute();

    // SIGKILL a worker while it holds chunks, a few chunks into the job.
    let victim: { worker: StartedProcess; held: number[] } | undefined;
    for (const deadline = Date.now() + 60_000; !victim && Date.now() < deadline; await sleep(20)) {
      const rows = await chunks();
      if (rows.filter((c) => c.state === 'done').length < 5) continue;
      for (const w of workers) {
        const held = rows.filter((c) => c.state === 'leased' && c.lease_token?.startsWith(`${w.ready.worker_id as string}:`)).map((c) => c.idx);
        if (held.length && !victim) victim = { worker: w, held };
      }
    }
    assert.ok(victim, 'a worker held chunks of the job');
    await stopProcess(victim.worker.child, 'SIGKILL');
    running.delete(victim.worker);
    const killedAt = Date.now();
    const atKill = await admin.database.db.selectFrom('jobs').select(['status', 'processed']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(atKill.status, 'processing');
    assert.ok(atKill.processed < ADDRESSES, 'killed mid-job');
    await worker();

    // Polled through API 2 until it ends.
    let job: Record<string, unknown>;
    for (;;) {
      job = (await call(1, bulk.apiKey, `/api/v1/jobs/${id}`)).body;
      if (job.status !== 'queued' && job.status !== 'processing') break;
      await sleep(250);
    }
    assert.equal(job.status, 'completed', JSON.stringify(job));
    const finished = Date.now();
    const csvRes = await fetch(`http://127.0.0.1:${ports[0]!}/api/v1/jobs/${id}/results?format=csv`, { headers: { authorization: `Bearer ${bulk.apiKey}` } });
    assert.equal(csvRes.status, 200);
    const rows = parseCsv(await csvRes.text()).slice(1);
    assert.deepEqual(rows.map((r) => r[0]), emails, 'every address once, in input order');
    const tally = { valid: 0, invalid: 0, risky: 0, unknown: 0 };
    for (const r of rows) tally[r[2] as keyof typeof tally] += 1;
    assert.deepEqual([job.processed, job.valid, job.invalid, job.risky, job.unknown], [ADDRESSES, tally.valid, tally.invalid, tally.risky, tally.unknown], 'counters equal the stored rows');
    assert.equal(await admin.quota.used(bulk.account.id), ADDRESSES, 'charged once per address');
    assert.deepEqual(await admin.database.db.selectFrom('quota_reservations').select(['units', 'refunded']).where('account_id', '=', bulk.account.id).execute(), [{ units: ADDRESSES, refunded: 0 }]);
    assert.deepEqual(await admin.database.db.selectFrom('events').select('type').where('account_id', '=', bulk.account.id).execute(), [{ type: 'job.completed' }]);
    assert.ok((await chunks()).every((c) => c.state === 'done' && c.lease_token === null));
    assert.ok(finished - killedAt >= LEASE_MS - 500, 'the killed worker\'s chunks waited out their lease');
    for (const p of running) assert.ok([0, null].includes(await stopProcess(p.child, 'SIGTERM')), 'graceful exit');
    running.clear();
  } finally {
    await Promise.all([...running].map((p) => stopProcess(p.child, 'SIGKILL')));
    await admin.close();
    const redis = new Redis(testRedisUrl());
    const keys = await redis.keys(`bull:${queue}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
    await rig.release();
  }
});
