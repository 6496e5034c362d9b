import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import { Converter } from '@mailconv/converter';
import { makeTestPki, pdfsig, type TestPki } from '@mailconv/converter/testing/pki';
import { openServiceCore } from '@mailconv/platform';
import { assertAnswersMatchDocument, createTestDatabase, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import { buildApp, CONVERT_KEY_PREFIX } from '../../app.js';
import { loadConvertConfig } from '../../config.js';
import { CONVERT_MIGRATIONS } from '../../db/migrations.js';
import type { ConvertTables } from '../../db/schema.js';

/** PDF signatures through the API (issue 25): the operator's certificate, account certificates and their endpoints. */
let converter: Converter;
let work: string;
let pki: TestPki;
let pdf: Buffer;
const OPERATOR_PASSWORD = 'operator-p12-secret-Zq7';

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-sign-'));
  converter = await Converter.create({ workDir: join(work, 'engine') });
  pki = await makeTestPki(join(work, 'pki'), OPERATOR_PASSWORD);
  await writeFile(join(work, 'p12-password'), `${OPERATOR_PASSWORD}\n`);
  pdf = await readFile(new URL('../../../../../packages/converter/test/corpus/pdf/qpdf-c-no-options.pdf', import.meta.url));
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

/** An app on a fresh database with two accounts; its log lines and answers recorded. */
async function start(backend: 'sqlite' | 'postgres', env: Record<string, string>, storage: string) {
  const db = await createTestDatabase(backend);
  const lines: string[] = [];
  const logStream = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
  const config = loadConvertConfig({ CONVERT_DATABASE_URL: db.url, CONVERT_LOG_LEVEL: 'debug', CONVERT_STORAGE_DIR: storage, ...env });
  const app = await buildApp(config, { converter, logStream });
  const admin = await openServiceCore({ database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
  const keys: string[] = [];
  for (const email of [`a-${backend}@example.com`, `b-${backend}@example.com`]) {
    const acct = await admin.accounts.createAccount({ email, plan: 'api' }, new Date());
    assert.ok(acct.ok);
    keys.push(acct.apiKey);
  }
  const close = async (): Promise<void> => {
    await app.close();
    await admin.close();
    await db.drop();
  };
  return { app, admin, keys: keys as [string, string], lines, close };
}

function form(parts: { name: string; value?: string; file?: { filename: string; bytes: Buffer } }[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = 'sign-boundary';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if (p.file) chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${p.name}"; filename="${p.file.filename}"\r\ncontent-type: application/x-pkcs12\r\n\r\n`), p.file.bytes, Buffer.from('\r\n'));
    else chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

for (const backend of testBackends()) {
  describe(`PDF signatures on ${backend}`, () => {
    let fx: Awaited<ReturnType<typeof start>>;
    let answers: RecordedAnswer[];
    const ACCOUNT_PASSWORD = 'account-p12-secret-Vb4';
    let accountPki: TestPki;
    before(async () => {
      fx = await start(backend, { CONVERT_SIGNING_P12: pki.rsaP12, CONVERT_SIGNING_P12_PASSWORD_FILE: join(work, 'p12-password'), CONVERT_PUBLIC_BASE_URL: 'http://127.0.0.1:8081' }, join(work, `storage-${backend}`));
      answers = recordAnswers(fx.app);
      accountPki = await makeTestPki(join(work, `account-pki-${backend}`), ACCOUNT_PASSWORD);
    });
    after(async () => fx.close());
    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    const addCertificate = (p12: Buffer, password: string | undefined, key = fx.keys[0]) => {
      const body = form([{ name: 'file', file: { filename: 'me.p12', bytes: p12 } }, ...(password === undefined ? [] : [{ name: 'password', value: password }])]);
      return fx.app.inject({ method: 'POST', url: '/api/v1/signing-certificates', payload: body.payload, headers: { ...body.headers, ...auth(key) } });
    };
    const uploadPdf = async (key = fx.keys[0]): Promise<string> => {
      const body = form([{ name: 'file', file: { filename: 'doc.pdf', bytes: pdf } }]);
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', payload: body.payload, headers: { ...body.headers, ...auth(key) } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().upload_id as string;
    };
    const convert = async (sign: unknown, key = fx.keys[0], extra: Record<string, unknown> = {}) =>
      fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', payload: { upload_id: await uploadPdf(key), target_format: 'pdf', sign, ...extra }, headers: auth(key) });
    const download = async (record: { download_url: string }, key = fx.keys[0]): Promise<string> => {
      const res = await fx.app.inject({ method: 'GET', url: record.download_url.replace('http://127.0.0.1:8081', ''), headers: auth(key) });
      assert.equal(res.statusCode, 200, res.body);
      const file = join(work, `signed-${backend}-${Date.now()}-${Math.random()}.pdf`);
      await writeFile(file, res.rawPayload);
      return file;
    };
    const assertSigned = (file: string, signer: string, trust: TestPki) => {
      const report = pdfsig(file, trust);
      assert.match(report, /Signature Validation: Signature is Valid\./, report);
      assert.match(report, /Total document signed/, report);
      assert.match(report, new RegExp(`Signer Certificate Common Name: ${signer}`), report);
    };

    test('sign: true signs with the operator’s certificate; the record echoes only signed and the subject', async () => {
      const res = await convert(true);
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json();
      assert.equal(record.status, 'completed', res.body);
      assert.deepEqual(record.options.sign, { signed: true, subject: 'CN=Jane Signer, O=Mailconv Test' });
      assertSigned(await download(record), 'Jane Signer', pki);
    });

    test('a multipart form carries sign as JSON text; sign with set_password is refused naming sign', async () => {
      const body = form([{ name: 'target_format', value: 'pdf' }, { name: 'sign', value: '{"visible": true, "reason": "Form"}' }, { name: 'file', file: { filename: 'doc.pdf', bytes: pdf } }]);
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', payload: body.payload, headers: { ...body.headers, ...auth(fx.keys[0]) } });
      assert.equal(res.statusCode, 200, res.body);
      assertSigned(await download(res.json()), 'Jane Signer', pki);
      const refused = await convert(true, fx.keys[0], { set_password: 'pw' });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(refused.json().field, 'sign');
      assert.match(refused.json().message, /encrypted output is not supported/);
    });

    test('account certificates: add (facts only), list, sign with it; another account can neither use nor delete it', async () => {
      const added = await addCertificate(await readFile(accountPki.ecP12), ACCOUNT_PASSWORD);
      assert.equal(added.statusCode, 201, added.body);
      const cert = added.json().certificate;
      assert.match(cert.id, /^sgc_/);
      assert.equal(cert.subject, 'CN=Erin Signer, O=Mailconv Test');
      assert.equal(cert.issuer, 'CN=Mailconv Test CA');
      assert.deepEqual(Object.keys(cert).sort(), ['created_at', 'id', 'issuer', 'not_after', 'not_before', 'sha256', 'subject']);
      assert.match(cert.sha256, /^[0-9a-f]{64}$/);
      const list = await fx.app.inject({ method: 'GET', url: '/api/v1/signing-certificates', headers: auth(fx.keys[0]) });
      assert.deepEqual(list.json().certificates, [cert]);
      // Stored sealed: no PEM, no PKCS#12 in the clear (24 bytes of it, at offsets aligned for base64, as base64 or hex), no password.
      // ("MII", a DER sequence's base64, once matched by chance inside the random ciphertext.)
      const row = await (fx.admin.database.db as unknown as Kysely<ConvertTables>).selectFrom('signing_certificates').selectAll().where('id', '=', cert.id).executeTakeFirstOrThrow();
      assert.match(row.sealed, /^v1\./);
      const p12 = await readFile(accountPki.ecP12);
      const pieces = [0, 63, 510].flatMap((at) => [p12.subarray(at, at + 24).toString('base64'), p12.subarray(at, at + 24).toString('hex')]).filter((p) => p.length >= 16);
      assert.ok(!row.sealed.includes(ACCOUNT_PASSWORD) && !/PRIVATE KEY/.test(row.sealed) && pieces.every((p) => !row.sealed.includes(p)));
      const signed = await convert({ certificate: cert.id, visible: true, reason: 'Mine' });
      assert.equal(signed.statusCode, 200, signed.body);
      assert.equal(signed.json().status, 'completed', signed.body);
      assert.deepEqual(signed.json().options.sign, { signed: true, subject: cert.subject });
      assertSigned(await download(signed.json()), 'Erin Signer', accountPki);
      // The other account: not found, not usable, not deletable, not listed.
      const other = await convert({ certificate: cert.id }, fx.keys[1]);
      assert.equal(other.statusCode, 400, other.body);
      assert.equal(other.json().field, 'sign');
      assert.match(other.json().message, /not found/);
      assert.deepEqual((await fx.app.inject({ method: 'GET', url: '/api/v1/signing-certificates', headers: auth(fx.keys[1]) })).json().certificates, []);
      assert.equal((await fx.app.inject({ method: 'DELETE', url: `/api/v1/signing-certificates/${cert.id}`, headers: auth(fx.keys[1]) })).statusCode, 404);
      // Its owner deletes it: gone, and no longer usable.
      assert.equal((await fx.app.inject({ method: 'DELETE', url: `/api/v1/signing-certificates/${cert.id}`, headers: auth(fx.keys[0]) })).statusCode, 200);
      assert.deepEqual((await fx.app.inject({ method: 'GET', url: '/api/v1/signing-certificates', headers: auth(fx.keys[0]) })).json().certificates, []);
      assert.equal((await convert({ certificate: cert.id })).statusCode, 400);
    });

    test('refused uploads: wrong password, no key, expired, missing parts, not multipart, no key header', async () => {
      const cases: [Buffer, string | undefined, string, RegExp][] = [
        [await readFile(accountPki.rsaP12), 'not the password', 'password', /wrong password/],
        [await readFile(accountPki.noKeyP12), ACCOUNT_PASSWORD, 'file', /no private key/],
        [await readFile(accountPki.expiredP12), ACCOUNT_PASSWORD, 'file', /expired/],
        [Buffer.from('not a p12 file'), ACCOUNT_PASSWORD, 'file', /not a readable PKCS#12/],
        [await readFile(accountPki.rsaP12), undefined, 'password', /password.*required/],
      ];
      for (const [bytes, password, field, message] of cases) {
        const res = await addCertificate(bytes, password);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().field, field, res.body);
        assert.match(res.json().message, message);
      }
      const json = await fx.app.inject({ method: 'POST', url: '/api/v1/signing-certificates', payload: { password: 'x' }, headers: auth(fx.keys[0]) });
      assert.equal(json.statusCode, 415, json.body);
      for (const [method, url] of [['POST', '/api/v1/signing-certificates'], ['GET', '/api/v1/signing-certificates'], ['DELETE', '/api/v1/signing-certificates/sgc_x']] as const) {
        assert.equal((await fx.app.inject({ method, url })).statusCode, 401);
      }
    });

    test('every answer matches the OpenAPI document', async () => {
      const covered = await assertAnswersMatchDocument(fx.app, answers);
      for (const route of ['POST /api/v1/signing-certificates', 'GET /api/v1/signing-certificates', 'DELETE /api/v1/signing-certificates/{id}', 'POST /api/v1/convert']) assert.ok(covered.has(route), route);
    });

    test('the passwords never appear in the logs or in any answer', () => {
      const logs = fx.lines.join('');
      assert.ok(logs.length > 0);
      for (const secret of [OPERATOR_PASSWORD, ACCOUNT_PASSWORD, 'not the password']) {
        assert.ok(!logs.includes(secret), `log holds ${secret}`);
        for (const a of answers) assert.ok(!JSON.stringify(a).includes(secret), `answer holds ${secret}`);
      }
    });
  });
}

test('no operator certificate: sign answers 400 naming sign', async () => {
  const fx = await start('sqlite', {}, join(work, 'storage-plain'));
  try {
    const body = form([{ name: 'target_format', value: 'pdf' }, { name: 'sign', value: 'true' }, { name: 'file', file: { filename: 'doc.pdf', bytes: pdf } }]);
    const res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', payload: body.payload, headers: { ...body.headers, authorization: `Bearer ${fx.keys[0]}` } });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().field, 'sign');
    assert.match(res.json().message, /signing is not configured on this service/);
  } finally {
    await fx.close();
  }
});

