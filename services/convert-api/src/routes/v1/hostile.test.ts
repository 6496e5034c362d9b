// Hostile input through the API (issue #13): every file is generated here; each gets a clear
// answer in the contract's shape (or a correct, safe conversion), nothing is left in storage
// or the work folder, failures and refusals are not charged, and the service keeps serving.
// Bounded: the converter caps each engine's memory (512 MiB) and time (30 s per step), and
// every test has its own time limit.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Converter } from '@mailconv/converter';
import {
  activeContentKeys, assertSafeMessage, encryptPdf, makePdf, PASSWD_MARKER, pixelFloodPng, svgWithEntities, writeLinkedDocx, writeZipBombDocx,
} from '@mailconv/converter/testing';
import { findProjectRoot } from '@mailconv/platform';
import { testBackends } from '@mailconv/platform/testing';
import { useConvertApp } from './api.test-support.js';

const FIXTURES = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures');

/** A multipart body built by hand, byte for byte (names with NUL and controls must reach the server as sent). */
function rawMultipart(parts: { name: string; filename?: string; value: Buffer | string }[], boundary = 'hostileBoundary7MA4YWxk'): { payload: Buffer; headers: Record<string, string> } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.filename !== undefined ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`, 'utf8'));
    chunks.push(Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value, 'utf8'));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

let converter: Converter;
let work: string;
let listener: Server;
let port = 0;
const hits: string[] = [];
/** What each hostile file got, printed as diagnostics for the issue's closing note. */
const outcomes: string[] = [];

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-hostile-'));
  converter = await Converter.create({ workDir: join(work, 'engine'), timeoutMs: 30_000, maxMemoryBytes: 512 * 1024 ** 2, libreoffice: { instances: 1 } });
  // The loopback listener stands in for an internal service an attacker wants reached.
  listener = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('x');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as { port: number }).port;
});
after(async () => {
  await converter.close();
  await new Promise((resolve) => listener.close(resolve));
  await rm(work, { recursive: true, force: true });
});

for (const backend of testBackends()) {
  describe(`conversion API under hostile input on ${backend}`, () => {
    const storage = () => join(work, `storage-${backend}`);
    const f = useConvertApp(backend, { storage, converter: () => converter, email: 'h@example.test', env: { CONVERT_PUBLIC_BASE_URL: 'http://127.0.0.1:8081' } });
    after(() => {
      for (const line of outcomes.splice(0)) console.log(`# [${backend}] ${line}`);
    });

    const auth = () => ({ authorization: `Bearer ${f.key}` });
    const get = (url: string) => f.app.inject({ method: 'GET', url, headers: auth() });
    const used = async () => (await get('/api/v1/account/usage')).json().quota.used as number;
    const send = (url: string, body: { payload: Buffer; headers: Record<string, string> }) =>
      f.app.inject({ method: 'POST', url, payload: body.payload, headers: { ...body.headers, ...auth() } });
    const uploadFile = (filename: string, bytes: Buffer) => send('/api/v1/upload', rawMultipart([{ name: 'file', filename, value: bytes }]));
    const convert = (body: Record<string, unknown>) => f.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', payload: body, headers: auth() });
    const settled = async (id: string) => {
      for (;;) {
        const rec = (await get(`/api/v1/jobs/${id}`)).json();
        if (rec.status !== 'queued' && rec.status !== 'processing') return rec;
        await sleep(100);
      }
    };
    /** An error answer in the contract's shape, safe to show. */
    const isError = (res: { statusCode: number; json(): { error: string; message: string } }, status: number, code: string) => {
      assert.equal(res.statusCode, status, JSON.stringify(res.json()));
      const body = res.json();
      assert.equal(body.error, code);
      assert.equal(typeof body.message, 'string');
      assertSafeMessage(body.message);
      return body as { error: string; message: string; field?: string };
    };
    const noJobFolders = async () => assert.deepEqual((await readdir(join(work, 'engine'))).filter((f) => f.startsWith('job-')), []);

    test('multipart without a boundary is 400 on upload, convert and jobs (was 500)', { timeout: 30_000 }, async () => {
      for (const url of ['/api/v1/upload', '/api/v1/convert', '/api/v1/jobs']) {
        const res = await f.app.inject({ method: 'POST', url, payload: 'whatever', headers: { 'content-type': 'multipart/form-data', ...auth() } });
        isError(res, 400, 'invalid_request');
        const broken = await f.app.inject({ method: 'POST', url, payload: '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc', headers: { 'content-type': 'multipart/form-data; boundary=x', ...auth() } });
        assert.ok([400, 415].includes(broken.statusCode), `${url}: ${broken.statusCode} ${broken.body}`);
        isError(broken, broken.statusCode, broken.statusCode === 400 ? 'invalid_request' : 'unsupported_format');
      }
      outcomes.push('multipart/form-data without boundary → 400 invalid_request (upload, convert, jobs)');
    });

    test('a field over 4,096 bytes is refused, not cut; long names and values are quoted briefly', { timeout: 30_000 }, async () => {
      const png = await readFile(join(FIXTURES, 'sample.png'));
      const long = await send('/api/v1/jobs', rawMultipart([{ name: 'target_format', value: `pdf${'x'.repeat(5000)}` }, { name: 'file', filename: 'a.png', value: png }]));
      assert.equal(isError(long, 400, 'invalid_request').field, 'target_format');
      const name = 'n'.repeat(10_000);
      const unknown = await send('/api/v1/jobs', rawMultipart([{ name: 'file', filename: 'a.png', value: png }, { name: name.slice(0, 90), value: 'v' }]));
      const body = isError(unknown, 400, 'invalid_request');
      assert.ok((body.field ?? '').length <= 64);
      const echo = await convert({ upload_id: (await uploadFile('a.png', png)).json().upload_id, target_format: `${'z'.repeat(3000)}` });
      assert.ok(isError(echo, 400, 'invalid_request').message.length < 300);
      // JSON: an unknown key and an id of 10,000 characters are quoted briefly too.
      const bigKey = await f.app.inject({ method: 'POST', url: '/api/v1/convert', payload: { upload_id: 'upl_x', target_format: 'pdf', [name]: 1 }, headers: auth() });
      assert.ok(isError(bigKey, 400, 'invalid_request').message.length < 300);
      assert.ok((bigKey.json().field as string).length <= 64);
      const bigId = await convert({ upload_id: `upl_${name}`, target_format: 'pdf' });
      assert.ok(isError(bigId, 404, 'not_found').message.length < 300);
      assert.ok((await get(`/api/v1/jobs/cnv_${name.slice(0, 3000)}`)).json().message.length < 300);
      assert.equal(await used(), 0);
      await sleep(50);
      assert.deepEqual(await readdir(join(storage(), 'uploads')).then((f) => f.length), 1, 'refused one-step uploads are gone');
      outcomes.push('field of 5,003 bytes → 400 invalid_request (field target_format); 3,000-character target_format → 400 with a short message');
    });

    test('file names: ../, NUL, control and bidi characters and 1,000 characters never reach a stored or downloaded name', { timeout: 60_000 }, async () => {
      const png = await readFile(join(FIXTURES, 'sample.png'));
      const cases: [string, (stored: string) => void][] = [
        ['../../etc/passwd.png', (s) => assert.equal(s, 'passwd.png')],
        ['a\u0000b.png', (s) => assert.equal(s, 'ab.png')],
        ['\u001b[31mred\u0007.png', (s) => assert.equal(s, '[31mred.png')],
        ['invoice\u202Egnp.exe', (s) => assert.equal(s, 'invoicegnp.exe')],
        [`${'L'.repeat(1000)}.png`, (s) => {
          assert.ok([...s].length <= 200);
          assert.ok(s.endsWith('.png'));
        }],
      ];
      for (const [name, check] of cases) {
        const res = await uploadFile(name, png);
        assert.equal(res.statusCode, 201, res.body);
        const stored = res.json().filename as string;
        check(stored);
        // eslint-disable-next-line no-control-regex
        assert.doesNotMatch(stored, /[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069/\\]/);
        outcomes.push(`file name ${JSON.stringify(name.length > 40 ? `${name.slice(0, 12)}…(${name.length} chars)` : name)} → 201, stored as ${JSON.stringify(stored.length > 40 ? `${stored.slice(0, 12)}…(${stored.length} chars)` : stored)}`);
        if (name.includes('\u202E')) {
          const done = await convert({ upload_id: res.json().upload_id, target_format: 'jpg' });
          assert.equal(done.statusCode, 200, done.body);
          const dl = await get(`/api/v1/download/${done.json().download_token}`);
          assert.equal(dl.statusCode, 200);
          assert.doesNotMatch(dl.headers['content-disposition'] as string, /\u202E|%E2%80%AE/i);
          assert.match(dl.headers['content-disposition'] as string, /invoicegnp\.jpg/);
        }
      }
    });

    test('bombs, a lying extension, an empty file, an encrypted and a truncated PDF: clear errors before any charge', { timeout: 120_000 }, async () => {
      const dir = await mkdtemp(join(work, 'gen-'));
      const bomb = join(dir, 'bomb.docx');
      writeZipBombDocx(bomb, 60 * 1024 * 1024);
      const plain = join(dir, 'plain.pdf');
      await writeFile(plain, makePdf(3));
      const locked = join(dir, 'locked.pdf');
      encryptPdf(plain, locked);
      const whole = makePdf(5);
      const charged = await used();
      const cases: [string, string, Buffer, string, Record<string, unknown>, number, string][] = [
        ['pixel flood', 'flood.png', pixelFloodPng(100_000, 100_000), 'jpg', {}, 422, 'conversion_failed'],
        ['zip bomb posing as docx', 'bomb.docx', await readFile(bomb), 'pdf', {}, 422, 'conversion_failed'],
        ['encrypted PDF without password', 'locked.pdf', await readFile(locked), 'png', {}, 422, 'password_required'],
        ['truncated PDF', 'cut.pdf', whole.subarray(0, Math.floor(whole.length * 0.6)), 'png', {}, 422, 'conversion_failed'],
        ['page_range beyond the last page', 'three.pdf', await readFile(plain), 'pdf', { page_range: '2-7' }, 400, 'invalid_request'],
      ];
      for (const [label, name, bytes, target, options, status, code] of cases) {
        const up = await uploadFile(name, bytes);
        assert.equal(up.statusCode, 201, up.body);
        const res = await convert({ upload_id: up.json().upload_id, target_format: target, ...options });
        const body = isError(res, status, code);
        if (code === 'invalid_request') assert.equal(body.field, 'page_range');
        outcomes.push(`${label} → ${status} ${code}: ${body.message}`);
        // One step: refused, and the stored upload leaves the disk.
        const before = await readdir(join(storage(), 'uploads'));
        const oneStep = await send('/api/v1/jobs', rawMultipart([{ name: 'target_format', value: target }, ...Object.entries(options).map(([k, v]) => ({ name: k, value: String(v) })), { name: 'file', filename: name, value: bytes }]));
        isError(oneStep, status, code);
        assert.deepEqual(await readdir(join(storage(), 'uploads')), before);
      }
      const empty = await uploadFile('empty.docx', Buffer.alloc(0));
      outcomes.push(`0-byte file → ${empty.statusCode} ${isError(empty, 415, 'unsupported_format').error}`);
      // The extension lies: PNG bytes named .docx are a PNG, and convert as one.
      const liar = await uploadFile('report.docx', await readFile(join(FIXTURES, 'sample.png')));
      assert.equal(liar.json().format, 'png');
      const liarPdf = await convert({ upload_id: liar.json().upload_id, target_format: 'pdf' });
      assert.equal(liarPdf.statusCode, 200, liarPdf.body);
      assert.equal(liarPdf.json().output.filename, 'report.pdf');
      outcomes.push('PNG named report.docx → 201 detected png; → pdf 200 completed');
      assert.equal(await used(), charged + 1, 'only the completed conversion is charged');
      await noJobFolders();
      await rm(dir, { recursive: true, force: true });
    });

    test('documents and an SVG referencing a loopback URL and file:///etc/passwd: nothing connects, no local file in the output', { timeout: 180_000 }, async () => {
      hits.length = 0;
      const dir = await mkdtemp(join(work, 'gen-'));
      const url = `http://127.0.0.1:${port}/api`;
      const docx = join(dir, 'linked.docx');
      writeLinkedDocx(docx, [url, 'file:///etc/passwd']);
      const files: [string, Buffer, string][] = [
        ['linked.docx', await readFile(docx), 'pdf'],
        ['refs.html', Buffer.from(`<html><body><p>Refs</p><img src="${url}"><img src="file:///etc/passwd"><iframe src="file:///etc/passwd"></iframe></body></html>`), 'pdf'],
        ['refs.md', Buffer.from(`# Refs\n\n![r](${url})\n\n![l](file:///etc/passwd)\n`), 'html'],
        ['reads.tex', Buffer.from('\\documentclass{article}\\begin{document}Reads \\input{/etc/passwd}\\end{document}'), 'txt'],
        ['xxe.svg', Buffer.from(svgWithEntities(url)), 'pdf'],
      ];
      for (const [name, bytes, target] of files) {
        const up = await uploadFile(name, bytes);
        assert.equal(up.statusCode, 201, up.body);
        const res = await convert({ upload_id: up.json().upload_id, target_format: target });
        const rec = res.statusCode === 200 ? res.json() : undefined;
        if (!rec) {
          isError(res, res.statusCode, res.json().error);
          outcomes.push(`${name} → ${res.statusCode} ${res.json().error}`);
          continue;
        }
        assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
        const out = (await get(`/api/v1/download/${rec.download_token}`)).rawPayload;
        const text = target === 'pdf' ? await pdfText(out, dir) : out.toString('latin1');
        assert.doesNotMatch(text, PASSWD_MARKER, `${name} → ${target} holds /etc/passwd`);
        outcomes.push(`${name} (loopback URL + file:///etc/passwd) → 200 completed as ${up.json().format} → ${target}, no fetch, no local file`);
      }
      assert.deepEqual(hits, [], 'something connected to the loopback listener');
      await noJobFolders();
      await rm(dir, { recursive: true, force: true });
    });

    test('remove_active_content: PDF → PDF without JavaScript, launch/URI actions or embedded files', { timeout: 60_000 }, async () => {
      const up = await uploadFile('active.pdf', makePdf(2, { active: true, uri: `http://127.0.0.1:${port}/uri` }));
      const res = await convert({ upload_id: up.json().upload_id, target_format: 'pdf', remove_active_content: true });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().options.remove_active_content, true);
      const dir = await mkdtemp(join(work, 'gen-'));
      const file = join(dir, 'out.pdf');
      await writeFile(file, (await get(`/api/v1/download/${res.json().download_token}`)).rawPayload);
      assert.deepEqual(activeContentKeys(file), []);
      const wrong = await convert({ upload_id: up.json().upload_id, target_format: 'png', remove_active_content: true });
      assert.equal(isError(wrong, 400, 'invalid_request').field, 'remove_active_content');
      outcomes.push('PDF with JavaScript, launch, URI, embedded file + remove_active_content → 200, none left (qpdf QDF view)');
      await rm(dir, { recursive: true, force: true });
    });

    test('a conversion started on an upload that is being shredded is 410, a failed one is refunded, and nothing stays behind', { timeout: 120_000 }, async () => {
      const docx = await readFile(join(FIXTURES, 'sample.docx'));
      const up = (await uploadFile('race.docx', docx)).json();
      const charged = await used();
      const first = await f.app.inject({ method: 'POST', url: '/api/v1/convert?wait=0', payload: { upload_id: up.upload_id, target_format: 'pdf' }, headers: auth() });
      assert.equal(first.statusCode, 202, first.body);
      // Shred and a second conversion of the same upload at once.
      const [shred, second] = await Promise.all([
        f.app.inject({ method: 'DELETE', url: `/api/v1/jobs/${first.json().id}`, headers: auth() }),
        convert({ upload_id: up.upload_id, target_format: 'txt' }),
      ]);
      assert.equal(shred.statusCode, 200, shred.body);
      assert.equal(shred.json().status, 'shredded');
      if (second.statusCode === 200) {
        // It ran before the shred reached the upload: it finished (or failed, uncharged).
        const rec = await settled(second.json().id);
        outcomes.push(`conversion racing a shred of its upload → 200 ${rec.status}`);
      } else {
        isError(second, 410, 'gone');
        outcomes.push('conversion started on an upload being shredded → 410 gone, not charged');
      }
      const third = await convert({ upload_id: up.upload_id, target_format: 'pdf' });
      isError(third, 410, 'gone');
      // A file that passes the checks but that the engine rejects: failed, and not charged.
      const header = Buffer.from('RIFF\x24\x10\x00\x00WAVEfmt \x10\x00\x00\x00', 'latin1');
      const badWav = (await uploadFile('broken.wav', Buffer.concat([header, Buffer.alloc(4000, 0xee)]))).json();
      assert.equal(badWav.format, 'wav');
      const failed = await convert({ upload_id: badWav.upload_id, target_format: 'mp3' });
      assert.equal(failed.statusCode, 200, failed.body);
      assert.equal(failed.json().status, 'failed');
      assert.equal(failed.json().error.code, 'conversion_failed');
      assertSafeMessage(failed.json().error.message);
      outcomes.push(`WAV with a broken format chunk → 200 failed conversion_failed (${failed.json().error.message}), not charged`);
      const expected = charged + (second.statusCode === 200 && (await settled(second.json().id)).status === 'completed' ? 1 : 0);
      assert.equal(await used(), expected, 'shredded and failed conversions are not charged');
      assert.deepEqual(await readdir(join(storage(), 'outputs')).then((f) => f.filter((x) => x.startsWith(first.json().id))), []);
      await noJobFolders();
      // The service still serves.
      assert.equal((await get('/api/v1/formats')).statusCode, 200);
      const ok = await convert({ upload_id: (await uploadFile('after.png', await readFile(join(FIXTURES, 'sample.png')))).json().upload_id, target_format: 'webp' });
      assert.equal(ok.statusCode, 200, ok.body);
    });
  });
}

/** pdftotext of a PDF held in memory (poppler, not the code under test). */
async function pdfText(pdf: Buffer, dir: string): Promise<string> {
  const { execFileSync } = await import('node:child_process');
  const path = join(dir, `t-${Math.random().toString(36).slice(2)}.pdf`);
  await writeFile(path, pdf);
  return execFileSync('/usr/bin/pdftotext', [path, '-'], { encoding: 'latin1', timeout: 30_000 });
}
