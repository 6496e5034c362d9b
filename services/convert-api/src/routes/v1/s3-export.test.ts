import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Kysely } from 'kysely';
import sharp from 'sharp';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { assertAnswersMatchDocument, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import type { ConvertTables } from '../../db/schema.js';
import { useConvertApp } from './api.test-support.js';

/**
 * Export to S3-compatible storage (issue 24), against s3rver (a fake S3 from npm that checks
 * SigV4 signatures and speaks multipart uploads) on 127.0.0.1. Every connection the service
 * makes is fenced to loopback (`CONVERT_URL_RESTRICT_TO`); insecure (http, private) endpoints
 * are allowed only for this test's app.
 */
interface S3rverInstance {
  configureBuckets(): Promise<void>;
  callback(): RequestListener;
}
const S3rver = createRequire(import.meta.url)('s3rver') as new (options: Record<string, unknown>) => S3rverInstance;

const PNG = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures', 'sample.png');
const KEY_ID = 'S3RVER';
const SECRET = 'S3RVER';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let converter: Converter;
/** Made now: the apps' settings (their data folders) are read when the suites are declared. */
const work = mkdtempSync(join(tmpdir(), 'convert-s3-'));
let s3: Server;
/** The requests the store received (method and path with query), to see a multipart upload's steps. */
const seen: string[] = [];
let endpoint: string;
let reader: S3Client;

before(async () => {
  converter = await Converter.create({ workDir: join(work, 'engine') });
  const store = new S3rver({ silent: true, directory: join(work, 's3'), configureBuckets: [{ name: 'exports' }] });
  await store.configureBuckets();
  const handle = store.callback();
  s3 = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    handle(req, res);
  });
  await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(s3.address() as AddressInfo).port}`;
  reader = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
});
after(async () => {
  reader.destroy();
  s3.closeAllConnections();
  await new Promise((resolve) => s3.close(resolve));
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

/** The object as the store holds it: bytes, ETag, metadata. */
async function readObject(key: string): Promise<{ bytes: Buffer; etag: string; sha256: string | undefined; type: string | undefined }> {
  const got = await reader.send(new GetObjectCommand({ Bucket: 'exports', Key: key }));
  const head = await reader.send(new HeadObjectCommand({ Bucket: 'exports', Key: key }));
  return { bytes: Buffer.from(await got.Body!.transformToByteArray()), etag: (got.ETag ?? '').replace(/"/g, ''), sha256: head.Metadata?.sha256, type: got.ContentType };
}

for (const backend of testBackends()) {
  describe(`S3 exports on ${backend}`, () => {
    const fx = useConvertApp(backend, {
      storage: () => join(work, `storage-${backend}`),
      converter: () => converter,
      email: `s3-${backend}@example.com`,
      env: { CONVERT_EXPORT_ALLOW_INSECURE: 'true', CONVERT_URL_RESTRICT_TO: '127.0.0.0/8,::1/128', CONVERT_EXPORT_PART_MB: '5', CONVERT_DATA_DIR: join(work, `data-${backend}`) },
    });
    let answers: RecordedAnswer[];
    before(() => {
      answers = recordAnswers(fx.app);
    });
    const db = () => fx.admin.database.db as unknown as Kysely<ConvertTables>;
    const auth = () => ({ authorization: `Bearer ${fx.key}` });
    const upload = async (bytes: Buffer, filename: string) => {
      const boundary = 's3-boundary';
      const body = Buffer.concat([Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${filename}"\r\ncontent-type: application/octet-stream\r\n\r\n`), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: body });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { upload_id: string }).upload_id;
    };
    const convert = (payload: Record<string, unknown>) =>
      fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', headers: { ...auth(), 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const target = (extra: Record<string, unknown> = {}) => ({ endpoint, bucket: 'exports', access_key_id: KEY_ID, secret_access_key: SECRET, ...extra });
    interface Record_ {
      id: string;
      status: string;
      output: { sha256: string; size_bytes: number; filename: string };
      export: { status: string; key: string | null; etag: string | null; bucket: string; error: { code: string; message: string } | null; completed_at: string | null };
    }

    test('an output exported in one PUT: read back from the bucket with the same SHA-256 (also in its metadata); the key template filled in; no credential stored or answered', async () => {
      const id = await upload(await readFile(PNG), 'photo.png');
      const res = await convert({ upload_id: id, target_format: 'jpg', export: target({ key: 'out/{date}/{stem}-{id}.{ext}' }) });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(!res.body.includes(SECRET) && !res.body.includes('secret_access_key'), 'the answer holds no credential');
      const record = res.json() as Record_;
      assert.equal(record.status, 'completed');
      assert.equal(record.export.status, 'completed', JSON.stringify(record.export));
      assert.equal(record.export.key, `out/${new Date().toISOString().slice(0, 10)}/photo-${record.id}.jpg`);
      const object = await readObject(record.export.key!);
      assert.equal(sha256(object.bytes), record.output.sha256);
      assert.equal(object.sha256, record.output.sha256);
      assert.equal(object.type, 'image/jpeg');
      assert.equal(record.export.etag, object.etag);
      // Stored: the target, and no credentials any more (they were sealed until the export ran).
      const row = await db().selectFrom('conversions').select(['export', 'export_credentials']).where('id', '=', record.id).executeTakeFirstOrThrow();
      assert.equal(row.export_credentials, null);
      assert.ok(!row.export!.includes(SECRET));
    });

    test('a large output goes as a multipart upload (5 MiB parts): created, two parts, completed; its bytes match', { timeout: 120_000 }, async () => {
      seen.length = 0;
      // 1,700 × 1,200 of noise: a BMP of about 6 MB, over one part.
      const noise = await sharp(Buffer.from(Array.from({ length: 1700 * 1200 * 3 }, (_, i) => (i * 2654435761) % 251)), { raw: { width: 1700, height: 1200, channels: 3 } }).png().toBuffer();
      const id = await upload(noise, 'noise.png');
      const res = await convert({ upload_id: id, target_format: 'bmp', export: target() });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as Record_;
      assert.equal(record.export.status, 'completed', JSON.stringify(record.export));
      assert.ok(record.output.size_bytes > 5 * 1024 * 1024, String(record.output.size_bytes));
      assert.equal(record.export.key, `${record.id}/noise.bmp`);
      const path = `/exports/${record.id}/noise.bmp`;
      assert.equal(seen.filter((r) => r.startsWith(`POST ${path}?uploads`)).length, 1, seen.join('\n'));
      assert.deepEqual(seen.filter((r) => r.startsWith(`PUT ${path}?`) && r.includes('partNumber=')).map((r) => /partNumber=(\d+)/.exec(r)?.[1]).sort(), ['1', '2']);
      assert.equal(seen.filter((r) => r.startsWith(`POST ${path}?uploadId=`)).length, 1, seen.join('\n'));
      const object = await readObject(record.export.key!);
      assert.equal(sha256(object.bytes), record.output.sha256);
      assert.equal(record.export.etag, object.etag);
    });

    test('wrong credentials or a missing bucket: the conversion completes (and stays downloadable), the export fails with the store’s words and no secret', async () => {
      const id = await upload(await readFile(PNG), 'photo.png');
      // s3rver knows its key ids but does not check SigV4 signatures: an unknown key id is what it refuses.
      const wrong = 'not-the-secret-9f8e7d';
      const res = await convert({ upload_id: id, target_format: 'webp', export: target({ access_key_id: 'AKIAWRONG', secret_access_key: wrong }) });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as Record_ & { download_url: string };
      assert.equal(record.status, 'completed');
      assert.equal(record.export.status, 'failed');
      assert.equal(record.export.error?.code, 'export_failed');
      assert.match(record.export.error!.message, /HTTP 403.*InvalidAccessKeyId/);
      assert.ok(!res.body.includes(wrong) && !res.body.includes('AKIAWRONG'), 'neither the secret nor the key id is repeated');
      const dl = await fx.app.inject({ method: 'GET', url: new URL(record.download_url).pathname, headers: auth() });
      assert.equal(dl.statusCode, 200);
      const missing = await convert({ upload_id: await upload(await readFile(PNG), 'photo.png'), target_format: 'webp', export: target({ bucket: 'no-such-bucket' }) });
      assert.match((missing.json() as Record_).export.error!.message, /HTTP 404.*NoSuchBucket/);
    });

    test('refused before any charge: bad fields (400 naming export.<field>), an unknown field, a form’s export that is not JSON', async () => {
      const id = await upload(await readFile(PNG), 'photo.png');
      const used = async () => ((await fx.app.inject({ method: 'GET', url: '/api/v1/account/usage', headers: auth() })).json() as { quota: { used: number } }).quota.used;
      const before = await used();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...target(), bucket: 'Bad_Bucket' }, 'export.bucket'],
        [{ ...target(), secret_access_key: undefined }, 'export'],
        [{ ...target(), key: '{id}/{nope}' }, 'export.key'],
        [{ ...target(), endpoint: 'ftp://127.0.0.1/x' }, 'export.endpoint'],
        [{ ...target(), endpoint: `${endpoint}/path` }, 'export.endpoint'],
        [{ ...target(), endpoint: `http://user:pw@127.0.0.1:1` }, 'export.endpoint'],
        [{ ...target(), region: 'US East' }, 'export.region'],
        [{ ...target(), acl: 'public-read' }, 'export'],
      ];
      for (const [spec, field] of cases) {
        const res = await convert({ upload_id: id, target_format: 'jpg', export: spec });
        assert.equal(res.statusCode, 400, `${JSON.stringify(spec)}: ${res.body}`);
        assert.ok((res.json() as { field: string }).field.startsWith(field), res.body);
      }
      const boundary = 'form-export';
      const form = Buffer.concat([
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="target_format"\r\n\r\njpg\r\n--${boundary}\r\ncontent-disposition: form-data; name="export"\r\n\r\n{not json\r\n`),
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="p.png"\r\n\r\n`),
        await readFile(PNG),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const bad = await fx.app.inject({ method: 'POST', url: '/api/v1/convert', headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: form });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(bad.json().field, 'export');
      assert.equal(await used(), before);
    });

    test('every answer matches the OpenAPI document', async () => {
      await assertAnswersMatchDocument(fx.app, answers);
    });
  });
}

describe('S3 exports: the endpoint goes through the egress guard', () => {
  // Without CONVERT_EXPORT_ALLOW_INSECURE: public https only. The addresses below are on loopback: nothing outside it is named.
  const fx = useConvertApp(testBackends()[0]!, {
    storage: () => join(work, 'storage-guard'),
    converter: () => converter,
    email: 's3-guard@example.com',
    env: { CONVERT_URL_RESTRICT_TO: '127.0.0.0/8,::1/128', CONVERT_DATA_DIR: join(work, 'data-guard') },
  });
  test('http:// and loopback endpoints are refused with 400 naming export.endpoint before anything is charged or fetched', async () => {
    const boundary = 'guard';
    const form = (exportJson: string) =>
      Buffer.concat([
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="target_format"\r\n\r\njpg\r\n--${boundary}\r\ncontent-disposition: form-data; name="export"\r\n\r\n${exportJson}\r\n`),
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="p.png"\r\n\r\n`),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
    for (const url of [endpoint, endpoint.replace('http:', 'https:'), 'https://[::1]:9']) {
      const spec = JSON.stringify({ endpoint: url, bucket: 'exports', access_key_id: KEY_ID, secret_access_key: SECRET });
      const png = await readFile(PNG);
      const body = form(spec);
      const at = body.indexOf(`\r\n--${boundary}--`);
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert', headers: { authorization: `Bearer ${fx.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: Buffer.concat([body.subarray(0, at), png, body.subarray(at)]) });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(res.json().field, 'export.endpoint', res.body);
    }
  });
});
