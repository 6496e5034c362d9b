import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { assertAnswersMatchDocument, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import { multipartBody as multipart, useConvertApp } from './api.test-support.js';

/**
 * Redaction and page marks through the API (issue 25): a redact conversion and its download
 * (checked by poppler's pdftotext and pdfinfo), a bad option → 400 naming the field, and a
 * multipart form carrying the objects as JSON text. The source is qpdf's 11-page test file
 * (packages/converter/test/corpus, NOTICE.md there).
 */
const ELEVEN = join(findProjectRoot(), 'packages', 'converter', 'test', 'corpus', 'pdf', 'qpdf-11-pages-with-labels.pdf');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');


/** A 4×4 red PNG, written chunk by chunk here (not by the code under test). */
function redPng(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(4, 0);
  header.writeUInt32BE(4, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.concat(Array.from({ length: 4 }, () => Buffer.from([0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0])));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-markup-'));
  converter = await Converter.create({ workDir: join(work, 'engine') });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

for (const backend of testBackends()) {
  describe(`PDF redaction and page marks through the API on ${backend}`, () => {
    const fx = useConvertApp(backend, { storage: () => join(work, `storage-${backend}`), converter: () => converter, email: `markup-${backend}@example.com` });
    let answers: RecordedAnswer[];
    before(() => {
      answers = recordAnswers(fx.app);
    });
    const auth = () => ({ authorization: `Bearer ${fx.key}` });
    let n = 0;
    /** The download's bytes written to a file for poppler. */
    const download = async (record: { download_url: string; output: { sha256: string } }) => {
      const got = await fx.app.inject({ method: 'GET', url: new URL(record.download_url).pathname, headers: auth() });
      assert.equal(got.statusCode, 200);
      assert.equal(sha256(got.rawPayload), record.output.sha256);
      const path = join(work, `out-${backend}-${n++}.pdf`);
      await writeFile(path, got.rawPayload);
      return path;
    };
    const upload = async () => {
      const body = await multipart({}, { name: 'eleven.pdf', bytes: await readFile(ELEVEN) });
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', payload: body.payload, headers: { ...body.headers, ...auth() } });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { upload_id: string }).upload_id;
    };

    test('a redact conversion (JSON) with Bates numbers and an image stamp: the words are gone from the download, the rest stays, the record says what was asked', { timeout: 120_000 }, async () => {
      const id = await upload();
      const png = redPng();
      const res = await fx.app.inject({
        method: 'POST', url: '/api/v1/convert?wait=60', headers: auth(),
        payload: {
          upload_id: id, target_format: 'pdf', redact: { text: ['page 3'], areas: [{ page: 5, x: 0, y: 0, width: 612, height: 200 }] }, bates: { prefix: 'ACME' },
          stamps: [{ image: png.toString('base64'), width: 50, pages: '1', position: 'top-left' }],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as { status: string; options: Record<string, unknown>; download_url: string; output: { sha256: string; redacted_areas?: number } };
      assert.equal(record.status, 'completed', res.body);
      // One area and one match of "page 3".
      assert.equal(record.output.redacted_areas, 2);
      assert.deepEqual(record.options.redact, { areas: [{ page: 5, x: 0, y: 0, width: 612, height: 200 }], text: ['page 3'], match_case: false, fill: '#000000' });
      assert.deepEqual(record.options.bates, { prefix: 'ACME', suffix: '', start: 1, digits: 6, position: 'bottom-right', font_size: 10 });
      // The image is answered by its SHA-256 and size, not sent back.
      assert.deepEqual(record.options.stamps, [{ image_sha256: sha256(png), image_bytes: png.length, width: 50, pages: '1', position: 'top-left', font_size: 36, color: '#cc0000', opacity: 1, rotation: 0, margin: 24 }]);
      const path = await download(record);
      const pages = execFileSync('/usr/bin/pdftotext', [path, '-']).toString().split('\f');
      assert.doesNotMatch(pages[2] ?? '', /page 3/);
      assert.match(pages[2] ?? '', /Original/);
      assert.doesNotMatch(pages[4] ?? '', /Original/);
      assert.match(pages[3] ?? '', /Original page 4/);
      assert.match(pages[10] ?? '', /ACME000011/);
      assert.match(execFileSync('/usr/bin/pdfimages', ['-list', '-f', '1', '-l', '1', path]).toString(), /^\s+1\s+0\s+image\s+4\s+4\s+rgb/m, 'the stamp image is on page 1');
      assert.doesNotMatch(execFileSync('/usr/bin/pdfinfo', [path]).toString(), /^Producer:\s+Apex/m, 'the information dictionary is gone');
    });

    test('bad options → 400 naming the field, before any charge', async () => {
      const id = await upload();
      const cases: [Record<string, unknown>, string][] = [
        [{ redact: { regex: '(a+)+b' } }, 'redact.regex'],
        [{ redact: { areas: [{ page: 12, x: 0, y: 0, width: 10, height: 10 }] } }, 'redact.areas'],
        [{ stamps: [{ text: 'a', image: 'iVBORw0KGgo=' }] }, 'stamps[0]'],
        [{ page_numbers: { position: 'middle' } }, 'page_numbers'],
      ];
      for (const [options, field] of cases) {
        const res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=0', headers: auth(), payload: { upload_id: id, target_format: 'pdf', ...options } });
        assert.equal(res.statusCode, 400, `${JSON.stringify(options)}: ${res.body}`);
        const body = res.json() as { error: string; field?: string };
        assert.equal(body.error, 'invalid_request');
        assert.ok(body.field?.startsWith(field), `${JSON.stringify(options)}: field ${body.field}`);
      }
    });

    test('multipart: the objects as JSON text (redact, stamps, page_numbers "true"), header as text', { timeout: 120_000 }, async () => {
      const body = await multipart(
        { target_format: 'pdf', redact: JSON.stringify({ regex: 'page \\d+' }), page_numbers: 'true', stamps: JSON.stringify([{ text: 'DRAFT', pages: '1' }]), header: 'Case 42' },
        { name: 'eleven.pdf', bytes: await readFile(ELEVEN) },
      );
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', payload: body.payload, headers: { ...body.headers, ...auth() } });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as { status: string; download_url: string; output: { sha256: string } };
      assert.equal(record.status, 'completed', res.body);
      const path = await download(record);
      const first = execFileSync('/usr/bin/pdftotext', ['-layout', '-f', '1', '-l', '1', path, '-']).toString();
      assert.match(first, /Case 42/);
      assert.match(first, /DRAFT/);
      assert.doesNotMatch(first, /page 1\b/);
      assert.match(execFileSync('/usr/bin/pdftotext', ['-layout', '-f', '7', '-l', '7', path, '-']).toString(), /^\s+7\s*$/m);
      const bad = await multipart({ target_format: 'pdf', redact: '{not json' }, { name: 'eleven.pdf', bytes: await readFile(ELEVEN) });
      const refused = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=0', payload: bad.payload, headers: { ...bad.headers, ...auth() } });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal((refused.json() as { field?: string }).field, 'redact');
    });

    test('every answer matches the OpenAPI document', async () => {
      await assertAnswersMatchDocument(fx.app, answers);
    });
  });
}
