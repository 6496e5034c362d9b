// Engine suite: every conversion runs the real binaries on the committed fixtures, and
// every output is checked by a tool the converter did not use to write it.
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { Converter, type ConvertResult } from './converter.js';
import { detectFormat } from './formats/detect.js';
import { ffprobe, fixture, identify, pdfPages, sha256sum, tool, scratchDir } from './testing/tools.js';

let dir: string;
let conv: Converter;
let n = 0;

before(async () => {
  dir = await scratchDir('conv-engine-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000, maxInputPixels: 4_000_000, libreoffice: { instances: 1 } });
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function run(file: string, target: string, options: Record<string, unknown> = {}, input = fixture(file)): Promise<ConvertResult> {
  const detected = await detectFormat(input, file);
  assert.ok(detected, `${file} not detected`);
  return conv.convert({ inputPath: input, sourceFormat: detected.ext, targetFormat: target, options, outputPath: join(dir, 'out', `${n++}-${file}.${target}`) });
}

async function ok(file: string, target: string, options: Record<string, unknown> = {}) {
  const r = await run(file, target, options);
  if (!r.ok) assert.fail(`${file} → ${target}: ${JSON.stringify(r.error)}`);
  // The checksum the converter computed while copying matches coreutils' reading of the file.
  assert.equal(r.output.sha256, sha256sum(r.output.path));
  assert.equal(r.output.format, target);
  return r.output;
}

async function fails(file: string, target: string, options: Record<string, unknown> = {}, input?: string) {
  const r = await run(file, target, options, input);
  assert.equal(r.ok, false, `${file} → ${target} should fail`);
  return r.ok ? assert.fail() : r.error;
}

describe('office documents through the warm LibreOffice pool', () => {
  test('docx → pdf and docx → md', async () => {
    const pdf = await ok('sample.docx', 'pdf');
    assert.equal(pdfPages(pdf.path), 1);
    assert.equal(pdf.pages, 1);
    assert.match(tool('/usr/bin/pdftotext', [pdf.path, '-']), /Quarterly report/);
    const md = await ok('sample.docx', 'md');
    assert.match(await readFile(md.path, 'utf8'), /# Quarterly report/);
  });

  test('xlsx → pdf and xlsx → csv', async () => {
    const pdf = await ok('sample.xlsx', 'pdf');
    assert.equal(pdfPages(pdf.path), 1);
    const csv = await ok('sample.xlsx', 'csv');
    assert.match(await readFile(csv.path, 'utf8'), /^"name","qty","price"\n"widget",4,2\.5\n/);
  });

  test('pptx → pdf with page_range, and pptx → png (first slide)', async () => {
    const all = await ok('sample.pptx', 'pdf');
    const total = pdfPages(all.path);
    assert.ok(total >= 2);
    const tail = await ok('sample.pptx', 'pdf', { page_range: '2-' });
    assert.equal(pdfPages(tail.path), total - 1);
    const png = await ok('sample.pptx', 'png', { preset: 'thumbnail' });
    const id = identify(png.path);
    assert.equal(id.format, 'PNG');
    assert.equal(Math.max(id.width, id.height), 256);
    assert.deepEqual([png.width, png.height], [id.width, id.height]);
  });

  test('archive preset gives PDF/A', async () => {
    const pdf = await ok('sample.docx', 'pdf', { preset: 'archive' });
    const xmp = (await readFile(pdf.path)).toString('latin1');
    assert.match(xmp, /pdfaid:part(>|=")2/);
  });
});

describe('images', () => {
  test('png → jpg, png → webp, png → pdf, png → bmp', async () => {
    const jpg = await ok('sample.png', 'jpg');
    assert.deepEqual(identify(jpg.path), { format: 'JPEG', width: 64, height: 48 });
    const webp = await ok('sample.png', 'webp', { quality: 50 });
    assert.equal((await readFile(webp.path)).subarray(8, 12).toString(), 'WEBP');
    const pdf = await ok('sample.png', 'pdf');
    assert.equal(pdfPages(pdf.path), 1);
    const bmp = await ok('sample.png', 'bmp');
    assert.equal(identify(bmp.path).format, 'BMP');
    assert.equal(bmp.width, 64);
  });

  test('max_output_bytes trades JPEG quality for size, and fails when it cannot', async () => {
    const noisy = join(dir, 'noise.png');
    await sharp({ create: { width: 256, height: 256, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toFile(noisy);
    const full = await conv.convert({ inputPath: noisy, sourceFormat: 'png', targetFormat: 'jpg', outputPath: join(dir, 'out', 'noise-full.jpg') });
    assert.ok(full.ok);
    const cap = Math.floor(full.output.size_bytes * 0.6);
    const capped = await conv.convert({ inputPath: noisy, sourceFormat: 'png', targetFormat: 'jpg', options: { max_output_bytes: cap }, outputPath: join(dir, 'out', 'noise-cap.jpg') });
    assert.ok(capped.ok, JSON.stringify(capped));
    assert.ok(capped.output.size_bytes <= cap);
    assert.equal(identify(capped.output.path).format, 'JPEG');
    const tiny = await conv.convert({ inputPath: noisy, sourceFormat: 'png', targetFormat: 'jpg', options: { max_output_bytes: 100 }, outputPath: join(dir, 'out', 'noise-tiny.jpg') });
    assert.equal(tiny.ok ? '' : tiny.error.code, 'output_too_large');
    // Markdown → HTML has no quality knob: it fails at once.
    assert.equal((await fails('sample.md', 'html', { max_output_bytes: 10 })).code, 'output_too_large');
  });

  test('OCR: a scanned page becomes text and a searchable PDF', async () => {
    const txt = await ok('scanned-page.png', 'txt');
    const text = await readFile(txt.path, 'utf8');
    assert.match(text, /Invoice number 4711/);
    assert.match(text, /Total amount due/);
    const pdf = await ok('scanned-page.png', 'pdf', { ocr_language: 'en+de' });
    assert.equal(pdfPages(pdf.path), 1);
    assert.match(tool('/usr/bin/pdftotext', [pdf.path, '-']), /Invoice/);
  });

  test('OCR: a scanned two-page PDF without text becomes searchable, and text', async () => {
    const scan = join(dir, 'scan.pdf');
    tool('/usr/bin/img2pdf', ['--output', scan, fixture('scanned-page.png'), fixture('scanned-page.png')]);
    assert.equal(tool('/usr/bin/pdftotext', [scan, '-']).trim(), '');
    const searchable = await conv.convert({ inputPath: scan, sourceFormat: 'pdf', targetFormat: 'pdf', options: { ocr_language: 'eng' }, outputPath: join(dir, 'out', 'searchable.pdf') });
    assert.ok(searchable.ok, JSON.stringify(searchable));
    assert.deepEqual(searchable.engines, ['tesseract']);
    assert.equal(pdfPages(searchable.output.path), 2);
    // The text layer is placed word by word: compare with whitespace folded.
    const text = tool('/usr/bin/pdftotext', [searchable.output.path, '-']).replace(/\s+/g, ' ');
    assert.equal(text.match(/Invoice number 4711/g)?.length, 2);
    const second = await conv.convert({ inputPath: scan, sourceFormat: 'pdf', targetFormat: 'txt', options: { ocr_language: 'eng', page_range: '2' }, outputPath: join(dir, 'out', 'second.txt') });
    assert.ok(second.ok, JSON.stringify(second));
    assert.equal((await readFile(second.output.path, 'utf8')).replace(/\s+/g, ' ').match(/Total amount due/g)?.length, 1);
    // Without ocr_language a PDF is not OCRed: its (empty) text layer is extracted.
    const plain = await conv.convert({ inputPath: scan, sourceFormat: 'pdf', targetFormat: 'txt', outputPath: join(dir, 'out', 'plain.txt') });
    assert.ok(plain.ok);
    assert.equal((await readFile(plain.output.path, 'utf8')).trim(), '');
  });
});

describe('audio and markup', () => {
  test('wav → mp3 and wav → flac', async () => {
    const mp3 = await ok('sample.wav', 'mp3', { quality: 30 });
    const p = ffprobe(mp3.path);
    assert.deepEqual(p.codecs, ['mp3']);
    assert.ok(Math.abs(p.duration - 0.5) < 0.2);
    assert.ok(mp3.duration_s !== undefined && Math.abs(mp3.duration_s - 0.5) < 0.2);
    const flac = await ok('sample.wav', 'flac');
    assert.deepEqual(ffprobe(flac.path).codecs, ['flac']);
  });

  test('video: mp4 → webm and mp4 → mp3 (soundtrack), with size and duration', async () => {
    const mp4 = join(dir, 'clip.mp4');
    tool('/usr/bin/ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=1:size=96x64:rate=10', '-f', 'lavfi', '-i', 'sine=duration=1:sample_rate=8000',
      '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', mp4]);
    const webm = await conv.convert({ inputPath: mp4, sourceFormat: 'mp4', targetFormat: 'webm', options: { preset: 'web' }, outputPath: join(dir, 'out', 'clip.webm') });
    assert.ok(webm.ok, JSON.stringify(webm));
    const p = ffprobe(webm.output.path);
    assert.match(p.format, /webm/);
    assert.deepEqual(p.codecs.sort(), ['opus', 'vp9']);
    assert.deepEqual([webm.output.width, webm.output.height], [96, 64]);
    assert.ok(webm.output.duration_s !== undefined && Math.abs(webm.output.duration_s - 1) < 0.3);
    const mp3 = await conv.convert({ inputPath: mp4, sourceFormat: 'mp4', targetFormat: 'mp3', outputPath: join(dir, 'out', 'clip.mp3') });
    assert.ok(mp3.ok, JSON.stringify(mp3));
    assert.deepEqual(ffprobe(mp3.output.path).codecs, ['mp3']);
  });

  test('md → html, md → docx (pandoc, then LibreOffice) and md → pdf', async () => {
    const html = await ok('sample.md', 'html');
    assert.match(await readFile(html.path, 'utf8'), /<h1[^>]*>Quarterly report<\/h1>/);
    const docx = await ok('sample.md', 'docx');
    assert.equal((await detectFormat(docx.path))?.ext, 'docx');
    const pdf = await ok('sample.md', 'pdf');
    assert.match(tool('/usr/bin/pdftotext', [pdf.path, '-']), /Quarterly report/);
  });
});

describe('PDF operations', () => {
  test('pdf → pdf page selection (qpdf), pdf → txt of the selected pages, compression (Ghostscript)', async () => {
    const slides = await ok('sample.pptx', 'pdf');
    const pages = pdfPages(slides.path);
    const picked = await conv.convert({ inputPath: slides.path, sourceFormat: 'pdf', targetFormat: 'pdf', options: { page_range: `${pages},1` }, outputPath: join(dir, 'out', 'picked.pdf') });
    assert.ok(picked.ok, JSON.stringify(picked));
    assert.equal(pdfPages(picked.output.path), 2);
    assert.ok(picked.engines.includes('qpdf'));
    const txt = await conv.convert({ inputPath: slides.path, sourceFormat: 'pdf', targetFormat: 'txt', options: { page_range: '1' }, outputPath: join(dir, 'out', 'first.txt') });
    assert.ok(txt.ok, JSON.stringify(txt));
    const text = await readFile(txt.output.path, 'utf8');
    assert.match(text, /Slides/);
    assert.doesNotMatch(text, /More text/);
    // A PDF holding a big noisy image shrinks when asked for quality 20.
    const noisy = join(dir, 'noisy-page.png');
    await sharp({ create: { width: 1000, height: 1000, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 50 } } }).png().toFile(noisy);
    const heavy = await conv.convert({ inputPath: noisy, sourceFormat: 'png', targetFormat: 'pdf', outputPath: join(dir, 'out', 'heavy.pdf') });
    assert.ok(heavy.ok, JSON.stringify(heavy));
    const light = await conv.convert({ inputPath: heavy.output.path, sourceFormat: 'pdf', targetFormat: 'pdf', options: { quality: 20 }, outputPath: join(dir, 'out', 'light.pdf') });
    assert.ok(light.ok, JSON.stringify(light));
    assert.ok(light.engines.includes('ghostscript'));
    assert.ok(light.output.size_bytes < heavy.output.size_bytes / 4, `${light.output.size_bytes} vs ${heavy.output.size_bytes}`);
    assert.equal(pdfPages(light.output.path), 1);
  });
});

describe('errors come back as data', () => {
  test('every engine is probed and available here, with its version', () => {
    for (const p of conv.probes()) {
      assert.equal(p.available, true, `${p.engine}: ${p.warning}`);
      assert.ok(p.version, `${p.engine} has no version`);
    }
    const names = conv.probes().map((p) => p.engine);
    for (const e of ['libreoffice', 'pandoc', 'calibre', 'sharp', 'imagemagick', 'img2pdf', 'tesseract', 'ffmpeg', 'poppler', 'qpdf', 'ghostscript']) assert.ok(names.includes(e), e);
  });

  test('cancelling a running office conversion fails it and leaves the pool usable', async () => {
    const ac = new AbortController();
    const running = conv.convert({ inputPath: fixture('sample.pptx'), sourceFormat: 'pptx', targetFormat: 'pdf', outputPath: join(dir, 'out', 'cancelled.pdf'), signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    const r = await running;
    assert.equal(r.ok ? '' : r.error.code, 'conversion_failed');
    await ok('sample.docx', 'pdf');
  });

  test('unsupported pairs, unknown targets and bad options', async () => {
    assert.equal((await fails('sample.wav', 'pdf')).code, 'unsupported_conversion');
    const unknown = await fails('sample.wav', 'xyz');
    assert.deepEqual([unknown.code, unknown.field], ['invalid_request', 'target_format']);
    const q = await fails('sample.png', 'jpg', { quality: 500 });
    assert.deepEqual([q.code, q.field], ['invalid_request', 'quality']);
    const pr = await fails('sample.docx', 'pdf', { page_range: '5' });
    assert.deepEqual([pr.code, pr.field], ['invalid_request', 'page_range']);
    const pw = await fails('sample.wav', 'mp3', { page_range: '1' });
    assert.deepEqual([pw.code, pw.field], ['invalid_request', 'page_range']);
    const ocr = await fails('sample.docx', 'pdf', { ocr_language: 'eng' });
    assert.deepEqual([ocr.code, ocr.field], ['invalid_request', 'ocr_language']);
  });

  test('a pixel bomb and malformed files fail with conversion_failed', async () => {
    // A PNG header claiming 50000 × 50000 pixels with no real data behind it.
    const png = await readFile(fixture('sample.png'));
    const bomb = Buffer.from(png);
    bomb.writeUInt32BE(50_000, 16);
    bomb.writeUInt32BE(50_000, 20);
    const bombPath = join(dir, 'bomb.png');
    await writeFile(bombPath, bomb);
    const b = await fails('bomb.png', 'jpg', {}, bombPath);
    assert.equal(b.code, 'conversion_failed');
    // A 200 × 200 inch page: rendered at a resolution that fits the pixel budget instead.
    const hugePage = join(dir, 'huge-page.pdf');
    tool('/usr/bin/gs', ['-q', '-dSAFER', '-sDEVICE=pdfwrite', '-dDEVICEWIDTHPOINTS=14400', '-dDEVICEHEIGHTPOINTS=14400', '-dFIXEDMEDIA', '-o', hugePage, '-c', 'showpage']);
    const huge = await conv.convert({ inputPath: hugePage, sourceFormat: 'pdf', targetFormat: 'png', outputPath: join(dir, 'out', 'huge.png') });
    assert.ok(huge.ok, JSON.stringify(huge));
    const hugeId = identify(huge.output.path);
    assert.ok(hugeId.width > 1000 && hugeId.width * hugeId.height <= 4_000_000, `${hugeId.width}x${hugeId.height}`);
    const pdfPath = join(dir, 'broken.pdf');
    await writeFile(pdfPath, '%PDF-1.7\nthis is not a pdf at all\n');
    assert.equal((await fails('broken.pdf', 'png', {}, pdfPath)).code, 'conversion_failed');
    const docx = await readFile(fixture('sample.docx'));
    const broken = join(dir, 'broken.docx');
    await writeFile(broken, docx.subarray(0, 3000));
    const r = await conv.convert({ inputPath: broken, sourceFormat: 'docx', targetFormat: 'pdf', outputPath: join(dir, 'out', 'broken.pdf') });
    assert.equal(r.ok ? '' : r.error.code, 'conversion_failed');
    // The pool still works afterwards.
    await ok('sample.docx', 'odt');
  });
});
