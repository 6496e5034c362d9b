import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServiceCore, type ServiceApp } from '@mailconv/platform';
import { createTestDatabase, testBackends, TestReceiver } from '@mailconv/platform/testing';
import { D, WEBHOOK_HOSTS, useRig } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { jobsEnv } from './jobs/jobs.test-support.js';
import { boundedProviderLabels } from './metrics.js';

/** One sample's value from Prometheus text (0 when the series is absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^([^{ ]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return 0;
}

// Issue #15: neither service had /metrics.
for (const backend of testBackends()) {
  test(`email /metrics: requests by route pattern, verifications, job backlog, lease expiries, quota refusals, token (${backend})`, async () => {
    const rig = await useRig();
    const db = await createTestDatabase(backend);
    const token = 'metrics-token-0123456789';
    // No job worker here: the submitted chunks stay in the backlog.
    const env = jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '0', EMAIL_METRICS_TOKEN: token });
    const app = await buildApp(loadEmailConfig(env));
    const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    try {
      const scrape = async () => {
        const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.statusCode, 200);
        assert.match(res.headers['content-type'] as string, /^text\/plain/);
        return res.body;
      };
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${token}x` }]) {
        const denied = await app.inject({ method: 'GET', url: '/metrics', headers });
        assert.deepEqual([denied.statusCode, denied.json().error], [401, 'unauthorized']);
      }
      const growth = await admin.accounts.createAccount({ email: 'm@example.test', plan: 'growth' });
      const free = await admin.accounts.createAccount({ email: 'f@example.test', plan: 'free' });
      assert.ok(growth.ok && free.ok);
      const call = (key: string, method: 'GET' | 'POST', url: string, payload?: unknown) =>
        app.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload: JSON.stringify(payload) } : {}) });

      const before = await scrape();
      assert.equal(sample(before, 'email_job_backlog_addresses'), 0);

      // A verification on the rig's DNS: counted by its status and reason.
      const one = await call(growth.apiKey, 'POST', '/api/v1/verify-single', { email: `someone@${D.valid}` });
      assert.equal(one.statusCode, 200, one.body);
      const { status, reason } = one.json() as { status: string; reason: string | null };
      assert.ok(status, one.body);

      // A job of 30 addresses in chunks of 10, and one refused for quota (free: 500 a month).
      const job = await call(growth.apiKey, 'POST', '/api/v1/jobs', { emails: Array.from({ length: 30 }, (_, i) => `u${i}@${D.valid}`) });
      assert.equal(job.statusCode, 202, job.body);
      const id = job.json().job_id as string;
      assert.equal((await call(growth.apiKey, 'GET', `/api/v1/jobs/${id}`)).statusCode, 200);
      const over = await call(free.apiKey, 'POST', '/api/v1/jobs', { emails: Array.from({ length: 501 }, (_, i) => `u${i}@${D.valid}`) });
      assert.equal(over.statusCode, 402);
      // One chunk claimed by a worker that died: its lease ran out.
      await admin.database.db.updateTable('job_chunks').set({ state: 'leased', lease_token: 'dead', lease_until: '2000-01-01T00:00:00.000Z' }).where('job_id', '=', id).where('idx', '=', 0).execute();

      const after = await scrape();
      assert.equal(sample(after, 'email_verifications_total', { status, reason: reason ?? 'none' }) - sample(before, 'email_verifications_total', { status, reason: reason ?? 'none' }), 1);
      assert.equal(sample(after, 'email_job_backlog_addresses'), 30);
      assert.equal(sample(after, 'email_job_chunks', { state: 'pending' }), 2);
      assert.equal(sample(after, 'email_job_chunks', { state: 'leased' }), 1);
      assert.equal(sample(after, 'email_job_leases_expired'), 1);
      assert.equal(sample(after, 'quota_refusals_total', { route: '/api/v1/jobs' }), 1);
      assert.equal(sample(after, 'http_requests_total', { method: 'POST', route: '/api/v1/jobs', status: '202' }), 1);
      assert.equal(sample(after, 'http_requests_total', { method: 'GET', route: '/api/v1/jobs/:job_id', status: '200' }), 1);
      assert.equal(sample(after, 'http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/verify-single', status: '200' }), 1);
      assert.ok(!after.includes(id), 'route patterns, never raw URLs');
      assert.ok(sample(after, 'process_resident_memory_bytes') > 0, 'the process’s default metrics');
    } finally {
      await app.close();
      await admin.close();
      await db.drop();
      await rig.release();
    }
  });
}

test('SMTP probe provider labels stay bounded: known providers always, then at most the limit of MX domains, then other', () => {
  const label = boundedProviderLabels(2);
  assert.equal(label(null, 'mx.a.example'), 'a.example');
  assert.equal(label(null, 'mx.b.example'), 'b.example');
  assert.equal(label(null, 'mx.c.example'), 'other');
  assert.equal(label(null, 'mx2.a.example'), 'a.example', 'a domain already seen keeps its label');
  assert.equal(label('google', 'aspmx.l.google.com'), 'google');
  assert.equal(label(null, 'mta5.am0.yahoodns.net'), 'yahoo');
  assert.equal(label(null, null), 'none');
});

for (const backend of testBackends()) {
  test(`email /metrics: SMTP probes per provider, job throughput, lease expiries, finished jobs, webhook deliveries by outcome (${backend})`, async () => {
    const rig = await useRig();
    const db = await createTestDatabase(backend);
    const receiver = await TestReceiver.start();
    const env = (extra: Record<string, string>) =>
      jobsEnv(rig, db.url, {
        EMAIL_WEBHOOKS_ALLOW_INSECURE: 'true',
        EMAIL_WEBHOOKS_CA_FILE: receiver.caFile,
        EMAIL_WEBHOOKS_RETRY_SCHEDULE: '200ms',
        EMAIL_WEBHOOKS_TIMEOUT_MS: '800',
        EMAIL_WEBHOOKS_POLL_MS: '50',
        ...extra,
      });
    const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env({})).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    const apps: ServiceApp[] = [];
    const start = async (extra: Record<string, string>) => {
      const app = await buildApp(loadEmailConfig(env(extra)), { webhookDnsServers: [rig.dnsServer] });
      apps.push(app);
      await app.ready();
      return app;
    };
    try {
      // First process: no worker, no dispatcher; it takes the job and the webhooks.
      const first = await start({ EMAIL_JOBS_WORKERS: '0', EMAIL_WEBHOOKS_CONCURRENCY: '0' });
      const acct = await admin.accounts.createAccount({ email: 'w@example.test', plan: 'scale' });
      assert.ok(acct.ok);
      const call = (app: ServiceApp, method: 'GET' | 'POST', url: string, payload?: unknown) =>
        app.inject({ method, url, headers: { authorization: `Bearer ${acct.apiKey}`, ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload: JSON.stringify(payload) } : {}) });
      receiver.behave('/fail', () => 500);
      for (const path of ['/ok', '/fail']) {
        const res = await call(first, 'POST', '/api/dashboard/webhooks', { url: `https://${WEBHOOK_HOSTS.receiver}:${receiver.port}${path}`, events: 'job.completed' });
        assert.equal(res.statusCode, 200, res.body);
      }
      // 35 addresses in 4 chunks of 10: alice and bob exist at valid.test (the others are
      // unknown users); every recipient is accepted at the Yahoo-like domain; the last chunk
      // is greylisted, retried twice (not lease expiries: no worker died), then final.
      const emails = [
        ...Array.from({ length: 15 }, (_, i) => (i < 2 ? ['alice', 'bob'][i] : `nobody${i}`) + `@${D.valid}`),
        ...Array.from({ length: 15 }, (_, i) => `u${i}@${D.yahoo}`),
        ...Array.from({ length: 5 }, (_, i) => `g${i}@${D.greylist}`),
      ];
      const job = await call(first, 'POST', '/api/v1/jobs', { emails, use_smtp: true });
      assert.equal(job.statusCode, 202, job.body);
      const id = job.json().job_id as string;
      // Its first chunk was claimed by a worker that died: the lease ran out.
      await admin.database.db.updateTable('job_chunks').set({ state: 'leased', lease_token: 'dead', lease_until: '2000-01-01T00:00:00.000Z' }).where('job_id', '=', id).where('idx', '=', 0).execute();

      // Second process: a worker and a dispatcher; it takes the dead worker's chunk over.
      const second = await start({ EMAIL_JOBS_WORKERS: '1' });
      for (let status = ''; status !== 'completed'; await sleep(50)) {
        status = (await call(second, 'GET', `/api/v1/jobs/${id}`)).json().status as string;
        assert.ok(status === 'queued' || status === 'processing' || status === 'completed', status);
      }
      await receiver.waitFor('/ok', 1);
      await receiver.waitFor('/fail', 2);
      // The dead-letter is recorded right after the second answer.
      let text = '';
      for (let i = 0; i < 100; i++) {
        text = (await second.inject({ method: 'GET', url: '/metrics' })).body;
        if (sample(text, 'email_webhook_deliveries_total', { outcome: 'dead' }) === 1) break;
        await sleep(50);
      }
      assert.equal(sample(text, 'email_job_lease_expiries_total'), 1);
      assert.equal(sample(text, 'email_job_chunks_stored_total'), 4);
      assert.equal(sample(text, 'email_job_addresses_processed_total'), 35);
      // greylist.test's MX is mx.valid.test: the provider label is the MX host's domain.
      assert.equal(sample(text, 'email_smtp_probes_total', { provider: 'valid.test', outcome: 'greylisted' }), 15, 'three attempts of 5 addresses');
      assert.equal(sample(text, 'email_jobs_finished_total', { status: 'completed' }), 1);
      assert.equal(sample(text, 'email_smtp_probes_total', { provider: 'valid.test', outcome: 'accepted' }), 2);
      assert.equal(sample(text, 'email_smtp_probes_total', { provider: 'valid.test', outcome: 'user_unknown' }), 13);
      const yahoo = text.split('\n').filter((l) => l.startsWith('email_smtp_probes_total{provider="yahoo"'));
      assert.equal(yahoo.reduce((n, l) => n + Number(l.split(' ').at(-1)), 0), 15, yahoo.join('\n'));
      assert.equal(sample(text, 'email_webhook_deliveries_total', { outcome: 'delivered' }), 1);
      assert.equal(sample(text, 'email_webhook_deliveries_total', { outcome: 'retry' }), 1);
      assert.equal(sample(text, 'email_webhook_deliveries_total', { outcome: 'dead' }), 1);
      assert.equal(sample(text, 'email_webhook_delivery_duration_seconds_count', { outcome: 'delivered' }), 1);
      assert.equal(sample(text, 'email_webhook_deliveries_pending'), 0);
      assert.equal(sample(text, 'email_job_backlog_addresses'), 0);
      // The first process did none of that work: its counters are its own.
      const firstText = (await first.inject({ method: 'GET', url: '/metrics' })).body;
      assert.equal(sample(firstText, 'email_job_addresses_processed_total'), 0);
      assert.equal(sample(firstText, 'email_smtp_probes_total', { provider: 'valid.test', outcome: 'accepted' }), 0);
    } finally {
      for (const app of apps) await app.close();
      await admin.close();
      await db.drop();
      await receiver.close();
      await rig.release();
    }
  });
}
