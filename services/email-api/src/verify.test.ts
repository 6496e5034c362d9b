import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { D, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX, engineFromConfig } from './app.js';
import { loadEmailConfig, type EmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';

const json = { 'content-type': 'application/json' };

for (const backend of testBackends()) {
  describe(`verification endpoints on ${backend}, against the loopback DNS/SMTP rig`, () => {
    let answers: RecordedAnswer[] = [];
    let rig: RigHandle;
    let drop: () => Promise<void>;
    let config: EmailConfig;
    let app: ServiceApp;
    let admin: ServiceCore<EmailTables>;
    const keys: Record<string, string> = {};
    const ids: Record<string, string> = {};

    before(async () => {
      rig = await useRig();
      const db = await createTestDatabase(backend);
      drop = db.drop;
      config = loadEmailConfig({
        EMAIL_DATABASE_URL: db.url,
        EMAIL_LOG_LEVEL: 'silent',
        EMAIL_DNS_SERVERS: rig.dnsServer,
        EMAIL_SMTP_HELO: 'probe.mailconv.test',
        EMAIL_SMTP_FROM: 'probe@mailconv.test',
        EMAIL_SMTP_ALLOW_PRIVATE: 'true',
        // Probes may reach the rig's loopback peers and nothing else.
        EMAIL_SMTP_RESTRICT_TO: '127.0.0.0/8',
        EMAIL_SMTP_PORT: String(rig.smtpPort),
        EMAIL_PUBLIC_SMTP_PER_DAY: '2',
        EMAIL_TRUST_PROXY: 'loopback',
        // Webhook deliveries (none are set up here) could reach loopback only.
        EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
      });
      app = await buildApp(config);
      answers = recordAnswers(app);
      admin = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      for (const plan of ['free', 'starter', 'growth', 'scale']) {
        const r = await admin.accounts.createAccount({ email: `${plan}@example.test`, plan });
        assert.ok(r.ok);
        keys[plan] = r.apiKey;
        ids[plan] = r.account.id;
      }
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
      await rig.release();
    });

    const post = (url: string, key: string | null, payload: unknown, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url, headers: { ...json, ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers }, payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload) });
    const used = (plan: string) => admin.quota.used(ids[plan]!);

    test('verify-single: a deliverable address, charged one unit, quota after the charge', async () => {
      const res = await post('/api/v1/verify-single', keys.starter!, { email: `Alice@${D.valid}` });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.success, true);
      assert.equal(body.email, `Alice@${D.valid}`);
      assert.equal(body.normalized, `alice@${D.valid}`);
      assert.equal(body.status, 'valid');
      assert.equal(body.is_valid, true);
      assert.equal(body.reason, null);
      assert.equal(body.checks.dns, true);
      assert.equal(body.checks.smtp, null, 'no probe without use_smtp');
      assert.equal(body.checks.catch_all, null);
      assert.deepEqual(body.checks.mx, { count: 1, providers: [], grade: 'C' });
      assert.deepEqual(body.quota, { limit: 10_000, used_this_month: 1, remaining: 9_999 });
      assert.equal(await used('starter'), 1);
    });

    test('verify-single: DNS verdicts from the rig', async () => {
      const cases: Array<[string, string, string | null]> = [
        [`bob@${D.nxdomain}`, 'invalid', 'domain_not_found'],
        [`bob@${D.nullMx}`, 'invalid', 'domain_no_mx'],
        [`bob@${D.noMail}`, 'invalid', 'domain_no_mx'],
        // MX records whose hosts do not exist: no mail host (RFC 5321 §5.1), without an SMTP attempt.
        [`bob@${D.mxNoAddress}`, 'invalid', 'domain_no_mx'],
        [`bob@${D.servfail}`, 'unknown', 'dns_error'],
        [`bob@${D.aOnly}`, 'valid', null],
        ['not an address', 'invalid', 'invalid_syntax'],
      ];
      for (const [email, status, reason] of cases) {
        const body = (await post('/api/v1/verify-single', keys.scale!, { email })).json();
        assert.equal(body.status, status, email);
        assert.equal(body.reason, reason, email);
      }
      // Asked with a probe too: answered from DNS, no session opened, no time-out waited for.
      const started = performance.now();
      const probed = (await post('/api/v1/verify-single', keys.scale!, { email: `bob@${D.mxNoAddress}`, use_smtp: true })).json();
      assert.deepEqual([probed.status, probed.reason, probed.checks.smtp, probed.checks.dns], ['invalid', 'domain_no_mx', null, false]);
      assert.ok(performance.now() - started < 2000, 'no connect attempts were waited out');
    });

    test('verify-single with use_smtp: mailbox verdicts; catch-all only on plans with the feature', async () => {
      const probe = async (plan: string, email: string) => (await post('/api/v1/verify-single', keys[plan]!, { email, use_smtp: true })).json();
      const alice = await probe('starter', `alice@${D.valid}`);
      assert.equal(alice.status, 'valid');
      assert.equal(alice.checks.smtp, true);
      assert.equal(alice.checks.catch_all, null, 'starter has no catch_all feature');
      const nobody = await probe('starter', `nobody@${D.valid}`);
      assert.deepEqual([nobody.status, nobody.reason, nobody.checks.smtp], ['invalid', 'user_unknown', false]);
      const full = await probe('starter', `full@${D.valid}`);
      assert.deepEqual([full.status, full.reason], ['risky', 'mailbox_full']);
      const catchAll = await probe('growth', `anyone@${D.catchAll}`);
      assert.deepEqual([catchAll.status, catchAll.reason, catchAll.checks.catch_all], ['risky', 'catch_all', true]);
      const growthAlice = await probe('growth', `alice@${D.valid}`);
      assert.deepEqual([growthAlice.status, growthAlice.checks.catch_all], ['valid', false]);
    });

    test('use_smtp on a plan without SMTP: 403 feature_not_available, nothing charged', async () => {
      const res = await post('/api/v1/verify-single', keys.free!, { email: `alice@${D.valid}`, use_smtp: true });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().error, 'feature_not_available');
      assert.equal(await used('free'), 0);
    });

    test('bad input on verify-single: the documented 400/413/415, nothing charged, engine never reached', async () => {
      const before = await used('scale');
      const cases: Array<[unknown, number, string]> = [
        [{}, 400, 'invalid_email'],
        [{ email: 42 }, 400, 'invalid_email'],
        [{ email: '' }, 400, 'invalid_email'],
        [{ email: 'a'.repeat(5000) + '@x.test' }, 400, 'invalid_email'],
        [{ email: `a@${D.valid}`, use_smtp: 'true' }, 400, 'invalid_request'],
        [{ email: `a@${D.valid}`, extra: 1 }, 400, 'invalid_request'],
        [[`a@${D.valid}`], 400, 'invalid_request'],
        ['{"email": ', 400, 'invalid_json'],
        [Buffer.from([0x7b, 0x22, 0x65, 0x6d, 0x61, 0x69, 0x6c, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), 400, 'invalid_json'],
        [JSON.stringify({ email: 'x'.repeat(2_000_000) }), 413, 'payload_too_large'],
      ];
      for (const [payload, status, code] of cases) {
        const res = await post('/api/v1/verify-single', keys.scale!, payload);
        assert.equal(res.statusCode, status, String(payload).slice(0, 60));
        assert.equal(res.json().error, code, String(payload).slice(0, 60));
      }
      const xml = await app.inject({ method: 'POST', url: '/api/v1/verify-single', headers: { 'content-type': 'text/plain', authorization: `Bearer ${keys.scale}` }, payload: 'a@b.test' });
      assert.equal(xml.statusCode, 415);
      assert.equal(await used('scale'), before);
    });

    test('verify-batch: results in input order, summary, quota after the charge', async () => {
      const emails = [`alice@${D.valid}`, `x@${D.nxdomain}`, `bob@${D.valid}`, `info@${D.valid}`, 'bad@@x', `carol@${D.aOnly}`];
      const before = await used('growth');
      const res = await post('/api/v1/verify-batch', keys.growth!, { emails });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.success, true);
      assert.match(body.batch_id, /^batch_[0-9a-z]{26}$/);
      assert.equal(body.status, 'completed');
      assert.deepEqual(body.results.map((r: { email: string }) => r.email), emails);
      assert.deepEqual(body.results.map((r: { status: string }) => r.status), ['valid', 'invalid', 'valid', 'risky', 'invalid', 'valid']);
      assert.deepEqual({ ...body.summary, accuracy: undefined }, { total: 6, valid: 3, invalid: 2, risky: 1, unknown: 0, accuracy: undefined });
      const mean = body.results.reduce((n: number, r: { confidence: number }) => n + r.confidence, 0) / 6;
      assert.equal(body.summary.accuracy, Math.round(mean * 10) / 10);
      assert.deepEqual(body.quota, { limit: 50_000, used_this_month: before + 6, remaining: 50_000 - before - 6 });
    });

    test('verify-batch limits: plan cap, 10,001 addresses, non-array, empty entries — 400, nothing charged', async () => {
      const before = await used('free');
      const over = await post('/api/v1/verify-batch', keys.free!, { emails: Array.from({ length: 101 }, (_, i) => `u${i}@${D.valid}`) });
      assert.equal(over.statusCode, 400);
      assert.equal(over.json().field, 'emails');
      assert.match(over.json().message, /at most 100/);
      for (const payload of [{ emails: Array.from({ length: 10_001 }, (_, i) => `u${i}@${D.valid}`) }, { emails: `a@${D.valid}` }, { emails: [] }, { emails: ['a@x.test', ''] }, { emails: ['a@x.test', 7] }]) {
        const res = await post('/api/v1/verify-batch', keys.scale!, payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 80));
        assert.equal(res.json().error, 'invalid_request');
      }
      assert.equal(await used('free'), before);
    });

    test('verify-batch over the remaining quota: 429 quota_exceeded, charging nothing', async () => {
      const r = await admin.accounts.createAccount({ email: 'tight@example.test', plan: 'free' });
      assert.ok(r.ok);
      await admin.quota.charge(r.account.id, 450, 500);
      const res = await post('/api/v1/verify-batch', r.apiKey, { emails: Array.from({ length: 60 }, (_, i) => `u${i}@${D.valid}`) });
      assert.equal(res.statusCode, 429);
      assert.equal(res.json().error, 'quota_exceeded');
      assert.equal(await admin.quota.used(r.account.id), 450);
      const fits = await post('/api/v1/verify-batch', r.apiKey, { emails: Array.from({ length: 50 }, (_, i) => `u${i}@${D.valid}`) });
      assert.equal(fits.statusCode, 200);
      assert.equal(fits.json().quota.remaining, 0);
      const single = await post('/api/v1/verify-single', r.apiKey, { email: `alice@${D.valid}` });
      assert.equal(single.statusCode, 429);
      assert.equal(single.json().error, 'quota_exceeded');
      // Retry-After: the seconds until the quota month resets (first of next month, UTC).
      for (const answer of [res, single]) {
        const now = new Date();
        const reset = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
        assert.ok(Math.abs(Number(answer.headers['retry-after']) - (reset - now.getTime()) / 1000) < 10, String(answer.headers['retry-after']));
      }
    });

    test('Idempotency-Key: a retry returns the first answer and charges nothing; another body is 409', async () => {
      const emails = [`alice@${D.valid}`, `bob@${D.valid}`];
      const key = { 'idempotency-key': 'order-7731' };
      const first = await post('/api/v1/verify-batch', keys.scale!, { emails }, key);
      assert.equal(first.statusCode, 200);
      const charged = await used('scale');
      const again = await post('/api/v1/verify-batch', keys.scale!, { emails }, key);
      assert.equal(again.statusCode, 200);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body, first.body);
      assert.equal(await used('scale'), charged);
      const other = await post('/api/v1/verify-batch', keys.scale!, { emails: [`carol@${D.valid}`] }, key);
      assert.equal(other.statusCode, 409);
      assert.equal(other.json().error, 'conflict');
      const otherAccount = await post('/api/v1/verify-batch', keys.growth!, { emails }, key);
      assert.equal(otherAccount.statusCode, 200, 'keys are per account');
      assert.notEqual(otherAccount.json().batch_id, first.json().batch_id);
    });

    test('a batch.completed event is recorded after the answer', async () => {
      const res = await post('/api/v1/verify-batch', keys.starter!, { emails: [`alice@${D.valid}`, `zed@${D.nxdomain}`] });
      const batchId = res.json().batch_id as string;
      let event: { payload: string } | undefined;
      for (let i = 0; i < 50 && !event; i++) {
        event = (await admin.database.db.selectFrom('events').select('payload').where('account_id', '=', ids.starter!).execute()).find((e) => e.payload.includes(batchId));
        if (!event) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(event, 'event recorded');
      const payload = JSON.parse(event.payload);
      assert.equal(payload.event, 'batch.completed');
      assert.deepEqual(payload.summary, { total: 2, valid: 1, invalid: 1, risky: 0 });
      assert.match(payload.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    test('concurrent requests never over-charge: exactly the remaining quota succeeds', async () => {
      const r = await admin.accounts.createAccount({ email: 'race@example.test', plan: 'scale' });
      assert.ok(r.ok);
      await admin.quota.charge(r.account.id, 250_000 - 20, 250_000);
      const results = await Promise.all(Array.from({ length: 35 }, () => post('/api/v1/verify-single', r.apiKey, { email: `alice@${D.valid}` })));
      assert.equal(results.filter((x) => x.statusCode === 200).length, 20);
      assert.equal(results.filter((x) => x.statusCode === 429).length, 15);
      assert.equal(await admin.quota.used(r.account.id), 250_000);
    });

    test('public endpoint: no key, no quota; 20 per minute per client IP; SMTP probes per day', async () => {
      const ip = (n: number) => ({ 'x-forwarded-for': `198.51.100.${n}` });
      const first = await post('/api/validate-email', null, { email: `alice@${D.valid}` }, ip(1));
      assert.equal(first.statusCode, 200);
      assert.equal(first.json().status, 'valid');
      assert.equal(first.json().success, undefined);
      assert.equal(first.headers['ratelimit-limit'], '20');
      for (let i = 0; i < 19; i++) assert.equal((await post('/api/validate-email', null, { email: `alice@${D.valid}` }, ip(1))).statusCode, 200);
      const limited = await post('/api/validate-email', null, { email: `alice@${D.valid}` }, ip(1));
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal((await post('/api/validate-email', null, { email: `alice@${D.valid}` }, ip(2))).statusCode, 200, 'another client is not limited');

      const smtp = async () => post('/api/validate-email', null, { email: `alice@${D.valid}`, use_smtp: true }, ip(3));
      const s1 = await smtp();
      assert.equal(s1.statusCode, 200);
      assert.equal(s1.json().checks.smtp, true);
      assert.equal((await smtp()).statusCode, 200);
      const s3 = await smtp();
      assert.equal(s3.statusCode, 429, 'over the daily SMTP allowance');
      assert.match(s3.json().message, /SMTP probes per day/);
      const bad = await post('/api/validate-email', null, { email: '' }, ip(4));
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error, 'invalid_email');
    });

    test('the OpenAPI document enumerates status, reason and grade', async () => {
      const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const schema = doc.paths['/api/validate-email'].post.responses['200'].content['application/json'].schema;
      assert.deepEqual(schema.properties.status.enum, ['valid', 'invalid', 'risky', 'unknown']);
      assert.ok(schema.properties.reason.enum.includes('catch_all'));
      assert.equal(schema.properties.reason.nullable, true);
      assert.deepEqual(schema.properties.grade.enum, ['A', 'B', 'C', 'D', 'F']);
    });

    test('an engine without SMTP settings answers use_smtp with 503, charging nothing', async () => {
      const plain = await buildApp({ ...config, smtp: null }, { engine: engineFromConfig({ ...config, smtp: null }) });
      try {
        const before = await used('scale');
        const res = await plain.inject({ method: 'POST', url: '/api/v1/verify-single', headers: { ...json, authorization: `Bearer ${keys.scale}` }, payload: { email: `alice@${D.valid}`, use_smtp: true } });
        assert.equal(res.statusCode, 503);
        assert.equal(res.json().error, 'service_unavailable');
        assert.equal(await used('scale'), before);
      } finally {
        await plain.close();
      }
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.size > 0);
    });
  });
}
