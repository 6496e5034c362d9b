import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId, openServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends } from '@mailconv/platform/testing';
import { D, useRig } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from '../app.js';
import { loadEmailConfig } from '../config.js';
import { EMAIL_MIGRATIONS } from '../db/migrations.js';
import type { EmailTables } from '../db/schema.js';
import { CHUNK_INSERT_BATCH } from '../repositories/jobs.repository.js';
import { jobsEnv } from './jobs.test-support.js';

// Issue #15: on SQLite a 30,000-address job's chunk writes held up a DELETE for about 5 s —
// the whole list was written in one transaction, and the process has one SQLite connection,
// so every other query of the process waited for its commit. Not a timing test: a second
// connection counts the job's stored chunks each time a request-path write is answered.
// While the list is written in one transaction that count is only ever 0 or all of them;
// written a few chunks per transaction, requests are answered in between.
for (const backend of testBackends()) {
  test(`a job's chunk writes do not hold up request-path writes: DELETEs are answered while the list is being stored (${backend})`, { timeout: 120_000 }, async () => {
    const rig = await useRig();
    const db = await createTestDatabase(backend);
    // No worker: only the submit writes; chunks of 10 make 2,000 chunks of 20,000 addresses.
    const config = loadEmailConfig(jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '0' }));
    const app = await buildApp(config);
    const admin = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    try {
      const acct = await admin.accounts.createAccount({ email: 'rp@example.test', plan: 'scale' });
      assert.ok(acct.ok);
      const call = (method: 'POST' | 'DELETE', url: string, payload?: unknown) =>
        app.inject({ method, url, headers: { authorization: `Bearer ${acct.apiKey}`, ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload: JSON.stringify(payload) } : {}) });
      const total = 20_000;
      const chunkCount = total / config.jobs.chunkSize;
      assert.ok(chunkCount >= 20 * CHUNK_INSERT_BATCH, 'enough chunks for many write transactions');
      const emails = Array.from({ length: total }, (_, i) => `u${i}@${D.valid}`);
      const stored = async () => Number((await admin.database.db.selectFrom('job_chunks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst())?.n ?? 0);

      let answered = false;
      const submitting = call('POST', '/api/v1/jobs', { emails }).finally(() => (answered = true));
      // Request-path writes, one after another, until the submit is answered: create an API
      // key, revoke it, and note how much of the list was stored when the revoke answered.
      const seen: number[] = [];
      while (!answered) {
        const created = await call('POST', '/api/dashboard/api-keys', { name: 'probe' });
        assert.equal(created.statusCode, 200, created.body);
        const revoked = await call('DELETE', `/api/dashboard/api-keys?id=${created.json().id as string}`);
        assert.equal(revoked.statusCode, 200, revoked.body);
        seen.push(await stored());
      }
      const submitted = await submitting;
      assert.equal(submitted.statusCode, 202, submitted.body);
      assert.equal(await stored(), chunkCount);
      const midway = seen.filter((n) => n > 0 && n < chunkCount);
      assert.ok(midway.length >= 2, `request-path writes answered while the list was partly stored: ${midway.length} (chunks stored at each answer: ${seen.join(', ')})`);
    } finally {
      await app.close();
      await admin.close();
      await db.drop();
      await rig.release();
    }
  });
}

for (const backend of testBackends()) {
  test(`a job still being stored is invisible to the API; one left half-stored by a dead process is deleted by an idle worker (${backend})`, { timeout: 60_000 }, async () => {
    const rig = await useRig();
    const db = await createTestDatabase(backend);
    const config = loadEmailConfig(jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '1' }));
    const admin = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    const acct = await admin.accounts.createAccount({ email: 'st@example.test', plan: 'scale' });
    assert.ok(acct.ok);
    // What a submit leaves when its process dies between the chunk writes and the reservation.
    const staged = async (id: string, createdAt: Date) => {
      await admin.database.db
        .insertInto('jobs')
        .values({ id, account_id: acct.account.id, status: 'storing', total: 2, processed: 0, valid_count: 0, invalid_count: 0, risky_count: 0, unknown_count: 0, use_smtp: 0, catch_all: 0, chunk_size: 10, chunk_count: 1, reservation_id: '', error: null, created_at: createdAt.toISOString(), started_at: null, completed_at: null })
        .execute();
      await admin.database.db.insertInto('job_chunks').values({ job_id: id, idx: 0, size: 2, emails: JSON.stringify([`a@${D.valid}`, `b@${D.valid}`]), state: 'pending', attempts: 0, lease_token: null, lease_until: null, results: null }).execute();
    };
    const abandoned = newId('job', Date.now() - 2 * 3_600_000);
    const inflight = newId('job', Date.now());
    await staged(abandoned, new Date(Date.now() - 2 * 3_600_000));
    await staged(inflight, new Date());
    const app = await buildApp(config);
    try {
      await app.ready();
      const get = (url: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${acct.apiKey}` } });
      assert.deepEqual((await get('/api/v1/jobs')).json().jobs, []);
      for (const id of [abandoned, inflight]) assert.equal((await get(`/api/v1/jobs/${id}`)).statusCode, 404);
      const left = async () => (await admin.database.db.selectFrom('jobs').select('id').orderBy('id').execute()).map((r) => r.id);
      // The worker sweeps when it first finds nothing to do; the test's time-out bounds the wait.
      while ((await left()).includes(abandoned)) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(await left(), [inflight], 'a submit still writing is left alone');
      assert.equal(Number((await admin.database.db.selectFrom('job_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('job_id', '=', abandoned).executeTakeFirst())?.n), 0);
      assert.equal(await admin.quota.used(acct.account.id), 0, 'nothing was charged');
    } finally {
      await app.close();
      await admin.close();
      await db.drop();
      await rig.release();
    }
  });
}
