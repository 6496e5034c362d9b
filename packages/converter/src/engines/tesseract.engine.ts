/**
 * tesseract for OCR (issue 12): images to plain text, hOCR or a searchable PDF (the image
 * with an invisible text layer), and scanned PDFs likewise.
 *
 * Scanned PDFs are done the way OCRmyPDF does them, page by page with bounded concurrency:
 * a page that is one scan image is read at that image's own pixels whatever resolution it
 * declares (like OCRmyPDF); other pages are rendered with poppler at 200–400 dpi (300 for
 * pages without an image). Each page is read by its own tesseract run (`OMP_THREAD_LIMIT=1`: one core
 * per page beats OpenMP threads fighting over a small shared machine), and for PDF targets
 * tesseract writes only the text (`textonly_pdf`), which qpdf lays *under* the original
 * page. The page itself is never re-encoded: same image, same size, the text is selectable.
 * Pages that already carry text are left alone for PDF and text targets (like OCRmyPDF's
 * `--skip-text`); their text is kept. PDF sources are OCRed only when `ocr_language` asks
 * for it (see the registry). Languages come from `ocr_language` (default `eng`).
 */
import { availableParallelism } from 'node:os';
import { rename } from 'node:fs/promises';
import { readEngineText, writeJobFile } from '../guards/output-guard.js';
import { join } from 'node:path';
import { failed } from '../errors.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';
import { renderDpi } from './poppler.engine.js';

const TESSERACT = '/usr/bin/tesseract';
const PDFTOPPM = '/usr/bin/pdftoppm';
const PDFINFO = '/usr/bin/pdfinfo';
const PDFIMAGES = '/usr/bin/pdfimages';
const PDFTOTEXT = '/usr/bin/pdftotext';
const QPDF = '/usr/bin/qpdf';
const MAX_MEMORY = 2 * 1024 ** 3;
const TESS_ENV = { OMP_THREAD_LIMIT: '1' };

/** The OCR engine's settings. */
export interface TesseractOptions {
  /** Pages read at the same time; default the cores, at most 4. */
  readonly concurrency?: number;
}

/** One page of a PDF as the OCR plan sees it. */
export interface OcrPage {
  readonly page: number;
  readonly widthPt: number;
  readonly heightPt: number;
  /** Resolution of its largest image (0 when it has none). */
  readonly imagePpi: number;
  /** The text it already has (empty for a scan). */
  readonly text: string;
  /**
   * Set when one image fills the page (a scan): its effective resolution, its pixels per
   * inch of the page, whatever the image file declared.
   */
  readonly scanPpi?: number;
  /** Set when the page is one upright image filling it (a scan): OCR reads that image as it is. */
  readonly nativeImage?: { readonly ppi: number };
}

/**
 * tesseract's lowest believable resolution: below it, it ignores `--dpi` and takes 70, and
 * the text layer's page would not match the page it goes under.
 */
const MIN_TESSERACT_DPI = 70;

/**
 * The resolution a page is rendered at for OCR. A scan (`scanPpi`, one image filling the
 * page) at its own pixels, however few inches it claims, up to 400: a 1718 × 2214 px scan
 * declared at 96 dpi rendered at 200 was four times the pixels and 6.5× OCRmyPDF's time
 * for fewer words (issue 21). Other pages at their largest image's resolution within
 * 200–400 dpi, where tesseract reads best (a small picture says nothing about the size of
 * the page's text); 300 for pages without an image. Measured on the issue-12 scan: 200 dpi
 * native read as well as 300 dpi upsampled and took half the time.
 */
export function ocrDpi(imagePpi: number, scanPpi?: number): number {
  if (scanPpi !== undefined && scanPpi > 0) return Math.min(400, Math.max(MIN_TESSERACT_DPI, Math.round(scanPpi)));
  if (!(imagePpi >= 72)) return 300;
  return Math.min(400, Math.max(200, Math.round(imagePpi)));
}

/** Parses `pdfinfo -f 1 -l N` (sizes, rotation) and `pdfimages -list` (images) per page. */
export function parsePages(pdfinfo: string, imageList: string, texts: readonly string[]): OcrPage[] {
  const images = new Map<number, { width: number; height: number; ppi: number; kind: string }[]>();
  for (const line of imageList.split('\n')) {
    // page num type width height color comp bpc enc interp object ID x-ppi y-ppi size ratio
    const f = line.trim().split(/\s+/);
    const page = Number(f[0]);
    if (!Number.isInteger(page) || page < 1 || f.length < 14) continue;
    const [width, height, x, y] = [Number(f[3]), Number(f[4]), Number(f[12]), Number(f[13])];
    if (!(width > 0) || !(height > 0) || !Number.isFinite(x) || !Number.isFinite(y)) continue;
    images.set(page, [...(images.get(page) ?? []), { width, height, ppi: Math.min(x, y), kind: f[2] ?? '' }]);
  }
  const rotation = new Map([...pdfinfo.matchAll(/^Page\s+(\d+) rot:\s+(\d+)/gm)].map((m) => [Number(m[1]), Number(m[2])]));
  const pages: OcrPage[] = [];
  for (const m of pdfinfo.matchAll(/^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+)/gm)) {
    const page = Number(m[1]);
    const [widthPt, heightPt] = [Number(m[2]), Number(m[3])];
    const list = images.get(page) ?? [];
    const photos = list.filter((i) => i.kind === 'image');
    const imagePpi = Math.max(0, ...photos.map((i) => i.ppi));
    const only = list.length === 1 ? photos[0] : undefined;
    // A scan: one image, no mask, filling the page. Its resolution is what it has on this
    // page (pixels / page inches), which is what pdfimages prints, rounded.
    const fills = only !== undefined && Math.abs((only.width * 72) / only.ppi - widthPt) <= widthPt * 0.02 && Math.abs((only.height * 72) / only.ppi - heightPt) <= heightPt * 0.02;
    const scanPpi = fills && only ? Math.round((only.width * 72) / widthPt) : undefined;
    // Read as stored when upright (the layer is laid unturned) and tesseract can be told its
    // resolution; above 600 dpi rendering at 400 is cheaper and reads as well.
    const native = scanPpi !== undefined && (rotation.get(page) ?? 0) === 0 && scanPpi >= MIN_TESSERACT_DPI && scanPpi <= 600 ? { ppi: scanPpi } : undefined;
    pages.push({ page, widthPt, heightPt, imagePpi, text: (texts[page - 1] ?? '').trim(), ...(scanPpi !== undefined ? { scanPpi } : {}), ...(native ? { nativeImage: native } : {}) });
  }
  return pages;
}

/**
 * Joins the hOCR documents of single pages into one: the first document's head, every
 * page's `ocr_page` block, with ids and `ppageno` renumbered so they stay unique.
 */
export function mergeHocr(pages: readonly string[]): string {
  const bodies = pages.map((doc, i) => {
    const body = /<body>([\s\S]*)<\/body>/.exec(doc)?.[1] ?? '';
    const n = i + 1;
    return body
      .replace(/id='(\w+?)_1(_\d+)?'/g, (_m, kind: string, rest?: string) => `id='${kind}_${n}${rest ?? ''}'`)
      .replace(/ppageno \d+/g, `ppageno ${i}`);
  });
  const first = pages[0] ?? '';
  const head = first.slice(0, first.indexOf('<body>') + '<body>'.length);
  return `${head}${bodies.join('')}</body>\n</html>\n`;
}

/** Runs `work` over `items` with at most `limit` at a time; the first failure stops new work and is thrown. */
export async function boundedAll<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let error: { e: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!error && next < items.length) {
      const i = next++;
      try {
        results[i] = await work(items[i] as T);
      } catch (e) {
        error ??= { e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (error) throw error.e;
  return results;
}

/** The tesseract engine. */
export class TesseractEngine implements Engine {
  readonly name = 'tesseract';
  // Not BMP: leptonica rejects the BMP variants ImageMagick writes (they go through PNG).
  readonly reads = ['png', 'jpg', 'tiff', 'gif', 'ppm', 'webp', 'pdf'] as const;
  readonly writes = ['txt', 'pdf', 'hocr'] as const;
  private readonly concurrency: number;

  constructor(opts: TesseractOptions = {}) {
    this.concurrency = Math.max(1, opts.concurrency ?? Math.min(4, availableParallelism()));
  }

  supports(from: string, to: string): boolean {
    return this.reads.includes(from as never) && this.writes.includes(to as never);
  }

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [TESSERACT, PDFTOPPM, PDFINFO, PDFIMAGES, PDFTOTEXT, QPDF], ['--version'], /tesseract (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const base = step.output.replace(/\.(txt|pdf|hocr)$/, '');
    if (base === step.output) throw failed(`tesseract cannot write ${step.to}.`);
    if (step.from === 'pdf') return this.convertPdf(step);
    await this.tesseract(step, step.input, base, [step.to]);
  }

  private async tesseract(step: Step, input: string, base: string, configs: readonly string[], textOnly = false, dpi?: number): Promise<void> {
    const langs = (step.options.ocrLanguages ?? ['eng']).join('+');
    const args = [input, base, '-l', langs, '--psm', '3', ...(dpi ? ['--dpi', String(dpi)] : []), ...(textOnly ? ['-c', 'textonly_pdf=1'] : []), ...configs];
    await runStep(step, TESSERACT, args, { env: TESS_ENV, maxMemoryBytes: MAX_MEMORY });
  }

  private async convertPdf(step: Step): Promise<void> {
    const pages = await this.plan(step);
    if (!pages.length) throw failed('The PDF has no pages to read.', 'pdfinfo listed no page');
    // Pages with text keep it (PDF and text targets); hOCR needs every page's word boxes.
    const todo = step.to === 'hocr' ? pages : pages.filter((p) => p.text === '');
    const dir = step.job.dir;
    const outputs = await boundedAll(todo, this.concurrency, async (p) => {
      const base = join(dir, `ocr-${p.page}-text`);
      const dpi = ocrDpi(p.imagePpi, p.scanPpi);
      await this.ocrPage(step, p, dpi, base);
      // tesseract's layout analysis now and then drops a whole scanned page as "no text" at
      // one scale and reads it at another (seen at 300 dpi on a line of Arabic that 250 and
      // 350 dpi read right): a scan that came back empty gets one more reading at 4/3 scale.
      if (p.imagePpi > 0 && step.to !== 'hocr' && ((await readEngineText(`${base}.txt`, step.job, 'tesseract')) ?? '').trim() === '') {
        await this.ocrPage(step, p, Math.round((dpi * 4) / 3), base, true);
      }
      return { page: p.page, file: `${base}.${step.to}` };
    });
    const byPage = new Map(outputs.map((o) => [o.page, o.file]));
    if (step.to === 'txt') {
      const parts: string[] = [];
      for (const p of pages) {
        const file = byPage.get(p.page);
        // Every page ends with a form feed, as pdftotext writes them (a single-page tesseract run writes none).
        const text = file ? ((await readEngineText(file, step.job, 'tesseract')) ?? '').replace(/\f/g, '').trimEnd() : p.text;
        parts.push(`${text}\n\f`);
      }
      await writeJobFile(step.output, parts.join(''));
    } else if (step.to === 'hocr') {
      await writeJobFile(step.output, mergeHocr(await Promise.all(outputs.map(async (o) => (await readEngineText(o.file, step.job, 'tesseract')) ?? ''))));
    } else if (!outputs.length) {
      // Every page had text already: the PDF is searchable as it is.
      await runStep(step, QPDF, ['--', step.input, step.output], { okExitCodes: [3] });
    } else {
      const layer = join(dir, 'ocr-layer.pdf');
      await runStep(step, QPDF, ['--empty', '--pages', ...outputs.map((o) => o.file), '--', layer], { okExitCodes: [3] });
      const to = outputs.map((o) => o.page).join(',');
      await runStep(step, QPDF, [step.input, '--underlay', layer, `--to=${to}`, '--from=1-z', '--', step.output], { okExitCodes: [3] });
    }
  }

  /**
   * Reads one page: a scan's own image as it is stored (no resampling: measured on the
   * issue-12 scan, this reads as well as OCRmyPDF's rendering, where pdftoppm's cost a word
   * or two) when it is within the pixel budget, any other page rendered at `wantedDpi`.
   * tesseract is told the resolution the pixels have on the page, so the text layer it
   * writes has the page's size. PDF targets also get the page's text (to see whether any
   * was found).
   */
  private async ocrPage(step: Step, p: OcrPage, wantedDpi: number, base: string, render = false): Promise<void> {
    const image = join(step.job.dir, `ocr-${p.page}`);
    let dpi: number;
    const native = p.nativeImage && !render && renderDpi(p.widthPt, p.heightPt, p.nativeImage.ppi, step.job.maxInputPixels) === p.nativeImage.ppi;
    if (p.nativeImage && native) {
      await runStep(step, PDFIMAGES, ['-f', String(p.page), '-l', String(p.page), '-png', step.input, image], { maxMemoryBytes: MAX_MEMORY });
      await rename(`${image}-000.png`, `${image}.png`);
      dpi = p.nativeImage.ppi;
    } else {
      dpi = renderDpi(p.widthPt, p.heightPt, wantedDpi, step.job.maxInputPixels);
      await runStep(step, PDFTOPPM, ['-f', String(p.page), '-l', String(p.page), '-r', String(dpi), '-gray', '-png', '-singlefile', step.input, image], { maxMemoryBytes: MAX_MEMORY });
    }
    const configs = step.to === 'pdf' ? ['pdf', 'txt'] : [step.to];
    // --dpi: the text page's size follows it, so the layer matches the page it goes under.
    await this.tesseract(step, `${image}.png`, base, configs, step.to === 'pdf', dpi);
  }

  /** Page sizes, scan resolutions and existing text, with three quick poppler runs. */
  private async plan(step: Step): Promise<OcrPage[]> {
    const info = await runStep(step, PDFINFO, [step.input], { maxMemoryBytes: MAX_MEMORY });
    const count = Number(/^Pages:\s+(\d+)/m.exec(info.stdout.toString('utf8'))?.[1] ?? 0);
    if (!(count > 0)) return [];
    const sizes = await runStep(step, PDFINFO, ['-f', '1', '-l', String(count), step.input], { maxMemoryBytes: MAX_MEMORY });
    const images = await runStep(step, PDFIMAGES, ['-list', step.input], { maxMemoryBytes: MAX_MEMORY, maxStdoutBytes: 16 * 1024 ** 2 });
    const text = await runStep(step, PDFTOTEXT, ['-enc', 'UTF-8', step.input, '-'], { maxMemoryBytes: MAX_MEMORY, maxStdoutBytes: 64 * 1024 ** 2 });
    // pdftotext ends every page with a form feed.
    const texts = text.stdout.toString('utf8').split('\f');
    return parsePages(sizes.stdout.toString('utf8'), images.stdout.toString('utf8'), texts);
  }
}
