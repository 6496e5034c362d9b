import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { assertAnswersMatchDocument, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import { multipartBody as multipart, useConvertApp } from './api.test-support.js';

/**
 * PDF forms, metadata and images through the API (issue 25): pdf → json and pdf → zip listed
 * and answered, form_data checked against the PDF before any charge (400 naming the field),
 * a fill downloaded and read back by qpdf, multipart forms carrying form_data and metadata as
 * JSON text. The form is pdf-lib's fancy_fields.pdf (packages/converter/test/corpus, NOTICE.md).
 */
const CORPUS = join(findProjectRoot(), 'packages', 'converter', 'test', 'corpus', 'pdf');
const FORM = 'pdf-lib-fancy_fields.pdf';

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-forms-'));
  converter = await Converter.create({ workDir: join(work, 'engine'), libreoffice: { instances: 1 } });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});


/** qpdf's reading of the AcroForm: full name → (text) value or widget appearance states. */
function qpdfFields(path: string): Map<string, { value: unknown; states: string[] }> {
  const r = spawnSync('/usr/bin/qpdf', ['--json', '--json-key=acroform', path], { encoding: 'utf8' });
  assert.ok(r.status === 0 || r.status === 3, r.stderr);
  const out = new Map<string, { value: unknown; states: string[] }>();
  for (const f of (JSON.parse(r.stdout) as { acroform: { fields: { fullname: string; value: unknown; annotation?: { appearancestate?: string } }[] } }).acroform.fields) {
    const entry = out.get(f.fullname) ?? { value: typeof f.value === 'string' && f.value.startsWith('u:') ? f.value.slice(2) : f.value, states: [] };
    if (f.annotation?.appearancestate) entry.states.push(f.annotation.appearancestate);
    out.set(f.fullname, entry);
  }
  return out;
}

for (const backend of testBackends()) {
  describe(`PDF forms, metadata and images on ${backend}`, () => {
    const fx = useConvertApp(backend, { storage: () => join(work, `storage-${backend}`), converter: () => converter, email: `forms-${backend}@example.com` });
    let answers: RecordedAnswer[];
    before(() => {
      answers = recordAnswers(fx.app);
    });
    const auth = () => ({ authorization: `Bearer ${fx.key}` });
    const used = async () => ((await fx.app.inject({ method: 'GET', url: '/api/v1/account/usage', headers: auth() })).json() as { quota: { used: number } }).quota.used;
    const upload = async (name: string) => {
      const body = await multipart({}, { name, bytes: await readFile(join(CORPUS, name)) });
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', headers: { ...auth(), ...body.headers }, payload: body.payload });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { upload_id: string }).upload_id;
    };
    const convertJson = (payload: Record<string, unknown>) =>
      fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', headers: { ...auth(), 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const download = async (record: { download_url: string }, ext: string) => {
      const got = await fx.app.inject({ method: 'GET', url: new URL(record.download_url).pathname, headers: auth() });
      assert.equal(got.statusCode, 200);
      const path = join(work, `dl-${backend}-${Math.random().toString(36).slice(2)}.${ext}`);
      await writeFile(path, got.rawPayload);
      return path;
    };

    test('pdf → json and pdf → zip are listed; pdf → json answers the form’s fields', async () => {
      const targets = (await fx.app.inject({ method: 'GET', url: '/api/v1/formats/pdf/targets', headers: auth() })).json().targets as { format: string; engines: string[] }[];
      assert.deepEqual(targets.find((t) => t.format === 'json')?.engines, ['pikepdf']);
      assert.deepEqual(targets.find((t) => t.format === 'zip')?.engines, ['pdfimages']);
      const res = await convertJson({ upload_id: await upload(FORM), target_format: 'json' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'completed', res.body);
      const facts = JSON.parse(await readFile(await download(res.json(), 'json'), 'utf8')) as { pages: number; form: { fields: { name: string; type: string }[] } };
      assert.equal(facts.pages, 1);
      assert.equal(facts.form.fields.find((f) => f.name === 'Choose A Gundam 🤖')?.type, 'choice');
      assert.equal(facts.form.fields.length, qpdfFields(join(CORPUS, FORM)).size);
    });

    test('form_data naming an unknown field or a value its field cannot take: 400 naming it, nothing charged', async () => {
      const id = await upload(FORM);
      const before = await used();
      const unknown = await convertJson({ upload_id: id, target_format: 'pdf', form_data: { 'No such field': 'x', 'First Name 🚀': 'Ada' } });
      assert.equal(unknown.statusCode, 400, unknown.body);
      assert.equal(unknown.json().error, 'invalid_request');
      assert.equal(unknown.json().field, 'form_data');
      assert.match(unknown.json().message, /"No such field"/);
      const wrong = await convertJson({ upload_id: id, target_format: 'pdf', form_data: { 'Choose A Gundam 🤖': 'Zaku' } });
      assert.equal(wrong.statusCode, 400, wrong.body);
      assert.equal(wrong.json().field, 'form_data.Choose A Gundam 🤖');
      // A one-step multipart request is refused the same way (and its upload discarded).
      const body = await multipart({ target_format: 'pdf', form_data: JSON.stringify({ Nope: true }) }, { name: FORM, bytes: await readFile(join(CORPUS, FORM)) });
      const form = await fx.app.inject({ method: 'POST', url: '/api/v1/convert', headers: { ...auth(), ...body.headers }, payload: body.payload });
      assert.equal(form.statusCode, 400, form.body);
      assert.equal(form.json().field, 'form_data');
      const notJson = await multipart({ target_format: 'pdf', form_data: '{nope' }, { name: FORM, bytes: await readFile(join(CORPUS, FORM)) });
      const bad = await fx.app.inject({ method: 'POST', url: '/api/v1/convert', headers: { ...auth(), ...notJson.headers }, payload: notJson.payload });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(bad.json().field, 'form_data');
      const twice = await convertJson({ upload_id: id, target_format: 'pdf', title: 'A', metadata: { title: 'B' } });
      assert.equal(twice.statusCode, 400, twice.body);
      assert.equal(twice.json().field, 'metadata.title');
      assert.equal(await used(), before);
    });

    test('fill and download: qpdf reads the values; the record names the fields, never their values', async () => {
      const res = await convertJson({
        upload_id: await upload(FORM),
        target_format: 'pdf',
        form_data: { 'First Name 🚀': 'Grace', 'Is Your Power Level Over 9000? 💪': true, 'Historical Figures 🐺': 'Ada Lovelace 💻', 'Which Are Planets? 🌎': 'Earth' },
      });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as { status: string; options: { form_data?: string[] }; download_url: string };
      assert.equal(record.status, 'completed', res.body);
      assert.deepEqual(record.options.form_data, ['First Name 🚀', 'Historical Figures 🐺', 'Is Your Power Level Over 9000? 💪', 'Which Are Planets? 🌎']);
      assert.ok(!res.body.includes('Grace'), 'a value was answered');
      const fields = qpdfFields(await download(record, 'pdf'));
      assert.equal(fields.get('First Name 🚀')?.value, 'Grace');
      assert.deepEqual(fields.get('Is Your Power Level Over 9000? 💪')?.states, ['/Yes']);
      assert.deepEqual(fields.get('Historical Figures 🐺')?.states.sort(), ['/1', '/Off', '/Off', '/Off']);
      assert.equal(fields.get('Which Are Planets? 🌎')?.value, 'Earth');
    });

    test('multipart: form_data and metadata as JSON text, flatten as text; the values are page content', async () => {
      const body = await multipart(
        { target_format: 'pdf', form_data: JSON.stringify({ 'LastName 🛩': 'Hopper' }), flatten: 'true', metadata: JSON.stringify({ title: 'Filled form', keywords: ['forms', 'api'] }) },
        { name: FORM, bytes: await readFile(join(CORPUS, FORM)) },
      );
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', headers: { ...auth(), ...body.headers }, payload: body.payload });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as { status: string; options: { flatten?: boolean; metadata?: { title?: string } }; download_url: string };
      assert.equal(record.status, 'completed', res.body);
      assert.equal(record.options.flatten, true);
      assert.equal(record.options.metadata?.title, 'Filled form');
      const pdf = await download(record, 'pdf');
      assert.match(execFileSync('/usr/bin/pdftotext', [pdf, '-']).toString(), /Hopper/);
      assert.equal(qpdfFields(pdf).size, 0);
      const info = execFileSync('/usr/bin/pdfinfo', [pdf]).toString();
      assert.match(info, /^Title:\s+Filled form$/m);
      assert.match(info, /^Keywords:\s+forms, api$/m);
    });

    test('pdf → zip of a PDF without images: the conversion fails, refunded', async () => {
      const before = await used();
      const res = await convertJson({ upload_id: await upload(FORM), target_format: 'zip' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'failed', res.body);
      assert.equal(res.json().error.code, 'conversion_failed');
      assert.match(res.json().error.message, /no embedded images/);
      assert.equal(await used(), before);
    });

    test('every answer matches the OpenAPI document', async () => {
      await assertAnswersMatchDocument(fx.app, answers);
    });
  });
}
