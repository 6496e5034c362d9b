import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { REBIND_PUBLIC_ADDRESS, WEBHOOK_HOSTS, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from '../../app.js';
import { loadEmailConfig } from '../../config.js';
import { EMAIL_MIGRATIONS } from '../../db/migrations.js';
import type { EmailTables } from '../../db/schema.js';

// Creating a webhook resolves its host: the apps here ask the rig's DNS server (every name
// in its zone is loopback, but for the rebinding name's one refused address). The public
// literal is only classified, never connected to: no app here runs a dispatcher, and the
// fence would keep it on loopback if one did.
const PUBLIC_HOOK = `https://${REBIND_PUBLIC_ADDRESS}/hooks/mailconv`;
/** No dispatcher in this process, and deliveries fenced to loopback all the same. */
const NO_DELIVERIES = { EMAIL_WEBHOOKS_CONCURRENCY: '0', EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128' };

for (const backend of testBackends()) {
  describe(`webhook endpoints on ${backend}`, () => {
    let answers: RecordedAnswer[] = [];
    let rig: RigHandle;
    let drop: () => Promise<void>;
    let url: string;
    let app: ServiceApp;
    let admin: ServiceCore<EmailTables>;
    const keys: Record<string, string> = {};

    before(async () => {
      rig = await useRig();
      ({ url, drop } = await createTestDatabase(backend));
      app = await buildApp(loadEmailConfig({ EMAIL_DATABASE_URL: url, EMAIL_LOG_LEVEL: 'silent', EMAIL_JOBS_WORKERS: '0', ...NO_DELIVERIES }), { webhookDnsServers: [rig.dnsServer] });
      answers = recordAnswers(app);
      admin = await openServiceCore<EmailTables>({ database: loadEmailConfig({ EMAIL_DATABASE_URL: url }).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      for (const [name, plan] of [['free', 'free'], ['starter', 'starter'], ['other', 'growth'], ['full', 'scale']] as const) {
        const r = await admin.accounts.createAccount({ email: `${name}@example.test`, plan });
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

    const call = (method: 'GET' | 'POST' | 'DELETE', key: string, path = '/api/dashboard/webhooks', payload?: unknown) =>
      app.inject({ method, url: path, headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload: JSON.stringify(payload) } : {}) });

    test('plans without webhooks: 403 feature_not_available on every method', async () => {
      for (const res of [await call('GET', keys.free!), await call('POST', keys.free!, undefined, { url: PUBLIC_HOOK }), await call('DELETE', keys.free!, '/api/dashboard/webhooks?id=wh_x')]) {
        assert.equal(res.statusCode, 403);
        assert.equal(res.json().error, 'feature_not_available');
      }
    });

    test('create: the secret once, all events by default; listings never show the secret', async () => {
      const res = await call('POST', keys.starter!, undefined, { url: PUBLIC_HOOK });
      assert.equal(res.statusCode, 200, res.body);
      const { webhook } = res.json();
      assert.match(webhook.webhook_id, /^wh_[0-9a-z]{26}$/);
      assert.match(webhook.secret, /^whsec_[0-9A-Za-z]{32}$/);
      assert.equal(webhook.url, PUBLIC_HOOK);
      assert.equal(webhook.events, 'batch.completed,job.completed,job.failed');
      assert.equal(webhook.active, true);
      assert.equal(webhook.last_triggered, null);
      const list = await call('GET', keys.starter!);
      assert.deepEqual(list.json().webhooks.map((w: { webhook_id: string }) => w.webhook_id), [webhook.webhook_id]);
      assert.ok(!list.body.includes(webhook.secret) && !list.body.includes('secret'), 'no secret in listings');
      const chosen = await call('POST', keys.starter!, undefined, { url: `${PUBLIC_HOOK}/2`, events: ' job.failed , batch.completed,job.failed' });
      assert.equal(chosen.json().webhook.events, 'batch.completed,job.failed');
    });

    test('bad input: unknown events, non-HTTPS, private or credentialled URLs are 400 naming the field', async () => {
      const cases: Array<[unknown, string]> = [
        [{ url: PUBLIC_HOOK, events: 'job.completed,job.exploded' }, 'events'],
        [{ url: PUBLIC_HOOK, events: ' , ' }, 'events'],
        [{ url: 'http://93.184.216.34/h' }, 'url'],
        [{ url: 'https://127.0.0.1/h' }, 'url'],
        [{ url: 'https://[::ffff:10.0.0.1]/h' }, 'url'],
        // Host names, resolved through the rig: loopback (A, AAAA), public and loopback mixed, no such name.
        [{ url: `https://${WEBHOOK_HOSTS.receiver}/h` }, 'url'],
        [{ url: `https://${WEBHOOK_HOSTS.receiverV6}/h` }, 'url'],
        [{ url: `https://${WEBHOOK_HOSTS.rebind}/h` }, 'url'],
        [{ url: `https://${WEBHOOK_HOSTS.nowhere}/h` }, 'url'],
        [{ url: 'https://169.254.169.254/latest' }, 'url'],
        [{ url: 'https://user:pw@93.184.216.34/h' }, 'url'],
        [{ url: 'not a url' }, 'url'],
        [{}, 'url'],
        [{ url: PUBLIC_HOOK, active: true }, 'active'],
      ];
      for (const [payload, field] of cases) {
        const res = await call('POST', keys.other!, undefined, payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(res.json().error, 'invalid_request');
        assert.equal(res.json().field, field, JSON.stringify(payload));
        if (typeof (payload as { url?: unknown }).url === 'string' && (payload as { url: string }).url.includes('.example.test')) assert.match(res.json().message, /non-public address|does not resolve/, JSON.stringify(payload));
      }
      assert.deepEqual((await call('GET', keys.other!)).json().webhooks, [], 'nothing was stored');
    });

    test('at most 10 active endpoints (409); deleting one frees a place; other accounts’ ids are 404', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await call('POST', keys.full!, undefined, { url: `${PUBLIC_HOOK}/${i}` });
        assert.equal(res.statusCode, 200);
        ids.push(res.json().webhook.webhook_id);
      }
      const over = await call('POST', keys.full!, undefined, { url: `${PUBLIC_HOOK}/10` });
      assert.equal(over.statusCode, 409);
      assert.equal(over.json().error, 'webhook_limit_reached');
      assert.equal((await call('DELETE', keys.other!, `/api/dashboard/webhooks?id=${ids[0]}`)).statusCode, 404, 'another account cannot delete it');
      const del = await call('DELETE', keys.full!, `/api/dashboard/webhooks?id=${ids[0]}`);
      assert.equal(del.statusCode, 200);
      assert.deepEqual(del.json(), { success: true, webhook_id: ids[0] });
      assert.equal((await call('DELETE', keys.full!, `/api/dashboard/webhooks?id=${ids[0]}`)).statusCode, 404, 'already deleted');
      assert.equal((await call('POST', keys.full!, undefined, { url: `${PUBLIC_HOOK}/10` })).statusCode, 200);
      assert.equal((await call('GET', keys.full!)).json().webhooks.length, 10);
      assert.equal((await call('DELETE', keys.full!, '/api/dashboard/webhooks')).statusCode, 400);
    });

    test('EMAIL_WEBHOOKS_ALLOW_INSECURE lets http:// and loopback targets through for development', async () => {
      const dev = await buildApp(loadEmailConfig({ EMAIL_DATABASE_URL: url, EMAIL_LOG_LEVEL: 'silent', EMAIL_JOBS_WORKERS: '0', EMAIL_WEBHOOKS_ALLOW_INSECURE: 'true', ...NO_DELIVERIES }), { webhookDnsServers: [rig.dnsServer] });
      try {
        const create = (target: string) => dev.inject({ method: 'POST', url: '/api/dashboard/webhooks', headers: { authorization: `Bearer ${keys.other}`, 'content-type': 'application/json' }, payload: { url: target } });
        for (const target of ['http://127.0.0.1:9/hook', `http://${WEBHOOK_HOSTS.receiver}:9/hook`]) {
          const res = await create(target);
          assert.equal(res.statusCode, 200, res.body);
          assert.equal(res.json().webhook.url, target);
        }
        const gone = await create(`http://${WEBHOOK_HOSTS.nowhere}:9/hook`);
        assert.deepEqual([gone.statusCode, gone.json().field], [400, 'url'], 'a name the rig does not know is refused in development too');
      } finally {
        await dev.close();
      }
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.size > 0);
    });
  });
}
