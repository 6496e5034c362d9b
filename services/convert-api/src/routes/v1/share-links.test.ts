import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { assertAnswersMatchDocument, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import type { ConvertTables } from '../../db/schema.js';
import { useConvertApp } from './api.test-support.js';

const PNG = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures', 'sample.png');
const BASE = 'http://127.0.0.1:8081';
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Share links (issue 24): an output downloadable without a key until expiry, revocation or shredding. */
let converter: Converter;
let work: string;
let png: Buffer;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-share-'));
  png = await readFile(PNG);
  converter = await Converter.create({ workDir: join(work, 'engine') });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

for (const backend of testBackends()) {
  describe(`share links on ${backend}`, () => {
    const fx = useConvertApp(backend, {
      storage: () => join(work, `storage-${backend}`),
      converter: () => converter,
      email: `share-${backend}@example.com`,
      env: { CONVERT_PUBLIC_BASE_URL: BASE, CONVERT_SHARE_RPM: '40' },
    });
    let answers: RecordedAnswer[];
    before(() => {
      answers = recordAnswers(fx.app);
    });
    // The fixture's admin core is untyped (never): the service's own tables, to look at what is stored.
    const db = () => fx.admin.database.db as unknown as Kysely<ConvertTables>;

    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, key = fx.key) =>
      fx.app.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
    const open = (url: string, headers: Record<string, string> = {}) => fx.app.inject({ method: 'GET', url: url.replace(BASE, ''), headers });
    const convert = async (fields: Record<string, string> = {}) => {
      const boundary = 'share-boundary';
      const parts = [`--${boundary}\r\ncontent-disposition: form-data; name="target_format"\r\n\r\njpg\r\n`, ...Object.entries(fields).map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)];
      const body = Buffer.concat([Buffer.from(parts.join('')), Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="photo.png"\r\ncontent-type: image/png\r\n\r\n`), png, Buffer.from(`\r\n--${boundary}--\r\n`)]);
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', headers: { authorization: `Bearer ${fx.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: body });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { id: string; status: string; download_token: string | null; output: { sha256: string; size_bytes: number } | null };
    };
    const share = async (id: string, body?: Record<string, unknown>) => {
      const res = await call('POST', `/api/v1/jobs/${id}/links`, body ?? {});
      assert.equal(res.statusCode, 201, res.body);
      return res.json().link as { link_id: string; url: string; expires_at: string; state: string };
    };

    test('a link downloads the output without a key (whole and by range), the same bytes and digest; only a hash of its token is stored', async () => {
      const record = await convert();
      const link = await share(record.id, { expires_in: 3600 });
      assert.match(link.url, /^http:\/\/127\.0\.0\.1:8081\/api\/v1\/shared\/sh_[0-9A-Za-z]{32}$/);
      assert.equal(link.state, 'active');
      const expected = Date.now() + 3600_000;
      assert.ok(Math.abs(Date.parse(link.expires_at) - expected) < 60_000, link.expires_at);
      const got = await open(link.url);
      assert.equal(got.statusCode, 200, got.body);
      assert.equal(sha256(got.rawPayload), record.output!.sha256);
      assert.equal(got.headers.digest, `sha-256=${Buffer.from(record.output!.sha256, 'hex').toString('base64')}`);
      assert.equal(got.headers['referrer-policy'], 'no-referrer');
      assert.equal(got.headers['x-robots-tag'], 'noindex');
      assert.equal(got.headers['content-type'], 'image/jpeg');
      const part = await open(link.url, { range: 'bytes=0-9' });
      assert.deepEqual([part.statusCode, part.rawPayload.length, part.headers['content-range']], [206, 10, `bytes 0-9/${record.output!.size_bytes}`]);
      const token = link.url.split('/').pop()!;
      const rows = await db().selectFrom('share_links').selectAll().where('conversion_id', '=', record.id).execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.token_hash, sha256(token));
      assert.ok(!JSON.stringify(rows).includes(token), 'the token is not stored in clear');
      const listed = await call('GET', `/api/v1/jobs/${record.id}/links`);
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(listed.json().links.map((l: { link_id: string; state: string }) => [l.link_id, l.state]), [[link.link_id, 'active']]);
      assert.ok(!listed.body.includes(token), 'the list never shows the URL again');
      // The contract's download by token keeps needing the key.
      const keyless = await fx.app.inject({ method: 'GET', url: `/api/v1/download/${record.download_token}` });
      assert.equal(keyless.statusCode, 401);
    });

    test('keyed and shared downloads say nosniff; a suffix range longer than the output is all of it (206), -0 is 416 (issue 45)', async () => {
      const record = await convert();
      const link = await share(record.id);
      const size = record.output!.size_bytes;
      const keyed = (url: string) => (headers: Record<string, string> = {}) => fx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${fx.key}`, ...headers } });
      const routes = {
        download: keyed(`/api/v1/download/${record.download_token}`),
        'job download': keyed(`/api/v1/jobs/${record.id}/download/${record.download_token}`),
        'share link': (headers: Record<string, string> = {}) => open(link.url, headers),
      };
      for (const [route, get] of Object.entries(routes)) {
        const whole = await get();
        assert.deepEqual([whole.statusCode, whole.headers['x-content-type-options']], [200, 'nosniff'], route);
        for (const range of ['bytes=-99999999', `bytes=-${size + 1}`, `bytes=-${size}`]) {
          const all = await get({ range });
          assert.deepEqual([all.statusCode, all.headers['content-range'], all.headers['content-length'], all.headers['x-content-type-options']], [206, `bytes 0-${size - 1}/${size}`, String(size), 'nosniff'], `${route} ${range}`);
          assert.equal(sha256(all.rawPayload), record.output!.sha256, `${route} ${range}`);
        }
        const tail = await get({ range: 'bytes=-16' });
        assert.deepEqual([tail.statusCode, tail.headers['content-range'], tail.rawPayload.length], [206, `bytes ${size - 16}-${size - 1}/${size}`, 16], route);
        const none = await get({ range: 'bytes=-0' });
        assert.deepEqual([none.statusCode, none.json().error, none.headers['content-range']], [416, 'range_not_satisfiable', `bytes */${size}`], route);
      }
    });

    test('revoked, expired and shredded links answer 410; unknown ones 404', async () => {
      const record = await convert();
      const [revoked, expiring, kept] = [await share(record.id), await share(record.id, { expires_in: 60 }), await share(record.id)];
      const gone = await call('DELETE', `/api/v1/jobs/${record.id}/links/${revoked.link_id}`);
      assert.deepEqual([gone.statusCode, gone.json().link.state], [200, 'revoked']);
      assert.deepEqual([(await open(revoked.url)).statusCode, (await open(revoked.url)).json().error], [410, 'gone']);
      await db().updateTable('share_links').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', expiring.link_id).execute();
      const late = await open(expiring.url);
      assert.deepEqual([late.statusCode, late.json().error], [410, 'gone']);
      assert.match(late.json().message, /expired/);
      assert.equal((await open(kept.url)).statusCode, 200);
      assert.equal((await call('DELETE', `/api/v1/jobs/${record.id}`)).statusCode, 200, 'shredded');
      const shredded = await open(kept.url);
      assert.deepEqual([shredded.statusCode, shredded.json().error], [410, 'gone']);
      // A real token with its last character changed (to another one) opens nothing.
      const token = kept.url.split('/').pop()!;
      const altered = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
      for (const url of ['/api/v1/shared/sh_0000000000000000000000000000000x', '/api/v1/shared/not-a-token', `/api/v1/shared/${altered}`]) {
        const res = await open(url);
        assert.deepEqual([res.statusCode, res.json().error], [404, 'not_found'], url);
      }
      const again = await call('DELETE', `/api/v1/jobs/${record.id}/links/lnk_nope`);
      assert.deepEqual([again.statusCode, again.json().error], [404, 'not_found']);
    });

    test('refused: a failed conversion (409), too long a life (400 naming expires_in), another account’s conversion (404)', async () => {
      const failed = await convert({ max_output_bytes: '1' });
      assert.equal(failed.status, 'failed');
      const notDone = await call('POST', `/api/v1/jobs/${failed.id}/links`, {});
      assert.deepEqual([notDone.statusCode, notDone.json().error], [409, 'conflict']);
      const record = await convert();
      for (const expiresIn of [8 * 86_400, 2 * 86_400, 10, 'soon']) {
        const res = await call('POST', `/api/v1/jobs/${record.id}/links`, { expires_in: expiresIn });
        assert.deepEqual([res.statusCode, res.json().error, res.json().field], [400, 'invalid_request', 'expires_in'], String(expiresIn));
      }
      // 2 days is under 7 but past the output's own expiry (24 h by default): the message says so.
      const past = await call('POST', `/api/v1/jobs/${record.id}/links`, { expires_in: 2 * 86_400 });
      assert.match(past.json().message, /removed at/);
      const whole = await share(record.id);
      assert.equal(Date.parse(whole.expires_at) <= Date.parse((await call('GET', `/api/v1/jobs/${record.id}`)).json().expires_at), true, 'omitted: until the output expires');
      const other = await fx.admin.accounts.createAccount({ email: `other-${backend}@example.com`, plan: 'api' }, new Date());
      assert.ok(other.ok);
      for (const [method, url] of [['POST', `/api/v1/jobs/${record.id}/links`], ['GET', `/api/v1/jobs/${record.id}/links`], ['DELETE', `/api/v1/jobs/${record.id}/links/${whole.link_id}`]] as const) {
        const res = await call(method, url, method === 'POST' ? {} : undefined, other.apiKey);
        assert.deepEqual([res.statusCode, res.json().error], [404, 'not_found'], `${method} ${url}`);
      }
    });

    test('every answer matches the OpenAPI document; shared downloads are counted per address (429 with Retry-After)', async () => {
      let limited: Awaited<ReturnType<typeof open>> | undefined;
      for (let i = 0; i < 45 && !limited; i++) {
        const res = await open('/api/v1/shared/sh_0000000000000000000000000000000x');
        if (res.statusCode === 429) limited = res;
      }
      assert.ok(limited, 'the 41st request in a minute is refused');
      assert.equal(limited.json().error, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      const covered = await assertAnswersMatchDocument(fx.app, answers);
      for (const route of ['POST /api/v1/jobs/{id}/links', 'GET /api/v1/jobs/{id}/links', 'DELETE /api/v1/jobs/{id}/links/{link_id}', 'GET /api/v1/shared/{token}']) assert.ok(covered.has(route), route);
    });
  });
}
