import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter } from '@mailconv/converter';
import { findProjectRoot, hashPassword, openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { assertServesFavicon, createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { buildApp, CONVERT_KEY_PREFIX } from '../../app.js';
import { loadConvertConfig } from '../../config.js';
import { CONVERT_MIGRATIONS } from '../../db/migrations.js';

const PASSWORD = 'conversion dashboard pw';
const FIXTURES = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures');

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-dashboard-test-'));
  // Images only here: the LibreOffice pool is started on the first office job, so never.
  converter = await Converter.create({ workDir: join(work, 'engine') });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

for (const backend of testBackends()) {
  describe(`dashboard sign-in and API keys (conversion service) on ${backend}`, () => {
    let answers: RecordedAnswer[] = [];
    let drop: () => Promise<void>;
    let app: ServiceApp;
    let admin: ServiceCore<never>;
    let firstKey: string;
    let accountId: string;
    let cookie: string;
    let csrf: string;

    before(async () => {
      const db = await createTestDatabase(backend);
      drop = db.drop;
      const config = loadConvertConfig({ CONVERT_DATABASE_URL: db.url, CONVERT_LOG_LEVEL: 'silent', CONVERT_STORAGE_DIR: join(work, `storage-${backend}`) });
      app = await buildApp(config, { converter });
      answers = recordAnswers(app);
      admin = await openServiceCore({ database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
      const acct = await admin.accounts.createAccount({ email: 'cleo@example.test', plan: 'api' });
      assert.ok(acct.ok);
      firstKey = acct.apiKey;
      accountId = acct.account.id;
      assert.ok(await admin.accounts.setPasswordHash(accountId, await hashPassword(PASSWORD)));
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
    });

    const withCookie = (method: 'GET' | 'POST' | 'DELETE', url: string, options: { csrf?: string; payload?: unknown; headers?: Record<string, string> } = {}) =>
      app.inject({
        method,
        url,
        headers: { cookie: `cv_session=${cookie}`, ...(options.csrf ? { 'x-csrf-token': options.csrf } : {}), ...options.headers },
        ...(options.payload !== undefined ? { payload: options.payload as object } : {}),
      });
    const byKey = (method: 'GET' | 'POST' | 'DELETE', url: string, key: string, payload?: unknown) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload !== undefined ? { payload: payload as object } : {}) });

    test('sign-in: the cv_session cookie (HttpOnly, SameSite=Strict); wrong password and unknown address get one 401', async () => {
      const res = await app.inject({ method: 'POST', url: '/api/dashboard/session', payload: { email: 'cleo@example.test', password: PASSWORD } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().account, { id: accountId, email: 'cleo@example.test', plan: 'api' });
      const header = String(res.headers['set-cookie']);
      const m = /^cv_session=([A-Za-z0-9_-]{43}); HttpOnly; SameSite=Strict; Path=\/$/.exec(header);
      assert.ok(m, header);
      cookie = m[1]!;
      csrf = res.json().csrf_token;
      const foreign = await app.inject({ method: 'GET', url: '/api/dashboard/session', headers: { cookie: `ev_session=${cookie}` } });
      assert.deepEqual([foreign.statusCode, foreign.json()], [200, { account: null, csrf_token: null }], 'the email service’s cookie name means nothing here: no session (not an error, issue 30)');
      const wrong = await app.inject({ method: 'POST', url: '/api/dashboard/session', payload: { email: 'cleo@example.test', password: 'not the password' } });
      const unknown = await app.inject({ method: 'POST', url: '/api/dashboard/session', payload: { email: 'who@example.test', password: PASSWORD } });
      assert.deepEqual([wrong.statusCode, unknown.statusCode], [401, 401]);
      assert.equal(wrong.json().message, unknown.json().message);
      const signup = await app.inject({ method: 'POST', url: '/api/dashboard/signup', payload: { email: 'new@example.test', password: PASSWORD } });
      assert.deepEqual([signup.statusCode, signup.json().error], [403, 'forbidden'], 'CONVERT_DASHBOARD_SIGNUP is off by default');
    });

    test('CSRF on POST /api/v1/convert with the cookie: refused without or with a wrong token, accepted with the right one', async () => {
      const png = await readFile(join(FIXTURES, 'sample.png'));
      const form = new FormData();
      form.append('file', new Blob([png]), 'sample.png');
      const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
      const body = { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
      const upNoToken = await withCookie('POST', '/api/v1/upload', { payload: body.payload, headers: body.headers });
      assert.equal(upNoToken.statusCode, 403);
      const up = await withCookie('POST', '/api/v1/upload', { csrf, payload: body.payload, headers: body.headers });
      assert.equal(up.statusCode, 201, up.body);
      const payload = { upload_id: up.json().upload_id, target_format: 'webp' };
      const none = await withCookie('POST', '/api/v1/convert?wait=30', { payload });
      assert.deepEqual([none.statusCode, none.json().error], [403, 'forbidden']);
      const wrong = await withCookie('POST', '/api/v1/convert?wait=30', { csrf: 'A'.repeat(43), payload });
      assert.deepEqual([wrong.statusCode, wrong.json().error], [403, 'forbidden']);
      const ok = await withCookie('POST', '/api/v1/convert?wait=30', { csrf, payload });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().status, 'completed');
      const usage = await withCookie('GET', '/api/v1/account/usage');
      assert.equal(usage.statusCode, 200, usage.body);
      assert.equal(usage.json().quota.used, 1, 'charged to the account');
      assert.deepEqual(
        usage.json().api_keys.map((k: { requests_this_month: number }) => k.requests_this_month),
        [0],
        'requests made with the session count against no key',
      );
      assert.equal((await withCookie('GET', '/api/v1/account/limits')).statusCode, 200);
    });

    test('API keys from the dashboard: create (shown once), list (masked), revoke (stops at once), never the last one', async () => {
      const created = await withCookie('POST', '/api/dashboard/api-keys', { csrf, payload: { name: 'ci' } });
      assert.equal(created.statusCode, 200, created.body);
      const newKey = created.json();
      assert.match(newKey.api_key, /^cv_live_[0-9A-Za-z]{32}$/);
      assert.equal(newKey.key_preview, `cv_live_…${newKey.api_key.slice(-4)}`);
      assert.equal((await byKey('GET', '/api/v1/account/limits', newKey.api_key)).statusCode, 200, 'the new key works');
      const list = await withCookie('GET', '/api/dashboard/api-keys');
      assert.equal(list.statusCode, 200);
      assert.deepEqual(list.json().keys.map((k: { name: string }) => k.name), ['default', 'ci']);
      assert.ok(!list.body.includes(newKey.api_key), 'listings are masked');
      assert.equal((await withCookie('DELETE', `/api/dashboard/api-keys?id=${newKey.id}`)).statusCode, 403, 'no CSRF token, no revocation');
      const revoked = await withCookie('DELETE', `/api/dashboard/api-keys?id=${newKey.id}`, { csrf });
      assert.deepEqual([revoked.statusCode, revoked.json()], [200, { success: true, id: newKey.id }]);
      assert.equal((await byKey('GET', '/api/v1/account/limits', newKey.api_key)).statusCode, 401, 'revoked: refused at once');
      assert.equal((await withCookie('DELETE', `/api/dashboard/api-keys?id=${newKey.id}`, { csrf })).statusCode, 404);
      const keys = (await withCookie('GET', '/api/dashboard/api-keys')).json().keys;
      const last = await withCookie('DELETE', `/api/dashboard/api-keys?id=${keys[0].id}`, { csrf });
      assert.deepEqual([last.statusCode, last.json().error], [409, 'conflict']);
      // With an API key, as on the email service.
      const viaKey = await byKey('POST', '/api/dashboard/api-keys', firstKey, { name: 'by key' });
      assert.equal(viaKey.statusCode, 200);
      assert.equal((await byKey('DELETE', `/api/dashboard/api-keys?id=${viaKey.json().id}`, firstKey)).statusCode, 200);
      assert.equal((await byKey('POST', '/api/dashboard/api-keys', firstKey, { name: '' })).statusCode, 400);
      assert.equal((await app.inject({ method: 'GET', url: '/api/dashboard/api-keys' })).statusCode, 401);
    });

    test('sign-out ends the session everywhere', async () => {
      const out = await withCookie('DELETE', '/api/dashboard/session', { csrf });
      assert.equal(out.statusCode, 204);
      assert.match(String(out.headers['set-cookie']), /^cv_session=; .*Max-Age=0/);
      assert.equal((await withCookie('GET', '/api/v1/account/usage')).statusCode, 401);
      assert.equal((await withCookie('GET', '/api/dashboard/api-keys')).statusCode, 401);
    });

    test('the document lists forbidden among the codes, the session routes, the api-keys extension and the cookie scheme', async () => {
      const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const codes = doc.paths['/api/v1/convert'].post.responses['403'].content['application/json'].schema.properties.error.enum;
      assert.ok(codes.includes('forbidden'));
      assert.equal(doc.components.securitySchemes.dashboardSession.name, 'cv_session');
      for (const m of ['get', 'post', 'delete']) assert.ok(doc.paths['/api/dashboard/api-keys'][m].description.includes('Extension'), m);
    });

    test('query parameters with a default are optional in the document (a generated client need not send them); merge lists its 415 (issue 29)', async () => {
      const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const param = (path: string, method: string, name: string) => (doc.paths[path][method].parameters as Array<{ name: string; required?: boolean; schema: { default?: unknown } }>).find((p) => p.name === name)!;
      for (const [path, method, name, value] of [['/api/v1/convert', 'post', 'wait', 30], ['/api/v1/merge', 'post', 'wait', 30], ['/api/dashboard/conversions', 'get', 'limit', 20]] as const) {
        assert.notEqual(param(path, method, name).required, true, `${method} ${path} ${name}`);
        assert.equal(param(path, method, name).schema.default, value);
      }
      assert.ok(doc.paths['/api/v1/merge'].post.responses['415'], 'merge documents 415');
      // And it answers 415 to a body that is not JSON (merge takes JSON only).
      const form = await app.inject({ method: 'POST', url: '/api/v1/merge', headers: { authorization: `Bearer ${firstKey}`, 'content-type': 'text/plain' }, payload: 'upload_ids' });
      assert.equal(form.statusCode, 415, form.body);
      // Without wait, the default applies.
      assert.equal((await app.inject({ method: 'GET', url: '/api/dashboard/conversions', headers: { authorization: `Bearer ${firstKey}` } })).statusCode, 200);
    });

    test('/favicon.ico is the dashboards\' mark (an ICO), cached for a month (issue 44)', async () => {
      await assertServesFavicon(app);
    });

    test('the bare host leads to the dashboard: GET / is a 302 to /dashboard/ (issue 30)', async () => {
      const res = await app.inject({ method: 'GET', url: '/' });
      assert.deepEqual([res.statusCode, res.headers.location], [302, '/dashboard/']);
      assert.equal(((await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> }).paths['/'], undefined, 'a page, not API');
    });

    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      for (const op of ['POST /api/v1/convert', 'GET /api/dashboard/api-keys', 'POST /api/dashboard/api-keys', 'DELETE /api/dashboard/api-keys', 'POST /api/dashboard/session', 'DELETE /api/dashboard/session']) assert.ok(covered.has(op), op);
    });
  });
}
