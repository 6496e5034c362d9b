import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CalibreEngine } from './engines/calibre.engine.js';
import { FfmpegEngine } from './engines/ffmpeg.engine.js';
import { ImageMagickEngine } from './engines/imagemagick.engine.js';
import { Img2PdfEngine } from './engines/img2pdf.engine.js';
import { LibreOfficeEngine } from './engines/libreoffice.engine.js';
import { DataEngine } from './engines/data.engine.js';
import { PandocEngine } from './engines/pandoc.engine.js';
import { PodEngine } from './engines/pod.engine.js';
import { PopplerEngine } from './engines/poppler.engine.js';
import { QpdfEngine } from './engines/qpdf.engine.js';
import { SharpEngine } from './engines/sharp.engine.js';
import { TesseractEngine } from './engines/tesseract.engine.js';
import { Registry } from './registry.js';

const all = () => [
  new LibreOfficeEngine({ workDir: '/nonexistent' }), new PandocEngine(), new CalibreEngine(), new SharpEngine(), new ImageMagickEngine(),
  new Img2PdfEngine(), new TesseractEngine(), new FfmpegEngine(), new PopplerEngine(), new QpdfEngine(),
];

test('direct pairs come in fallback order; chains are used only without a direct route', () => {
  const reg = new Registry(all());
  assert.deepEqual(reg.routes('png', 'jpg').map((r) => r.steps.map((s) => s.engine)), [['sharp']]);
  assert.deepEqual(reg.routes('bmp', 'png').map((r) => r.steps.map((s) => s.engine)), [['imagemagick']]);
  assert.deepEqual(reg.routes('md', 'docx')[0]?.steps.map((s) => `${s.engine}:${s.from}>${s.to}`), ['pandoc:md>odt', 'libreoffice:odt>docx']);
  assert.deepEqual(reg.routes('docx', 'png')[0]?.steps.map((s) => s.engine), ['libreoffice', 'poppler']);
  // docx → html: LibreOffice first, pandoc as its fallback.
  assert.deepEqual(reg.routes('docx', 'html').map((r) => r.steps[0]?.engine), ['libreoffice', 'pandoc']);
  // image → pdf: plain embedding unless OCR is asked for, then OCR only (through PNG if need
  // be): asked for OCR, a conversion never falls back to a copy without text (issue 12).
  assert.deepEqual(reg.routes('png', 'pdf').map((r) => r.steps[0]?.engine), ['img2pdf']);
  assert.deepEqual(reg.routes('png', 'pdf', { ocr: true }).map((r) => r.steps[0]?.engine), ['tesseract']);
  assert.deepEqual(reg.routes('bmp', 'pdf').map((r) => r.steps.map((s) => s.engine)), [['imagemagick', 'img2pdf']]);
  assert.deepEqual(reg.routes('bmp', 'pdf', { ocr: true }).map((r) => r.steps.map((s) => s.engine)), [['imagemagick', 'tesseract']]);
  // Scanned PDFs: OCR only when asked for.
  assert.deepEqual(reg.routes('pdf', 'txt').map((r) => r.steps[0]?.engine), ['poppler']);
  assert.deepEqual(reg.routes('pdf', 'txt', { ocr: true }).map((r) => r.steps[0]?.engine), ['tesseract']);
  const pdfOcr = reg.routes('pdf', 'pdf', { ocr: true });
  assert.ok(pdfOcr.length > 0 && pdfOcr.every((r) => r.steps.some((s) => s.engine === 'tesseract')), 'pdf → pdf with OCR: OCR routes only');
  assert.deepEqual(reg.routes('wav', 'pdf'), []);
  assert.deepEqual(reg.routes('mp3', 'mp4'), []);
});

test('chains go through one intermediate, chosen by the source family, never back to the source or through OCR of a rendered page', () => {
  const reg = new Registry(all());
  const chain = (from: string, to: string): string[] | undefined => reg.routes(from, to)[0]?.steps.map((s) => `${s.engine}:${s.from}>${s.to}`);
  assert.deepEqual(chain('pptx', 'png'), ['libreoffice:pptx>pdf', 'poppler:pdf>png']);
  assert.deepEqual(chain('doc', 'epub'), ['libreoffice:doc>odt', 'calibre:odt>epub']);
  assert.deepEqual(chain('mobi', 'md'), ['calibre:mobi>epub', 'pandoc:epub>md']);
  assert.deepEqual(chain('mobi', 'doc'), ['calibre:mobi>docx', 'libreoffice:docx>doc']);
  assert.deepEqual(chain('dbk', 'pdf'), ['pandoc:dbk>odt', 'libreoffice:odt>pdf']);
  assert.deepEqual(chain('xcf', 'pdf'), ['imagemagick:xcf>png', 'img2pdf:png>pdf']);
  assert.deepEqual(chain('dds', 'txt'), ['imagemagick:dds>png', 'tesseract:png>txt']);
  // Slides to text: the PDF's own text (poppler), not OCR of it.
  assert.deepEqual(reg.routes('pptx', 'txt').map((r) => r.steps.map((s) => s.engine)), [['libreoffice', 'poppler']]);
  // Direct routes win: e-books are calibre's, the raster long tail ImageMagick's.
  assert.deepEqual(chain('epub', 'mobi'), ['calibre:epub>mobi']);
  assert.deepEqual(chain('sgi', 'xpm'), ['imagemagick:sgi>xpm']);
  // No round trips (png → png through something) and no audio/video chains.
  assert.deepEqual(reg.routes('jpg', 'jpg'), []);
  assert.deepEqual(reg.routes('docx', 'docx'), []);
  assert.deepEqual(reg.routes('wav', 'mp4'), []);
});

test('with a proof, only the proven pairs are listed and routed, the proven chain first', () => {
  const proven = new Map([['png>jpg', ['sharp']], ['bmp>png', ['imagemagick']], ['md>docx', ['pandoc', 'libreoffice']]]);
  const reg = new Registry(all(), { proven });
  assert.deepEqual(reg.pairs(), [{ from: 'png', to: 'jpg' }, { from: 'bmp', to: 'png' }, { from: 'md', to: 'docx' }]);
  assert.deepEqual(reg.routes('png', 'webp'), []);
  assert.deepEqual(reg.targets('md').map((t) => [t.format, t.engines, t.via]), [['docx', ['pandoc', 'libreoffice'], 'odt']]);
  assert.deepEqual(reg.formats().map((f) => [f.ext, f.readable, f.writable]), [['docx', false, true], ['png', true, true], ['jpg', false, true], ['bmp', true, false], ['md', true, false]]);
  // When the proof holds a fallback (pandoc for docx → html), that route goes first.
  const fallbackFirst = new Registry(all(), { proven: new Map([['docx>html', ['pandoc']]]) });
  assert.deepEqual(fallbackFirst.routes('docx', 'html').map((r) => r.steps[0]?.engine), ['pandoc', 'libreoffice']);
});

test('targets and formats listings come from the same routes', () => {
  const reg = new Registry(all());
  const docx = reg.targets('docx').map((t) => t.format);
  for (const t of ['pdf', 'odt', 'md', 'html', 'txt', 'png']) assert.ok(docx.includes(t), t);
  assert.ok(!docx.includes('docx'));
  const png = reg.targets('png');
  assert.ok(png.find((t) => t.format === 'txt')?.engines.includes('tesseract'));
  assert.deepEqual(png.find((t) => t.format === 'jpg')?.presets, ['web', 'print', 'thumbnail', 'archive']);
  for (const { from, to } of reg.pairs()) assert.ok(reg.routes(from, to).length > 0, `${from}→${to}`);
  const formats = reg.formats();
  assert.ok(formats.find((f) => f.ext === 'xcf')?.readable);
  assert.equal(formats.find((f) => f.ext === 'xcf')?.writable, false);
  assert.ok(reg.pairs().length > 150);
});

test('a missing engine drops its pairs (disabled, not broken)', () => {
  const reg = new Registry(all().filter((e) => e.name !== 'libreoffice'));
  assert.deepEqual(reg.routes('docx', 'pdf'), []);
  assert.ok(reg.routes('docx', 'md').length > 0);
});

test('bibliographies: BibTeX ↔ CSL JSON is pandoc\'s only JSON; BibTeX into documents; POD through its HTML; GeoJSON only from geodata', () => {
  const reg = new Registry([...all(), new DataEngine(), new PodEngine()]);
  const engines = (from: string, to: string): string[][] => reg.routes(from, to).map((r) => r.steps.map((s) => `${s.engine}:${s.to}`));
  assert.deepEqual(engines('bib', 'json'), [['pandoc:json']]);
  assert.deepEqual(engines('json', 'bib'), [['pandoc:bib']]);
  assert.deepEqual(engines('bib', 'html'), [['pandoc:html']]);
  // Any other JSON is data (the data engine's), never read by pandoc as CSL JSON: to Markdown it is a table.
  assert.deepEqual(engines('json', 'md'), [['data:csv', 'pandoc:md']]);
  assert.deepEqual(engines('json', 'yaml'), [['data:yaml']]);
  // A document holds no bibliography entries to write.
  assert.deepEqual(engines('md', 'bib'), []);
  assert.deepEqual(engines('pod', 'html'), [['pod:html']]);
  assert.deepEqual(engines('pod', 'rst')[0], ['pod:html', 'pandoc:rst']);
  assert.deepEqual(engines('gpx', 'geojson'), [['data:geojson']]);
  assert.deepEqual(engines('csv', 'geojson'), []);
  // Read only: nothing writes GPX, KML, POD or the three wiki dialects.
  for (const ext of ['gpx', 'kml', 'pod', 'tikiwiki', 'twiki', 'vimwiki']) assert.deepEqual(engines('md', ext), [], ext);
});
