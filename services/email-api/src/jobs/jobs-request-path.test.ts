import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore } from '@mailconv/platform';
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
