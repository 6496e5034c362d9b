import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends } from '@mailconv/platform/testing';
import { D, startCountingRelay, useRig } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from '../app.js';
import { loadEmailConfig } from '../config.js';
import { EMAIL_MIGRATIONS } from '../db/migrations.js';
import type { EmailTables } from '../db/schema.js';
import { jobsEnv } from './jobs.test-support.js';

// Issue 23: a bulk job with SMTP probing keeps several chunks in flight per worker, and
// the provider limits set in EMAIL_SMTP_PROVIDER_LIMITS hold over all of them. Seen from
// the server's side: a counting relay in front of the rig's Microsoft 365 peer.
for (const backend of testBackends()) {
  test(`an SMTP job works several chunks at once within the provider's limits (${backend})`, { timeout: 90_000 }, async () => {
    const rig = await useRig();
    const relay = await startCountingRelay(rig.hosts.secondRcpt452, rig.smtpPort);
    const db = await createTestDatabase(backend);
    // One worker slot, chunks of 10 addresses (2 lanes each, 5 recipients a session): the
    // slot holds several chunks at once, and their sessions stay within the provider's 3.
    const config = loadEmailConfig(
      jobsEnv(rig, db.url, {
        EMAIL_JOBS_WORKERS: '1',
        EMAIL_SMTP_PORT: String(relay.port),
        EMAIL_SMTP_PROVIDER_LIMITS: JSON.stringify({ microsoft365: { sessions: 3, sessionsPerHost: 6, recipientsPerSession: 5 } }),
      }),
    );
    const app = await buildApp(config);
    const admin = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    try {
      const account = await admin.accounts.createAccount({ email: 'polite@example.test', plan: 'growth' });
      assert.ok(account.ok);
      const auth = { authorization: `Bearer ${account.apiKey}` };
      // 4 chunks of 10: alice and bob exist at the peer, the others are unknown users.
      const list = Array.from({ length: 40 }, (_, i) => `${i % 10 === 0 ? 'alice' : i % 10 === 5 ? 'bob' : `nobody${i}`}@${D.m365}`);
      const submit = await app.inject({ method: 'POST', url: '/api/v1/jobs', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ emails: list, use_smtp: true }) });
      assert.equal(submit.statusCode, 202, submit.body);
      const id = (submit.json() as { job_id: string }).job_id;
      let status: { status: string; valid: number; invalid: number };
      let leasedAtOnce = 0;
      for (;;) {
        const leased = await admin.database.db.selectFrom('job_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('job_id', '=', id).where('state', '=', 'leased').executeTakeFirstOrThrow();
        leasedAtOnce = Math.max(leasedAtOnce, Number(leased.n));
        status = (await app.inject({ method: 'GET', url: `/api/v1/jobs/${id}`, headers: auth })).json();
        if (!['queued', 'processing'].includes(status.status)) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(leasedAtOnce > 1, `one worker slot held ${leasedAtOnce} chunk(s) at once`);
      assert.deepEqual([status.status, status.valid, status.invalid], ['completed', 8, 32]);
      assert.equal(relay.peak, 3, `the peer saw at most ${relay.peak} sessions at once (the provider's limit is 3)`);
      assert.ok(relay.connections.every((c) => c.rcpts <= 5), `RCPTs per session: ${relay.connections.map((c) => c.rcpts).join(',')}`);
    } finally {
      await app.close();
      await admin.close();
      await db.drop();
      await relay.close();
      await rig.release();
    }
  });
}
