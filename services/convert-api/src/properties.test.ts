// Bad input at scale (issue #15): property-based requests (fast-check) over every route of the
// conversion service — JSON bodies, query strings, path segments and headers (Range,
// Content-Type, Idempotency-Key, …) — each answered with a status documented for the route,
// in the contract's error shape with a code from the closed list, never a 500; the process
// serves normally afterwards. Seeded (the seed is printed; PROPERTY_SEED replays it) and
// bounded in runs and time: about 10–30 s per backend on 2 busy cores.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import {
  answerChecker, assertRequestsKeepContract, assertSchemaRequestsKeepContract, contentTypes, contractProblems, headerText, hostileBody, hostileJson, hostilePayload, hostileQuery, hostileString, oddHeaders, pathSegment,
  propertySeed, rangeHeader, recordAnswers, testBackends, type RecordedAnswer,
} from '@mailconv/platform/testing';
import { CONVERT_KEY_PREFIX } from './app.js';
import { CONVERT_ERROR_STATUS } from './errors.js';
import { useConvertApp } from './routes/v1/api.test-support.js';

const SEED = propertySeed();
const SCALE = Number(process.env.PROPERTY_RUNS ?? '1');
const backends = testBackends();
const RUNS = Math.max(20, Math.round((1600 * SCALE) / backends.length));
const TIME_LIMIT_MS = Math.round((40_000 * SCALE) / backends.length);
/** The schema-driven requests (issue #29): a few hundred per service, over every documented operation. */
const SCHEMA_RUNS = Math.max(20, Math.round((400 * SCALE) / backends.length));
const SCHEMA_TIME_LIMIT_MS = Math.round((40_000 * SCALE) / backends.length);
const PNG = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures', 'sample.png');

type Request = InjectOptions & { url: string };

let converter: Converter;
/** Made at load: the suites' settings name files in it. */
const work = mkdtempSync(join(tmpdir(), 'convert-props-'));
before(async () => {
  converter = await Converter.create({ workDir: join(work, 'engine'), timeoutMs: 30_000, maxMemoryBytes: 512 * 1024 ** 2, libreoffice: { instances: 1 } });
  await writeFile(join(work, 'plans.json'), JSON.stringify({ plans: { api: { rateLimitRpm: 1_000_000, monthlyQuota: 1_000_000 } } }));
});
after(async () => {
  await converter?.close();
  await rm(work, { recursive: true, force: true });
});

/** A multipart body holding one PNG, built by the platform's own FormData. */
async function pngUpload(): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  form.append('file', new Blob([await readFile(PNG)]), 'sample.png');
  const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

for (const backend of backends) {
  describe(`conversion API under property-based requests on ${backend}`, () => {
    const f = useConvertApp(backend, {
      storage: () => join(work, `storage-${backend}`),
      converter: () => converter,
      email: 'props@example.test',
      env: {
        CONVERT_PLANS_FILE: join(work, 'plans.json'),
        CONVERT_PUBLIC_BASE_URL: 'http://127.0.0.1:8081',
        // Generated URLs (imports, webhooks, exports) are looked up on a dead loopback resolver
        // and fenced to loopback; no webhook is delivered. Nothing leaves the machine.
        CONVERT_DNS_SERVERS: '127.0.0.1:9',
        CONVERT_URL_RESTRICT_TO: '127.0.0.0/8,::1/128',
        CONVERT_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
        CONVERT_WEBHOOKS_CONCURRENCY: '0',
      },
    });
    let answers: RecordedAnswer[] = [];
    let uploadId: string;
    let conversionId: string;
    let token: string;

    before(async () => {
      answers = recordAnswers(f.app);
      const auth = { authorization: `Bearer ${f.key}` };
      const up = await pngUpload();
      const uploaded = await f.app.inject({ method: 'POST', url: '/api/v1/upload', payload: up.payload, headers: { ...up.headers, ...auth } });
      assert.equal(uploaded.statusCode, 201, uploaded.body);
      uploadId = uploaded.json().upload_id ?? uploaded.json().id;
      const converted = await f.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', headers: auth, payload: { upload_id: uploadId, target_format: 'jpg' } });
      assert.equal(converted.statusCode, 200, converted.body);
      conversionId = converted.json().id;
      token = converted.json().download_token;
      assert.ok(conversionId && token, converted.body);
    });

    const authHeaders = () =>
      fc.oneof(
        { weight: 12, arbitrary: fc.constant(null).map(() => ({ authorization: `Bearer ${f.key}` })) },
        { weight: 1, arbitrary: fc.constantFrom({}, { authorization: 'Bearer' }, { authorization: `Bearer ${CONVERT_KEY_PREFIX}${'A'.repeat(32)}` }, { 'x-api-key': 'ev_live_x' }) },
        { weight: 1, arbitrary: headerText.map((v) => ({ authorization: v })) },
      );
    const real = (value: () => string) => fc.oneof({ weight: 2, arbitrary: fc.constant(null).map(() => value()) }, { weight: 3, arbitrary: pathSegment });
    const withQuery = (path: fc.Arbitrary<string>, params: readonly string[]) => fc.tuple(path, hostileQuery(params)).map(([p, q]) => p + q);

    const jsonRequest = (url: fc.Arbitrary<string>, fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Request> =>
      fc.record({ url, payload: hostilePayload(hostileBody(fields)), type: contentTypes, auth: authHeaders(), extra: oddHeaders }).map(({ url: u, payload, type, auth, extra }) => ({
        method: 'POST',
        url: u,
        payload,
        headers: { ...extra, ...auth, ...(type === undefined ? {} : { 'content-type': type }) },
      }));
    const bodiless = (method: 'GET' | 'DELETE', url: fc.Arbitrary<string>): fc.Arbitrary<Request> =>
      fc.record({ url, auth: authHeaders(), extra: oddHeaders, range: fc.option(rangeHeader, { nil: undefined }), body: fc.option(hostilePayload(hostileJson), { nil: undefined }), type: contentTypes }).map(
        ({ url: u, auth, extra, range, body, type }) => ({
          method,
          url: u,
          headers: { ...extra, ...auth, ...(range === undefined ? {} : { range }), ...(body !== undefined && type !== undefined ? { 'content-type': type } : {}) },
          ...(body !== undefined && method !== 'GET' ? { payload: body } : {}),
        }),
      );

    const convertFields = {
      upload_id: fc.oneof({ weight: 3, arbitrary: fc.constant(null).map(() => uploadId) }, { weight: 1, arbitrary: hostileString }),
      target_format: fc.oneof(fc.constantFrom('jpg', 'webp', 'gif', 'pdf', 'png', 'JPG', 'docx', 'mp3', ''), hostileString),
      preset: fc.oneof(fc.constantFrom('web', 'print', 'thumbnail', 'ebook', 'archive'), hostileString),
      quality: fc.oneof(fc.integer({ min: -5, max: 105 }), hostileJson),
      page_range: fc.oneof(fc.constantFrom('1', '1-3,5,8-', '0', '-', '2-1', '999999999999'), hostileString),
      ocr_language: fc.oneof(fc.constantFrom('xx', 'eng+', '+', 'EN'), hostileString),
      max_output_bytes: fc.oneof(fc.integer({ min: -1, max: 10_000 }), fc.constant(Number.MAX_SAFE_INTEGER + 2)),
      remove_active_content: fc.oneof(fc.boolean(), fc.constant('true')),
    };

    const requests = (): fc.Arbitrary<Request> =>
      fc.oneof(
        { weight: 6, arbitrary: jsonRequest(withQuery(fc.constant('/api/v1/convert'), ['wait']), convertFields) },
        { weight: 1, arbitrary: jsonRequest(withQuery(fc.constantFrom('/api/v1/jobs', '/api/v1/upload'), []), convertFields) },
        { weight: 2, arbitrary: bodiless('GET', withQuery(fc.constantFrom('/api/v1/account/usage', '/api/v1/account/limits', '/api/v1/formats'), ['api_key'])) },
        { weight: 2, arbitrary: bodiless('GET', real(() => 'png').map((ext) => `/api/v1/formats/${ext}/targets`)) },
        { weight: 2, arbitrary: bodiless('GET', fc.tuple(fc.constantFrom('/api/v1/convert/{id}/status', '/api/v1/jobs/{id}'), real(() => conversionId)).map(([t, id]) => t.replace('{id}', id))) },
        { weight: 3, arbitrary: bodiless('GET', real(() => token).map((t) => `/api/v1/download/${t}`)) },
        { weight: 2, arbitrary: bodiless('GET', fc.tuple(real(() => conversionId), real(() => token)).map(([id, t]) => `/api/v1/jobs/${id}/download/${t}`)) },
        // Shred: a made-up id mostly (the real one is shredded at most once; its downloads then answer 410).
        { weight: 1, arbitrary: bodiless('DELETE', fc.oneof({ weight: 60, arbitrary: pathSegment }, { weight: 1, arbitrary: fc.constant(null).map(() => conversionId) }).map((id) => `/api/v1/jobs/${id}`)) },
        { weight: 1, arbitrary: bodiless('DELETE', fc.constantFrom('/api/v1/convert', '/api/v1/formats', '/api/v1/nope')) },
      );

    test('every request is answered within the contract: documented status, error shape, closed codes, no 500', { timeout: TIME_LIMIT_MS + 90_000 }, async () => {
      const checkDocument = await answerChecker(f.app);
      const { runs, statuses } = await assertRequestsKeepContract(f.app, `convert on ${backend}`, requests(), {
        errors: CONVERT_ERROR_STATUS,
        seed: SEED,
        numRuns: RUNS,
        timeLimitMs: TIME_LIMIT_MS,
        answers,
        checkDocument,
      });
      console.log(`# convert on ${backend}: ${runs} requests, statuses ${JSON.stringify(statuses)}`);
      assert.ok(runs >= Math.min(RUNS, 20), `at least a few runs happened (${runs})`);
      assert.ok(Object.keys(statuses).some((s) => s.startsWith('2')), 'some requests succeeded');
      assert.ok(statuses[400] !== undefined, 'some requests were refused as invalid');
    });

    test('every documented operation under requests generated from the document (schema-driven)', { timeout: SCHEMA_TIME_LIMIT_MS + 120_000 }, async () => {
      await assertSchemaRequestsKeepContract(f.app, `convert schema-driven on ${backend}`, {
        auth: () => ({ authorization: `Bearer ${f.key}` }),
        pathValues: { id: () => conversionId, token: () => token, ext: () => 'png' },
        fieldValues: { upload_id: () => uploadId, upload_ids: () => [uploadId] },
      }, {
        errors: CONVERT_ERROR_STATUS,
        seed: SEED,
        numRuns: SCHEMA_RUNS,
        timeLimitMs: SCHEMA_TIME_LIMIT_MS,
        answers,
      });
    });

    // What the properties found, kept as plain examples.
    test('regressions: prototype names as formats, NUL in ids, stray bodies', async () => {
      const checkDocument = await answerChecker(f.app);
      const from = answers.length;
      const auth = { authorization: `Bearer ${f.key}` };
      const expect = async (req: Request, status: number, code: string) => {
        const res = await f.app.inject(req);
        assert.equal(res.statusCode, status, `${req.method} ${req.url}: ${res.body}`);
        assert.equal(res.json().error, code);
        assert.deepEqual(contractProblems(res, { errors: CONVERT_ERROR_STATUS }), []);
      };
      // These reached Object.prototype through the alias table: 500.
      for (const ext of ['__proto__', 'constructor', 'toString']) await expect({ method: 'GET', url: `/api/v1/formats/${ext}/targets`, headers: auth }, 404, 'not_found');
      // An upload of its own: the property run may have shredded the shared one's conversion (and with it the upload).
      const up = await pngUpload();
      const fresh = (await f.app.inject({ method: 'POST', url: '/api/v1/upload', payload: up.payload, headers: { ...up.headers, ...auth } })).json();
      await expect({ method: 'POST', url: '/api/v1/convert?wait=0', headers: auth, payload: { upload_id: fresh.upload_id ?? fresh.id, target_format: '__proto__' } }, 400, 'invalid_request');
      // PostgreSQL text cannot hold U+0000.
      await expect({ method: 'GET', url: '/api/v1/jobs/cnv_%00', headers: auth }, 404, 'not_found');
      await expect({ method: 'GET', url: '/api/v1/download/%00', headers: auth }, 404, 'not_found');
      await expect({ method: 'POST', url: '/api/v1/convert?wait=0', headers: auth, payload: { upload_id: 'upl_\u0000', target_format: 'jpg' } }, 400, 'invalid_request');
      // A body sent to a route that takes none is still read: its 415 is documented.
      await expect({ method: 'DELETE', url: '/api/v1/jobs/cnv_x', headers: auth, payload: '"x"' }, 415, 'unsupported_media_type');
      assert.deepEqual(checkDocument(answers.slice(from)), []);
    });

    test('the process still serves normally afterwards', async () => {
      assert.equal((await f.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      const auth = { authorization: `Bearer ${f.key}` };
      const up = await pngUpload();
      const uploaded = await f.app.inject({ method: 'POST', url: '/api/v1/upload', payload: up.payload, headers: { ...up.headers, ...auth } });
      assert.equal(uploaded.statusCode, 201, uploaded.body);
      const res = await f.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', headers: auth, payload: { upload_id: uploaded.json().upload_id ?? uploaded.json().id, target_format: 'webp' } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(contractProblems(res, { errors: CONVERT_ERROR_STATUS }), []);
    });
  });
}
