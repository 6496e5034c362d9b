/**
 * tesseract for OCR: scanned images to plain text or to a searchable PDF (the image with an
 * invisible text layer). `OMP_THREAD_LIMIT=1`: OpenMP threads only slow it down on small,
 * shared machines. Languages come from `ocr_language` (default `eng`).
 */
import { failed } from '../errors.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const TESSERACT = '/usr/bin/tesseract';

/** The tesseract engine. */
export class TesseractEngine implements Engine {
  readonly name = 'tesseract';
  // Not BMP: leptonica rejects the BMP variants ImageMagick writes (they go through PNG).
  readonly reads = ['png', 'jpg', 'tiff', 'gif', 'ppm', 'webp'] as const;
  readonly writes = ['txt', 'pdf'] as const;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [TESSERACT], ['--version'], /tesseract (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const base = step.output.replace(/\.(txt|pdf)$/, '');
    if (base === step.output) throw failed(`tesseract cannot write ${step.to}.`);
    const langs = (step.options.ocrLanguages ?? ['eng']).join('+');
    await runStep(step, TESSERACT, [step.input, base, '-l', langs, '--psm', '3', step.to], { env: { OMP_THREAD_LIMIT: '1' }, maxMemoryBytes: 2 * 1024 ** 3 });
  }
}
