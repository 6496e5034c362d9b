/**
 * poppler for PDF to images (`pdftoppm`, one page: the first of `page_range`, page 1 by
 * default) and to text (`pdftotext`, UTF-8, layout kept).
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const PDFTOPPM = '/usr/bin/pdftoppm';
const PDFTOTEXT = '/usr/bin/pdftotext';

/** The poppler engine. */
export class PopplerEngine implements Engine {
  readonly name = 'poppler';
  readonly reads = ['pdf'] as const;
  readonly writes = ['png', 'jpg', 'txt'] as const;

  tradesQualityForSize(to: string): boolean {
    return to === 'jpg';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [PDFTOPPM, PDFTOTEXT], ['-v'], /pdftoppm version (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    if (step.to === 'txt') {
      await runStep(step, PDFTOTEXT, ['-enc', 'UTF-8', '-layout', step.input, step.output]);
      return;
    }
    // The page selection already happened (qpdf), so the wanted page is page 1 here.
    const args = ['-f', '1', '-l', '1', '-singlefile'];
    const maxDim = step.options.preset?.maxDimension;
    if (maxDim) args.push('-scale-to', String(maxDim));
    else args.push('-r', step.options.preset?.name === 'print' ? '300' : '150');
    if (step.to === 'jpg') args.push('-jpeg', '-jpegopt', `quality=${step.quality}`);
    else args.push('-png');
    // pdftoppm appends the extension itself.
    args.push(step.input, step.output.replace(/\.(png|jpg)$/, ''));
    await runStep(step, PDFTOPPM, args);
  }
}
