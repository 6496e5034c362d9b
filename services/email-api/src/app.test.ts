import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { assertOpenApiComplete, createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { buildApp, EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import { EMAIL_ERROR_CODES } from './errors.js';

const NOW = new Date('2026-11-15T10:00:00Z');
let tick = 0;
/** A clock in mid-November 2026 that moves one second per reading, so creation order is well defined. */
const clock = () => new Date(NOW.getTime() + 1000 * tick++);

for (const backend of testBackends()) {
  describe(`email API on ${backend}`, () => {
    let answers: RecordedAnswer[] = [];
    let drop: () => Promise<void>;
    let url: string;
    let app: ServiceApp;
    let admin: ServiceCore<never>;
    let scaleKey: string;
    let freeKey: string;
    let freeAccountId: string;

    const start = async () => buildApp(loadEmailConfig({ EMAIL_DATABASE_URL: url, EMAIL_LOG_LEVEL: 'silent', EMAIL_BODY_LIMIT_BYTES: '4096', EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128' }), { clock });

    before(async () => {
      ({ url, drop } = await createTestDatabase(backend));
      app = await start();
      answers = recordAnswers(app);
      // A second connection, as the admin CLI would open it.
      admin = await openServiceCore({ database: loadEmailConfig({ EMAIL_DATABASE_URL: url }).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      const scale = await admin.accounts.createAccount({ email: 'owner@example.test', plan: 'scale' }, clock());
      const free = await admin.accounts.createAccount({ email: 'free@example.test', plan: 'free' }, clock());
      assert.ok(scale.ok && free.ok);
      scaleKey = scale.apiKey;
      freeKey = free.apiKey;
      freeAccountId = free.account.id;
      await admin.quota.charge(scale.account.id, 42, 250_000, NOW);
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
    });

    const get = (path: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: path, headers });
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

    test('GET /api/v1/account answers the same with each of the three key forms', async () => {
      const expected = {
        success: true,
        account: { email: 'owner@example.test', plan: 'scale', plan_name: 'Scale' },
        quota: { limit: 250_000, used: 42, remaining: 249_958, reset_date: '2026-12-01' },
        rate_limit_rpm: 1200,
        features: { smtp: true, webhooks: true, catch_all: true },
      };
      for (const res of [
        await get('/api/v1/account', bearer(scaleKey)),
        await get('/api/v1/account', { 'x-api-key': scaleKey }),
        await get(`/api/v1/account?api_key=${scaleKey}`),
        await get('/api/v1/account', { authorization: `bearer   ${scaleKey}` }),
      ]) {
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), expected);
      }
    });

    test('plan features and limits come from the caller’s plan', async () => {
      const body = (await get('/api/v1/account', bearer(freeKey))).json();
      assert.deepEqual(body.features, { smtp: false, webhooks: false, catch_all: false });
      assert.deepEqual(body.quota, { limit: 500, used: 0, remaining: 500, reset_date: '2026-12-01' });
      assert.equal(body.rate_limit_rpm, 60);
      assert.deepEqual(body.account, { email: 'free@example.test', plan: 'free', plan_name: 'Free' });
    });

    test('missing, malformed, unknown and foreign keys: 401 in the error shape', async () => {
      const cases: Array<Record<string, string>> = [
        {},
        { authorization: 'Basic dXNlcjpwYXNz' },
        { authorization: 'Bearer' },
        { authorization: `Bearer ${EMAIL_KEY_PREFIX}${'x'.repeat(32)}` },
        { authorization: `Bearer cv_live_${scaleKey.slice(8)}` },
        { 'x-api-key': '' },
        { 'x-api-key': 'nonsense' },
      ];
      for (const headers of cases) {
        const res = await get('/api/v1/account', headers);
        assert.equal(res.statusCode, 401, JSON.stringify(headers));
        assert.equal(res.json().error, 'unauthorized');
        assert.equal(typeof res.json().message, 'string');
        assert.ok(res.headers['www-authenticate']);
      }
      assert.equal((await get('/api/v1/account?api_key=')).statusCode, 401);
    });

    test('conflicting credentials are refused (401), never read as the first one: two Authorization headers, a Bearer key and another X-API-Key or api_key, repeated api_key', async () => {
      const conflicting: Array<[string, Record<string, string | string[]>]> = [
        ['/api/v1/account', { authorization: [`Bearer ${scaleKey}`, `Bearer ${freeKey}`] }],
        ['/api/v1/account', { authorization: [`Bearer ${scaleKey}`, `Bearer ${scaleKey}`] }],
        ['/api/v1/account', { ...bearer(scaleKey), 'x-api-key': freeKey }],
        [`/api/v1/account?api_key=${freeKey}`, bearer(scaleKey)],
        [`/api/v1/account?api_key=${scaleKey}&api_key=${freeKey}`, {}],
        ['/api/v1/account', { 'x-api-key': [scaleKey, freeKey] }],
      ];
      for (const [url, headers] of conflicting) {
        const res = await app.inject({ method: 'GET', url, headers });
        assert.equal(res.statusCode, 401, `${url} ${JSON.stringify(headers)}: ${res.body}`);
        assert.match(res.json().message, /Conflicting API keys|not several/);
      }
      // The same key twice in two places is one credential.
      assert.equal((await get('/api/v1/account', { ...bearer(scaleKey), 'x-api-key': scaleKey })).statusCode, 200);
    });

    test('API keys: create (shown once), list masked, revoke (effective at once)', async () => {
      const created = await app.inject({ method: 'POST', url: '/api/dashboard/api-keys', headers: bearer(freeKey), payload: { name: 'ci' } });
      assert.equal(created.statusCode, 200, created.body);
      const c = created.json();
      assert.equal(c.success, true);
      assert.match(c.api_key, /^ev_live_[0-9A-Za-z]{32}$/);
      assert.match(c.id, /^key_/);
      assert.equal((await get('/api/v1/account', bearer(c.api_key))).statusCode, 200, 'the new key works at once');

      const list = await get('/api/dashboard/api-keys', bearer(freeKey));
      assert.equal(list.statusCode, 200);
      const keys = list.json().keys as Array<Record<string, unknown>>;
      assert.deepEqual(keys.map((k) => k.name), ['default', 'ci']);
      assert.deepEqual(Object.keys(keys[1]!).sort(), ['created_at', 'id', 'key_preview', 'last_used', 'name']);
      assert.equal(keys[1]!.key_preview, `ev_live_…${c.api_key.slice(-4)}`);
      assert.ok(!list.body.includes(c.api_key.slice(8, 30)), 'listings never show a full key');

      const revoked = await app.inject({ method: 'DELETE', url: `/api/dashboard/api-keys?id=${c.id}`, headers: bearer(freeKey) });
      assert.equal(revoked.statusCode, 200);
      assert.deepEqual(revoked.json(), { success: true, id: c.id });
      assert.equal((await get('/api/v1/account', bearer(c.api_key))).statusCode, 401, 'revoked key refused on the next request');
      assert.equal((await app.inject({ method: 'DELETE', url: `/api/dashboard/api-keys?id=${c.id}`, headers: bearer(freeKey) })).statusCode, 404);
    });

    test('API keys: errors — another account’s key, unknown id, missing id, last key, bad bodies', async () => {
      const scaleKeys = (await get('/api/dashboard/api-keys', bearer(scaleKey))).json().keys as Array<{ id: string }>;
      const foreign = await app.inject({ method: 'DELETE', url: `/api/dashboard/api-keys?id=${scaleKeys[0]!.id}`, headers: bearer(freeKey) });
      assert.equal(foreign.statusCode, 404);
      assert.equal(foreign.json().error, 'not_found');
      assert.equal((await app.inject({ method: 'DELETE', url: '/api/dashboard/api-keys?id=key_nope', headers: bearer(freeKey) })).statusCode, 404);
      const missing = await app.inject({ method: 'DELETE', url: '/api/dashboard/api-keys', headers: bearer(freeKey) });
      assert.equal(missing.statusCode, 400);
      assert.equal(missing.json().field, 'id');
      const last = await app.inject({ method: 'DELETE', url: `/api/dashboard/api-keys?id=${scaleKeys[0]!.id}`, headers: bearer(scaleKey) });
      assert.equal(last.statusCode, 409);
      assert.equal(last.json().error, 'conflict');

      const post = (payload: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
        app.inject({ method: 'POST', url: '/api/dashboard/api-keys', headers: { ...bearer(freeKey), ...headers }, payload });
      assert.equal((await post('{"name":')).json().error, 'invalid_json');
      assert.equal((await post('{}')).json().field, 'name');
      assert.equal((await post('{"name":7}')).json().field, 'name');
      assert.equal((await post('{"name":"a","scope":"all"}')).json().field, 'scope');
      const big = await post(JSON.stringify({ name: 'x'.repeat(5000) }));
      assert.equal(big.statusCode, 413);
      assert.equal(big.json().error, 'payload_too_large');
      const xml = await post('<name/>', { 'content-type': 'application/xml' });
      assert.equal(xml.statusCode, 415);
      const unauth = await app.inject({ method: 'POST', url: '/api/dashboard/api-keys', headers: { 'content-type': 'application/json' }, payload: '{"name":"x"}' });
      assert.equal(unauth.statusCode, 401);
      const keysAfter = (await get('/api/dashboard/api-keys', bearer(freeKey))).json().keys;
      assert.equal(keysAfter.length, 1, 'no failed request created a key');
    });

    test('unknown paths 404, wrong methods 405 with Allow', async () => {
      const nf = await get('/api/v1/nothing-here', bearer(scaleKey));
      assert.equal(nf.statusCode, 404);
      assert.equal(nf.json().error, 'not_found');
      const m = await app.inject({ method: 'POST', url: '/api/v1/account', headers: bearer(scaleKey) });
      assert.equal(m.statusCode, 405);
      assert.equal(m.headers.allow, 'GET, HEAD');
      assert.equal(m.json().error, 'method_not_allowed');
      assert.equal((await app.inject({ method: 'PUT', url: '/api/dashboard/api-keys' })).headers.allow, 'GET, HEAD, POST, DELETE');
    });

    test('health and readiness', async () => {
      assert.deepEqual((await get('/healthz')).json(), { status: 'ok' });
      const ready = await get('/readyz');
      assert.equal(ready.statusCode, 200);
      // smtp: the SMTP self-check (issue 23), null without SMTP probing.
      assert.deepEqual(ready.json(), { status: 'ok', checks: { database: 'ok', storage: 'ok' }, smtp: null });
    });

    test('the OpenAPI document is valid 3.0.3, version 1.0.0, and documents every route and error code', async () => {
      const doc = (await assertOpenApiComplete(app)) as {
        info: { version: string };
        components: { securitySchemes: Record<string, unknown> };
        paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: { properties: { error: { enum: string[] } } } }> }> }>>;
      };
      assert.equal(doc.info.version, '1.0.0');
      assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKeyHeader', 'apiKeyQuery', 'bearerAuth', 'dashboardSession'], 'the three key forms of the contract, and the dashboard session cookie (extension)');
      const errorEnum = doc.paths['/api/v1/account']!.get!.responses['401']!.content['application/json']!.schema.properties.error.enum;
      assert.deepEqual([...errorEnum].sort(), [...EMAIL_ERROR_CODES].sort());
      for (const p of ['/api/v1/account', '/api/dashboard/api-keys', '/healthz', '/readyz', '/openapi.json']) assert.ok(doc.paths[p], p);
    });

    test('last_used is written for keys in use, and survives a restart', async () => {
      await get('/api/v1/account', bearer(freeKey));
      await app.close();
      app = await start();
      const keys = (await get('/api/dashboard/api-keys', bearer(freeKey))).json().keys as Array<{ last_used: string | null }>;
      assert.ok(keys[0]!.last_used, 'last_used set after the buffered usage was flushed on close');
      assert.ok(freeAccountId);
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.size > 0);
    });
  });
}
