// PDF manipulation through the options and presets (issue 12, convert-decisions.md item 17),
// with the real engines; every result is checked by tools the converter did not use for it:
// qpdf --check, pdfinfo, pdftotext, pdfimages, Ghostscript's ink coverage device.
import assert from 'node:assert/strict';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import sharp from 'sharp';
import { Converter } from './converter.js';
import { watermarkPostScript } from './engines/ghostscript.engine.js';
import { fixture, pdfPages, scratchDir, tool, toolStatus } from './testing/tools.js';

let dir: string;
let conv: Converter;
let textPdf: string;
let imagePdf: string;
const docxFixture = fixture('sample.docx');
let n = 0;

before(async () => {
  dir = await scratchDir('conv-pdfops-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000, maxInputPixels: 20_000_000 });
  // Three text pages (one with a red box), written by Ghostscript from PostScript.
  textPdf = join(dir, 'three.pdf');
  const ps = ['Alpha', 'Bravo', 'Charlie'].map((w, i) =>
    `/Helvetica findfont 28 scalefont setfont 72 700 moveto (Page ${w}) show ${i === 0 ? '1 0 0 setrgbcolor 72 400 200 100 rectfill' : ''} showpage`).join(' ');
  tool('/usr/bin/gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-sPAPERSIZE=a4', `-sOutputFile=${textPdf}`, '-c', ps]);
  // One page holding an 800×800 photo-like colour image (gradients and grain) at 200 dpi.
  const photo = Buffer.alloc(800 * 800 * 3);
  let seed = 2463534242;
  for (let i = 0; i < 800 * 800; i++) {
    seed ^= seed << 13;
    seed >>>= 0;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    seed >>>= 0;
    const [x, y, grain] = [i % 800, Math.floor(i / 800), (seed & 31) - 16];
    const clamp = (v: number): number => Math.max(0, Math.min(255, Math.round(v + grain)));
    photo.set([clamp((x * 255) / 800), clamp((y * 255) / 800), clamp(((x + y) * 255) / 1600)], i * 3);
  }
  const png = join(dir, 'photo.png');
  await sharp(photo, { raw: { width: 800, height: 800, channels: 3 } }).withMetadata({ density: 200 }).png().toFile(png);
  imagePdf = join(dir, 'photo.pdf');
  tool('/usr/bin/img2pdf', ['--output', imagePdf, png]);
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function pdf(input: string, options: Record<string, unknown>): Promise<{ path: string; engines: readonly string[] }> {
  const r = await conv.convert({ inputPath: input, sourceFormat: 'pdf', targetFormat: 'pdf', options, outputPath: join(dir, 'out', `${n++}.pdf`) });
  if (!r.ok) assert.fail(`${JSON.stringify(options)}: ${JSON.stringify(r.error)}`);
  // Every output is a structurally valid PDF by qpdf's own check.
  tool('/usr/bin/qpdf', ['--check', ...(typeof options.set_password === 'string' ? [`--password=${options.set_password}`] : []), r.output.path]);
  return { path: r.output.path, engines: r.engines };
}
const pageTexts = (path: string): string[] => tool('/usr/bin/pdftotext', [path, '-']).split('\f').slice(0, -1).map((t) => t.replace(/\s+/g, ''));
const rotations = (path: string): number[] => [...tool('/usr/bin/pdfinfo', ['-f', '1', '-l', '99', path]).matchAll(/^Page\s+\d+ rot:\s+(\d+)/gm)].map((m) => Number(m[1]));

test('page_range extracts, removes and reorders pages: "3,1,2" and "2-"', async () => {
  assert.deepEqual(pageTexts((await pdf(textPdf, { page_range: '3,1,2' })).path), ['PageCharlie', 'PageAlpha', 'PageBravo']);
  assert.deepEqual(pageTexts((await pdf(textPdf, { page_range: '2-' })).path), ['PageBravo', 'PageCharlie']);
});

test('rotate turns every page clockwise, losslessly (qpdf)', async () => {
  const r = await pdf(textPdf, { rotate: 90 });
  assert.deepEqual(rotations(r.path), [90, 90, 90]);
  assert.deepEqual(r.engines, ['qpdf', 'qpdf']);
  assert.deepEqual(pageTexts(r.path), ['PageAlpha', 'PageBravo', 'PageCharlie']);
  assert.deepEqual(rotations((await pdf(textPdf, { rotate: '-90', page_range: '2' })).path), [270]);
});

test('preset linearize: pdfinfo says optimized and qpdf checks the linearization', async () => {
  const r = await pdf(textPdf, { preset: 'linearize' });
  assert.match(tool('/usr/bin/pdfinfo', [r.path]), /^Optimized:\s+yes/m);
  assert.match(tool('/usr/bin/qpdf', ['--check-linearization', r.path]), /no linearization errors/);
  assert.match(tool('/usr/bin/pdfinfo', [textPdf]), /^Optimized:\s+no/m);
});

test('compression levels: screen < ebook < prepress, images downsampled to the level', async () => {
  const sizes: Record<string, number> = {};
  const ppi: Record<string, number> = {};
  for (const level of ['screen', 'ebook', 'prepress']) {
    const r = await pdf(imagePdf, { compression: level });
    sizes[level] = (await stat(r.path)).size;
    ppi[level] = Number(tool('/usr/bin/pdfimages', ['-list', r.path]).trim().split('\n')[2]?.trim().split(/\s+/)[12]);
  }
  assert.ok((ppi.screen as number) <= 75 && (ppi.ebook as number) <= 155 && ppi.prepress === 200, JSON.stringify(ppi));
  assert.ok((sizes.screen as number) < (sizes.ebook as number) && (sizes.ebook as number) < (sizes.prepress as number), JSON.stringify(sizes));
  // A level that would make the file bigger keeps the smaller original (prepress of a 200 dpi image).
  assert.ok((sizes.prepress as number) <= (await stat(imagePdf)).size);
  // The compress preset is the ebook level: the same downsampling, the same size but for the
  // bytes of Ghostscript's dates and document ID (a run once differed by 2 bytes: 38100 vs 38098).
  const compress = await pdf(imagePdf, { preset: 'compress' });
  assert.equal(Number(tool('/usr/bin/pdfimages', ['-list', compress.path]).trim().split('\n')[2]?.trim().split(/\s+/)[12]), ppi.ebook);
  assert.ok(Math.abs((await stat(compress.path)).size - (sizes.ebook as number)) <= 64, `compress ${(await stat(compress.path)).size} vs ebook ${sizes.ebook}`);
});

test('max_output_bytes steps the PDF quality down until it fits', async () => {
  const full = (await stat(imagePdf)).size;
  const cap = Math.floor(full / 4);
  const r = await pdf(imagePdf, { max_output_bytes: cap });
  assert.ok((await stat(r.path)).size <= cap);
  assert.ok(r.engines.includes('ghostscript'));
  const tooSmall = await conv.convert({ inputPath: imagePdf, sourceFormat: 'pdf', targetFormat: 'pdf', options: { max_output_bytes: 200 }, outputPath: join(dir, 'out', 'tiny.pdf') });
  assert.equal(tooSmall.ok ? '' : tooSmall.error.code, 'output_too_large');
});

test('preset grayscale: no colour ink left (Ghostscript inkcov), text kept', async () => {
  const inkcov = (path: string): number[][] => tool('/usr/bin/gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-o', '-', '-sDEVICE=inkcov', path])
    .trim().split('\n').map((l) => l.trim().split(/\s+/).slice(0, 4).map(Number));
  const before = inkcov(textPdf);
  assert.ok((before[0]?.[1] ?? 0) > 0, 'the source page 1 has magenta ink (the red box)');
  const r = await pdf(textPdf, { preset: 'grayscale' });
  for (const [c, m, y] of inkcov(r.path)) assert.deepEqual([c, m, y], [0, 0, 0]);
  assert.deepEqual(pageTexts(r.path), ['PageAlpha', 'PageBravo', 'PageCharlie']);
});

test('watermark stamps the text on every page; the page text stays', async () => {
  const r = await pdf(textPdf, { watermark: 'CONFIDENTIAL (draft) \\ 100%' });
  assert.equal(pdfPages(r.path), 3);
  for (const [i, t] of pageTexts(r.path).entries()) {
    assert.ok(t.includes('CONFIDENTIAL(draft)\\100%'), `page ${i + 1}: ${t}`);
    assert.ok(t.includes(['PageAlpha', 'PageBravo', 'PageCharlie'][i] as string), t);
  }
  // The text goes into PostScript as a hex string: nothing in it can close the string.
  assert.match(watermarkPostScript(') show (x'), /<292073686f77202878>/);
  assert.doesNotMatch(watermarkPostScript(') show (x'), /\) show \(x/);
});

test('operations combine: watermark, rotate, linearize, page_range in one conversion', async () => {
  const r = await pdf(textPdf, { page_range: '3,1', watermark: 'COPY', rotate: 180, preset: 'linearize' });
  assert.deepEqual(rotations(r.path), [180, 180]);
  assert.match(tool('/usr/bin/pdfinfo', [r.path]), /^Optimized:\s+yes/m);
  const texts = pageTexts(r.path);
  assert.ok(texts[0]?.includes('PageCharlie') && texts[0].includes('COPY'), texts[0]);
  assert.deepEqual(r.engines, ['qpdf', 'qpdf', 'ghostscript', 'qpdf']);
});

test('set_password encrypts with AES-256; password opens an encrypted PDF (remove the password); a wrong one is password_required', async () => {
  const secret = 'p@ss word "quoted" ünï';
  const locked = await pdf(textPdf, { set_password: secret, page_range: '1-2' });
  const qpdfStatus = (args: string[]): number | null => toolStatus('/usr/bin/qpdf', args);
  assert.equal(qpdfStatus(['--requires-password', locked.path]), 0, 'a password is needed to open it');
  assert.notEqual(toolStatus('/usr/bin/pdfinfo', [locked.path]), 0);
  const info = tool('/usr/bin/pdfinfo', ['-upw', secret, locked.path]);
  assert.match(info, /^Encrypted:\s+yes.*algorithm:AES-256/m);
  assert.deepEqual(tool('/usr/bin/pdftotext', ['-upw', secret, locked.path, '-']).split('\f').slice(0, -1).map((t) => t.replace(/\s+/g, '')), ['PageAlpha', 'PageBravo']);
  // Without the password, or with a wrong one: password_required, nothing converted.
  for (const options of [{}, { password: 'wrong' }]) {
    const r = await conv.convert({ inputPath: locked.path, sourceFormat: 'pdf', targetFormat: 'txt', options, outputPath: join(dir, 'out', 'locked.txt') });
    assert.equal(r.ok ? '' : r.error.code, 'password_required', JSON.stringify(options));
  }
  const pre = await conv.preflight(locked.path, 'pdf', 'pdf', { password: secret, page_range: '2' });
  assert.ok(pre.ok && pre.facts.pages === 2, JSON.stringify(pre));
  // The right password: an unencrypted copy, pages and text intact.
  const open = await pdf(locked.path, { password: secret });
  assert.equal(qpdfStatus(['--requires-password', open.path]), 2, 'not encrypted');
  assert.deepEqual(pageTexts(open.path), ['PageAlpha', 'PageBravo']);
  const txt = await conv.convert({ inputPath: locked.path, sourceFormat: 'pdf', targetFormat: 'txt', options: { password: secret }, outputPath: join(dir, 'out', 'open.txt') });
  assert.ok(txt.ok, JSON.stringify(txt));
});

test('preset archive on a PDF: PDF/A-2b by Ghostscript (XMP pdfaid, sRGB output intent), text kept', async () => {
  const r = await pdf(textPdf, { preset: 'archive' });
  assert.deepEqual(r.engines, ['qpdf', 'ghostscript']);
  const meta = tool('/usr/bin/pdfinfo', ['-meta', r.path]);
  assert.match(meta, /pdfaid:part=['"]2['"]/);
  assert.match(meta, /pdfaid:conformance=['"]B['"]/);
  assert.match(tool('/usr/bin/qpdf', ['--qdf', '--object-streams=disable', r.path, '-']), /\/OutputIntents[\s\S]*\/GTS_PDFA1/);
  assert.deepEqual(pageTexts(r.path), ['PageAlpha', 'PageBravo', 'PageCharlie']);
  const p = conv.plan('pdf', 'pdf', { preset: 'archive', set_password: 'x' });
  assert.equal(p.ok ? '' : p.error.field, 'set_password', 'PDF/A forbids encryption');
});

test('PDF → HTML (pdftohtml), text and an image of a chosen page', async () => {
  const to = async (target: string, options: Record<string, unknown> = {}): Promise<string> => {
    const r = await conv.convert({ inputPath: textPdf, sourceFormat: 'pdf', targetFormat: target, options, outputPath: join(dir, 'out', `${n++}.${target}`) });
    if (!r.ok) assert.fail(`pdf → ${target}: ${JSON.stringify(r.error)}`);
    return r.output.path;
  };
  const html = await readFile(await to('html'), 'utf8');
  assert.match(html, /^<!DOCTYPE html>/);
  for (const w of ['Alpha', 'Bravo', 'Charlie']) assert.match(html, new RegExp(`Page(&#160;|\\s)${w}`));
  assert.doesNotMatch(html, /\/tmp\/|job-/, 'no path of the service in the output');
  assert.equal((await readFile(await to('txt', { page_range: '2' }), 'utf8')).trim(), 'Page Bravo');
  const png = await to('png', { page_range: '3' });
  const meta = await sharp(png).metadata();
  assert.equal(meta.format, 'png');
  assert.ok((meta.width ?? 0) > 1000 && (meta.height ?? 0) > (meta.width ?? 0), `${meta.width}×${meta.height}`);
});

test('split: one PDF per page in a zip, in page order, after the other operations; unzip and pdfinfo read each page', async () => {
  const r = await conv.convert({ inputPath: textPdf, sourceFormat: 'pdf', targetFormat: 'pdf', options: { split: true, page_range: '3,1,2', rotate: 90 }, outputPath: join(dir, 'out', `${n++}.zip`) });
  if (!r.ok) assert.fail(JSON.stringify(r.error));
  assert.equal(r.output.format, 'zip');
  assert.equal(r.output.mime_type, 'application/zip');
  assert.equal(r.output.pages, 3);
  assert.deepEqual(r.engines.slice(-2), ['qpdf', 'bsdtar']);
  tool('/usr/bin/unzip', ['-tq', r.output.path]);
  const names = tool('/usr/bin/unzip', ['-Z1', r.output.path]).trim().split('\n');
  assert.deepEqual(names, ['page-1.pdf', 'page-2.pdf', 'page-3.pdf']);
  const out = join(dir, `split-${n++}`);
  tool('/usr/bin/unzip', ['-q', r.output.path, '-d', out]);
  // The pages in the selected order, each a one-page PDF, each turned.
  assert.deepEqual(names.map((f) => pageTexts(join(out, f))), [['PageCharlie'], ['PageAlpha'], ['PageBravo']]);
  for (const f of names) {
    assert.equal(pdfPages(join(out, f)), 1);
    assert.deepEqual(rotations(join(out, f)), [90]);
  }
  // Any source that becomes a PDF can be split (docx → pdf → pages).
  assert.equal(conv.plan('docx', 'pdf', { split: 'true' }).ok, true);
});

test('split to images: every selected page rendered to its own picture, in a zip (identify reads each)', { timeout: 180_000 }, async () => {
  const r = await conv.convert({ inputPath: textPdf, sourceFormat: 'pdf', targetFormat: 'png', options: { split: true, page_range: '3,1' }, outputPath: join(dir, 'out', `${n++}.zip`) });
  if (!r.ok) assert.fail(JSON.stringify(r.error));
  assert.equal(r.output.format, 'zip');
  assert.equal(r.output.pages, 2);
  assert.deepEqual(r.engines, ['qpdf', 'qpdf', 'qpdf', 'poppler', 'bsdtar']);
  const names = tool('/usr/bin/unzip', ['-Z1', r.output.path]).trim().split('\n');
  assert.deepEqual(names, ['page-1.png', 'page-2.png']);
  const out = join(dir, `split-${n++}`);
  tool('/usr/bin/unzip', ['-q', r.output.path, '-d', out]);
  for (const f of names) assert.match(tool('/usr/bin/identify', ['-format', '%m %w %h', join(out, f)]), /^PNG \d+ \d+$/);
  // Page 3 of the PDF (red-free) comes first, then page 1 with its red box.
  const redPixels = async (f: string): Promise<number> => {
    const { data, info } = await sharp(join(out, f)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    let count = 0;
    for (let i = 0; i < data.length; i += info.channels) if ((data[i] as number) > 200 && (data[i + 1] as number) < 60 && (data[i + 2] as number) < 60) count++;
    return count;
  };
  assert.equal(await redPixels('page-1.png'), 0, 'page-1.png is the PDF\'s page 3 (no red box)');
  assert.ok((await redPixels('page-2.png')) > 1000, 'page-2.png is the PDF\'s page 1 (red box)');
  // A document is rendered through PDF first (thumbnail preset on every page).
  const d = await conv.convert({ inputPath: docxFixture, sourceFormat: 'docx', targetFormat: 'jpg', options: { split: 'true', preset: 'thumbnail' }, outputPath: join(dir, 'out', `${n++}.zip`) });
  if (!d.ok) assert.fail(JSON.stringify(d.error));
  assert.deepEqual(d.engines, ['libreoffice', 'qpdf', 'poppler', 'bsdtar']);
  const first = tool('/usr/bin/unzip', ['-Z1', d.output.path]).trim().split('\n')[0] as string;
  const jpg = join(dir, `split-${n++}`);
  tool('/usr/bin/unzip', ['-q', d.output.path, '-d', jpg]);
  assert.match(tool('/usr/bin/identify', ['-format', '%m %w %h', join(jpg, first)]), /^JPEG \d+ 256$/);
});

test('PDF → DOCX/ODT through Writer\'s PDF import: the text of every page survives (LibreOffice reads the result back)', { timeout: 180_000 }, async () => {
  for (const target of ['docx', 'odt']) {
    const r = await conv.convert({ inputPath: textPdf, sourceFormat: 'pdf', targetFormat: target, outputPath: join(dir, 'out', `${n++}.${target}`) });
    if (!r.ok) assert.fail(`pdf → ${target}: ${JSON.stringify(r.error)}`);
    assert.deepEqual(r.engines, ['libreoffice']);
    const part = target === 'docx' ? 'word/document.xml' : 'content.xml';
    const xml = tool('/usr/bin/unzip', ['-p', r.output.path, part]);
    for (const w of ['Alpha', 'Bravo', 'Charlie']) assert.match(xml.replace(/<[^>]+>/g, ''), new RegExp(`Page\\s*${w}`), `${target}: ${w}`);
  }
});

test('bad PDF options are refused naming the field (invalid_request)', async () => {
  const field = (options: Record<string, unknown>, target = 'pdf'): string | undefined => {
    const p = conv.plan('pdf', target, options);
    return p.ok ? undefined : `${p.error.code}:${p.error.field}`;
  };
  assert.equal(field({ rotate: 45 }), 'invalid_request:rotate');
  assert.equal(field({ rotate: 'left' }), 'invalid_request:rotate');
  assert.equal(field({ rotate: 90 }, 'png'), 'invalid_request:rotate');
  assert.equal(field({ compression: 'tiny' }), 'invalid_request:compression');
  assert.equal(field({ watermark: 'Entwurf – vertraulich' }), 'invalid_request:watermark');
  assert.equal(field({ watermark: 'x'.repeat(101) }), 'invalid_request:watermark');
  assert.equal(field({ watermark: '   ' }), 'invalid_request:watermark');
  assert.equal(field({ preset: 'grayscale' }, 'png'), 'invalid_request:preset');
  assert.equal(field({ set_password: 'a\nb' }), 'invalid_request:set_password');
  assert.equal(field({ set_password: 'x'.repeat(129) }), 'invalid_request:set_password');
  assert.equal(field({ set_password: 'secret' }, 'txt'), 'invalid_request:set_password');
  assert.equal(field({ split: true }, 'txt'), 'invalid_request:split');
  assert.equal(field({ split: true }, 'png'), undefined);
  assert.equal(conv.plan('png', 'jpg', { split: true }).ok, false, 'a picture has no pages to split');
  assert.equal(field({ split: 'yes' }), 'invalid_request:split');
  assert.equal(field({ split: true, max_output_bytes: 100_000 }), 'invalid_request:split');
  assert.equal(field({ split: false }, 'png'), undefined);
  assert.equal(conv.plan('docx', 'pdf', { password: 'x' }).ok ? '' : 'refused', 'refused');
  assert.equal(field({ rotate: 270, compression: 'screen', watermark: 'OK', set_password: 'x', password: 'y' }), undefined);
});
