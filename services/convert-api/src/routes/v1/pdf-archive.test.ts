import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { assertAnswersMatchDocument, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import { multipartBody as multipart, useConvertApp } from './api.test-support.js';

/**
 * PDF/A levels and PDF/UA through the API (issue 25): `pdfa` "1b" of a document, read back
 * with poppler's pdfinfo (the XMP claim, PDF 1.4); a bad level and `pdf_ua` on a picture are
 * 400s naming the field; `pdf_ua` in a multipart form gives a tagged PDF with its language.
 */
const FIXTURES = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures');
const CORPUS = join(findProjectRoot(), 'packages', 'converter', 'test', 'corpus');

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-pdfa-'));
  converter = await Converter.create({ workDir: join(work, 'engine'), libreoffice: { instances: 1 } });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});


let saved = 0;
/** The downloaded PDF written to a file for poppler. */
async function pdfInfo(bytes: Buffer, args: string[] = []): Promise<string> {
  const path = join(work, `out-${saved++}.pdf`);
  await writeFile(path, bytes);
  return execFileSync('/usr/bin/pdfinfo', [...args, path], { encoding: 'utf8' });
}

for (const backend of testBackends()) {
  describe(`PDF/A and PDF/UA on ${backend}`, () => {
    const fx = useConvertApp(backend, { storage: () => join(work, `storage-${backend}`), converter: () => converter, email: `pdfa-${backend}@example.com` });
    let answers: RecordedAnswer[];
    before(() => {
      answers = recordAnswers(fx.app);
    });
    const auth = () => ({ authorization: `Bearer ${fx.key}` });
    const upload = async (name: string, bytes: Buffer): Promise<string> => {
      const { payload, headers } = await multipart({}, { name, bytes });
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', headers: { ...auth(), ...headers }, payload });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { upload_id: string }).upload_id;
    };
    const convert = (payload: Record<string, unknown>) =>
      fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=120', headers: { ...auth(), 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const download = async (record: { download_url: string }): Promise<Buffer> => {
      const got = await fx.app.inject({ method: 'GET', url: new URL(record.download_url).pathname, headers: auth() });
      assert.equal(got.statusCode, 200);
      return got.rawPayload;
    };

    test('pdfa "1b" of a docx: completed, the record says so, pdfinfo reads PDF/A-1 at PDF 1.4', { timeout: 180_000 }, async () => {
      const id = await upload('report.docx', await readFile(join(FIXTURES, 'sample.docx')));
      const res = await convert({ upload_id: id, target_format: 'pdf', pdfa: '1b' });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as { status: string; options: { pdfa?: string }; download_url: string };
      assert.equal(record.status, 'completed', res.body);
      assert.equal(record.options.pdfa, '1b');
      const pdf = await download(record);
      assert.match(await pdfInfo(pdf, ['-meta']), /pdfaid:part(>|=['"])1\b/);
      assert.match(await pdfInfo(pdf), /^PDF version:\s+1\.4$/m);
    });

    test('a bad level → 400 naming pdfa; pdf_ua on a picture → 400 naming pdf_ua; language without pdf_ua → 400 naming language', async () => {
      const docx = await upload('report.docx', await readFile(join(FIXTURES, 'sample.docx')));
      const png = await upload('picture.png', await readFile(join(FIXTURES, 'sample.png')));
      for (const [payload, field, message] of [
        [{ upload_id: docx, target_format: 'pdf', pdfa: '4b' }, 'pdfa', /pdfa/],
        [{ upload_id: png, target_format: 'pdf', pdf_ua: true }, 'pdf_ua', /documents, sheets and slides that LibreOffice converts/],
        [{ upload_id: docx, target_format: 'pdf', language: 'en-GB' }, 'language', /applies with pdf_ua/],
        [{ upload_id: docx, target_format: 'pdf', pdfa: '2b', set_password: 'secret' }, 'set_password', /forbids encryption/],
      ] as const) {
        const res = await convert(payload);
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        assert.equal(res.json().error, 'invalid_request');
        assert.equal(res.json().field, field);
        assert.match(res.json().message, message);
      }
    });

    test('pdf_ua in a multipart form: a tagged PDF/UA with the title and language asked for', { timeout: 180_000 }, async () => {
      const bytes = await readFile(join(CORPUS, 'docx', 'apachepoi-form_footnotes.docx'));
      const { payload, headers } = await multipart({ target_format: 'pdf', pdf_ua: 'true', title: 'Visa application form', language: 'pt-BR' }, { name: 'form.docx', bytes });
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=120', headers: { ...auth(), ...headers }, payload });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as { status: string; options: { pdf_ua?: boolean; language?: string }; download_url: string };
      assert.equal(record.status, 'completed', res.body);
      assert.deepEqual([record.options.pdf_ua, record.options.language], [true, 'pt-BR']);
      const pdf = await download(record);
      assert.match(await pdfInfo(pdf, ['-meta']), /pdfuaid:part(>|=['"])1\b/);
      const info = await pdfInfo(pdf);
      assert.match(info, /^Tagged:\s+yes/m);
      assert.match(info, /^Title:\s+Visa application form$/m);
    });

    test('every answer matches the OpenAPI document', async () => {
      await assertAnswersMatchDocument(fx.app, answers);
    });
  });
}
