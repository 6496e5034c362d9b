/**
 * pdf → zip (issue 25): every image embedded in the PDF, in its own format (`pdfimages -all`:
 * JPEG as .jpg, JPEG 2000 as .jp2, JBIG2 and CCITT as their raw streams, the rest as PNG),
 * named `page-<page>-image-<n>.<ext>` and packed by bsdtar. The listing (`pdfimages -list`,
 * no pixel decoded) is checked first: a PDF without images fails (no empty zip), and one
 * with more images or pixels than {@link PDF_IMAGE_LIMITS} fails before anything is written.
 */
import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { failed, failedFinally } from '../errors.js';
import { ownForSandbox } from '../exec/exec.js';
import { acceptEngineOutput } from '../guards/output-guard.js';
import { ArchiveEngine } from './archive.engine.js';
import { listImages } from './pdf-info.engine.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const PDFIMAGES = '/usr/bin/pdfimages';
const BSDTAR = '/usr/bin/bsdtar';
/** pdfimages holds one decoded image at a time. */
const MAX_MEMORY = 2 * 1024 ** 3;

/** Caps of one extraction, as documented in docs/convert-api.md. */
export const PDF_IMAGE_LIMITS = {
  /** Most images (each drawing of an image counts, as pdfimages lists them). */
  maxImages: 2000,
  /** Most decoded pixels of all images together, as a multiple of the job's pixel limit. */
  totalPixelsFactor: 10,
} as const;

/** The PDF images engine. */
export class PdfImagesEngine implements Engine {
  readonly name = 'pdfimages';
  readonly reads = ['pdf'] as const;
  readonly writes = ['zip'] as const;
  /** The pictures of the PDF it is given: a document made into a PDF on the way would be a surprise. */
  readonly directOnly = true;
  private readonly zip = new ArchiveEngine();

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [PDFIMAGES, BSDTAR], ['-v'], /pdfimages version (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const { job } = step;
    // About 95 bytes a row: the cap's rows and a margin.
    const listed = await listImages(step.input, job, (PDF_IMAGE_LIMITS.maxImages + 10) * 200);
    if (listed.overflow || listed.count > PDF_IMAGE_LIMITS.maxImages) {
      throw failedFinally(`The PDF has more than ${PDF_IMAGE_LIMITS.maxImages} images, more than one conversion extracts.`, `pdfimages -list: ${listed.overflow ? 'over the listing cap' : listed.count}`);
    }
    if (listed.count === 0) throw failedFinally('The PDF has no embedded images to extract.', 'pdfimages -list: no images');
    if (listed.maxPixels > job.maxInputPixels || listed.totalPixels > job.maxInputPixels * PDF_IMAGE_LIMITS.totalPixelsFactor) {
      throw failedFinally('The PDF’s images are too large to extract (over the pixel limit of a conversion).', `pdfimages -list: largest ${listed.maxPixels}, total ${listed.totalPixels} pixels`);
    }
    const dir = join(job.dir, 'pdf-images');
    await mkdir(dir);
    await ownForSandbox(dir);
    await runStep(step, PDFIMAGES, ['-all', '-p', step.input, join(dir, 'img')], { maxMemoryBytes: MAX_MEMORY });
    const written = (await readdir(dir)).sort();
    if (written.length > PDF_IMAGE_LIMITS.maxImages * 2) throw failed('The PDF’s images could not be extracted.', `pdfimages wrote ${written.length} files`);
    const names: string[] = [];
    const pageWidth = String(Math.max(1, ...written.map((n) => Number(/^img-(\d+)-/.exec(n)?.[1] ?? 0)))).length;
    for (const name of written) {
      // img-PAGE-NUM.ext (a CCITT image has a .params file beside it); anything else is not pdfimages'.
      const m = /^img-(\d+)-(\d+)\.([a-z0-9]{1,6})$/.exec(name);
      if (!m) throw failed('The PDF’s images could not be extracted.', `pdfimages wrote an unexpected name: ${name.slice(0, 80)}`);
      await acceptEngineOutput(join(dir, name), job, 'pdfimages', { allowEmpty: true });
      const renamed = `page-${String(Number(m[1])).padStart(pageWidth, '0')}-image-${m[2]}.${m[3]}`;
      await rename(join(dir, name), join(dir, renamed));
      names.push(renamed);
    }
    if (!names.length) throw failedFinally('The PDF has no embedded images to extract.', 'pdfimages wrote nothing');
    await this.zip.pack(step, dir, names);
  }
}
