// OCR in the 12 languages (issue 12), with the real tesseract and language packs: a known
// sentence per language is rendered with a Noto font (Pango shapes Arabic and Devanagari),
// made into a one-page scanned PDF, and OCRed to text, to a searchable PDF (its text layer
// read back by pdftotext, an independent reader) and to hOCR; each result must be within
// the language's character error rate.
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Converter } from '../converter.js';
import { detectFormat } from '../formats/detect.js';
import { OCR_LANGUAGES } from '../options.js';
import { characterBagErrorRate, characterErrorRate, levenshtein, OCR_SAMPLES, renderSentence } from '../testing/ocr-samples.js';
import { identify, pdfPages, scratchDir, tool } from '../testing/tools.js';
import { boundedAll, mergeHocr, ocrDpi, parsePages } from './tesseract.engine.js';

let dir: string;
let conv: Converter;

before(async () => {
  dir = await scratchDir('conv-ocr-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 120_000, maxInputPixels: 40_000_000, ocrConcurrency: 2 });
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function convert(input: string, from: string, to: string, lang: string, extra: Record<string, unknown> = {}): Promise<string> {
  const out = join(dir, 'out', `${lang}-${from}.${to}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: from, targetFormat: to, options: { ocr_language: lang, ...extra }, outputPath: out });
  if (!r.ok) assert.fail(`${lang}: ${from} → ${to}: ${JSON.stringify(r.error)}`);
  assert.equal(r.engines.at(-1), 'tesseract', r.engines.join(' → '));
  return out;
}

test('the samples cover exactly the 12 OCR languages, each in a font that is installed', () => {
  assert.deepEqual(OCR_SAMPLES.map((s) => s.code).sort(), Object.keys(OCR_LANGUAGES).sort());
  // Pango falls back to another font (tofu boxes for a script it lacks) without a word: a
  // missing font would make a language's test measure nothing but the fallback.
  const families = tool('/usr/bin/fc-list', [':', 'family']);
  for (const s of OCR_SAMPLES) assert.ok(families.split('\n').some((line) => line.split(',').includes(s.font)), `${s.code}: font "${s.font}" is not installed`);
});

describe('OCR in 12 languages: image → txt, scanned PDF → searchable PDF', () => {
  for (const sample of OCR_SAMPLES) {
    test(`${sample.code}: CER ≤ ${sample.maxCer}`, async () => {
      const png = join(dir, `${sample.code}.png`);
      await renderSentence(sample, png);
      // The two-letter alias is accepted and means the same language.
      const txt = await readFile(await convert(png, 'png', 'txt', OCR_LANGUAGES[sample.code] as string), 'utf8');
      const cerTxt = characterErrorRate(sample.sentence, txt);
      assert.ok(cerTxt <= sample.maxCer, `${sample.code} image → txt: CER ${cerTxt.toFixed(3)} > ${sample.maxCer}; read ${JSON.stringify(txt.trim())}`);

      const scan = join(dir, `${sample.code}-scan.pdf`);
      tool('/usr/bin/img2pdf', ['--output', scan, png]);
      assert.equal(tool('/usr/bin/pdftotext', [scan, '-']).trim(), '', 'the scan has no text before OCR');
      const pdf = await convert(scan, 'pdf', 'pdf', sample.code);
      assert.equal(pdfPages(pdf), 1);
      // The original page image is kept, untouched: same size, same single image.
      const images = tool('/usr/bin/pdfimages', ['-list', pdf]).trim().split('\n').slice(2);
      assert.equal(images.length, 1, images.join('\n'));
      const layer = tool('/usr/bin/pdftotext', [pdf, '-']);
      // Right-to-left: pdftotext rebuilds the line from word boxes by position and splits and
      // reorders Arabic words even when tesseract read them right (its txt, checked above):
      // the layer is scored order-free there.
      const cerPdf = sample.code === 'ara' ? characterBagErrorRate(sample.sentence, layer) : characterErrorRate(sample.sentence, layer);
      assert.ok(cerPdf <= sample.maxCer, `${sample.code} scan → searchable pdf: CER ${cerPdf.toFixed(3)} > ${sample.maxCer}; layer ${JSON.stringify(layer.trim())}`);
      console.log(`# ${sample.code}: CER image→txt ${cerTxt.toFixed(3)}, scan→pdf layer ${cerPdf.toFixed(3)}`);
    });
  }
});

test('a multi-language scanned PDF → hOCR: one ocr_page per page, ids unique, words in both languages', async () => {
  const eng = OCR_SAMPLES.find((s) => s.code === 'eng');
  const rus = OCR_SAMPLES.find((s) => s.code === 'rus');
  assert.ok(eng && rus);
  const [a, b] = [join(dir, 'h-eng.png'), join(dir, 'h-rus.png')];
  await renderSentence(eng, a);
  await renderSentence(rus, b);
  const scan = join(dir, 'two.pdf');
  tool('/usr/bin/img2pdf', ['--output', scan, a, b]);
  const hocr = await readFile(await convert(scan, 'pdf', 'hocr', 'eng+rus'), 'utf8');
  assert.equal(hocr.match(/class='ocr_page'/g)?.length, 2);
  const ids = [...hocr.matchAll(/id='([^']+)'/g)].map((m) => m[1]);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
  assert.ok(ids.includes('page_1') && ids.includes('page_2'));
  assert.match(hocr, /ppageno 1/);
  const words = [...hocr.matchAll(/class='ocrx_word'[^>]*>([^<]*)</g)].map((m) => m[1]).join(' ');
  assert.ok(characterErrorRate(`${eng.sentence}${rus.sentence}`, words) < 0.1, words);
  const detected = await detectFormat(join(dir, 'out', 'eng+rus-pdf.hocr'), 'x.hocr');
  assert.equal(detected?.ext, 'hocr');
});

test('pages that already have text keep it; only the scanned ones are OCRed', async () => {
  const eng = OCR_SAMPLES.find((s) => s.code === 'eng');
  assert.ok(eng);
  const png = join(dir, 'mixed.png');
  await renderSentence(eng, png);
  const scan = join(dir, 'mixed-scan.pdf');
  tool('/usr/bin/img2pdf', ['--output', scan, png]);
  // A page with real text (searchable already) followed by the scanned page.
  const searchable = await convert(scan, 'pdf', 'pdf', 'eng');
  const mixed = join(dir, 'mixed.pdf');
  tool('/usr/bin/qpdf', ['--empty', '--pages', searchable, scan, '--', mixed]);
  const out = await convert(mixed, 'pdf', 'pdf', 'eng');
  const pages = tool('/usr/bin/pdftotext', [out, '-']).split('\f');
  assert.equal(pdfPages(out), 2);
  for (const p of pages.slice(0, 2)) assert.ok(characterErrorRate(eng.sentence, p) < 0.05, p);
  // page_range picks the page first; text output keeps a form feed per page.
  const txt = await readFile(await convert(mixed, 'pdf', 'txt', 'eng', { page_range: '2,1' }), 'utf8');
  assert.equal(txt.split('\f').filter((s) => s.trim()).length, 2);
});

// Issue 21: scanners and phones often declare 72 or 96 dpi for images scanned at ~200–300
// px/in, which makes the PDF page huge. Such a scan is read at its own pixels (it was
// rendered at 200 dpi: four to eight times the pixels, 6.5× OCRmyPDF's time) and tesseract
// is told the resolution the pixels have on the page, so the text layer lies on the words.
for (const declared of [96, 72]) {
  test(`a scan declared at ${declared} dpi is read at its own pixels, its text layer on the page's words (issue 21)`, async () => {
    const eng = OCR_SAMPLES.find((s) => s.code === 'eng');
    assert.ok(eng);
    const png = join(dir, `low-${declared}.png`);
    await renderSentence(eng, png);
    const { width, height } = identify(png);
    const scan = join(dir, `low-${declared}.pdf`);
    tool('/usr/bin/img2pdf', ['--imgsize', `${declared}dpix${declared}dpi`, '--output', scan, png]);
    const pageSize = (pdf: string): string => /^Page size:\s+(.*?)\s+pts/m.exec(tool('/usr/bin/pdfinfo', [pdf]))?.[1] ?? '';
    assert.equal(pageSize(scan), `${(width * 72) / declared} x ${(height * 72) / declared}`, 'the page is the image at its declared resolution');
    const run = async (to: string): Promise<string> => {
      const out = join(dir, 'out', `low-${declared}.${to}`);
      const r = await conv.convert({ inputPath: scan, sourceFormat: 'pdf', targetFormat: to, options: { ocr_language: 'eng' }, outputPath: out });
      if (!r.ok) assert.fail(`${declared} dpi scan → ${to}: ${JSON.stringify(r.error)}`);
      return out;
    };

    // hOCR's page box is the size of the image tesseract was given: the scan's own pixels.
    const hocr = await readFile(await run('hocr'), 'utf8');
    assert.match(hocr, new RegExp(`class='ocr_page'[^>]*bbox 0 0 ${width} ${height};`), 'the image tesseract read has the scan\'s pixel size');
    const boxes = [...hocr.matchAll(/class='ocrx_word'[^>]*bbox (\d+) (\d+) (\d+) (\d+)[^>]*>([^<]*)</g)].map((m) => ({ text: m[5] ?? '', x: Number(m[1]), y: (Number(m[2]) + Number(m[4])) / 2 }));
    assert.ok(characterErrorRate(eng.sentence, boxes.map((b) => b.text).join(' ')) <= eng.maxCer, boxes.map((b) => b.text).join(' '));

    // The searchable PDF: the same page size, its words read, each where the image has it.
    const pdf = await run('pdf');
    assert.equal(pageSize(pdf), pageSize(scan));
    const layer = tool('/usr/bin/pdftotext', ['-bbox', pdf, '-']);
    const words = [...layer.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)<\/word>/g)]
      .map((m) => ({ text: m[4] ?? '', x: (Number(m[1]) * declared) / 72, y: ((Number(m[2]) + Number(m[3])) / 2) * (declared / 72) }));
    assert.ok(characterErrorRate(eng.sentence, words.map((w) => w.text).join(' ')) <= eng.maxCer, layer);
    const lineHeight = Math.max(...boxes.map((b) => b.y)) - Math.min(...boxes.map((b) => b.y)) + 20;
    for (const w of words) {
      const b = boxes.filter((o) => o.text === w.text).sort((p, q) => Math.abs(p.x - w.x) - Math.abs(q.x - w.x))[0];
      assert.ok(b, `"${w.text}" is in the hOCR`);
      // In image pixels: the word starts where tesseract found it, on its line.
      assert.ok(Math.abs(w.x - b.x) <= 3 && Math.abs(w.y - b.y) <= lineHeight, `"${w.text}" at (${w.x.toFixed(1)}, ${w.y.toFixed(1)}) px, in the image at (${b.x}, ${b.y})`);
    }
  });
}

test('helpers: resolution choice, page plan parsing, hOCR merge, bounded concurrency', async () => {
  assert.equal(ocrDpi(0), 300);
  assert.equal(ocrDpi(200), 200);
  assert.equal(ocrDpi(150), 200);
  assert.equal(ocrDpi(600), 400);
  // A scan at its own resolution (issue 21), however low, within what tesseract believes.
  assert.equal(ocrDpi(96, 96), 96);
  assert.equal(ocrDpi(72, 72), 72);
  assert.equal(ocrDpi(50, 50), 70);
  assert.equal(ocrDpi(600, 600), 400);
  const info = 'Pages: 2\nPage    1 size: 612 x 792 pts (letter)\nPage    1 rot:  0\nPage    2 size: 595.2 x 841.8 pts (A4)\n';
  const list = 'page   num  type   width height color comp bpc  enc interp  object ID x-ppi y-ppi size ratio\n'
    + '--------------------------------------------------------------------------------------------\n'
    + '   2     0 image    1684  2361  gray    1   8  image  no        16  0   200   200 2476K  64%\n'
    + '   2     1 smask    1684  2361  gray    1   8  image  no        17  0   200   200 2476K  64%\n';
  assert.deepEqual(parsePages(info, list, ['Hello\n', '']), [
    { page: 1, widthPt: 612, heightPt: 792, imagePpi: 0, text: 'Hello' },
    // An image with a soft mask is not read as it is stored: the page is rendered.
    { page: 2, widthPt: 595.2, heightPt: 841.8, imagePpi: 200, text: '' },
  ]);
  // One image filling the page (1654 px at 200 ppi = 595.4 pt): read natively, unless the page is turned.
  const scan = 'x\n-\n   1     0 image    1654  2339  gray    1   8  image  no        16  0   200   200 2476K  64%\n';
  assert.deepEqual(parsePages('Page    1 size: 595.2 x 841.8 pts (A4)\nPage    1 rot:  0\n', scan, ['']), [
    { page: 1, widthPt: 595.2, heightPt: 841.8, imagePpi: 200, text: '', scanPpi: 200, nativeImage: { ppi: 200 } },
  ]);
  // The same pixels declared at 96 dpi make a page of 1240.6 x 1754.4 pt: still read as stored.
  const at96 = scan.replace(' 200   200 ', '  96    96 ');
  assert.deepEqual(parsePages('Page    1 size: 1240.6 x 1754.4 pts\nPage    1 rot:  0\n', at96, [''])[0]?.nativeImage, { ppi: 96 });
  assert.equal(parsePages('Page    1 size: 595.2 x 841.8 pts (A4)\nPage    1 rot:  90\n', scan, [''])[0]?.nativeImage, undefined);
  // A small picture on a page is not a scan.
  assert.equal(parsePages('Page    1 size: 595.2 x 841.8 pts\n', scan.replace('1654  2339', ' 400   300'), [''])[0]?.nativeImage, undefined);
  const page = "<html><head><title/></head><body><div class='ocr_page' id='page_1' title='bbox 0 0 9 9; ppageno 0'><span class='ocr_line' id='line_1_1'><span class='ocrx_word' id='word_1_1'>x</span></span></div></body></html>";
  const merged = mergeHocr([page, page]);
  assert.match(merged, /id='page_2'[^>]*ppageno 1/);
  assert.match(merged, /id='word_2_1'/);
  assert.equal(merged.match(/<body>/g)?.length, 1);
  let running = 0;
  let peak = 0;
  const out = await boundedAll([1, 2, 3, 4, 5], 2, async (x) => {
    peak = Math.max(peak, ++running);
    await new Promise((r) => setTimeout(r, 10));
    running--;
    return x * 2;
  });
  assert.deepEqual(out, [2, 4, 6, 8, 10]);
  assert.equal(peak, 2);
  await assert.rejects(boundedAll([1, 2, 3], 2, async (x) => {
    if (x === 2) throw new Error('page 2');
    return x;
  }), /page 2/);
  assert.equal(levenshtein([...'kitten'], [...'sitting']), 3);
  assert.equal(characterErrorRate('ab cd', 'a b c d'), 0);
  assert.equal(characterBagErrorRate('abcd', 'dcba'), 0);
  assert.equal(characterBagErrorRate('abcd', 'ab'), 0.5);
});
