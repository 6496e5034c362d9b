import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Converter, readProof } from '@mailconv/converter';
import { findProjectRoot, openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { buildApp, CONVERT_KEY_PREFIX } from '../../app.js';
import { loadConvertConfig } from '../../config.js';
import { multipartBody as multipart, useConvertApp } from './api.test-support.js';
import { CONVERT_MIGRATIONS } from '../../db/migrations.js';

const run = promisify(execFile);
const FIXTURES = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures');
const fixture = (name: string) => readFile(join(FIXTURES, name));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');


/** Small plan limits so that 413 and 429 are reachable with few-KB fixtures; rates high enough for polling. */
const PLANS = {
  plans: {
    free: { maxFileBytes: 9_000, monthlyQuota: 3, rateLimitRpm: 10_000 },
    api: { rateLimitRpm: 10_000 },
  },
};

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-api-test-'));
  // One engine (one warm LibreOffice pool) shared by the apps of both backends.
  converter = await Converter.create({ workDir: join(work, 'engine') });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

for (const backend of testBackends()) {
  describe(`conversion API (conversions) on ${backend}`, () => {
    let answers: RecordedAnswer[] = [];
    let drop: () => Promise<void>;
    let app: ServiceApp;
    let admin: ServiceCore<never>;
    let storage: string;
    let apiKey: string;
    let otherKey: string;
    let freeKey: string;
    let offsetMs = 0;
    let charged = 0;
    const clock = () => new Date(Date.now() + offsetMs);

    before(async () => {
      const db = await createTestDatabase(backend);
      drop = db.drop;
      storage = join(work, `storage-${backend}`);
      const plansFile = join(work, 'plans.json');
      await writeFile(plansFile, JSON.stringify(PLANS));
      const config = loadConvertConfig({
        CONVERT_DATABASE_URL: db.url,
        CONVERT_LOG_LEVEL: 'silent',
        CONVERT_STORAGE_DIR: storage,
        CONVERT_PLANS_FILE: plansFile,
        CONVERT_PUBLIC_BASE_URL: 'http://127.0.0.1:8081',
        CONVERT_SWEEP_INTERVAL_SECONDS: '1',
      });
      app = await buildApp(config, { clock, converter });
      answers = recordAnswers(app);
      admin = await openServiceCore({ database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
      const keys = [];
      for (const [email, plan] of [['a@example.test', 'api'], ['b@example.test', 'api'], ['f@example.test', 'free']] as const) {
        const acct = await admin.accounts.createAccount({ email, plan }, new Date());
        assert.ok(acct.ok);
        keys.push(acct.apiKey);
      }
      [apiKey, otherKey, freeKey] = keys as [string, string, string];
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
    });

    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    const get = (url: string, key = apiKey, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers: { ...auth(key), ...headers } });
    const upload = async (name: string, bytes?: Buffer, key = apiKey) => {
      const body = await multipart({}, { name, bytes: bytes ?? (await fixture(name)) });
      return app.inject({ method: 'POST', url: '/api/v1/upload', payload: body.payload, headers: { ...body.headers, ...auth(key) } });
    };
    const convertJson = (body: Record<string, unknown>, wait = 60, key = apiKey) =>
      app.inject({ method: 'POST', url: `/api/v1/convert?wait=${wait}`, payload: body, headers: auth(key) });
    const postForm = async (url: string, fields: Record<string, string>, file?: { name: string; bytes: Buffer }, key = apiKey) => {
      const body = await multipart(fields, file);
      return app.inject({ method: 'POST', url, payload: body.payload, headers: { ...body.headers, ...auth(key) } });
    };
    /** Output files of a conversion in the storage folder (one per attempt that wrote one). */
    const outputsOf = (id: string) => readdirSync(join(storage, 'outputs')).filter((f) => f.startsWith(`${id}.`));
    /** Polls the status endpoint until the record leaves queued/processing. */
    const settled = async (id: string) => {
      for (;;) {
        const res = await get(`/api/v1/jobs/${id}`);
        assert.equal(res.statusCode, 200, res.body);
        const rec = res.json();
        if (rec.status !== 'queued' && rec.status !== 'processing') return rec;
        await sleep(100);
      }
    };
    const filesIn = async (dir: string) => readdir(join(storage, dir));

    let docxUpload: { upload_id: string; sha256: string };
    let pdfRecord: { id: string; download_token: string; download_url: string; output: { sha256: string; size_bytes: number; filename: string }; source: { upload_id: string } };

    test('POST /upload: 201 with id, detected format and the SHA-256 of the bytes sent; the file is stored', async () => {
      const bytes = await fixture('sample.docx');
      const res = await upload('sample.docx');
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.match(body.upload_id, /^upl_[0-9a-z]{26}$/);
      assert.deepEqual(
        { ...body, upload_id: undefined, expires_at: undefined },
        { success: true, upload_id: undefined, filename: 'sample.docx', format: 'docx', mime_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', size_bytes: bytes.length, sha256: sha256(bytes), expires_at: undefined },
      );
      assert.ok(Math.abs(Date.parse(body.expires_at) - Date.now() - 24 * 3_600_000) < 60_000, 'expires after the default 24 h');
      assert.deepEqual(await readFile(join(storage, 'uploads', body.upload_id)), bytes);
      docxUpload = body;
      // The bytes decide the format, not the name.
      const renamed = await upload('picture.txt', await fixture('sample.png'));
      assert.equal(renamed.json().format, 'png');
    });

    test('POST /upload refuses unknown bytes (415, nothing kept), a body without file (400), JSON without a url (400) and other bodies (415)', async () => {
      const before = await filesIn('uploads');
      const junk = await upload('x.bin', randomBytes(3000));
      assert.equal(junk.statusCode, 415, junk.body);
      assert.equal(junk.json().error, 'unsupported_format');
      assert.deepEqual(await filesIn('uploads'), before);
      const empty = await postForm('/api/v1/upload', { note: 'x' });
      assert.equal(empty.statusCode, 400);
      assert.equal(empty.json().field, 'note');
      // JSON is a URL import (extension): without a url it is a 400; a body of another type is 415.
      const json = await app.inject({ method: 'POST', url: '/api/v1/upload', payload: { file: 'x' }, headers: auth(apiKey) });
      assert.equal(json.statusCode, 400, json.body);
      assert.equal(json.json().error, 'invalid_request');
      const text = await app.inject({ method: 'POST', url: '/api/v1/upload', payload: 'file=x', headers: { ...auth(apiKey), 'content-type': 'text/plain' } });
      assert.equal(text.statusCode, 415, text.body);
      assert.equal(text.json().error, 'unsupported_media_type');
    });

    test('oversized upload: 413 file_too_large and the partial file is gone from disk', async () => {
      const before = await filesIn('uploads');
      const res = await upload('sample.docx', undefined, freeKey); // 10,143 bytes > the free plan's 9,000 here
      assert.equal(res.statusCode, 413, res.body);
      assert.equal(res.json().error, 'file_too_large');
      assert.equal(res.json().max_file_bytes, 9_000);
      assert.deepEqual(await filesIn('uploads'), before);
      const oneStep = await postForm('/api/v1/jobs', { target_format: 'pdf' }, { name: 'sample.docx', bytes: await fixture('sample.docx') }, freeKey);
      assert.equal(oneStep.statusCode, 413);
      assert.deepEqual(await filesIn('uploads'), before);
    });

    test('POST /convert (JSON) docx → pdf within the wait window: 200, checksum and token; the PDF is valid', async () => {
      const res = await convertJson({ upload_id: docxUpload.upload_id, target_format: 'pdf' });
      charged++;
      assert.equal(res.statusCode, 200, res.body);
      const rec = res.json();
      assert.match(rec.id, /^cnv_/);
      assert.equal(rec.status, 'completed');
      assert.deepEqual(rec.source, { upload_id: docxUpload.upload_id, format: 'docx', size_bytes: 10_143, sha256: docxUpload.sha256 });
      assert.deepEqual(rec.options, { preset: null, quality: null, page_range: null, ocr_language: null, max_output_bytes: null });
      assert.equal(rec.output.filename, 'sample.pdf');
      assert.equal(rec.output.mime_type, 'application/pdf');
      assert.ok(rec.output.pages >= 1);
      assert.deepEqual(rec.output.engines, ['libreoffice'], 'the record names the engine chain (convert-decisions.md item 19)');
      assert.match(rec.download_token, /^dl_[0-9A-Za-z]{32}$/);
      assert.equal(rec.download_url, `http://127.0.0.1:8081/api/v1/download/${rec.download_token}`);
      assert.equal(rec.error, null);
      pdfRecord = rec;
      // The same record under both status paths.
      assert.deepEqual((await get(`/api/v1/convert/${rec.id}/status`)).json(), rec);
      assert.deepEqual((await get(`/api/v1/jobs/${rec.id}`)).json(), rec);
    });

    test('downloads: streamed with headers, checksum verified independently, valid per pdfinfo; both paths', async () => {
      const res = await get(`/api/v1/download/${pdfRecord.download_token}`);
      assert.equal(res.statusCode, 200);
      const bytes = res.rawPayload;
      assert.equal(sha256(bytes), pdfRecord.output.sha256);
      assert.equal(bytes.length, pdfRecord.output.size_bytes);
      assert.equal(res.headers['content-type'], 'application/pdf');
      assert.equal(res.headers['content-length'], String(bytes.length));
      assert.equal(res.headers['content-disposition'], 'attachment; filename="sample.pdf"');
      assert.equal(res.headers.digest, `sha-256=${createHash('sha256').update(bytes).digest('base64')}`);
      assert.equal(res.headers['accept-ranges'], 'bytes');
      const file = join(work, `${backend}-out.pdf`);
      await writeFile(file, bytes);
      const { stdout } = await run('pdfinfo', [file]);
      assert.match(stdout, /Pages:\s+1\b/);
      const byJob = await get(`/api/v1/jobs/${pdfRecord.id}/download/${pdfRecord.download_token}`);
      assert.equal(byJob.statusCode, 200);
      assert.deepEqual(byJob.rawPayload, bytes);
    });

    test('Range: one range 206 with Content-Range, a suffix range, an unsatisfiable one 416', async () => {
      const url = `/api/v1/download/${pdfRecord.download_token}`;
      const full = (await get(url)).rawPayload;
      const part = await get(url, apiKey, { range: 'bytes=10-109' });
      assert.equal(part.statusCode, 206);
      assert.equal(part.headers['content-range'], `bytes 10-109/${full.length}`);
      assert.deepEqual(part.rawPayload, full.subarray(10, 110));
      const tail = await get(url, apiKey, { range: 'bytes=-16' });
      assert.equal(tail.statusCode, 206);
      assert.deepEqual(tail.rawPayload, full.subarray(full.length - 16));
      assert.equal(tail.headers.digest, `sha-256=${Buffer.from(pdfRecord.output.sha256, 'hex').toString('base64')}`, 'the digest is of the whole output');
      const bad = await get(url, apiKey, { range: `bytes=${full.length + 5}-` });
      assert.equal(bad.statusCode, 416);
      assert.equal(bad.json().error, 'range_not_satisfiable');
      assert.equal(bad.headers['content-range'], `bytes */${full.length}`);
    });

    test('downloads need the owner’s key and the right token: others 404, a wrong job id 404, no key 401', async () => {
      assert.equal((await get(`/api/v1/download/${pdfRecord.download_token}`, otherKey)).statusCode, 404);
      assert.equal((await get(`/api/v1/download/dl_${'A'.repeat(32)}`)).statusCode, 404);
      assert.equal((await get(`/api/v1/jobs/cnv_00000000000000000000000000/download/${pdfRecord.download_token}`)).statusCode, 404);
      assert.equal((await app.inject({ method: 'GET', url: `/api/v1/download/${pdfRecord.download_token}` })).statusCode, 401);
    });

    test('another account’s records are 404 on status, jobs, shred and upload_id', async () => {
      for (const res of [
        await get(`/api/v1/convert/${pdfRecord.id}/status`, otherKey),
        await get(`/api/v1/jobs/${pdfRecord.id}`, otherKey),
        await app.inject({ method: 'DELETE', url: `/api/v1/jobs/${pdfRecord.id}`, headers: auth(otherKey) }),
        await convertJson({ upload_id: docxUpload.upload_id, target_format: 'pdf' }, 0, otherKey),
      ]) {
        assert.equal(res.statusCode, 404, res.body);
        assert.equal(res.json().error, 'not_found');
      }
      assert.equal((await get(`/api/v1/jobs/${pdfRecord.id}`)).statusCode, 200, 'still there for its owner');
    });

    test('wait=0: 202 with the record and its status URL while it runs; polling reaches completed (docx → pdf, png → webp, magic bytes)', async () => {
      // LibreOffice takes far longer than no wait at all: this one is still running at the answer.
      const doc = (await upload('sample.docx')).json();
      const res = await convertJson({ upload_id: doc.upload_id, target_format: 'pdf' }, 0);
      charged++;
      assert.equal(res.statusCode, 202, res.body);
      const rec = res.json();
      assert.ok(['queued', 'processing'].includes(rec.status));
      assert.equal(rec.download_token, null);
      assert.equal(rec.status_url, `http://127.0.0.1:8081/api/v1/convert/${rec.id}/status`);
      assert.equal(res.headers.location, rec.status_url);
      const done = await settled(rec.id);
      assert.equal(done.status, 'completed');
      const pdf = (await get(`/api/v1/download/${done.download_token}`)).rawPayload;
      assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
      assert.equal(sha256(pdf), done.output.sha256);

      // A conversion already finished when the answer is written is 200 (decision 7): a
      // small image may be either.
      const png = (await upload('sample.png')).json();
      const fast = await convertJson({ upload_id: png.upload_id, target_format: 'webp', quality: 60 }, 0);
      charged++;
      assert.ok([200, 202].includes(fast.statusCode), fast.body);
      const image = await settled(fast.json().id);
      assert.equal(image.status, 'completed');
      assert.equal(image.options.quality, 60);
      const out = (await get(`/api/v1/download/${image.download_token}`)).rawPayload;
      assert.equal(out.subarray(0, 4).toString('latin1'), 'RIFF');
      assert.equal(out.subarray(8, 12).toString('latin1'), 'WEBP');
      assert.equal(sha256(out), image.output.sha256);
      assert.ok(image.output.width > 0 && image.output.height > 0);
    });

    test('POST /jobs (multipart, one step): 202 at once; wav → mp3 and scanned page → txt (OCR) verified', async () => {
      const wav = await postForm('/api/v1/jobs', { target_format: 'mp3', preset: 'web' }, { name: 'sample.wav', bytes: await fixture('sample.wav') });
      const ocr = await postForm('/api/v1/jobs', { target_format: 'txt', ocr_language: 'en' }, { name: 'scanned-page.png', bytes: await fixture('scanned-page.png') });
      charged += 2;
      assert.equal(wav.statusCode, 202, wav.body);
      assert.equal(ocr.statusCode, 202, ocr.body);
      const mp3 = await settled(wav.json().id);
      assert.equal(mp3.status, 'completed', JSON.stringify(mp3.error));
      assert.equal(mp3.options.preset, 'web');
      const audio = (await get(`/api/v1/jobs/${mp3.id}/download/${mp3.download_token}`)).rawPayload;
      assert.ok(audio.subarray(0, 3).toString('latin1') === 'ID3' || (audio[0] === 0xff && (audio[1]! & 0xe0) === 0xe0), 'MP3 magic');
      assert.equal(sha256(audio), mp3.output.sha256);
      assert.ok(mp3.output.duration_s > 0);
      const txt = await settled(ocr.json().id);
      assert.equal(txt.status, 'completed', JSON.stringify(txt.error));
      assert.equal(txt.options.ocr_language, 'eng');
      const text = (await get(`/api/v1/download/${txt.download_token}`)).rawPayload;
      assert.equal(sha256(text), txt.output.sha256);
      assert.ok(text.toString('utf8').trim().length > 10, 'OCR found text');
    });

    test('PDF operations through the options (issue 12): docx → pdf turned, stamped, linearized and encrypted; the record echoes them, never the password', async () => {
      const secret = 'api secret';
      const res = await convertJson({ upload_id: docxUpload.upload_id, target_format: 'pdf', rotate: -90, watermark: 'SAMPLE', preset: 'linearize', set_password: secret }, 120);
      charged++;
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(!res.body.includes(secret), 'the password is never answered');
      const rec = res.json();
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      assert.deepEqual(rec.options, { preset: 'linearize', quality: null, page_range: null, ocr_language: null, max_output_bytes: null, rotate: 270, watermark: 'SAMPLE', set_password: true });
      assert.deepEqual(rec.output.engines, ['libreoffice', 'ghostscript', 'qpdf']);
      assert.ok(!(await get(`/api/v1/jobs/${rec.id}`)).body.includes(secret));
      const file = join(await mkdtemp(join(tmpdir(), 'pdfops-')), 'out.pdf');
      await writeFile(file, (await get(`/api/v1/download/${rec.download_token}`)).rawPayload);
      const info = execFileSync('/usr/bin/pdfinfo', ['-upw', secret, '-f', '1', '-l', '1', file], { encoding: 'utf8' });
      assert.match(info, /^Page\s+1 rot:\s+270/m);
      assert.match(info, /^Optimized:\s+yes/m);
      assert.match(info, /^Encrypted:\s+yes/m);
      // -raw: content-stream order (the stamp is drawn after the page, its letters stay together).
      assert.match(execFileSync('/usr/bin/pdftotext', ['-raw', '-upw', secret, file, '-'], { encoding: 'utf8' }).replace(/\s+/g, ''), /SAMPLE/);
    });

    test('split (extension): a PDF cut into a zip of one PDF per page, downloaded as sample.zip (application/zip)', async () => {
      const res = await convertJson({ upload_id: docxUpload.upload_id, target_format: 'pdf', split: true }, 120);
      charged++;
      assert.equal(res.statusCode, 200, res.body);
      const rec = res.json();
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      assert.equal(rec.options.split, true);
      assert.equal(rec.output.format, 'zip');
      assert.equal(rec.output.filename, 'sample.zip');
      assert.ok(rec.output.pages >= 1);
      assert.deepEqual(rec.output.engines.slice(-2), ['qpdf', 'bsdtar']);
      const dl = await get(`/api/v1/download/${rec.download_token}`);
      assert.equal(dl.statusCode, 200);
      assert.equal(dl.headers['content-type'], 'application/zip');
      assert.equal(dl.headers['content-disposition'], 'attachment; filename="sample.zip"');
      assert.equal(sha256(dl.rawPayload), rec.output.sha256);
      const file = join(await mkdtemp(join(tmpdir(), 'split-')), 'pages.zip');
      await writeFile(file, dl.rawPayload);
      const names = execFileSync('/usr/bin/unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n');
      assert.equal(names.length, rec.output.pages);
      assert.equal(names[0]?.replace(/\d+/, '1'), 'page-1.pdf');
      const bad = await convertJson({ upload_id: docxUpload.upload_id, target_format: 'txt', split: true }, 0);
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error, 'invalid_request');
    });

    test('POST /merge (extension): PDFs merged in order, then reordered and stamped by the options; refusals before any charge', async () => {
      const page = (word: string): Buffer => execFileSync('/usr/bin/gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sDEVICE=pdfwrite', '-sOutputFile=-',
        '-c', `/Helvetica findfont 24 scalefont setfont 72 700 moveto (${word}) show showpage`]);
      const ids: string[] = [];
      for (const word of ['First', 'Second', 'Third']) {
        const res = await upload(`${word}.pdf`, page(word));
        assert.equal(res.statusCode, 201, res.body);
        ids.push(res.json().upload_id);
      }
      const merge = (body: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v1/merge?wait=60', payload: body, headers: auth(apiKey) });
      const res = await merge({ upload_ids: ids, page_range: '3,1,2', watermark: 'MERGED' });
      charged++;
      assert.equal(res.statusCode, 200, res.body);
      const rec = res.json();
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      assert.notEqual(rec.source.upload_id, ids[0]);
      assert.equal(rec.output.pages, 3);
      assert.deepEqual(rec.output.engines, ['qpdf', 'qpdf', 'ghostscript']);
      const file = join(await mkdtemp(join(tmpdir(), 'merge-')), 'merged.pdf');
      await writeFile(file, (await get(`/api/v1/download/${rec.download_token}`)).rawPayload);
      execFileSync('/usr/bin/qpdf', ['--check', file]);
      const pages = execFileSync('/usr/bin/pdftotext', ['-raw', file, '-'], { encoding: 'utf8' }).split('\f').slice(0, 3).map((t) => t.replace(/\s+/g, ''));
      assert.deepEqual(pages, ['ThirdMERGED', 'FirstMERGED', 'SecondMERGED']);
      // Refused before any charge (a WAV does not become a PDF).
      const wav = (await upload('sample.wav')).json().upload_id as string;
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ upload_ids: [ids[0]] }, 400, 'invalid_request'],
        [{ upload_ids: [ids[0], wav] }, 422, 'unsupported_conversion'],
        [{ upload_ids: [ids[0], 'upl_00000000000000000000000000'] }, 404, 'not_found'],
        [{ upload_ids: ids, rotate: 45 }, 400, 'invalid_request'],
      ];
      for (const [body, status, code] of cases) {
        const r = await merge(body);
        assert.equal(r.statusCode, status, `${JSON.stringify(body)} → ${r.body}`);
        assert.equal(r.json().error, code);
      }
    });

    test('POST /merge of a mix (issue 24): a PDF, a .docx, a picture and a Markdown page become one PDF, in order, charged once', async () => {
      const first = execFileSync('/usr/bin/gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sDEVICE=pdfwrite', '-sOutputFile=-', '-c', '/Helvetica findfont 24 scalefont setfont 72 700 moveto (Cover) show showpage']);
      const ids: string[] = [];
      for (const [name, bytes] of [['cover.pdf', first], ['sample.docx'], ['sample.png'], ['sample.md']] as Array<[string, Buffer?]>) {
        const res = await upload(name, bytes);
        assert.equal(res.statusCode, 201, res.body);
        ids.push(res.json().upload_id);
      }
      const res = await app.inject({ method: 'POST', url: '/api/v1/merge?wait=90', payload: { upload_ids: ids }, headers: auth(apiKey) });
      charged++;
      assert.equal(res.statusCode, 200, res.body);
      const rec = res.json();
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      const file = join(await mkdtemp(join(tmpdir(), 'merge-mix-')), 'merged.pdf');
      await writeFile(file, (await get(`/api/v1/download/${rec.download_token}`)).rawPayload);
      execFileSync('/usr/bin/qpdf', ['--check', file]);
      const pages = execFileSync('/usr/bin/pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }).split('\f').slice(0, rec.output.pages);
      assert.ok(rec.output.pages >= 4, `${rec.output.pages} pages`);
      // In order: the cover, the document's text, the picture (no text), the Markdown page last.
      assert.match(pages[0]!, /Cover/);
      assert.match(pages[1]!, /\S/, 'the .docx as text');
      const picture = pages.findIndex((p, i) => i > 1 && p.trim() === '');
      assert.ok(picture > 1, 'a page with the picture and no text follows the document');
      assert.match(pages.slice(picture + 1).join(' '), /Quarterly report/);
      assert.equal(execFileSync('/usr/bin/pdfimages', ['-list', file], { encoding: 'utf8' }).trim().split('\n').length > 2, true, 'the picture is in the PDF');
    });

    test('refusals before any charge: 422 unsupported pair, 400 naming the field, 404 unknown upload', async () => {
      const wavUp = (await upload('sample.wav')).json();
      const cases: Array<[Record<string, unknown>, number, string, string | undefined]> = [
        [{ upload_id: wavUp.upload_id, target_format: 'docx' }, 422, 'unsupported_conversion', undefined],
        [{ upload_id: docxUpload.upload_id, target_format: 'pdf', quality: 500 }, 400, 'invalid_request', 'quality'],
        [{ upload_id: docxUpload.upload_id, target_format: 'pdf', colour: 'red' }, 400, 'invalid_request', 'colour'],
        [{ upload_id: docxUpload.upload_id, target_format: 'pdf', preset: 'thumbnail' }, 400, 'invalid_request', 'preset'],
        [{ upload_id: docxUpload.upload_id, target_format: 'pdf', ocr_language: 'xx' }, 400, 'invalid_request', 'ocr_language'],
        [{ upload_id: docxUpload.upload_id, target_format: 'pdf', page_range: '3-1' }, 400, 'invalid_request', 'page_range'],
        [{ upload_id: docxUpload.upload_id, target_format: 'pdf', rotate: 45 }, 400, 'invalid_request', 'rotate'],
        [{ upload_id: docxUpload.upload_id, target_format: 'pdf', watermark: 'Entwurf – vertraulich' }, 400, 'invalid_request', 'watermark'],
        [{ upload_id: docxUpload.upload_id, target_format: 'png', compression: 'screen' }, 400, 'invalid_request', 'compression'],
        [{ upload_id: docxUpload.upload_id, target_format: 'pdf', password: 'not a pdf source' }, 400, 'invalid_request', 'password'],
        [{ upload_id: docxUpload.upload_id, target_format: 'nope' }, 400, 'invalid_request', 'target_format'],
        [{ upload_id: docxUpload.upload_id }, 400, 'invalid_request', 'target_format'],
        [{ upload_id: 'upl_00000000000000000000000000', target_format: 'pdf' }, 404, 'not_found', 'upload_id'],
      ];
      for (const [body, status, code, field] of cases) {
        const res = await convertJson(body, 0);
        assert.equal(res.statusCode, status, `${JSON.stringify(body)} → ${res.body}`);
        assert.equal(res.json().error, code);
        assert.equal(res.json().field, field, JSON.stringify(body));
      }
      // Multipart: form values are text, checked by the same rules; the stored file is dropped again.
      const before = await filesIn('uploads');
      const form = await postForm('/api/v1/convert', { target_format: 'png', quality: 'high' }, { name: 'sample.png', bytes: await fixture('sample.png') });
      assert.equal(form.statusCode, 400, form.body);
      assert.equal(form.json().field, 'quality');
      const pair = await postForm('/api/v1/jobs', { target_format: 'mp4' }, { name: 'sample.png', bytes: await fixture('sample.png') });
      assert.equal(pair.statusCode, 422);
      assert.equal(pair.json().error, 'unsupported_conversion');
      assert.deepEqual(await filesIn('uploads'), before);
      const waitBad = await convertJson({ upload_id: docxUpload.upload_id, target_format: 'pdf' }, 121);
      assert.equal(waitBad.statusCode, 400);
      assert.equal(waitBad.json().field, 'wait');
    });

    test('video → gif (issue 31): the form fields start, duration, fps, width and loop reach ffmpeg and the record; bad ones are 400 naming the field', async () => {
      const clip = join(await mkdtemp(join(tmpdir(), 'clip-')), 'clip.mp4');
      // Generated: 2 s of ffmpeg's testsrc2 at 25 fps, 320×180.
      execFileSync('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=duration=2:size=320x180:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clip]);
      const bytes = await readFile(clip);
      const res = await postForm('/api/v1/convert?wait=60', { target_format: 'gif', start: '0.5', duration: '1', fps: '6', width: '160', loop: '2' }, { name: 'clip.mp4', bytes });
      charged++;
      assert.equal(res.statusCode, 200, res.body);
      const rec = res.json();
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      assert.deepEqual(rec.options, { preset: null, quality: null, page_range: null, ocr_language: null, max_output_bytes: null, start: 0.5, duration: 1, fps: 6, width: 160, loop: 2 });
      assert.deepEqual(rec.output.engines, ['ffmpeg']);
      assert.equal(rec.output.width, 160);
      const gif = join(await mkdtemp(join(tmpdir(), 'gif-')), 'out.gif');
      await writeFile(gif, (await get(`/api/v1/download/${rec.download_token}`)).rawPayload);
      const frames = execFileSync('/usr/bin/identify', ['-format', '%m %w %h\n', gif], { encoding: 'utf8' }).trim().split('\n');
      assert.ok(Math.abs(frames.length - 6) <= 1, `${frames.length} frames`);
      assert.equal(frames[0], 'GIF 160 90');
      const mp4 = (await upload('clip.mp4', bytes)).json();
      const docx = (await upload('sample.docx')).json();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ upload_id: mp4.upload_id, target_format: 'gif', fps: 0 }, 'fps'],
        [{ upload_id: mp4.upload_id, target_format: 'gif', width: 4000 }, 'width'],
        [{ upload_id: mp4.upload_id, target_format: 'gif', duration: 0 }, 'duration'],
        [{ upload_id: mp4.upload_id, target_format: 'jpg', loop: 3 }, 'loop'],
        [{ upload_id: docx.upload_id, target_format: 'png', start: 1 }, 'start'],
      ];
      for (const [body, field] of cases) {
        const bad = await convertJson(body, 0);
        assert.equal(bad.statusCode, 400, `${JSON.stringify(body)} → ${bad.body}`);
        assert.equal(bad.json().error, 'invalid_request');
        assert.equal(bad.json().field, field, JSON.stringify(body));
      }
    });

    test('photo_metadata (issue 31): keep copies a photo\'s camera and date but not its location, and is in the record; a PDF target is 400 naming it', async () => {
      const photo = join(await mkdtemp(join(tmpdir(), 'photo-')), 'photo.jpg');
      execFileSync('/usr/bin/convert', ['-size', '64x48', 'gradient:red-blue', photo]);
      execFileSync('/usr/bin/exiftool', ['-q', '-overwrite_original', '-n', '-Make=Testcam', '-DateTimeOriginal=2024:05:06 07:08:09', '-GPSLatitude=48.85', '-GPSLatitudeRef=N', photo]);
      const res = await postForm('/api/v1/convert?wait=60', { target_format: 'webp', photo_metadata: 'keep' }, { name: 'photo.jpg', bytes: await readFile(photo) });
      charged++;
      assert.equal(res.statusCode, 200, res.body);
      const rec = res.json();
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      assert.equal(rec.options.photo_metadata, 'keep');
      assert.deepEqual(rec.output.engines, ['sharp', 'exiftool']);
      const webp = join(await mkdtemp(join(tmpdir(), 'webp-')), 'out.webp');
      await writeFile(webp, (await get(`/api/v1/download/${rec.download_token}`)).rawPayload);
      const tags = (JSON.parse(execFileSync('/usr/bin/exiftool', ['-j', '-n', webp], { encoding: 'utf8' })) as Record<string, unknown>[])[0] ?? {};
      assert.equal(tags.Make, 'Testcam');
      assert.equal(tags.DateTimeOriginal, '2024:05:06 07:08:09');
      assert.equal(tags.GPSLatitude, undefined);
      const up = (await upload('photo.jpg', await readFile(photo))).json();
      const bad = await convertJson({ upload_id: up.upload_id, target_format: 'pdf', photo_metadata: 'keep' }, 0);
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(bad.json().field, 'photo_metadata');
    });

    test('frame (issue 31): the second frame of an animated GIF as a PNG, in the record; past the last frame is 400 naming it', async () => {
      const gif = join(await mkdtemp(join(tmpdir(), 'anim-')), 'anim.gif');
      execFileSync('/usr/bin/convert', ['-size', '32x32', 'xc:red', 'xc:blue', '-loop', '0', gif]);
      const res = await postForm('/api/v1/convert?wait=60', { target_format: 'png', frame: '2' }, { name: 'anim.gif', bytes: await readFile(gif) });
      charged++;
      assert.equal(res.statusCode, 200, res.body);
      const rec = res.json();
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      assert.equal(rec.options.frame, 2);
      const png = join(await mkdtemp(join(tmpdir(), 'png-')), 'out.png');
      await writeFile(png, (await get(`/api/v1/download/${rec.download_token}`)).rawPayload);
      assert.equal(execFileSync('/usr/bin/convert', [png, '-format', '%[pixel:p{16,16}]', 'info:'], { encoding: 'utf8' }).trim(), 'srgb(0,0,255)');
      const up = (await upload('anim.gif', await readFile(gif))).json();
      const bad = await convertJson({ upload_id: up.upload_id, target_format: 'webp', frame: 2 }, 0);
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(bad.json().field, 'frame');
    });

    test('GET /account/usage counts one per accepted conversion, nothing for refusals, uploads or downloads', async () => {
      const res = await get('/api/v1/account/usage');
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().quota.used, charged);
      assert.equal(res.json().quota.remaining, 10_000 - charged);
    });

    test('quota: the 4th conversion of a 3-a-month plan is 429 quota_exceeded, with Retry-After until the month resets', async () => {
      const up = (await upload('sample.png', undefined, freeKey)).json();
      for (let i = 0; i < 3; i++) assert.equal((await convertJson({ upload_id: up.upload_id, target_format: 'jpg' }, 0, freeKey)).statusCode, 202);
      const res = await convertJson({ upload_id: up.upload_id, target_format: 'jpg' }, 0, freeKey);
      assert.equal(res.statusCode, 429, res.body);
      assert.equal(res.json().error, 'quota_exceeded');
      // Retry-After: the seconds until the quota month resets (first of next month, UTC).
      const now = new Date();
      const reset = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
      assert.ok(Math.abs(Number(res.headers['retry-after']) - (reset - now.getTime()) / 1000) < 10, String(res.headers['retry-after']));
      assert.equal((await get('/api/v1/account/usage', freeKey)).json().quota.used, 3);
    });

    // Issue #15: the service had no /metrics.
    test('/metrics: conversions by engine and outcome with durations, queue depth, LibreOffice restarts, quota refusals, requests by route pattern', async () => {
      const scrape = async () => {
        const res = await app.inject({ method: 'GET', url: '/metrics' });
        assert.equal(res.statusCode, 200);
        return res.body;
      };
      const value = (text: string, name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      // Conversions of earlier tests still running would move the counters too: wait for an empty queue (read from the gauge).
      let before = await scrape();
      for (let i = 0; i < 300 && value(before, 'convert_queue_depth', 'status="queued"') + value(before, 'convert_queue_depth', 'status="processing"') > 0; i++) {
        await sleep(100);
        before = await scrape();
      }
      // A LibreOffice instance killed from outside: the pool restarts it and the next document converts.
      const docx = (await upload('sample.docx')).json();
      const pool = converter.libreoffice!.pool;
      if (pool.pids().length === 0) assert.equal((await convertJson({ upload_id: docx.upload_id, target_format: 'pdf' })).statusCode, 200);
      before = await scrape();
      process.kill(pool.pids()[0]!, 'SIGKILL');
      const office = await convertJson({ upload_id: docx.upload_id, target_format: 'pdf' });
      assert.equal(office.statusCode, 200, office.body);
      const up = (await upload('sample.png')).json();
      const done = await convertJson({ upload_id: up.upload_id, target_format: 'webp' });
      assert.equal(done.statusCode, 200, done.body);
      const refused = await convertJson({ upload_id: up.upload_id, target_format: 'jpg' }, 0, otherKey);
      assert.equal(refused.statusCode, 404, 'another account’s upload');
      const after = await scrape();
      assert.equal(value(after, 'convert_conversions_total', 'engine="sharp",outcome="completed"') - value(before, 'convert_conversions_total', 'engine="sharp",outcome="completed"'), 1);
      assert.equal(value(after, 'convert_conversion_duration_seconds_count', 'engine="sharp",outcome="completed"') - value(before, 'convert_conversion_duration_seconds_count', 'engine="sharp",outcome="completed"'), 1);
      assert.match(after, /^convert_queue_depth\{status="queued"\} \d+$/m);
      assert.match(after, /^convert_queue_depth\{status="processing"\} \d+$/m);
      assert.ok(Number(/^convert_libreoffice_restarts_total (\S+)$/m.exec(after)?.[1]) - Number(/^convert_libreoffice_restarts_total (\S+)$/m.exec(before)?.[1] ?? 0) >= 1, 'the killed instance was restarted');
      assert.match(after, /^convert_libreoffice_queue_depth 0$/m);
      assert.ok(value(after, 'quota_refusals_total', 'route="/api/v1/convert"') >= 1, 'the quota test’s refusal');
      assert.equal(value(after, 'http_requests_total', 'method="POST",route="/api/v1/convert",status="404"') - value(before, 'http_requests_total', 'method="POST",route="/api/v1/convert",status="404"'), 1);
      assert.ok(!after.includes(up.upload_id), 'route patterns, never raw URLs');
    });

    test('shred of a completed conversion: source and output leave the disk, status shredded, downloads 410', async () => {
      const outputFile = join(storage, 'outputs', `${pdfRecord.id}.a1.pdf`);
      assert.deepEqual(outputsOf(pdfRecord.id), [`${pdfRecord.id}.a1.pdf`], 'one output: the first attempt\'s');
      const uploadFile = join(storage, 'uploads', pdfRecord.source.upload_id);
      assert.ok(existsSync(outputFile) && existsSync(uploadFile));
      const res = await app.inject({ method: 'DELETE', url: `/api/v1/jobs/${pdfRecord.id}`, headers: auth(apiKey) });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'shredded');
      assert.equal(existsSync(outputFile), false);
      assert.equal(existsSync(uploadFile), false);
      for (const url of [`/api/v1/download/${pdfRecord.download_token}`, `/api/v1/jobs/${pdfRecord.id}/download/${pdfRecord.download_token}`]) {
        const dl = await get(url);
        assert.equal(dl.statusCode, 410);
        assert.equal(dl.json().error, 'gone');
      }
      assert.equal((await get(`/api/v1/jobs/${pdfRecord.id}`)).json().status, 'shredded');
      assert.equal((await convertJson({ upload_id: pdfRecord.source.upload_id, target_format: 'pdf' }, 0)).statusCode, 410, 'the upload is gone too');
    });

    test('shred of a job just started: cancelled, nothing of it left on disk, its unit refunded', async () => {
      const usedBefore = (await get('/api/v1/account/usage')).json().quota.used as number;
      const res = await postForm('/api/v1/jobs', { target_format: 'pdf' }, { name: 'sample.pptx', bytes: await fixture('sample.pptx') });
      assert.equal(res.statusCode, 202, res.body);
      assert.equal((await get('/api/v1/account/usage')).json().quota.used, usedBefore + 1, 'charged when accepted');
      const { id, source } = res.json();
      const shred = await app.inject({ method: 'DELETE', url: `/api/v1/jobs/${id}`, headers: auth(apiKey) });
      assert.equal(shred.json().status, 'shredded');
      assert.equal(existsSync(join(storage, 'uploads', source.upload_id)), false);
      assert.deepEqual(outputsOf(id), []);
      await sleep(200);
      assert.equal((await get(`/api/v1/jobs/${id}`)).json().status, 'shredded', 'a finishing engine does not revive it');
      assert.deepEqual(outputsOf(id), []);
      assert.equal((await get('/api/v1/account/usage')).json().quota.used, usedBefore, 'shredded before it finished: not charged (convert-decisions.md item 18)');
    });

    test('html → pdf through the browser with page options from a form: the record echoes them, the PDF has them; html targets list pdf, png, jpg, webp by chromium; a page option on another pair is a 400 naming it', async () => {
      const html = Buffer.from('<!doctype html><title>Statement</title><h1 style="color:#1f6feb">Statement</h1><script>document.write("<p>by script</p>")</script>');
      const res = await postForm('/api/v1/jobs', { target_format: 'pdf', paper: 'Letter', landscape: 'true', footer_html: '<div style="font-size:9px">Page <span class="pageNumber"></span></div>' }, { name: 'statement.html', bytes: html });
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual([res.json().options.paper, res.json().options.landscape, res.json().options.footer_html], ['Letter', true, '<div style="font-size:9px">Page <span class="pageNumber"></span></div>']);
      const rec = await settled(res.json().id);
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      assert.deepEqual(rec.output.engines, ['chromium']);
      const targets = (await get('/api/v1/formats/html/targets')).json().targets as Array<{ format: string; engines: string[] }>;
      for (const t of ['pdf', 'png', 'jpg', 'webp']) assert.deepEqual(targets.find((x) => x.format === t)?.engines, ['chromium'], t);
      const refused = await postForm('/api/v1/jobs', { target_format: 'pdf', paper: 'A4' }, { name: 'sample.docx', bytes: await fixture('sample.docx') });
      assert.deepEqual([refused.statusCode, refused.json().error, refused.json().field], [400, 'invalid_request', 'paper']);
    });

    test('GET /formats and /formats/{ext}/targets come from the engine registry', async () => {
      const res = await get('/api/v1/formats');
      assert.equal(res.statusCode, 200);
      const body = res.json();
      const docx = body.formats.find((f: { ext: string }) => f.ext === 'docx');
      assert.equal(docx.mime_type, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
      assert.equal(body.pairs_count, converter.registry.pairs().length);
      // Honest counts (issue 12): exactly the committed proof's pairs and the formats they join.
      const proof = await readProof();
      assert.equal(body.pairs_count, proof.pairs.length);
      assert.equal(body.formats_count, new Set(proof.pairs.flatMap((p) => [p.from, p.to])).size);
      assert.deepEqual(body.presets.map((p: { name: string }) => p.name), ['web', 'print', 'thumbnail', 'ebook', 'archive', 'compress', 'linearize', 'grayscale']);
      assert.equal(body.ocr_languages.length, 12);
      const targets = await get('/api/v1/formats/DOCX/targets');
      assert.equal(targets.statusCode, 200);
      assert.ok(targets.json().targets.some((t: { format: string }) => t.format === 'pdf'));
      assert.deepEqual(targets.json().targets.map((t: { format: string }) => t.format), converter.registry.targets('docx').map((t) => t.format));
      assert.equal((await get('/api/v1/formats/xyz/targets')).statusCode, 404);
    });

    test('retention: once expired, the sweeper removes the output and marks the record expired (410)', async () => {
      const up = (await upload('sample.png')).json();
      const rec = (await convertJson({ upload_id: up.upload_id, target_format: 'jpg' })).json();
      charged++;
      assert.equal(rec.status, 'completed');
      const output = join(storage, 'outputs', `${rec.id}.a1.jpg`);
      assert.ok(existsSync(output));
      offsetMs = 25 * 3_600_000;
      let status = rec.status;
      while (status !== 'expired') {
        await sleep(250);
        status = (await get(`/api/v1/jobs/${rec.id}`)).json().status;
      }
      assert.equal(existsSync(output), false);
      assert.equal(existsSync(join(storage, 'uploads', up.upload_id)), false);
      assert.equal((await get(`/api/v1/download/${rec.download_token}`)).statusCode, 410);
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.size > 0);
    });
  });
}

/** The acceptance set: each fixture through the API to two targets, outputs checked by other tools. */
describe('every fixture converts through the API to two targets (first backend)', () => {
  const backend = testBackends()[0]!;
  const f = useConvertApp(backend, { storage: () => join(work, 'storage-matrix'), converter: () => converter, email: 'm@example.test' });

  const pdfText = async (bytes: Buffer, name: string) => {
    const file = join(work, name);
    await writeFile(file, bytes);
    const info = await run('pdfinfo', [file]);
    assert.match(info.stdout, /Pages:\s+[1-9]/);
    return (await run('pdftotext', [file, '-'])).stdout;
  };
  const zipWith = (marker: string) => (b: Buffer) => {
    assert.equal(b.subarray(0, 2).toString('latin1'), 'PK');
    assert.ok(b.includes(Buffer.from(marker)), marker);
  };
  const CASES: Array<[string, string, Record<string, string>, (b: Buffer) => void | Promise<void>]> = [
    ['sample.docx', 'pdf', {}, async (b) => void (await pdfText(b, 'docx.pdf'))],
    ['sample.docx', 'odt', {}, zipWith('application/vnd.oasis.opendocument.text')],
    ['sample.xlsx', 'pdf', {}, async (b) => void (await pdfText(b, 'xlsx.pdf'))],
    ['sample.xlsx', 'csv', {}, (b) => assert.ok(b.toString('utf8').includes(','))],
    ['sample.pptx', 'pdf', {}, async (b) => void (await pdfText(b, 'pptx.pdf'))],
    ['sample.pptx', 'png', {}, (b) => assert.equal(b.subarray(1, 4).toString('latin1'), 'PNG')],
    ['sample.png', 'jpg', {}, (b) => assert.deepEqual([...b.subarray(0, 3)], [0xff, 0xd8, 0xff])],
    ['sample.png', 'gif', {}, (b) => assert.equal(b.subarray(0, 4).toString('latin1'), 'GIF8')],
    ['sample.wav', 'flac', {}, (b) => assert.equal(b.subarray(0, 4).toString('latin1'), 'fLaC')],
    ['sample.wav', 'ogg', {}, (b) => assert.equal(b.subarray(0, 4).toString('latin1'), 'OggS')],
    ['sample.md', 'html', {}, (b) => assert.match(b.toString('utf8'), /<h1|<p/)],
    ['sample.md', 'docx', {}, zipWith('[Content_Types].xml')],
    ['scanned-page.png', 'txt', { ocr_language: 'eng' }, (b) => assert.ok(b.toString('utf8').trim().length > 10)],
    ['scanned-page.png', 'pdf', { ocr_language: 'eng' }, async (b) => assert.ok((await pdfText(b, 'ocr.pdf')).trim().length > 10, 'searchable PDF')],
  ];

  test('docx, xlsx, pptx, png, wav, md and a scanned page, two targets each', async () => {
    const started = [];
    for (const [name, target, options] of CASES) {
      const body = await multipart({ target_format: target, ...options }, { name, bytes: await fixture(name) });
      const res = await f.app.inject({ method: 'POST', url: '/api/v1/jobs', payload: body.payload, headers: { ...body.headers, authorization: `Bearer ${f.key}` } });
      assert.equal(res.statusCode, 202, `${name} → ${target}: ${res.body}`);
      started.push(res.json().id as string);
    }
    for (const [i, id] of started.entries()) {
      const [name, target, , check] = CASES[i]!;
      let rec;
      for (;;) {
        rec = (await f.app.inject({ method: 'GET', url: `/api/v1/jobs/${id}`, headers: { authorization: `Bearer ${f.key}` } })).json();
        if (rec.status !== 'queued' && rec.status !== 'processing') break;
        await sleep(100);
      }
      assert.equal(rec.status, 'completed', `${name} → ${target}: ${JSON.stringify(rec.error)}`);
      const dl = await f.app.inject({ method: 'GET', url: `/api/v1/jobs/${id}/download/${rec.download_token}`, headers: { authorization: `Bearer ${f.key}` } });
      assert.equal(sha256(dl.rawPayload), rec.output.sha256, `${name} → ${target} checksum`);
      await check(dl.rawPayload);
    }
  });
});
