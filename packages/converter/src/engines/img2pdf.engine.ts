/**
 * img2pdf for raster images to PDF: it embeds JPEG and PNG data as is (lossless, no
 * re-encoding) and runs outside ImageMagick, whose PDF coder stays denied by policy.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import sharp, { type Metadata } from 'sharp';
import { failed } from '../errors.js';
import { JPEGTRAN, stripJpeg } from './jpeg-strip.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const IMG2PDF = '/usr/bin/img2pdf';

/** The img2pdf engine. */
export class Img2PdfEngine implements Engine {
  readonly name = 'img2pdf';
  readonly reads = ['png', 'jpg', 'tiff', 'gif'] as const;
  readonly writes = ['pdf'] as const;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [IMG2PDF, '/usr/bin/python3', JPEGTRAN], ['--version'], /img2pdf (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    await embedPicture(step, step.input);
  }
}

/**
 * Writes `step.output`, a one-page PDF of `picture` (a PNG, JPEG, TIFF or GIF: the step's input,
 * or a picture another engine decoded it to, e.g. libheif's JPEG of a HEIC).
 */
export async function embedPicture(step: Step, picture: string): Promise<void> {
  const limit = { limitInputPixels: step.job.maxInputPixels };
  let input = picture;
  let meta: Metadata;
  try {
    meta = await sharp(picture, limit).metadata();
    // img2pdf refuses alpha channels (PDF images have none), more than 8 bits a sample
    // (PIL cannot keep them) and mirrored EXIF orientations (2, 4, 5, 7), and ignores a
    // TIFF's orientation (a photo tagged "Rotate 90 CW" came out on its side): such
    // pictures are re-encoded first, laid over white, at 8 bits, turned upright, so the page
    // shows the pixels as they are (no /Rotate, no EXIF embedded). Found by real files of
    // the corpus (issue 12): a 16-bit TIFF, a mirrored-orientation JPEG; issue 31.
    const deep = meta.depth !== undefined && meta.depth !== 'uchar' && meta.depth !== 'char';
    const turned = (meta.orientation ?? 1) !== 1;
    if (meta.hasAlpha || deep || turned) {
      input = join(step.job.dir, 'flattened.png');
      let img = sharp(picture, limit).rotate().flatten({ background: '#ffffff' });
      if (deep) img = img.toColourspace((meta.channels ?? 3) <= 2 ? 'b-w' : 'srgb');
      await img.png().toFile(input);
      meta = { ...(await sharp(input, limit).metadata()), density: meta.density };
    }
  } catch (e) {
    throw failed(`The ${step.from} image could not be read.`, `sharp: ${(e as Error).message}`);
  }
  let size = imageSize(meta);
  if (input === picture && meta.format === 'jpeg' && (meta.exif || meta.xmp)) {
    // img2pdf embeds a JPEG byte for byte, its EXIF and XMP (location, camera serial)
    // included (issue 31: an upright phone photo's GPS position was in the PDF). The copy
    // keeps the JFIF resolution; a resolution only the EXIF declared is given to img2pdf
    // as the page size, so the page keeps its size.
    const stripped = (await stripJpeg({ ...step, input: picture }, 1, join(step.job.dir, 'stripped.jpg'))) as string;
    if (!(await hasJfifDpi(stripped)) && meta.density && !size.length) size = pageSize(meta);
    input = stripped;
  }
  await runStep(step, IMG2PDF, ['--output', step.output, ...size, '--', input]);
}

/**
 * Whether a JPEG's JFIF header declares its resolution in dots per inch: the only JFIF
 * resolution img2pdf (PIL) takes; otherwise it takes the EXIF's, else 96 dpi.
 */
async function hasJfifDpi(path: string): Promise<boolean> {
  const head = Buffer.alloc(16);
  const fd = await open(path, 'r');
  try {
    await fd.read(head, 0, 16, 0);
  } finally {
    await fd.close();
  }
  // SOI, APP0 "JFIF\0", version, units (1: dots per inch), X density.
  return head.readUInt16BE(0) === 0xffd8 && head.readUInt16BE(2) === 0xffe0 && head.toString('latin1', 6, 11) === 'JFIF\0' && head[13] === 1 && head.readUInt16BE(14) > 0;
}

/** `--imgsize` for the page a picture makes at its declared resolution, within the PDF limits. */
export function pageSize(meta: Pick<Metadata, 'width' | 'height' | 'density'>): string[] {
  const out = imageSize(meta);
  if (out.length || !meta.width || !meta.height) return out;
  const dpi = meta.density && meta.density > 0 ? meta.density : 96;
  return ['--imgsize', `${((meta.width * 72) / dpi).toFixed(3)}ptx${((meta.height * 72) / dpi).toFixed(3)}pt`];
}

/** PDF page sides must lie within 3–14,400 pt (img2pdf checks). */
const MIN_PT = 3;
const MAX_PT = 14_400;

/**
 * `--imgsize` for a picture whose declared resolution would give a page outside the PDF
 * limits (a 5-pixel JPEG at 300 dpi is 1.2 pt wide); none when the resolution is fine.
 * img2pdf assumes 96 dpi where the file declares none.
 */
export function imageSize(meta: Pick<Metadata, 'width' | 'height' | 'density'>): string[] {
  const { width, height } = meta;
  if (!width || !height) return [];
  const dpi = meta.density && meta.density > 0 ? meta.density : 96;
  const w = (width * 72) / dpi;
  const h = (height * 72) / dpi;
  let scale = 1;
  if (Math.min(w, h) < MIN_PT) scale = MIN_PT / Math.min(w, h);
  else if (Math.max(w, h) > MAX_PT) scale = MAX_PT / Math.max(w, h);
  if (scale === 1) return [];
  const side = (v: number): string => `${Math.min(MAX_PT, Math.max(MIN_PT, v * scale)).toFixed(3)}pt`;
  return ['--imgsize', `${side(w)}x${side(h)}`];
}

