// Issue 23: SMTP outcomes reused within EMAIL_SMTP_CACHE_TTL (decision 28), per account,
// shared by every process on the database, never holding an address, charged as usual.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends } from '@mailconv/platform/testing';
import { D, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { jobsEnv } from './jobs/jobs.test-support.js';

/** One counter's value from Prometheus text (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

for (const backend of testBackends()) {
  describe(`SMTP outcome reuse on ${backend}, against the rig`, { timeout: 120_000 }, () => {
    const withRig = async (fn: (ctx: { rig: RigHandle; url: string; admin: ServiceCore<EmailTables>; start: (extra?: Record<string, string>, clock?: () => Date) => Promise<ServiceApp> }) => Promise<void>) => {
      const rig = await useRig();
      const db = await createTestDatabase(backend);
      const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(jobsEnv(rig, db.url)).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      const apps: ServiceApp[] = [];
      try {
        await fn({
          rig,
          url: db.url,
          admin,
          start: async (extra = {}, clock) => {
            const app = await buildApp(loadEmailConfig(jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '0', ...extra })), clock ? { clock } : {});
            apps.push(app);
            return app;
          },
        });
      } finally {
        for (const app of apps) await app.close();
        await admin.close();
        await db.drop();
        await rig.release();
      }
    };
    const account = async (admin: ServiceCore<EmailTables>, email: string) => {
      const r = await admin.accounts.createAccount({ email, plan: 'growth' });
      assert.ok(r.ok);
      return r;
    };
    const verify = async (app: ServiceApp, key: string, email: string, useSmtp = true) => {
      const res = await app.inject({ method: 'POST', url: '/api/v1/verify-single', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify({ email, use_smtp: useSmtp }) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as Record<string, unknown> & { status: string; reason: string | null; cached?: boolean; checks: Record<string, unknown>; quota: { used_this_month: number } };
    };
    const metrics = async (app: ServiceApp) => (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const probes = async (app: ServiceApp, outcome: string) => sample(await metrics(app), 'email_smtp_probes_total', { outcome });

    test('a definite outcome is reused for the same account (cached: true, no probe, charged), not for another account; transient ones are probed again; the table holds no address', async () => {
      await withRig(async ({ admin, start }) => {
        const app = await start();
        const a = await account(admin, 'a@example.test');
        const b = await account(admin, 'b@example.test');

        const first = await verify(app, a.apiKey, `alice@${D.valid}`);
        assert.equal(first.status, 'valid');
        assert.equal(first.checks.smtp, true);
        assert.equal('cached' in first, false, 'a fresh probe carries no cached field');
        assert.equal(await probes(app, 'accepted'), 1);

        const again = await verify(app, a.apiKey, `alice@${D.valid}`);
        assert.equal(again.cached, true);
        const { cached: _c, quota: q2, ...rest2 } = again;
        const { quota: q1, ...rest1 } = first;
        assert.deepEqual(rest2, rest1, 'the same verdict, score and checks');
        assert.equal(q2.used_this_month, q1.used_this_month + 1, 'charged like any verification');
        assert.equal(await probes(app, 'accepted'), 1, 'no second probe');

        // Another account does not learn that the address was checked: it probes.
        const other = await verify(app, b.apiKey, `alice@${D.valid}`);
        assert.equal('cached' in other, false);
        assert.equal(await probes(app, 'accepted'), 2);

        // A rejection is a fact about the mailbox: reused.
        assert.equal((await verify(app, a.apiKey, `nobody@${D.valid}`)).status, 'invalid');
        const rejected = await verify(app, a.apiKey, `nobody@${D.valid}`);
        assert.deepEqual([rejected.status, rejected.reason, rejected.cached], ['invalid', 'user_unknown', true]);
        assert.equal(await probes(app, 'user_unknown'), 1);

        // Greylisting says something about this moment: probed every time.
        await verify(app, a.apiKey, `g@${D.greylist}`);
        const grey = await verify(app, a.apiKey, `g@${D.greylist}`);
        assert.equal('cached' in grey, false);
        assert.equal(await probes(app, 'greylisted'), 2);

        // Without use_smtp nothing is looked up or reused.
        assert.equal('cached' in (await verify(app, a.apiKey, `alice@${D.valid}`, false)), false);

        const text = await metrics(app);
        assert.equal(sample(text, 'email_smtp_cache_lookups_total', { result: 'hit' }), 2);
        assert.equal(sample(text, 'email_smtp_cache_lookups_total', { result: 'miss' }), 5);

        // What is stored: hashed keys, outcomes without reply text, no address anywhere.
        let rows: Array<{ key: string; outcome: string; expires_at: string }> = [];
        for (let i = 0; i < 50 && rows.length < 3; i++, await sleep(50)) rows = await admin.database.db.selectFrom('smtp_outcomes').selectAll().execute();
        assert.equal(rows.length, 3, 'alice for a, alice for b, nobody for a');
        for (const row of rows) {
          assert.doesNotMatch(`${row.key} ${row.outcome}`, /alice|nobody|@/, "the MX host may be kept, never the address");
          assert.equal('text' in JSON.parse(row.outcome), false);
        }
      });
    });

    test('shared by every process on the database; expires after EMAIL_SMTP_CACHE_TTL; 0 turns it off; a batch reuses per address', async () => {
      await withRig(async ({ admin, start }) => {
        let now = Date.now();
        const clock = () => new Date(now);
        const one = await start({ EMAIL_SMTP_CACHE_TTL: '1h', EMAIL_JOBS_WORKERS: '1' }, clock);
        const two = await start({ EMAIL_SMTP_CACHE_TTL: '1h' }, clock);
        const off = await start({ EMAIL_SMTP_CACHE_TTL: '0' }, clock);
        const a = await account(admin, 'a@example.test');

        await verify(one, a.apiKey, `bob@${D.valid}`);
        // The first process writes its outcomes within a fraction of a second; the second reads them.
        let stored = 0;
        for (let i = 0; i < 40 && stored === 0; i++, await sleep(50)) stored = (await admin.database.db.selectFrom('smtp_outcomes').select('key').execute()).length;
        assert.equal(stored, 1);
        const seen = await verify(two, a.apiKey, `bob@${D.valid}`);
        assert.equal(seen.cached, true, 'the second process reused the first one’s probe');
        assert.equal(await probes(two, 'accepted'), 0, 'the second process never probed bob');

        // TTL 0: this process always probes, even with a stored outcome.
        assert.equal('cached' in (await verify(off, a.apiKey, `bob@${D.valid}`)), false);
        assert.equal(await probes(off, 'accepted'), 1);

        // A batch: each address on its own.
        const batch = await one.inject({
          method: 'POST',
          url: '/api/v1/verify-batch',
          headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ emails: [`bob@${D.valid}`, `alice@${D.valid}`], use_smtp: true }),
        });
        assert.equal(batch.statusCode, 200, batch.body);
        const results = batch.json().results as Array<{ cached?: boolean; status: string }>;
        assert.deepEqual(results.map((r) => [r.status, r.cached ?? false]), [['valid', true], ['valid', false]]);

        // A bulk job of the same account reuses them too.
        const auth = { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' };
        const job = await one.inject({ method: 'POST', url: '/api/v1/jobs', headers: auth, payload: JSON.stringify({ emails: [`alice@${D.valid}`, `bob@${D.valid}`], use_smtp: true }) });
        assert.equal(job.statusCode, 202, job.body);
        let status = '';
        for (let i = 0; i < 200 && status !== 'completed'; i++, await sleep(50)) status = (await one.inject({ method: 'GET', url: `/api/v1/jobs/${job.json().job_id}`, headers: auth })).json().status;
        assert.equal(status, 'completed');
        assert.equal(await probes(one, 'accepted'), 2, 'the job probed nothing: bob and alice were known');
        assert.equal(sample(await metrics(one), 'email_smtp_cache_lookups_total', { result: 'hit' }), 3);

        // An hour and a second later the outcome is stale: probed again.
        now += 3_601_000;
        const later = await verify(one, a.apiKey, `bob@${D.valid}`);
        assert.equal('cached' in later, false);
        assert.equal(await probes(one, 'accepted'), 3, 'bob, alice, bob again');
      });
    });
  });
}
