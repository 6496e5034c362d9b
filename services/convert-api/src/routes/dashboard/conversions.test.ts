import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findProjectRoot, openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { assertAnswersMatchDocument, createTestDatabase, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import { buildApp, CONVERT_KEY_PREFIX } from '../../app.js';
import { loadConvertConfig } from '../../config.js';
import { CONVERT_MIGRATIONS } from '../../db/migrations.js';

const PNG = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures', 'sample.png');

/** A multipart body as a browser would send it (FormData encoded by the platform's Request). */
async function multipart(fields: Record<string, string>, file: Buffer): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([new Uint8Array(file)]), 'sample.png');
  const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

for (const backend of testBackends()) {
  describe(`GET /api/dashboard/conversions on ${backend}`, () => {
    let app: ServiceApp;
    let admin: ServiceCore<never>;
    let work: string;
    let drop: () => Promise<void>;
    let answers: RecordedAnswer[] = [];
    const keys: string[] = [];

    before(async () => {
      work = await mkdtemp(join(tmpdir(), 'convert-dashboard-list-'));
      const db = await createTestDatabase(backend);
      drop = db.drop;
      const config = loadConvertConfig({ CONVERT_DATABASE_URL: db.url, CONVERT_LOG_LEVEL: 'silent', CONVERT_STORAGE_DIR: join(work, 'storage') });
      app = await buildApp(config);
      answers = recordAnswers(app);
      admin = await openServiceCore({ database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
      for (const email of ['a@example.test', 'b@example.test']) {
        const acct = await admin.accounts.createAccount({ email, plan: 'api' }, new Date());
        assert.ok(acct.ok);
        keys.push(acct.apiKey);
      }
    });
    after(async () => {
      await app?.close();
      await admin?.close();
      await drop?.();
      await rm(work, { recursive: true, force: true });
    });

    const list = (key: string, query = '') => app.inject({ method: 'GET', url: `/api/dashboard/conversions${query}`, headers: { authorization: `Bearer ${key}` } });

    test('newest first, the same records as GET /api/v1/jobs/{id}, only the caller\'s, limit honoured', { timeout: 60_000 }, async () => {
      assert.deepEqual((await list(keys[0]!)).json(), { success: true, conversions: [] });
      const png = await readFile(PNG);
      const ids: string[] = [];
      for (const target of ['jpg', 'webp']) {
        const body = await multipart({ target_format: target }, png);
        const res = await app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', headers: { authorization: `Bearer ${keys[0]}`, ...body.headers }, payload: body.payload });
        assert.equal(res.statusCode, 200, res.body);
        ids.push(res.json().id);
      }
      const res = await list(keys[0]!);
      assert.equal(res.statusCode, 200, res.body);
      const conversions = res.json().conversions as Array<{ id: string; status: string; target_format: string }>;
      assert.deepEqual(conversions.map((c) => c.id), [...ids].reverse());
      const one = await app.inject({ method: 'GET', url: `/api/v1/jobs/${ids[1]}`, headers: { authorization: `Bearer ${keys[0]}` } });
      assert.deepEqual(conversions[0], one.json());
      assert.deepEqual((await list(keys[0]!, '?limit=1')).json().conversions.map((c: { id: string }) => c.id), [ids[1]]);
      assert.deepEqual((await list(keys[1]!)).json().conversions, []);
    });

    test('a bad limit is 400 naming the field; no key is 401; answers match the document', async () => {
      for (const q of ['?limit=0', '?limit=101', '?limit=x', '?other=1']) {
        const res = await list(keys[0]!, q);
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().error, 'invalid_request', q);
      }
      assert.equal((await app.inject({ method: 'GET', url: '/api/dashboard/conversions' })).statusCode, 401);
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.has('GET /api/dashboard/conversions'), [...covered].join());
    });
  });
}
