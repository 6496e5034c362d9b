import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { assertOpenApiComplete, createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { buildApp, CONVERT_KEY_PREFIX } from './app.js';
import { loadConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import { CONVERT_ERROR_CODES } from './errors.js';

const NOW = new Date('2026-11-15T10:00:00Z');
let tick = 0;
const clock = () => new Date(NOW.getTime() + 1000 * tick++);

for (const backend of testBackends()) {
  describe(`conversion API (account) on ${backend}`, () => {
    let answers: RecordedAnswer[] = [];
    let drop: () => Promise<void>;
    let url: string;
    let app: ServiceApp;
    let admin: ServiceCore<never>;
    let apiKey: string;
    let ciKey: string;
    let freeKey: string;

    let storage: string;
    const start = async () => buildApp(loadConvertConfig({ CONVERT_DATABASE_URL: url, CONVERT_LOG_LEVEL: 'silent', CONVERT_STORAGE_DIR: storage }), { clock });

    before(async () => {
      ({ url, drop } = await createTestDatabase(backend));
      storage = await mkdtemp(join(tmpdir(), 'convert-api-storage-'));
      app = await start();
      answers = recordAnswers(app);
      admin = await openServiceCore({ database: loadConvertConfig({ CONVERT_DATABASE_URL: url }).database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
      const api = await admin.accounts.createAccount({ email: 'api@example.test', plan: 'api' }, clock());
      const free = await admin.accounts.createAccount({ email: 'free@example.test', plan: 'free' }, clock());
      assert.ok(api.ok && free.ok);
      apiKey = api.apiKey;
      freeKey = free.apiKey;
      const ci = await admin.accounts.createKey(api.account.id, 'ci', clock());
      assert.ok(ci);
      ciKey = ci.apiKey;
      await admin.quota.charge(api.account.id, 17, 10_000, NOW);
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
      await rm(storage, { recursive: true, force: true });
    });

    const get = (path: string, key?: string, headers: Record<string, string> = {}) =>
      app.inject({ method: 'GET', url: path, headers: key ? { authorization: `Bearer ${key}`, ...headers } : headers });

    test('GET /api/v1/account/limits reports the caller’s plan', async () => {
      const api = await get('/api/v1/account/limits', apiKey);
      assert.equal(api.statusCode, 200, api.body);
      assert.deepEqual(api.json(), { success: true, plan: 'api', plan_name: 'API', rate_limit_rpm: 120, max_file_bytes: 2_000_000_000, monthly_conversions: 10_000, max_concurrent_jobs: 8 });
      const free = await get('/api/v1/account/limits', freeKey);
      assert.deepEqual(free.json(), { success: true, plan: 'free', plan_name: 'Free', rate_limit_rpm: 10, max_file_bytes: 100_000_000, monthly_conversions: 100, max_concurrent_jobs: 1 });
    });

    test('GET /api/v1/account/usage: the month, the quota and every key’s requests', async () => {
      await get('/api/v1/account/limits', ciKey);
      await get('/api/v1/account/limits', ciKey);
      await app.close(); // flushes the buffered per-key counts
      app = await start();
      const res = await get('/api/v1/account/usage', apiKey);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.period_start, '2026-11-01T00:00:00.000Z');
      assert.equal(body.period_end, '2026-12-01T00:00:00.000Z');
      assert.deepEqual(body.quota, { limit: 10_000, used: 17, remaining: 9_983 });
      const keys = body.api_keys as Array<{ name: string; requests_this_month: number; key_preview: string; last_used: string | null }>;
      assert.deepEqual(keys.map((k) => [k.name, k.requests_this_month]), [['default', 1], ['ci', 2]]);
      assert.equal(keys[1]!.key_preview, `cv_live_…${ciKey.slice(-4)}`);
      assert.ok(keys[1]!.last_used);
      assert.ok(!res.body.includes(ciKey.slice(8, 30)), 'no full key in the answer');
    });

    test('only Bearer keys of this service are accepted', async () => {
      for (const res of [
        await get('/api/v1/account/limits'),
        await get('/api/v1/account/limits', undefined, { 'x-api-key': apiKey }),
        await get(`/api/v1/account/limits?api_key=${apiKey}`),
        await get('/api/v1/account/limits', `ev_live_${apiKey.slice(8)}`),
        await get('/api/v1/account/limits', `${CONVERT_KEY_PREFIX}${'Z'.repeat(32)}`),
      ]) {
        assert.equal(res.statusCode, 401);
        assert.equal(res.json().error, 'unauthorized');
      }
    });

    test('conflicting credentials are refused (401), never read as the first one: two Authorization headers, a Bearer key and another key elsewhere', async () => {
      const conflicting: Array<[string, Record<string, string | string[]>]> = [
        ['/api/v1/account/limits', { authorization: [`Bearer ${apiKey}`, `Bearer ${freeKey}`] }],
        ['/api/v1/account/limits', { authorization: [`Bearer ${apiKey}`, `Bearer ${apiKey}`] }],
        ['/api/v1/account/limits', { authorization: `Bearer ${apiKey}`, 'x-api-key': freeKey }],
        [`/api/v1/account/limits?api_key=${freeKey}`, { authorization: `Bearer ${apiKey}` }],
      ];
      for (const [path, headers] of conflicting) {
        const res = await app.inject({ method: 'GET', url: path, headers });
        assert.equal(res.statusCode, 401, `${path} ${JSON.stringify(headers)}: ${res.body}`);
        assert.equal(res.json().error, 'unauthorized');
        assert.ok(res.headers['www-authenticate']);
      }
      // The key alone still works.
      assert.equal((await get('/api/v1/account/limits', apiKey)).statusCode, 200);
    });

    test('per-plan rate limit: 429 rate_limited with Retry-After and RateLimit headers', async () => {
      const first = await get('/api/v1/account/limits', freeKey);
      assert.equal(first.headers['ratelimit-limit'], '10');
      assert.equal(first.headers['ratelimit-remaining'], '9');
      const statuses = [];
      for (let i = 0; i < 9; i++) statuses.push((await get('/api/v1/account/limits', freeKey)).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 200]);
      const limited = await get('/api/v1/account/usage', freeKey);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error, 'rate_limited');
      const retry = Number(limited.headers['retry-after']);
      assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
      assert.equal(limited.headers['ratelimit-remaining'], '0');
      assert.equal(limited.headers['ratelimit-reset'], String(retry));
      assert.equal((await get('/api/v1/account/limits', apiKey)).statusCode, 200, 'another account is not affected');
    });

    test('errors: 404 unknown path, 405 wrong method with Allow', async () => {
      assert.equal((await get('/api/v1/account/nothing', apiKey)).json().error, 'not_found');
      const m = await app.inject({ method: 'DELETE', url: '/api/v1/account/usage', headers: { authorization: `Bearer ${apiKey}` } });
      assert.equal(m.statusCode, 405);
      assert.equal(m.headers.allow, 'GET, HEAD');
    });

    test('health, readiness and a valid, complete OpenAPI document', async () => {
      const ready = (await get('/readyz')).json() as { status: string; checks: Record<string, string> };
      assert.equal(ready.status, 'ok');
      for (const engine of ['libreoffice', 'pandoc', 'sharp', 'imagemagick', 'ffmpeg', 'poppler', 'qpdf', 'ghostscript', 'tesseract']) assert.equal(ready.checks[`engine_${engine}`], 'ok', engine);
      assert.equal(ready.checks.database, 'ok');
      const doc = (await assertOpenApiComplete(app)) as { components: { securitySchemes: Record<string, unknown> }; paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: { properties: { error: { enum: string[] } } } }> }> }>> };
      assert.deepEqual(Object.keys(doc.components.securitySchemes), ['bearerAuth', 'dashboardSession'], 'the contract’s Bearer key, and the dashboard session cookie (extension)');
      const errorEnum = doc.paths['/api/v1/account/limits']!.get!.responses['401']!.content['application/json']!.schema.properties.error.enum;
      assert.deepEqual([...errorEnum].sort(), [...CONVERT_ERROR_CODES].sort());
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.size > 0);
    });
  });
}
