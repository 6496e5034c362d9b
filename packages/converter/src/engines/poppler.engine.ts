/**
 * poppler for PDF to images (`pdftoppm`, one page: the first of `page_range`, page 1 by
 * default), to text (`pdftotext`, UTF-8, layout kept) and to HTML (`pdftohtml`: one
 * self-contained page flow, text positioned as on the pages, images left out).
 */
import { basename } from 'node:path';
import { failed } from '../errors.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const PDFTOPPM = '/usr/bin/pdftoppm';
const PDFTOTEXT = '/usr/bin/pdftotext';
const PDFINFO = '/usr/bin/pdfinfo';
const PDFTOHTML = '/usr/bin/pdftohtml';
/** poppler allocates the whole page bitmap: cap its address space. */
const MAX_MEMORY = 2 * 1024 ** 3;

/** The resolution that keeps a `widthPt` × `heightPt` page within `maxPixels`. */
export function renderDpi(widthPt: number, heightPt: number, wantedDpi: number, maxPixels: number): number {
  const pixels = ((widthPt * wantedDpi) / 72) * ((heightPt * wantedDpi) / 72);
  if (!(pixels > maxPixels)) return wantedDpi;
  return Math.max(1, Math.floor(wantedDpi * Math.sqrt(maxPixels / pixels)));
}

/** The poppler engine. */
export class PopplerEngine implements Engine {
  readonly name = 'poppler';
  readonly reads = ['pdf'] as const;
  readonly writes = ['png', 'jpg', 'txt', 'html'] as const;

  tradesQualityForSize(to: string): boolean {
    return to === 'jpg';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [PDFTOPPM, PDFTOTEXT, PDFINFO, PDFTOHTML], ['-v'], /pdftoppm version (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    if (step.to === 'txt') {
      await runStep(step, PDFTOTEXT, ['-enc', 'UTF-8', '-layout', step.input, step.output], { maxMemoryBytes: MAX_MEMORY });
      return;
    }
    if (step.to === 'html') {
      // Names relative to the job folder (the working directory): pdftohtml puts the output's
      // name in the page title, and no path of ours belongs in a client's file.
      await runStep(step, PDFTOHTML, ['-s', '-i', '-noframes', '-enc', 'UTF-8', '-q', basename(step.input), basename(step.output)], { maxMemoryBytes: MAX_MEMORY });
      return;
    }
    // The page selection already happened (qpdf), so the wanted page is page 1 here.
    const args = ['-f', '1', '-l', '1', '-singlefile'];
    const maxDim = step.options.preset?.maxDimension;
    if (maxDim) args.push('-scale-to', String(maxDim));
    else {
      // A page of 200 × 200 inches would be a pixel bomb at 150 dpi: lower the resolution
      // so the bitmap stays within the job's pixel budget.
      const info = await runStep(step, PDFINFO, ['-f', '1', '-l', '1', step.input], { maxMemoryBytes: MAX_MEMORY });
      const m = /Page\s+1 size:\s+([\d.]+) x ([\d.]+)/.exec(info.stdout.toString('utf8'));
      const wanted = step.options.preset?.name === 'print' ? 300 : 150;
      const dpi = m ? renderDpi(Number(m[1]), Number(m[2]), wanted, step.job.maxInputPixels) : wanted;
      args.push('-r', String(dpi));
    }
    if (step.to === 'jpg') args.push('-jpeg', '-jpegopt', `quality=${step.quality}`);
    else args.push('-png');
    // pdftoppm appends the extension itself.
    args.push(step.input, step.output.replace(/\.(png|jpg)$/, ''));
    const r = await runStep(step, PDFTOPPM, args, { maxMemoryBytes: MAX_MEMORY });
    // pdftoppm refuses impossible bitmaps with this message, writes a 1×1 image and exits 0.
    if (/Bogus memory allocation/i.test(r.stderr)) throw failed('The PDF page is too large to render.', 'pdftoppm: bogus memory allocation');
  }
}
