import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { DeliveriesRepository, newId, openServiceCore, type Database, type ServiceApp, type ServiceCore, type WebhookTables } from '@mailconv/platform';
import { createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, signatureValid, TestReceiver, type Received, type RecordedAnswer } from '@mailconv/platform/testing';
import { D, WEBHOOK_HOSTS, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX, type EmailAppOptions } from '../app.js';
import { loadEmailConfig } from '../config.js';
import { EMAIL_MIGRATIONS } from '../db/migrations.js';
import type { EmailTables } from '../db/schema.js';
import { jobsEnv } from '../jobs/jobs.test-support.js';
import { WEBHOOK_USER_AGENT } from './events.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries 300 ms and 600 ms (±20 %) after the first attempt, then dead-letter; 800 ms time-out. */
const SCHEDULE = [300, 600];

for (const backend of testBackends()) {
  describe(`webhook delivery on ${backend}, to a real HTTPS receiver on loopback`, () => {
    const answers: RecordedAnswer[] = [];
    let rig: RigHandle;
    let receiver: TestReceiver;
    let dbUrl: string;
    let drop: () => Promise<void>;
    let admin: ServiceCore<EmailTables>;
    let app: ServiceApp;

    /**
     * Settings of every process here: the rig's resolver, the test CA, a short schedule,
     * loopback targets allowed and deliveries fenced to loopback (jobsEnv). Webhook host
     * names resolve through the rig's DNS server too, at creation and at delivery.
     */
    const env = (extra: Record<string, string> = {}) =>
      jobsEnv(rig, dbUrl, {
        EMAIL_WEBHOOKS_ALLOW_INSECURE: 'true',
        EMAIL_WEBHOOKS_CA_FILE: receiver.caFile,
        EMAIL_WEBHOOKS_RETRY_SCHEDULE: SCHEDULE.map((ms) => `${ms}ms`).join(','),
        EMAIL_WEBHOOKS_TIMEOUT_MS: '800',
        EMAIL_WEBHOOKS_POLL_MS: '50',
        EMAIL_JOBS_WORKERS: '0',
        ...extra,
      });
    const start = async (extra: Record<string, string> = {}, options: EmailAppOptions = {}) => {
      const a = await buildApp(loadEmailConfig(env(extra)), { webhookDnsServers: [rig.dnsServer], ...options });
      recordAnswers(a, answers);
      await a.ready();
      return a;
    };

    before(async () => {
      rig = await useRig();
      receiver = await TestReceiver.start();
      ({ url: dbUrl, drop } = await createTestDatabase(backend));
      admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env()).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      app = await start();
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
      await receiver.close();
      await rig.release();
    });

    const call = (target: ServiceApp, method: 'GET' | 'POST' | 'DELETE', url: string, key: string, payload?: unknown) =>
      target.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
    const account = async (name: string, plan = 'scale') => {
      const r = await admin.accounts.createAccount({ email: `${name}@example.test`, plan });
      assert.ok(r.ok);
      return { key: r.apiKey, id: r.account.id };
    };
    const hook = async (key: string, path: string, events?: string) => {
      // By name: resolved through the rig (127.0.0.1) at creation and at each delivery; the
      // receiver's certificate names this host.
      const res = await call(app, 'POST', '/api/dashboard/webhooks', key, { url: `https://${WEBHOOK_HOSTS.receiver}:${receiver.port}${path}`, ...(events ? { events } : {}) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().webhook as { webhook_id: string; secret: string };
    };
    const batch = async (key: string, emails = [`alice@${D.valid}`, 'not-an-address']) => {
      const res = await call(app, 'POST', '/api/v1/verify-batch', key, { emails });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().batch_id as string;
    };
    type Log = Array<{ delivery_id: string; event: string; state: string; attempts: number; next_retry_at: string | null; history: Array<{ attempt: number; status_code: number | null; error: string | null; duration_ms: number; next_retry_at: string | null }> }>;
    const log = async (key: string, webhookId: string): Promise<Log> => {
      const res = await call(app, 'GET', `/api/dashboard/webhooks/${webhookId}/deliveries`, key);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().deliveries as Log;
    };
    /** Polls the delivery log until `done`; the test's own time-out bounds it. */
    const logUntil = async (key: string, webhookId: string, done: (l: Log) => boolean) => {
      for (;;) {
        const l = await log(key, webhookId);
        if (done(l)) return l;
        await sleep(25);
      }
    };
    const json = (r: Received) => JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
    const assertSigned = (r: Received, secret: string, event: string) => {
      assert.equal(signatureValid(r, secret), true, 'signature verifies with node:crypto over the raw body');
      assert.equal(signatureValid(r, `${secret}x`), false, 'and fails under another secret');
      assert.equal(r.headers['x-service-event'], event);
      assert.match(String(r.headers['x-service-delivery']), /^dlv_[0-9a-z]{26}$/);
      assert.equal(r.headers['user-agent'], WEBHOOK_USER_AGENT);
      assert.match(String(r.headers['content-type']), /^application\/json/);
    };

    test('each event type reaches its subscribers, signed, with the documented payload; others are not sent', async () => {
      const acct = await account('events');
      const all = await hook(acct.key, '/all');
      const failedOnly = await hook(acct.key, '/failed-only', 'job.failed');

      const batchId = await batch(acct.key);
      const [b] = await receiver.waitFor('/all', 1);
      assertSigned(b!, all.secret, 'batch.completed');
      const bp = json(b!);
      assert.deepEqual(Object.keys(bp).sort(), ['batch_id', 'event', 'summary', 'timestamp']);
      assert.deepEqual(bp, { event: 'batch.completed', batch_id: batchId, summary: { total: 2, valid: 1, invalid: 1, risky: 0 }, timestamp: bp.timestamp });
      assert.match(String(bp.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      // Two jobs stored by this process (no job worker here); one gets a damaged chunk.
      const submit = async (emails: string[]) => {
        const res = await call(app, 'POST', '/api/v1/jobs', acct.key, { emails });
        assert.equal(res.statusCode, 202, res.body);
        return res.json().job_id as string;
      };
      const good = await submit([`a@${D.valid}`, `b@${D.valid}`, `c@${D.nxdomain}`]);
      const broken = await submit(Array.from({ length: 30 }, (_, i) => `u${i}@${D.valid}`));
      await admin.database.db.updateTable('job_chunks').set({ emails: '["u10@valid.test", ' }).where('job_id', '=', broken).where('idx', '=', 1).execute();
      // A worker process with no dispatcher of its own records the events; this process sends them.
      const worker = await start({ EMAIL_JOBS_WORKERS: '1', EMAIL_WEBHOOKS_CONCURRENCY: '0' });
      try {
        const got = await receiver.waitFor('/all', 3);
        const byEvent = Object.fromEntries(got.slice(1).map((r) => [String(r.headers['x-service-event']), r]));
        assertSigned(byEvent['job.completed']!, all.secret, 'job.completed');
        const jc = json(byEvent['job.completed']!);
        assert.deepEqual(jc, { event: 'job.completed', job_id: good, summary: { total: 3, valid: 2, invalid: 1, risky: 0 }, timestamp: jc.timestamp });
        assertSigned(byEvent['job.failed']!, all.secret, 'job.failed');
        const jf = json(byEvent['job.failed']!);
        assert.deepEqual(jf, { event: 'job.failed', job_id: broken, error: 'stored addresses of chunk 1 are unreadable', summary: { total: 30, valid: 10, invalid: 0, risky: 0 }, timestamp: jf.timestamp });

        const [f] = await receiver.waitFor('/failed-only', 1);
        assertSigned(f!, failedOnly.secret, 'job.failed');
        assert.equal(f!.body.toString('utf8'), byEvent['job.failed']!.body.toString('utf8'), 'the same event bytes to every endpoint');
        assert.notEqual(f!.headers['x-service-delivery'], byEvent['job.failed']!.headers['x-service-delivery'], 'one delivery id per endpoint');
      } finally {
        await worker.close();
      }
      await sleep(200);
      assert.equal(receiver.at('/failed-only').length, 1, 'an endpoint gets only the events it subscribed to');
      assert.equal(receiver.at('/all').length, 3);

      const listed = (await call(app, 'GET', '/api/dashboard/webhooks', acct.key)).json().webhooks as Array<{ webhook_id: string; last_triggered: string | null }>;
      assert.ok(listed.every((w) => w.last_triggered !== null), 'last_triggered is stamped');
      const delivered = await log(acct.key, all.webhook_id);
      assert.deepEqual(delivered.map((d) => [d.state, d.attempts, d.history.length, d.history[0]!.status_code]), [['delivered', 1, 1, 204], ['delivered', 1, 1, 204], ['delivered', 1, 1, 204]]);
    });

    test('a 500 is retried on schedule with the same delivery id and byte-identical body, then delivered', async () => {
      const acct = await account('flaky');
      const h = await hook(acct.key, '/flaky');
      receiver.behave('/flaky', (n) => (n <= 2 ? 500 : 204));
      await batch(acct.key);
      const got = await receiver.waitFor('/flaky', 3);
      assert.equal(new Set(got.map((r) => r.headers['x-service-delivery'])).size, 1, 'one delivery id across retries');
      assert.equal(new Set(got.map((r) => r.body.toString('hex'))).size, 1, 'byte-identical payload');
      assert.equal(new Set(got.map((r) => r.headers['x-service-signature'])).size, 1);
      for (const r of got) assertSigned(r, h.secret, 'batch.completed');
      // Waits follow the schedule (jitter ±20 %, plus the dispatcher's poll).
      assert.ok(got[1]!.at - got[0]!.at >= SCHEDULE[0]! * 0.8 - 5, `first retry after ${got[1]!.at - got[0]!.at} ms`);
      assert.ok(got[2]!.at - got[1]!.at >= SCHEDULE[1]! * 0.8 - 5, `second retry after ${got[2]!.at - got[1]!.at} ms`);
      const [d] = await logUntil(acct.key, h.webhook_id, (l) => l[0]?.state === 'delivered');
      assert.deepEqual(
        d!.history.map((a) => [a.attempt, a.status_code, a.error, a.next_retry_at !== null]),
        [
          [1, 500, 'http_500', true],
          [2, 500, 'http_500', true],
          [3, 204, null, false],
        ],
      );
      assert.equal(d!.delivery_id, got[0]!.headers['x-service-delivery']);
    });

    test('time-outs and refused connections are retried, then dead-lettered; a dead delivery can be sent again', async () => {
      const acct = await account('dead');
      const slow = await hook(acct.key, '/slow');
      receiver.behave('/slow', () => 'hang');
      const closed = createTcpServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const refusedRes = await call(app, 'POST', '/api/dashboard/webhooks', acct.key, { url: `https://127.0.0.1:${closedPort}/nobody` });
      const refused = refusedRes.json().webhook as { webhook_id: string };

      await batch(acct.key);
      const [deadSlow] = await logUntil(acct.key, slow.webhook_id, (l) => l[0]?.state === 'dead');
      assert.deepEqual(deadSlow!.history.map((a) => [a.attempt, a.status_code, a.error]), [[1, null, 'timeout'], [2, null, 'timeout'], [3, null, 'timeout']]);
      assert.ok(deadSlow!.history.every((a) => a.duration_ms >= 750 && a.duration_ms < 3000), 'each attempt stopped at the time-out');
      assert.equal(deadSlow!.next_retry_at, null);
      assert.equal(receiver.at('/slow').length, 3);
      const [deadRefused] = await logUntil(acct.key, refused.webhook_id, (l) => l[0]?.state === 'dead');
      assert.deepEqual(deadRefused!.history.map((a) => a.error), ['connection_refused', 'connection_refused', 'connection_refused']);
      await sleep(SCHEDULE[1]! * 2);
      assert.equal(receiver.at('/slow').length, 3, 'a dead-lettered delivery is not retried');

      // Redelivery: only dead ones, only the owner's; the id and body stay the same.
      receiver.behave('/slow', () => 200);
      const wrong = await account('someone-else');
      assert.equal((await call(app, 'POST', `/api/dashboard/webhooks/${slow.webhook_id}/deliveries/${deadSlow!.delivery_id}/redeliver`, wrong.key)).statusCode, 404);
      assert.equal((await call(app, 'POST', `/api/dashboard/webhooks/${slow.webhook_id}/deliveries/dlv_nope/redeliver`, acct.key)).statusCode, 404);
      const again = await call(app, 'POST', `/api/dashboard/webhooks/${slow.webhook_id}/deliveries/${deadSlow!.delivery_id}/redeliver`, acct.key);
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(again.json(), { success: true, webhook_id: slow.webhook_id, delivery_id: deadSlow!.delivery_id, state: 'pending' });
      const got = await receiver.waitFor('/slow', 4);
      assert.equal(got[3]!.headers['x-service-delivery'], deadSlow!.delivery_id);
      assert.equal(got[3]!.body.toString('hex'), got[0]!.body.toString('hex'));
      const [after] = await logUntil(acct.key, slow.webhook_id, (l) => l[0]?.state === 'delivered');
      assert.deepEqual(after!.history.map((a) => a.attempt), [1, 2, 3, 4]);
      const twice = await call(app, 'POST', `/api/dashboard/webhooks/${slow.webhook_id}/deliveries/${deadSlow!.delivery_id}/redeliver`, acct.key);
      assert.deepEqual([twice.statusCode, twice.json().error], [409, 'conflict']);
    });

    test('a restart between attempts loses nothing, and a dead holder’s lease is taken over', async () => {
      const acct = await account('restart');
      const h = await hook(acct.key, '/restart');
      receiver.behave('/restart', (n) => (n === 1 ? 503 : 204));
      // Retries far apart: the first attempt fails, then this process stops before the retry.
      const first = await start({ EMAIL_WEBHOOKS_RETRY_SCHEDULE: '1500ms' });
      await app.close();
      try {
        const res = await call(first, 'POST', '/api/v1/verify-batch', acct.key, { emails: ['x@y'] });
        assert.equal(res.statusCode, 200);
        await receiver.waitFor('/restart', 1);
        await sleep(100);
      } finally {
        await first.close();
      }
      app = await start();
      const got = await receiver.waitFor('/restart', 2);
      assert.equal(got[1]!.headers['x-service-delivery'], got[0]!.headers['x-service-delivery']);
      assert.equal(got[1]!.body.toString('hex'), got[0]!.body.toString('hex'));
      await logUntil(acct.key, h.webhook_id, (l) => l[0]?.state === 'delivered');

      // A process that claimed a delivery and died: its lease (2 × time-out) runs out, another sends it.
      receiver.behave('/restart', () => 204);
      // The outbox's view of the service's database (the tables are among the email service's own).
      const outbox = admin.database as unknown as Database<WebhookTables>;
      const deliveries = new DeliveriesRepository(outbox);
      await app.close();
      const eventId = newId('evt');
      const now = new Date();
      await outbox.writeTransaction(async (trx) => {
        await trx.insertInto('events').values({ id: eventId, account_id: acct.id, type: 'batch.completed', payload: '{"event":"batch.completed"}', created_at: now.toISOString() }).execute();
        await deliveries.fanOut(trx, { id: eventId, accountId: acct.id, type: 'batch.completed' }, now, now);
      });
      const due = await admin.database.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', eventId).executeTakeFirstOrThrow();
      const ghost = await deliveries.claim(due.id, new Date(), new Date(Date.now() + 1600), 'ghost');
      assert.ok(ghost, 'claimed by the process that will "die"');
      app = await start();
      await sleep(400);
      assert.equal(receiver.at('/restart').length, 2, 'not sent while the lease holds');
      const [taken] = await receiver.waitFor('/restart', 3).then((r) => r.slice(2));
      assert.equal(taken!.headers['x-service-delivery'], due.id);
      const late = await deliveries.recordAttempt(ghost, { startedAt: new Date(), status: 204, durationMs: 1, error: null, state: 'delivered', nextAttemptAt: null }, new Date());
      assert.equal(late, false, 'the dead holder cannot record over the new owner');
    });

    test('a slow endpoint does not hold up deliveries to others', async () => {
      // Four slots in this process; the stuck endpoint may hold two of them.
      const fairApp = await start({ EMAIL_WEBHOOKS_CONCURRENCY: '4', EMAIL_WEBHOOKS_PER_ENDPOINT: '2' });
      await app.close();
      app = fairApp;
      const acct = await account('fair');
      const stuck = await hook(acct.key, '/stuck');
      receiver.behave('/stuck', () => 'hang');
      for (let i = 0; i < 6; i++) await batch(acct.key, ['x@y']);
      await receiver.waitFor('/stuck', 2);
      const other = await account('fair-other');
      const fast = await hook(other.key, '/fast');
      const fired = performance.now();
      await batch(other.key, ['x@y']);
      const [got] = await receiver.waitFor('/fast', 1);
      assert.ok(got!.at - fired < 600, `the fast endpoint was served in ${Math.round(got!.at - fired)} ms, before any stuck attempt timed out`);
      assert.equal(receiver.at('/stuck').length, 2, 'the stuck endpoint holds at most 2 slots (EMAIL_WEBHOOKS_PER_ENDPOINT)');
      await logUntil(other.key, fast.webhook_id, (l) => l[0]?.state === 'delivered');
      assert.equal((await call(app, 'DELETE', `/api/dashboard/webhooks?id=${stuck.webhook_id}`, acct.key)).statusCode, 200);
      await app.close();
      app = await start();
    });

    test('deleting an endpoint cancels its pending deliveries; nothing more is sent to it', async () => {
      const acct = await account('deleted');
      const h = await hook(acct.key, '/gone');
      receiver.behave('/gone', () => 500);
      await batch(acct.key);
      await receiver.waitFor('/gone', 1);
      assert.equal((await call(app, 'DELETE', `/api/dashboard/webhooks?id=${h.webhook_id}`, acct.key)).statusCode, 200);
      const [d] = await logUntil(acct.key, h.webhook_id, (l) => l[0]?.state === 'cancelled');
      assert.equal(d!.history.at(-1)!.error, 'webhook_deleted');
      assert.equal(receiver.at('/gone').length, 1);
      const re = await call(app, 'POST', `/api/dashboard/webhooks/${h.webhook_id}/deliveries/${d!.delivery_id}/redeliver`, acct.key);
      assert.deepEqual([re.statusCode, re.json().error], [409, 'conflict']);
    });

    test('the address check runs again at delivery: a non-public target is refused without a connection', async () => {
      // Every target here is on loopback or refused by the fence (jobsEnv), so that even a
      // broken check could not send a packet elsewhere; the address classes themselves are
      // covered by the guard's tests. The rebinding name is asked of the rig's DNS server,
      // which now answers a loopback address next to a public one.
      const strict = await start({ EMAIL_WEBHOOKS_ALLOW_INSECURE: 'false' });
      await app.close();
      try {
        const acct = await account('ssrf');
        // Stored as if they had passed the check at creation (public then, private now).
        for (const [i, url] of [receiver.url('/ssrf-literal'), `https://${WEBHOOK_HOSTS.rebind}:${receiver.port}/ssrf-rebound`, `http://127.0.0.1:${receiver.port}/plain-http`].entries()) {
          await admin.database.db.insertInto('webhooks').values({ id: `wh_ssrf${i}`, account_id: acct.id, url, events: 'batch.completed', secret: 'whsec_x', active: 1, created_at: new Date().toISOString(), last_triggered: null, deleted_at: null }).execute();
        }
        const res = await call(strict, 'POST', '/api/v1/verify-batch', acct.key, { emails: ['x@y'] });
        assert.equal(res.statusCode, 200);
        const errorsOf = async (id: string) => (await logUntil(acct.key, id, (l) => (l[0]?.attempts ?? 0) >= 1 && l[0]!.history.length >= 1))[0]!.history[0]!.error;
        app = strict;
        assert.equal(await errorsOf('wh_ssrf0'), 'private_address');
        assert.equal(await errorsOf('wh_ssrf1'), 'private_address');
        assert.equal(await errorsOf('wh_ssrf2'), 'not_https');
        for (const path of ['/ssrf-literal', '/ssrf-rebound', '/plain-http']) assert.equal(receiver.at(path).length, 0, `${path}: never connected to`);
      } finally {
        await strict.close();
        app = await start();
      }
    });

    test('EMAIL_WEBHOOKS_RESTRICT_TO fences deliveries: an address outside it is never connected to', async () => {
      const fenced = await start({ EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.2/32' });
      await app.close();
      app = fenced;
      try {
        const acct = await account('fenced');
        const h = await hook(acct.key, '/fenced');
        await batch(acct.key, ['x@y']);
        const [d] = await logUntil(acct.key, h.webhook_id, (l) => (l[0]?.history.length ?? 0) >= 1);
        assert.equal(d!.history[0]!.error, 'outside_restrict_to');
        assert.equal(receiver.at('/fenced').length, 0);
        await call(app, 'DELETE', `/api/dashboard/webhooks?id=${h.webhook_id}`, acct.key);
      } finally {
        await fenced.close();
        app = await start();
      }
    });

    test('retention: finished deliveries and their events go after the log period; pending ones stay', async () => {
      const acct = await account('retention');
      const deliveries = new DeliveriesRepository(admin.database as unknown as Database<WebhookTables>);
      const old = new Date(Date.now() - 40 * 86_400_000);
      const hookId = (await hook(acct.key, '/retention')).webhook_id;
      await call(app, 'DELETE', `/api/dashboard/webhooks?id=${hookId}`, acct.key);
      const ids: string[] = [];
      for (const state of ['delivered', 'pending', 'none'] as const) {
        const eventId = newId('evt');
        ids.push(eventId);
        // Event and delivery in one transaction, as the service writes them: a dispatcher's
        // own prune running meanwhile sees both or neither.
        await admin.database.writeTransaction(async (trx) => {
          await trx.insertInto('events').values({ id: eventId, account_id: acct.id, type: 'batch.completed', payload: '{}', created_at: old.toISOString() }).execute();
          if (state === 'none') return;
          const finished = state === 'delivered';
          await trx
            .insertInto('webhook_deliveries')
            .values({ id: newId('dlv'), event_id: eventId, webhook_id: hookId, account_id: acct.id, event: 'batch.completed', state, attempts: 1, failures: 0, next_attempt_at: finished ? null : new Date(Date.now() + 86_400_000).toISOString(), lease_token: null, last_status: finished ? 204 : 500, last_error: null, created_at: old.toISOString(), finished_at: finished ? old.toISOString() : null })
            .execute();
        });
      }
      // (A dispatcher started by an earlier test may prune some of these first: the end state is what counts.)
      await deliveries.prune(new Date(Date.now() - 30 * 86_400_000));
      const kept = await admin.database.db.selectFrom('webhook_deliveries').select('state').where('event_id', 'in', ids).execute();
      assert.deepEqual(kept, [{ state: 'pending' }], 'the finished delivery is gone, the pending one stays');
      const left = await admin.database.db.selectFrom('events').select('id').where('id', 'in', ids).execute();
      assert.deepEqual(left.map((e) => e.id), [ids[1]], 'only the event with a pending delivery stays');
    });

    test('delivery log and redeliver: plan, ownership and OpenAPI', async () => {
      const free = await account('free-plan', 'free');
      const res = await call(app, 'GET', '/api/dashboard/webhooks/wh_x/deliveries', free.key);
      assert.deepEqual([res.statusCode, res.json().error], [403, 'feature_not_available']);
      const acct = await account('owner');
      const other = await account('stranger');
      const h = await hook(acct.key, '/owned');
      assert.equal((await call(app, 'GET', `/api/dashboard/webhooks/${h.webhook_id}/deliveries`, other.key)).statusCode, 404);
      assert.equal((await call(app, 'GET', `/api/dashboard/webhooks/${h.webhook_id}/deliveries?limit=0`, acct.key)).statusCode, 400);
      const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Record<string, unknown>>> };
      assert.equal(spec.paths['/api/dashboard/webhooks/{id}/deliveries']?.get?.['x-extension'], true);
      assert.equal(spec.paths['/api/dashboard/webhooks/{id}/deliveries/{delivery_id}/redeliver']?.post?.['x-extension'], true);
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.has('POST /api/dashboard/webhooks/{id}/deliveries/{delivery_id}/redeliver'));
    });
  });
}
