// PDF/A levels and PDF/UA (issue 25), with the real engines. No PDF/A or PDF/UA validator
// is packaged for Debian 12 or npm (veraPDF is neither), so each output is checked
// structurally by tools the converter did not use to write it: pdfinfo (-meta: the XMP
// pdfaid/pdfuaid claims, dc:title; version, encryption, tagging), pdffonts (every font
// embedded) and qpdf --json (the catalog: OutputIntents with GTS_PDFA1 and an ICC profile,
// /MarkInfo, /StructTreeRoot, /Lang, /ViewerPreferences).
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Converter } from './converter.js';
import { packageFile } from './engines/engine.js';
import { parseOptions } from './options.js';
import { fixture, scratchDir, tool } from './testing/tools.js';

const corpus = (path: string): string => packageFile(`test/corpus/${path}`);

let dir: string;
let conv: Converter;
let transparentPdf: string;
let n = 0;

before(async () => {
  dir = await scratchDir('conv-pdfa-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 90_000, libreoffice: { instances: 1 } });
  // A text page with a half-transparent red box (constant alpha 0.4), written by Ghostscript.
  transparentPdf = join(dir, 'transparent.pdf');
  tool('/usr/bin/gs', ['-dSAFER', '-dALLOWPSTRANSPARENCY', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', `-sOutputFile=${transparentPdf}`, '-c',
    '/Helvetica findfont 28 scalefont setfont 72 700 moveto (Seethrough) show 1 0 0 setrgbcolor 0.4 .setfillconstantalpha 72 400 200 100 rectfill showpage']);
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function convert(input: string, source: string, options: Record<string, unknown>) {
  return conv.convert({ inputPath: input, sourceFormat: source, targetFormat: 'pdf', options, outputPath: join(dir, 'out', `${n++}.pdf`) });
}
/** LibreOffice wrote the PDF: warm, or its one-off fallback after a crash of the warm instance (seen under load). */
const LO = 'libreoffice(?:-cold)?';
const chain = (engines: readonly string[], pattern: string): void => assert.match(engines.join(','), new RegExp(`^${pattern}$`));

async function ok(input: string, source: string, options: Record<string, unknown>): Promise<{ path: string; engines: readonly string[] }> {
  const r = await convert(input, source, options);
  if (!r.ok) assert.fail(`${source} ${JSON.stringify(options)}: ${JSON.stringify(r.error)}`);
  tool('/usr/bin/qpdf', ['--check', r.output.path]);
  return { path: r.output.path, engines: r.engines };
}

type Obj = Record<string, unknown>;
/** The PDF's objects as qpdf --json (version 2) gives them, and a resolver of references. */
function qpdfObjects(path: string): { root: Obj; get: (v: unknown) => Obj } {
  const objects = (JSON.parse(tool('/usr/bin/qpdf', ['--json=2', '--json-key=qpdf', path])) as { qpdf: [unknown, Record<string, Obj>] }).qpdf[1];
  const get = (v: unknown): Obj => {
    if (typeof v !== 'string' || !/^\d+ \d+ R$/.test(v)) return v as Obj;
    const o = objects[`obj:${v}`] as Obj;
    return (o.value ?? o.stream) as Obj;
  };
  return { root: get((objects.trailer?.value as Obj)['/Root']), get };
}

/** The structural PDF/A checks: XMP claim, version, no encryption, fonts embedded, sRGB output intent. */
function assertPdfA(path: string, part: 1 | 2 | 3, conformance: 'A' | 'B' = 'B'): void {
  const meta = tool('/usr/bin/pdfinfo', ['-meta', path]);
  assert.match(meta, new RegExp(`pdfaid:part(>|=['"])${part}\\b`), `pdfaid:part ${part}`);
  assert.match(meta, new RegExp(`pdfaid:conformance(>|=['"])${conformance}\\b`), `pdfaid:conformance ${conformance}`);
  const info = tool('/usr/bin/pdfinfo', [path]);
  assert.match(info, /^Encrypted:\s+no/m);
  if (part === 1) assert.match(info, /^PDF version:\s+1\.4$/m, 'PDF/A-1 is PDF 1.4');
  const fonts = tool('/usr/bin/pdffonts', [path]).trim().split('\n').slice(2);
  for (const row of fonts) assert.equal(row.trim().split(/\s+/).at(-5), 'yes', `not embedded: ${row}`);
  const { root, get } = qpdfObjects(path);
  const intents = (get(root['/OutputIntents']) as unknown as unknown[]).map((i) => get(i));
  const intent = intents.find((i) => i['/S'] === '/GTS_PDFA1');
  assert.ok(intent, `an OutputIntent /GTS_PDFA1: ${JSON.stringify(intents)}`);
  const profile = get(intent['/DestOutputProfile']);
  assert.equal((profile.dict as Obj)['/N'], 3, 'an RGB ICC profile stream');
  // PDF/A-1: the XMP stream is not filtered (ISO 19005-1, 6.7.2).
  if (part === 1) assert.equal((get(root['/Metadata']).dict as Obj)['/Filter'], undefined);
}

/** The structural PDF/UA checks: the claim, tags, language, title shown, title in Info and XMP. */
function assertPdfUa(path: string, title: string, lang: RegExp): void {
  const meta = tool('/usr/bin/pdfinfo', ['-meta', path]);
  assert.match(meta, /pdfuaid:part(>|=['"])1\b/);
  assert.match(meta, new RegExp(`<dc:title>[\\s\\S]*?>${title}</rdf:li>`), 'XMP dc:title');
  const info = tool('/usr/bin/pdfinfo', [path]);
  assert.match(info, new RegExp(`^Title:\\s+${title}$`, 'm'));
  assert.match(info, /^Tagged:\s+yes/m);
  const { root, get } = qpdfObjects(path);
  assert.equal(get(root['/MarkInfo'])['/Marked'], true);
  assert.ok(root['/StructTreeRoot'], 'a structure tree');
  assert.match(String(root['/Lang']), lang);
  assert.equal(get(root['/ViewerPreferences'])['/DisplayDocTitle'], true);
}

describe('pdfa levels', () => {
  test('office sources: LibreOffice writes each level itself (its PDF/A-1 is level A, which meets B)', { timeout: 240_000 }, async () => {
    const a1 = await ok(fixture('sample.docx'), 'docx', { pdfa: '1b' });
    chain(a1.engines, LO);
    assertPdfA(a1.path, 1, 'A');
    const a2 = await ok(corpus('odt/odfdo-example.odt'), 'odt', { pdfa: '2b' });
    chain(a2.engines, LO);
    assertPdfA(a2.path, 2);
    const a3 = await ok(fixture('sample.xlsx'), 'xlsx', { pdfa: '3B' });
    chain(a3.engines, LO);
    assertPdfA(a3.path, 3);
    // The option's level wins over the archive preset's 2b.
    const preset = await ok(fixture('sample.docx'), 'docx', { preset: 'archive', pdfa: '3b' });
    assertPdfA(preset.path, 3);
  });

  test('PDF sources: Ghostscript writes each level, the text kept', { timeout: 180_000 }, async () => {
    const source = corpus('pdf/textract-standardized_text.pdf');
    const words = (path: string): string => tool('/usr/bin/pdftotext', [path, '-']).replace(/\s+/g, ' ').slice(0, 200);
    for (const [level, part] of [['1b', 1], ['2b', 2], ['3b', 3]] as const) {
      const r = await ok(source, 'pdf', { pdfa: level });
      // qpdf's copy of the source, then Ghostscript's PDF/A.
      assert.deepEqual(r.engines, ['qpdf', 'ghostscript'], level);
      assertPdfA(r.path, part);
      assert.equal(words(r.path), words(source), level);
    }
  });

  test('hostile: forms that each draw the next twenty times (20^30 paths) are walked once each by the transparency check (capped: 60 s, 1 GiB)', { timeout: 120_000 }, async () => {
    const fan = join(dir, 'fan.pdf');
    tool('/usr/bin/python3', ['-I', '-c', [
      'import sys, pikepdf',
      'pdf = pikepdf.new(); pdf.add_blank_page(page_size=(200, 200)); prev = None',
      'for i in range(30):',
      '    form = pikepdf.Stream(pdf, b""); form.Type = pikepdf.Name.XObject; form.Subtype = pikepdf.Name.Form; form.BBox = [0, 0, 10, 10]',
      '    xo = pikepdf.Dictionary()',
      '    for k in range(20 if prev is not None else 0): xo["/F%d" % k] = prev',
      '    form.Resources = pikepdf.Dictionary(XObject=xo); prev = pdf.make_indirect(form)',
      'pdf.pages[0].obj.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(F0=prev)); pdf.save(sys.argv[1])',
    ].join('\n'), fan]);
    const started = Date.now();
    const r = await ok(fan, 'pdf', { pdfa: '1b' });
    assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
    assertPdfA(r.path, 1);
  });

  test('a page Chromium printed (Markdown): Ghostscript\'s PDF/A keeps its embedded fonts and their text', { timeout: 120_000 }, async () => {
    const r = await ok(fixture('sample.md'), 'md', { pdfa: '2b' });
    assert.deepEqual(r.engines, ['chromium', 'ghostscript']);
    assertPdfA(r.path, 2);
    assert.match(tool('/usr/bin/pdftotext', [r.path, '-']), /Quarterly report/);
  });

  test('PDF/A-1 of a PDF with transparency fails naming it (Ghostscript would render the page to an image); 2b keeps it', { timeout: 120_000 }, async () => {
    const r = await convert(transparentPdf, 'pdf', { pdfa: '1b' });
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.error.message, /PDF\/A-1 forbids transparency.*page 1.*"2b"/);
    // A real form from qpdf's tests whose appearance streams hold a soft mask.
    const form = await convert(corpus('pdf/qpdf-appearances-1.pdf'), 'pdf', { pdfa: '1b' });
    assert.match(form.ok ? '' : form.error.message, /PDF\/A-1 forbids transparency/);
    const a2 = await ok(transparentPdf, 'pdf', { pdfa: '2b' });
    assertPdfA(a2.path, 2);
    assert.match(tool('/usr/bin/pdftotext', [a2.path, '-']), /Seethrough/);
  });

  test('LibreOffice\'s PDF/A rewritten by an earlier operation (watermark) is made PDF/A again by Ghostscript; the title step and rotate keep it', { timeout: 180_000 }, async () => {
    const stamped = await ok(fixture('sample.docx'), 'docx', { pdfa: '2b', watermark: 'COPY' });
    chain(stamped.engines, `${LO},ghostscript,ghostscript`);
    assertPdfA(stamped.path, 2);
    assert.match(tool('/usr/bin/pdftotext', ['-raw', stamped.path, '-']).replace(/\s+/g, ''), /COPY/);
    // pikepdf's title and qpdf's rotation change no page content: LibreOffice's PDF/A-1 stays, still PDF 1.4.
    const kept = await ok(fixture('sample.docx'), 'docx', { pdfa: '1b', title: 'Quarterly report', rotate: 90 });
    chain(kept.engines, `${LO},pikepdf,qpdf`);
    assertPdfA(kept.path, 1, 'A');
    assert.match(tool('/usr/bin/pdfinfo', [kept.path]), /^Title:\s+Quarterly report$/m);
  });
});

describe('pdf_ua', () => {
  const form = corpus('docx/apachepoi-form_footnotes.docx');

  test('a docx with headings and a picture: tagged PDF/UA-1, title and language set, alone and with PDF/A-2b; a sheet', { timeout: 180_000 }, async () => {
    const ua = await ok(form, 'docx', { pdf_ua: true, title: 'Visa application form', language: 'pt-br' });
    chain(ua.engines, `${LO},pikepdf,pikepdf`);
    assertPdfUa(ua.path, 'Visa application form', /^u:pt-BR$/);
    // The headings are in the structure tree (pdfinfo -struct lists its elements).
    assert.match(tool('/usr/bin/pdfinfo', ['-struct', ua.path]), /^\s*H\d?\b/m);
    assert.match(tool('/usr/bin/pdfinfo', ['-struct', ua.path]), /^\s*Figure\b/m);
    // A sheet: LibreOffice 7.4 writes its own locale as /Lang for Calc; the language asked for replaces it.
    const sheet = await ok(fixture('sample.xlsx'), 'xlsx', { pdf_ua: true, title: 'Stock', language: 'de-AT' });
    assertPdfUa(sheet.path, 'Stock', /^u:de-AT$/);
    const both = await ok(form, 'docx', { pdf_ua: 'true', pdfa: '2b', title: 'Visa application form', language: 'en-GB' });
    assertPdfUa(both.path, 'Visa application form', /^u:en-GB$/);
    assertPdfA(both.path, 2);
  });

  test('the document\'s own title serves; a document without one fails asking for the title option', { timeout: 180_000 }, async () => {
    const own = await ok(corpus('docx/python-docx-doc-coreprops.docx'), 'docx', { pdf_ua: true });
    chain(own.engines, `${LO},pikepdf`);
    assertPdfUa(own.path, 'Title', /^u:[a-z]{2}(-[A-Z]{2})?$/);
    const none = await convert(form, 'docx', { pdf_ua: true });
    assert.equal(none.ok ? '' : none.error.code, 'conversion_failed');
    assert.match(none.ok ? '' : none.error.message, /needs a document title.*title option/);
  });
});

test('bad or misplaced options are refused naming the field (invalid_request)', () => {
  const field = (source: string, target: string, options: Record<string, unknown>): string | undefined => {
    const p = conv.plan(source, target, options);
    return p.ok ? undefined : `${p.error.code}:${p.error.field}`;
  };
  assert.equal(field('pdf', 'pdf', { pdfa: '4b' }), 'invalid_request:pdfa');
  assert.equal(field('pdf', 'pdf', { pdfa: '2u' }), 'invalid_request:pdfa');
  assert.equal(field('pdf', 'png', { pdfa: '2b' }), 'invalid_request:pdfa');
  assert.equal(field('pdf', 'pdf', { pdfa: '2b', set_password: 'x' }), 'invalid_request:set_password');
  assert.equal(field('docx', 'pdf', { preset: 'archive', set_password: 'x' }), 'invalid_request:set_password');
  assert.equal(field('pdf', 'pdf', { pdfa: '3b', split: true }), 'invalid_request:split');
  assert.equal(field('docx', 'pdf', { preset: 'archive', split: true }), 'invalid_request:split');
  assert.equal(field('png', 'pdf', { pdf_ua: true }), 'invalid_request:pdf_ua');
  assert.equal(field('pdf', 'pdf', { pdf_ua: true }), 'invalid_request:pdf_ua');
  assert.equal(field('html', 'pdf', { pdf_ua: true }), 'invalid_request:pdf_ua');
  assert.equal(field('docx', 'pdf', { pdf_ua: 'yes' }), 'invalid_request:pdf_ua');
  assert.equal(field('docx', 'pdf', { language: 'en-GB' }), 'invalid_request:language');
  assert.equal(field('docx', 'pdf', { pdf_ua: true, language: 'English' }), 'invalid_request:language');
  assert.equal(field('docx', 'pdf', { pdf_ua: true, language: 'en_GB' }), 'invalid_request:language');
  assert.equal(field('docx', 'pdf', { pdf_ua: true, watermark: 'X' }), 'invalid_request:watermark');
  assert.equal(field('docx', 'pdf', { pdf_ua: true, page_range: '1' }), 'invalid_request:page_range');
  assert.equal(field('docx', 'pdf', { pdf_ua: true, preset: 'web' }), 'invalid_request:preset');
  assert.equal(field('docx', 'pdf', { pdf_ua: true, preset: 'archive', rotate: 90, set_password: undefined }), undefined);
  assert.equal(field('pptx', 'pdf', { pdf_ua: true, pdfa: '1b', language: 'de' }), undefined);
  assert.equal(field('png', 'pdf', { pdfa: '1b' }), undefined);
  assert.deepEqual(parseOptions({ pdf_ua: true, language: 'EN-gb', pdfa: '2B' }, 'pdf').pdfArchive, { pdfa: '2b', pdfUa: true, language: 'en-GB' });
  assert.equal(parseOptions({ pdf_ua: false }, 'pdf').pdfArchive, undefined);
});
