/**
 * tesseract for OCR: scanned images to plain text or to a searchable PDF (the image with an
 * invisible text layer), and scanned PDFs likewise: their pages are rendered with poppler
 * (300 dpi within the job's pixel budget) and handed to one tesseract run as a page list, so
 * the result is one multi-page PDF. Like OCRmyPDF's `--force-ocr`, that replaces the pages
 * by images, so PDF sources are OCRed only when `ocr_language` asks for it (see the registry).
 * `OMP_THREAD_LIMIT=1`: OpenMP threads only slow it down on small, shared machines.
 * Languages come from `ocr_language` (default `eng`).
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { failed } from '../errors.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';
import { renderDpi } from './poppler.engine.js';

const TESSERACT = '/usr/bin/tesseract';
const PDFTOPPM = '/usr/bin/pdftoppm';
const PDFINFO = '/usr/bin/pdfinfo';
const MAX_MEMORY = 2 * 1024 ** 3;

/** The tesseract engine. */
export class TesseractEngine implements Engine {
  readonly name = 'tesseract';
  // Not BMP: leptonica rejects the BMP variants ImageMagick writes (they go through PNG).
  readonly reads = ['png', 'jpg', 'tiff', 'gif', 'ppm', 'webp', 'pdf'] as const;
  readonly writes = ['txt', 'pdf'] as const;

  supports(from: string, to: string): boolean {
    return this.reads.includes(from as never) && this.writes.includes(to as never);
  }

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [TESSERACT, PDFTOPPM, PDFINFO], ['--version'], /tesseract (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const base = step.output.replace(/\.(txt|pdf)$/, '');
    if (base === step.output) throw failed(`tesseract cannot write ${step.to}.`);
    const langs = (step.options.ocrLanguages ?? ['eng']).join('+');
    const input = step.from === 'pdf' ? await this.renderPages(step) : step.input;
    await runStep(step, TESSERACT, [input, base, '-l', langs, '--psm', '3', step.to], { env: { OMP_THREAD_LIMIT: '1' }, maxMemoryBytes: MAX_MEMORY });
  }

  /** Renders every page to PNG and returns a list file naming them, in page order. */
  private async renderPages(step: Step): Promise<string> {
    const info = await runStep(step, PDFINFO, ['-f', '1', '-l', '1', step.input], { maxMemoryBytes: MAX_MEMORY });
    const m = /Page\s+1 size:\s+([\d.]+) x ([\d.]+)/.exec(info.stdout.toString('utf8'));
    const dpi = m ? renderDpi(Number(m[1]), Number(m[2]), 300, step.job.maxInputPixels) : 150;
    const prefix = join(step.job.dir, 'ocr-page');
    await runStep(step, PDFTOPPM, ['-r', String(dpi), '-gray', '-png', step.input, prefix], { maxMemoryBytes: MAX_MEMORY });
    const pages = (await readdir(step.job.dir))
      .filter((f) => /^ocr-page-\d+\.png$/.test(f))
      .sort((a, b) => Number(/(\d+)\.png$/.exec(a)?.[1]) - Number(/(\d+)\.png$/.exec(b)?.[1]))
      .map((f) => join(step.job.dir, f));
    if (!pages.length) throw failed('The PDF has no pages to read.', 'pdftoppm wrote no page');
    const list = join(step.job.dir, 'ocr-pages.txt');
    await writeFile(list, `${pages.join('\n')}\n`);
    return list;
  }
}
