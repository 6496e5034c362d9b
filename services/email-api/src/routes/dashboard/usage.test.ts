import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { D, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from '../../app.js';
import { loadEmailConfig } from '../../config.js';
import { EMAIL_MIGRATIONS } from '../../db/migrations.js';
import type { EmailTables } from '../../db/schema.js';

// The third day of a month: the answer lists the 1st to the 3rd.
const NOW = new Date('2026-11-03T10:00:00Z');

type Usage = { period_start: string; period_end: string; days: Array<{ date: string; verifications: number }> };

for (const backend of testBackends()) {
  describe(`GET /api/dashboard/usage on ${backend}`, () => {
    let answers: RecordedAnswer[] = [];
    let rig: RigHandle;
    let drop: () => Promise<void>;
    let app: ServiceApp;
    let admin: ServiceCore<EmailTables>;
    const keys: Record<string, string> = {};

    before(async () => {
      rig = await useRig();
      let url: string;
      ({ url, drop } = await createTestDatabase(backend));
      const env = { EMAIL_DATABASE_URL: url, EMAIL_LOG_LEVEL: 'silent', EMAIL_DNS_SERVERS: rig.dnsServer, EMAIL_DNS_TIMEOUT_MS: '300', EMAIL_JOBS_CHUNK_SIZE: '10', EMAIL_JOBS_POLL_MS: '20', EMAIL_WEBHOOKS_CONCURRENCY: '0' };
      app = await buildApp(loadEmailConfig(env), { clock: () => NOW });
      answers = recordAnswers(app);
      await app.ready();
      admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      for (const name of ['ada', 'bob']) {
        const r = await admin.accounts.createAccount({ email: `${name}@example.test`, plan: 'starter' });
        assert.ok(r.ok);
        keys[name] = r.apiKey;
      }
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
      await rig.release();
    });

    const call = (method: 'GET' | 'POST', key: string, url: string, payload?: unknown) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload: JSON.stringify(payload) } : {}) });

    /** The usage answer once today's count reaches `n` (singles and batches are written within about a second). */
    async function usageReaching(key: string, n: number): Promise<Usage> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const res = await call('GET', key, '/api/dashboard/usage');
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json() as Usage;
        if (body.days.at(-1)!.verifications >= n || Date.now() > deadline) return body;
        await sleep(100);
      }
    }

    test('singles, a batch and a job are counted on their UTC day; every day of the month so far is listed', async () => {
      for (let i = 0; i < 2; i++) assert.equal((await call('POST', keys.ada!, '/api/v1/verify-single', { email: `alice@${D.valid}` })).statusCode, 200);
      assert.equal((await call('POST', keys.ada!, '/api/v1/verify-batch', { emails: [`a@${D.valid}`, `b@${D.valid}`, 'not-an-address'] })).statusCode, 200);
      const job = await call('POST', keys.ada!, '/api/v1/jobs', { emails: Array.from({ length: 25 }, (_, i) => `u${i}@${D.valid}`) });
      assert.equal(job.statusCode, 202, job.body);
      const id = job.json().job_id as string;
      const deadline = Date.now() + 20_000;
      while ((await call('GET', keys.ada!, `/api/v1/jobs/${id}`)).json().status !== 'completed') {
        assert.ok(Date.now() < deadline, 'job completes');
        await sleep(50);
      }
      const usage = await usageReaching(keys.ada!, 30);
      assert.equal(usage.period_start, '2026-11-01T00:00:00.000Z');
      assert.equal(usage.period_end, '2026-12-01T00:00:00.000Z');
      assert.deepEqual(usage.days, [
        { date: '2026-11-01', verifications: 0 },
        { date: '2026-11-02', verifications: 0 },
        { date: '2026-11-03', verifications: 2 + 3 + 25 },
      ]);
    });

    test('another account sees only its own days; no key is 401; answers match the document', async () => {
      const other = await usageReaching(keys.bob!, 0);
      assert.deepEqual(other.days.map((d) => d.verifications), [0, 0, 0]);
      const anon = await app.inject({ method: 'GET', url: '/api/dashboard/usage' });
      assert.equal(anon.statusCode, 401);
      assert.equal(anon.json().error, 'unauthorized');
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.has('GET /api/dashboard/usage'), [...covered].join());
    });
  });
}
