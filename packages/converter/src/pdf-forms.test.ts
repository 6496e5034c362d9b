// PDF forms, metadata and images (issue 25) with the real engines, on real AcroForms from
// pdf-lib's and pypdf's test assets (test/corpus/NOTICE.md). Every result is read back by a
// tool the converter did not use for it: qpdf --json (fields, values, the AcroForm), pdftotext
// (flattened values), pdfinfo and pdfinfo -meta (metadata, XMP), pdfimages -list and bsdtar
// (the images zip).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from './converter.js';
import { packageFile } from './engines/engine.js';
import type { PdfFacts } from './engines/pdf-info.engine.js';
import { PDF_IMAGE_LIMITS } from './engines/pdf-images.engine.js';
import { parseOptions } from './options.js';
import { checkFormData } from './pdf-form-options.js';
import { scratchDir, tool, toolBytes, toolWith } from './testing/tools.js';

const corpus = (name: string): string => packageFile(`test/corpus/pdf/${name}`);
const FANCY = corpus('pdf-lib-fancy_fields.pdf');
const SAMPLE = corpus('pdf-lib-sample_form.pdf');
const LIBRE = corpus('pypdf-libreoffice-form.pdf');
const IMAGES = corpus('textract-ocr_text.pdf');

let dir: string;
let conv: Converter;
let n = 0;

before(async () => {
  dir = await scratchDir('conv-pdfforms-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000 });
});
after(async () => {
  await conv.close();
  await import('node:fs/promises').then((fs) => fs.rm(dir, { recursive: true, force: true }));
});

async function convert(input: string, to: string, options: Record<string, unknown> = {}): Promise<{ out: string; engines: readonly string[] }> {
  const out = join(dir, `out-${n++}.${to}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: 'pdf', targetFormat: to, outputPath: out, options });
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message} (${r.error.detail ?? ''})`);
  return { out, engines: r.engines };
}

async function failure(input: string, to: string, options: Record<string, unknown> = {}) {
  const r = await conv.convert({ inputPath: input, sourceFormat: 'pdf', targetFormat: to, outputPath: join(dir, `fail-${n++}.${to}`), options });
  assert.equal(r.ok, false, 'the conversion should have failed');
  return (r as { ok: false; error: { code: string; message: string; field?: string } }).error;
}

interface QpdfField { fullname: string; fieldtype: string; value: unknown; choices: string[]; annotation?: { appearancestate?: string } }
/** qpdf's own reading of the AcroForm (`qpdf --json --json-key=acroform`). */
function qpdfForm(path: string): { hasacroform: boolean; fields: QpdfField[] } {
  const out = toolWith('/usr/bin/qpdf', ['--json', '--json-key=acroform', path], { okStatus: [3] });
  return (JSON.parse(out) as { acroform: { hasacroform: boolean; fields: QpdfField[] } }).acroform;
}
/** qpdf writes text values as `u:…`. */
const qpdfText = (v: unknown): unknown => (typeof v === 'string' && v.startsWith('u:') ? v.slice(2) : v);
const imageRows = (path: string): number => toolWith('/usr/bin/pdfimages', ['-list', path]).trim().split('\n').length - 2;

test('pdf → json: the facts of real forms agree with qpdf, pdfinfo and pdfimages', async () => {
  for (const pdf of [FANCY, SAMPLE, LIBRE]) {
    const { out, engines } = await convert(pdf, 'json');
    assert.deepEqual(engines, ['pikepdf']);
    const facts = JSON.parse(await readFile(out, 'utf8')) as PdfFacts;
    const info = tool('/usr/bin/pdfinfo', [pdf]);
    assert.equal(facts.pages, Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]));
    assert.equal(facts.pdf_version, /^PDF version:\s+(\S+)/m.exec(info)?.[1]);
    const [w, h] = (/^Page size:\s+([\d.]+) x ([\d.]+)/m.exec(info) ?? []).slice(1).map(Number);
    assert.ok(Math.abs((facts.page_sizes[0]?.width ?? 0) - (w ?? 0)) < 0.5 && Math.abs((facts.page_sizes[0]?.height ?? 0) - (h ?? 0)) < 0.5, `${pdf}: page size`);
    assert.equal(facts.tagged, /^Tagged:\s+yes/m.test(info), `${pdf}: tagged`);
    assert.equal(facts.images, imageRows(pdf));
    // Every field qpdf knows, with its type; text and choice values as qpdf reads them.
    const qpdf = qpdfForm(pdf);
    const byName = new Map(facts.form.fields.map((f) => [f.name, f]));
    assert.deepEqual([...byName.keys()].sort(), [...new Set(qpdf.fields.map((f) => f.fullname))].sort(), pdf);
    for (const q of qpdf.fields) {
      const f = byName.get(q.fullname);
      const want = { '/Tx': ['text'], '/Btn': ['checkbox', 'radio', 'button'], '/Ch': ['choice', 'list'], '/Sig': ['signature'] }[q.fieldtype];
      assert.ok(want?.includes(f?.type ?? ''), `${q.fullname}: ${q.fieldtype} read as ${f?.type}`);
      if (f?.type === 'text') assert.equal(f.value ?? '', qpdfText(q.value) ?? '', q.fullname);
      if (f?.type === 'choice' || f?.type === 'list') assert.deepEqual(f.options, q.choices, q.fullname);
    }
  }
  const fancy = JSON.parse(await readFile((await convert(FANCY, 'json')).out, 'utf8')) as PdfFacts;
  const field = (name: string) => fancy.form.fields.find((f) => f.name === name);
  assert.deepEqual(field('Historical Figures 🐺')?.options, ['Marcus Aurelius 🏛️', 'Ada Lovelace 💻', 'Marie Curie ☢️', 'Alexander Hamilton 🇺🇸']);
  assert.equal(field('Historical Figures 🐺')?.value, 'Marcus Aurelius 🏛️');
  assert.deepEqual([field('Are You A Fairy? 🌿')?.value, field('Are You A Fairy? 🌿')?.options], [true, ['Yes']]);
  assert.equal(field('Choose A Gundam 🤖')?.type, 'choice');
  assert.equal(field('Which Are Planets? 🌎')?.type, 'list');
  const sample = JSON.parse(await readFile((await convert(SAMPLE, 'json')).out, 'utf8')) as PdfFacts;
  assert.equal(sample.metadata.title, 'Example of an Interactive PDF Form');
  assert.equal(sample.metadata.keywords, 'forms, flat, fillable');
  assert.deepEqual(sample.form.fields.find((f) => f.name === 'STATE')?.max_length, 2);
  assert.deepEqual(sample.form.fields.find((f) => f.name === 'EMPLOYEE SIGNATURE')?.type, 'signature');
  assert.deepEqual(sample.signatures, []);
  const libre = JSON.parse(await readFile((await convert(LIBRE, 'json')).out, 'utf8')) as PdfFacts;
  assert.equal(libre.form.fields.find((f) => f.name === 'First Name_2')?.multiline, true);
});

test('pdf → json: a signature, a PDF/A and a PDF/UA claim, an encrypted source', async () => {
  // A signature field with a signature dictionary (its bytes need not verify: the facts read its entries), and the XMP claims, written by pikepdf.
  const signed = join(dir, 'signed.pdf');
  tool('/usr/bin/python3', ['-I', '-c', `
import sys, pikepdf
from pikepdf import Dictionary, Name, Array, String
pdf = pikepdf.open(sys.argv[1])
sig = pdf.make_indirect(Dictionary(Type=Name.Sig, Filter=Name('/Adobe.PPKLite'), Name=String('Ada Lovelace'), M=String("D:20260102030405+01'00'"), Reason=String('Approved'), Location=String('London')))
widget = pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Widget, FT=Name.Sig, T=String('Approval'), Rect=Array([0, 0, 0, 0]), V=sig, P=pdf.pages[0].obj))
pdf.pages[0].obj.Annots = Array([widget])
pdf.Root.AcroForm = Dictionary(Fields=Array([widget]), SigFlags=3)
with pdf.open_metadata(set_pikepdf_as_editor=False) as m:
    m['pdfaid:part'] = '2'
    m['pdfaid:conformance'] = 'B'
    m['{http://www.aiim.org/pdfua/ns/id/}part'] = '1'
pdf.save(sys.argv[2])
`, IMAGES, signed]);
  const facts = JSON.parse(await readFile((await convert(signed, 'json')).out, 'utf8')) as PdfFacts;
  assert.deepEqual(facts.signatures, [{ field: 'Approval', signer: 'Ada Lovelace', signed_at: '2026-01-02T03:04:05+01:00', reason: 'Approved', location: 'London' }]);
  assert.equal(facts.form.fields[0]?.value, true);
  assert.equal(facts.pdfa, '2b');
  assert.equal(facts.pdfua, true);
  // An AES-256 copy (qpdf), opened with `password`: the facts say it was encrypted.
  const locked = join(dir, 'locked.pdf');
  tool('/usr/bin/qpdf', ['--encrypt', 'pw', 'pw', '256', '--', FANCY, locked]);
  const { out } = await convert(locked, 'json', { password: 'pw' });
  const lockedFacts = JSON.parse(await readFile(out, 'utf8')) as PdfFacts;
  assert.equal(lockedFacts.encrypted, true);
  assert.equal(lockedFacts.form.fields.length, 15);
  assert.equal(await failure(FANCY, 'json', { page_range: '1' }).then((e) => e.field), 'page_range');
});

test('form_data fills every field type, read back by qpdf; the values are drawn (pdftotext)', async () => {
  const { out, engines } = await convert(FANCY, 'pdf', {
    form_data: {
      'First Name 🚀': 'Grace',
      'LastName 🛩': 'Hopper',
      'Are You A Fairy? 🌿': false,
      'Is Your Power Level Over 9000? 💪': true,
      'Will You Ever Let Me Down? ☕️': 'Yes',
      'Historical Figures 🐺': 'Marie Curie ☢️',
      'Choose A Gundam 🤖': 'Kyrios',
      'Which Are Planets? 🌎': 'Neptune',
    },
  });
  assert.deepEqual(engines, ['qpdf', 'pikepdf', 'qpdf']);
  const fields = qpdfForm(out).fields;
  const one = (name: string): QpdfField[] => fields.filter((f) => f.fullname === name);
  assert.equal(qpdfText(one('First Name 🚀')[0]?.value), 'Grace');
  assert.equal(qpdfText(one('LastName 🛩')[0]?.value), 'Hopper');
  assert.equal(one('Are You A Fairy? 🌿')[0]?.annotation?.appearancestate, '/Off');
  assert.equal(one('Is Your Power Level Over 9000? 💪')[0]?.annotation?.appearancestate, '/Yes');
  assert.equal(one('Will You Ever Let Me Down? ☕️')[0]?.annotation?.appearancestate, '/Yes');
  // The radio's export values are in /Opt: Marie Curie is state /2, the third widget's.
  assert.deepEqual(one('Historical Figures 🐺').map((f) => f.annotation?.appearancestate).sort(), ['/2', '/Off', '/Off', '/Off']);
  assert.equal(qpdfText(one('Choose A Gundam 🤖')[0]?.value), 'Kyrios');
  assert.equal(qpdfText(one('Which Are Planets? 🌎')[0]?.value), 'Neptune');
  // Appearances were generated: the text is on the page for any viewer (no NeedAppearances left to honour).
  const text = tool('/usr/bin/pdftotext', [out, '-']);
  for (const word of ['Grace', 'Hopper', 'Kyrios']) assert.match(text, new RegExp(word));
  assert.equal(qpdfForm(out).fields.length, qpdfForm(FANCY).fields.length);
  // The pypdf LibreOffice form: a radio without /Opt, a combo, a multi-line text.
  const libre = await convert(LIBRE, 'pdf', { form_data: { female: '2', Nationality: 'French', 'First Name_2': 'two\nlines', gdpr: true } });
  const lf = qpdfForm(libre.out).fields;
  assert.deepEqual(lf.filter((f) => f.fullname === 'female').map((f) => f.annotation?.appearancestate).sort(), ['/2', '/Off']);
  assert.equal(qpdfText(lf.find((f) => f.fullname === 'Nationality')?.value), 'French');
  assert.equal(lf.find((f) => f.fullname === 'gdpr')?.annotation?.appearancestate, '/Yes');
});

test('flatten (after a fill, in one request): the values are page content and no field remains', async () => {
  const { out } = await convert(SAMPLE, 'pdf', { form_data: { Name_First: 'Katherine', City: 'Hampton', PHD: true, Sex: 'FEMALE' }, flatten: true });
  const form = qpdfForm(out);
  assert.equal(form.hasacroform, false);
  assert.deepEqual(form.fields, []);
  const text = tool('/usr/bin/pdftotext', [out, '-']);
  assert.match(text, /Katherine/);
  assert.match(text, /Hampton/);
  // No widget is left anywhere in the file either (qpdf's listing of every object).
  const objects = JSON.parse(tool('/usr/bin/qpdf', ['--json', '--json-key=qpdf', out])) as { qpdf: [unknown, Record<string, { value?: { '/Subtype'?: string } }>] };
  assert.deepEqual(Object.values(objects.qpdf[1]).filter((o) => o.value?.['/Subtype'] === '/Widget'), []);
  // Flatten alone, on the pdf-lib form.
  const flat = await convert(FANCY, 'pdf', { flatten: true });
  assert.equal(qpdfForm(flat.out).hasacroform, false);
  assert.match(tool('/usr/bin/pdftotext', [flat.out, '-']), /Lightningtwirls/);
});

test('form_data that does not fit the form: 400 naming the fields, at preflight and at conversion', async () => {
  const pre = async (options: Record<string, unknown>, pdf = FANCY) => {
    const r = await conv.preflight(pdf, 'pdf', 'pdf', options);
    assert.equal(r.ok, false);
    return (r as { ok: false; error: { code: string; message: string; field?: string } }).error;
  };
  const unknown = await pre({ form_data: { 'No such field': 'x', 'First Name 🚀': 'ok', Another: 'y' } });
  assert.deepEqual([unknown.code, unknown.field], ['invalid_request', 'form_data']);
  assert.match(unknown.message, /"No such field", "Another"/);
  const checkbox = await pre({ form_data: { 'Are You A Fairy? 🌿': 'Maybe' } });
  assert.deepEqual([checkbox.code, checkbox.field], ['invalid_request', 'form_data.Are You A Fairy? 🌿']);
  const choice = await pre({ form_data: { 'Choose A Gundam 🤖': 'Zaku' } });
  assert.deepEqual([choice.code, choice.field], ['invalid_request', 'form_data.Choose A Gundam 🤖']);
  assert.match(choice.message, /Exia/);
  const radio = await pre({ form_data: { 'Historical Figures 🐺': true } });
  assert.equal(radio.field, 'form_data.Historical Figures 🐺');
  const text = await pre({ form_data: { 'First Name 🚀': ['a', 'b'] } });
  assert.equal(text.field, 'form_data.First Name 🚀');
  const tooLong = await pre({ form_data: { STATE: 'Washington' } }, SAMPLE);
  assert.match(tooLong.message, /at most 2 characters/);
  const button = await pre({ form_data: { 'Submit 📝': 'x' } });
  assert.equal(button.field, 'form_data.Submit 📝');
  const noForm = await pre({ form_data: { a: 'b' } }, IMAGES);
  assert.match(noForm.message, /has none/);
  assert.equal((await conv.preflight(FANCY, 'pdf', 'pdf', { form_data: { 'First Name 🚀': 'Ada' } })).ok, true);
  // The worker checks again on the PDF it fills.
  const late = await failure(FANCY, 'pdf', { form_data: { Nope: 'x' } });
  assert.deepEqual([late.code, late.field], ['invalid_request', 'form_data']);
  // Not a PDF source; not a PDF target.
  assert.equal(conv.plan('docx', 'pdf', { form_data: { a: 'b' } }).ok, false);
  // A check box without appearances has no on-state to show: true is refused, false is fine.
  assert.throws(() => checkFormData({ bare: true }, [{ name: 'bare', type: 'checkbox', states: [], options: [] }]), /check box/);
  assert.doesNotThrow(() => checkFormData({ bare: false }, [{ name: 'bare', type: 'checkbox', states: [], options: [] }]));
  // Compression (Ghostscript, before the PDF operations) would leave no form to fill.
  for (const squeeze of [{ preset: 'compress' }, { quality: 50 }, { max_output_bytes: 100_000 }]) {
    const refused = conv.plan('pdf', 'pdf', { ...squeeze, form_data: { 'First Name 🚀': 'Ada' } });
    assert.equal(refused.ok ? '' : refused.error.field, 'form_data', JSON.stringify(squeeze));
  }
  assert.equal(conv.plan('pdf', 'pdf', { preset: 'linearize', form_data: { 'First Name 🚀': 'Ada' } }).ok, true);
  const plan = conv.plan('pdf', 'png', { flatten: true });
  assert.equal(plan.ok ? '' : plan.error.field, 'flatten');
});

test('metadata: every entry in the information dictionary (pdfinfo) and the XMP (pdfinfo -meta); title and author still work', async () => {
  const { out, engines } = await convert(LIBRE, 'pdf', {
    metadata: { title: 'Quarterly form', author: 'Ada Lovelace', subject: 'Forms', keywords: ['alpha', 'beta'], creator: 'Writer 9', producer: 'mailconv', created: '2026-01-02T03:04:05Z', modified: '2026-02-03T04:05:06+01:00' },
  });
  assert.deepEqual(engines, ['qpdf', 'pikepdf']);
  const info = tool('/usr/bin/pdfinfo', ['-isodates', out]);
  for (const [k, v] of [['Title', 'Quarterly form'], ['Author', 'Ada Lovelace'], ['Subject', 'Forms'], ['Keywords', 'alpha, beta'], ['Creator', 'Writer 9'], ['Producer', 'mailconv'], ['CreationDate', '2026-01-02T03:04:05Z'], ['ModDate', '2026-02-03T04:05:06\\+01']]) {
    assert.match(info, new RegExp(`^${k}:\\s+${v}`, 'm'), k);
  }
  const xmp = tool('/usr/bin/pdfinfo', ['-meta', out]);
  for (const v of ['Quarterly form', 'Ada Lovelace', 'Forms', 'alpha, beta', '<rdf:li>beta</rdf:li>', 'Writer 9', 'mailconv', '2026-01-02T03:04:05Z', '2026-02-03T04:05:06+01:00']) assert.ok(xmp.includes(v), `XMP lacks ${v}`);
  // The old options, alone and beside metadata's other entries.
  const both = await convert(LIBRE, 'pdf', { title: 'Plain title', metadata: { subject: 'Beside' } });
  assert.match(tool('/usr/bin/pdfinfo', [both.out]), /^Title:\s+Plain title$/m);
  assert.match(tool('/usr/bin/pdfinfo', [both.out]), /^Subject:\s+Beside$/m);
  // A title given twice is refused, as are unknown entries and dates that are not ISO 8601.
  const twice = conv.plan('pdf', 'pdf', { title: 'A', metadata: { title: 'B' } });
  assert.equal(twice.ok ? '' : twice.error.field, 'metadata.title');
  assert.throws(() => parseOptions({ metadata: { colour: 'red' } }, 'pdf'), /not one of/);
  assert.throws(() => parseOptions({ metadata: { created: 'yesterday' } }, 'pdf'), /ISO 8601/);
  assert.deepEqual(parseOptions({ metadata: { keywords: 'a, b ,c' } }, 'pdf').pdfForm?.metadata?.keywords, ['a', 'b', 'c']);
});

test('pdf → zip: every image in its own format, named by page, as many as pdfimages lists', async () => {
  const { out, engines } = await convert(IMAGES, 'zip');
  assert.deepEqual(engines, ['pdfimages']);
  const names = tool('/usr/bin/bsdtar', ['-tf', out]).trim().split('\n');
  assert.equal(names.length, imageRows(IMAGES));
  assert.deepEqual(names, ['page-1-image-000.png', 'page-2-image-001.png', 'page-3-image-002.png']);
  // A JPEG comes out as the JPEG it is (img2pdf embeds it unchanged): the same bytes.
  const jpeg = join(dir, 'photo.jpg');
  tool('/usr/bin/convert', ['-size', '64x48', 'gradient:red-blue', jpeg]);
  const photoPdf = join(dir, 'photo.pdf');
  tool('/usr/bin/img2pdf', ['-o', photoPdf, jpeg]);
  const photo = await convert(photoPdf, 'zip');
  const unzipped = toolBytes('/usr/bin/unzip', ['-p', photo.out, 'page-1-image-000.jpg']);
  assert.ok(unzipped.equals(await readFile(jpeg)), 'the JPEG was re-encoded');
  // page_range picks the pages first.
  const two = await convert(IMAGES, 'zip', { page_range: '2-3' });
  assert.equal(tool('/usr/bin/bsdtar', ['-tf', two.out]).trim().split('\n').length, 2);
  // No images: a clear failure, not an empty zip.
  const none = await failure(FANCY, 'zip');
  assert.equal(none.code, 'conversion_failed');
  assert.match(none.message, /no embedded images/);
});

test('pdf → zip of a bomb: 100,000 drawings of a tiny image fail cleanly, before anything is extracted', async () => {
  const bomb = join(dir, 'bomb.pdf');
  tool('/usr/bin/python3', ['-I', '-c', `
import sys, zlib, pikepdf
from pikepdf import Dictionary, Name, Stream
pdf = pikepdf.new()
pdf.add_blank_page(page_size=(200, 200))
img = Stream(pdf, b'\\x00', Type=Name.XObject, Subtype=Name.Image, Width=1, Height=1, ColorSpace=Name.DeviceGray, BitsPerComponent=8)
page = pdf.pages[0]
page.obj.Resources = Dictionary(XObject=Dictionary(Im0=img))
page.obj.Contents = Stream(pdf, b'q 1 0 0 1 0 0 cm /Im0 Do Q\\n' * 100000)
pdf.save(sys.argv[1], compress_streams=True)
`, bomb]);
  assert.equal(imageRows(bomb), 100_000);
  const started = Date.now();
  const e = await failure(bomb, 'zip');
  assert.equal(e.code, 'conversion_failed');
  assert.match(e.message, new RegExp(`more than ${PDF_IMAGE_LIMITS.maxImages} images`));
  assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
  // 2,000 choice fields sharing one /Opt of 500 references to one 2,000-character string
  // (a 200 KB file, 2 GB of text): the facts stop at their text cap, quickly, not at the memory cap.
  const options = join(dir, 'options-bomb.pdf');
  tool('/usr/bin/python3', ['-I', '-c', `
import sys, pikepdf
from pikepdf import Dictionary, Name, Array, String
pdf = pikepdf.new()
pdf.add_blank_page()
s = pdf.make_indirect(String('x' * 2000))
opt = pdf.make_indirect(Array([s] * 500))
pdf.Root.AcroForm = Dictionary(Fields=Array([pdf.make_indirect(Dictionary(FT=Name.Ch, T=String('f%d' % i), Opt=opt, Rect=Array([0, 0, 0, 0]))) for i in range(2000)]))
pdf.save(sys.argv[1])
`, options]);
  const t0 = Date.now();
  const big = await failure(options, 'json');
  assert.equal(big.message, 'The PDF’s facts are too large to answer.');
  assert.ok(Date.now() - t0 < 15_000, `${Date.now() - t0} ms`);
  // Its facts still count them (pdf → json lists, it extracts nothing).
  const facts = JSON.parse(await readFile((await convert(bomb, 'json')).out, 'utf8')) as PdfFacts;
  assert.equal(facts.images, 100_000);
});
