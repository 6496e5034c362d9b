import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import { Converter } from '@mailconv/converter';
import { exportP12, integerOctets, makeTestPki, pdfsig, withBagIterations, withMacIterations, type TestPki } from '@mailconv/converter/testing/pki';
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

/** The app's loopback address (it listens on 127.0.0.1, a free port, once). */
async function listening(app: Awaited<ReturnType<typeof buildApp>>): Promise<string> {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  assert.ok(address && typeof address === 'object');
  return `http://127.0.0.1:${address.port}`;
}

/**
 * `/healthz` asked every 2 ms by a worker thread (its own event loop: a stalled service
 * does not stall the asking): `stop()` answers the slowest answer in ms and how many came.
 */
function watchHealth(base: string): { started: Promise<void>; stop: () => Promise<{ worstMs: number; answers: number }> } {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    let stop = false, worst = 0, answers = 0;
    parentPort.on('message', () => { stop = true; });
    (async () => {
      while (!stop) {
        const t = performance.now();
        const res = await fetch(workerData + '/healthz', { signal: AbortSignal.timeout(300000) });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error('/healthz answered ' + res.status);
        if (answers++ === 0) parentPort.postMessage('started'); else worst = Math.max(worst, performance.now() - t);
        await new Promise((r) => setTimeout(r, 2));
      }
      parentPort.postMessage({ worstMs: Math.round(worst), answers });
    })().catch((e) => parentPort.postMessage({ error: String(e) }));`;
  const worker = new Worker(code, { eval: true, workerData: base });
  const started = new Promise<void>((resolve, reject) => {
    worker.once('message', (m: unknown) => (m === 'started' ? resolve() : reject(new Error(JSON.stringify(m)))));
    worker.once('error', reject);
  });
  const stop = async (): Promise<{ worstMs: number; answers: number }> => {
    const done = new Promise<{ worstMs: number; answers: number; error?: string }>((resolve) => worker.once('message', resolve));
    worker.postMessage('stop');
    const r = await done;
    await worker.terminate();
    if (r.error) throw new Error(r.error);
    return r;
  };
  return { started, stop };
}

/**
 * Uploads `p12` over HTTP, `copies` times at once, while {@link watchHealth} asks `/healthz`:
 * each answer, how long the slowest took, and the slowest `/healthz` meanwhile.
 */
async function uploadWatchingHealth(base: string, key: string, p12: Buffer, password: string, copies = 1): Promise<{ answers: { status: number; body: Record<string, unknown> }[]; ms: number; worstHealthMs: number; healthAnswers: number }> {
  const watch = watchHealth(base);
  await watch.started;
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: copies }, async () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(p12)]), 'me.p12');
      form.append('password', password);
      const res = await fetch(`${base}/api/v1/signing-certificates`, { method: 'POST', body: form, headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(300_000) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }),
  );
  const ms = Math.round(performance.now() - t0);
  const health = await watch.stop();
  return { answers, ms, worstHealthMs: health.worstMs, healthAnswers: health.answers };
}

for (const backend of testBackends()) {
  describe(`PDF signatures on ${backend}`, () => {
    let fx: Awaited<ReturnType<typeof start>>;
    let answers: RecordedAnswer[];
    const ACCOUNT_PASSWORD = 'account-p12-secret-Vb4';
    let accountPki: TestPki;
    before(async () => {
      fx = await start(backend, { CONVERT_SIGNING_P12: pki.rsaP12, CONVERT_SIGNING_P12_PASSWORD_FILE: join(work, 'p12-password'), CONVERT_PUBLIC_BASE_URL: 'http://127.0.0.1:8081', CONVERT_SIGNING_UPLOAD_RPM: '60' }, join(work, `storage-${backend}`));
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

    // Issue 45: the counts came from the file with no limit and node-forge derived the keys on
    // the event loop (a 2.5 KB file with 100,000 iterations held the process 1.4 s).
    test('a PKCS#12 asking for more iterations than the limit is refused at once; /healthz answers meanwhile (loopback HTTP)', { timeout: 300_000 }, async (t) => {
      const base = await listening(fx.app);
      const huge = (n: bigint) => integerOctets(n);
      const cases: [string, Buffer, RegExp][] = [
        ['openssl -iter 1000000 -maciter', await exportP12(accountPki, 'iter-1m', ACCOUNT_PASSWORD, ['-iter', '1000000', '-maciter']), /MAC iteration count 1000000 is above the limit 600000/],
        ['MAC count 2^40', withMacIterations(await readFile(accountPki.rsaP12), huge(2n ** 40n)), /MAC iteration count 1099511627776 is above the limit 600000/],
        ['PBKDF2 count, a 20-byte INTEGER', withBagIterations(await readFile(accountPki.rsaP12), huge(2n ** 159n + 7n)), /PBKDF2 iteration count 730750818665451459101842416358141509827966271495 is above the limit 600000/],
        ['legacy PKCS#12-PBE count 2^40', withBagIterations(await exportP12(accountPki, 'legacy', ACCOUNT_PASSWORD, ['-legacy']), huge(2n ** 40n)), /PKCS#12-PBE iteration count 1099511627776 is above the limit 600000/],
      ];
      for (const [name, p12, message] of cases) {
        // Five at once, so that /healthz is asked while they are in flight.
        const r = await uploadWatchingHealth(base, fx.keys[0], p12, ACCOUNT_PASSWORD, 5);
        for (const a of r.answers) {
          assert.equal(a.status, 400, `${name}: ${JSON.stringify(a.body)} after ${r.ms} ms, /healthz took up to ${r.worstHealthMs} ms (${r.healthAnswers} answers)`);
          assert.equal(a.body.error, 'invalid_request');
          assert.equal(a.body.field, 'file');
          assert.match(String(a.body.message), message, name);
        }
        assert.ok(r.ms < 1000, `${name}: answered in ${r.ms} ms`);
        assert.ok(r.worstHealthMs < 250, `${name}: /healthz took up to ${r.worstHealthMs} ms while it ran (${r.ms} ms)`);
        t.diagnostic(`${name}: five 400s in ${r.ms} ms, /healthz at most ${r.worstHealthMs} ms (${r.healthAnswers} answers)`);
      }
    });

    test('a file within the limit opens in a worker thread: 201, /healthz unaffected (loopback HTTP)', { timeout: 300_000 }, async (t) => {
      const base = await listening(fx.app);
      // 300,000 iterations for the MAC and both PBKDF2s: node-forge held the event loop 1.4 s per 100,000 (the
      // issue's file); native, off the event loop, it takes under a second of a worker's CPU and /healthz none.
      const p12 = await exportP12(accountPki, 'iter-300k', ACCOUNT_PASSWORD, ['-iter', '300000', '-maciter']);
      const r = await uploadWatchingHealth(base, fx.keys[1], p12, ACCOUNT_PASSWORD);
      const [a] = r.answers;
      assert.equal(a?.status, 201, `${JSON.stringify(a?.body)} after ${r.ms} ms`);
      assert.ok(r.worstHealthMs < 250, `/healthz took up to ${r.worstHealthMs} ms while the file was opened (${r.ms} ms)`);
      t.diagnostic(`201 in ${r.ms} ms, /healthz at most ${r.worstHealthMs} ms (${r.healthAnswers} answers)`);
      const removed = await fx.app.inject({ method: 'DELETE', url: `/api/v1/signing-certificates/${(a.body.certificate as { id: string }).id}`, headers: auth(fx.keys[1]) });
      assert.equal(removed.statusCode, 200);
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

for (const backend of testBackends()) {
  // Issue 45: opening a file may keep a core busy for seconds, so uploads are counted per account.
  test(`signing-certificate uploads per account are limited on ${backend}: 429 rate_limited with Retry-After, another account unaffected`, async () => {
    const fx = await start(backend, { CONVERT_SIGNING_UPLOAD_RPM: '2' }, join(work, `storage-limit-${backend}`));
    try {
      const answers = recordAnswers(fx.app);
      const upload = (key: string) => {
        const body = form([{ name: 'file', file: { filename: 'me.p12', bytes: Buffer.from('not a p12 file') } }, { name: 'password', value: 'x' }]);
        return fx.app.inject({ method: 'POST', url: '/api/v1/signing-certificates', payload: body.payload, headers: { ...body.headers, authorization: `Bearer ${key}` } });
      };
      for (let i = 0; i < 2; i++) assert.equal((await upload(fx.keys[0])).statusCode, 400);
      const refused = await upload(fx.keys[0]);
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(refused.json().error, 'rate_limited');
      assert.match(refused.json().message, /At most 2 signing-certificate uploads per minute per account; retry in \d+ s/);
      assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/);
      // Another account, and the account's other requests, are not counted here.
      assert.equal((await upload(fx.keys[1])).statusCode, 400);
      assert.equal((await fx.app.inject({ method: 'GET', url: '/api/v1/signing-certificates', headers: { authorization: `Bearer ${fx.keys[0]}` } })).statusCode, 200);
      const covered = await assertAnswersMatchDocument(fx.app, answers);
      assert.ok(covered.has('POST /api/v1/signing-certificates'));
    } finally {
      await fx.close();
    }
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

