/**
 * libheif's tools: `heif-convert` reads HEIF/HEIC (the primary image) to PNG or JPEG, and to
 * a PDF page through its JPEG; `heif-enc` writes HEIC from PNG or JPEG. Other raster formats go
 * through PNG (registry chains).
 *
 * heif-convert turns the pixels by the file's own transforms (irot/imir), as HEIF demands, but
 * copies the source's EXIF as is, Orientation tag and GPS location included: an iPhone
 * portrait photo came out turned and still tagged "Rotate 90 CW", so viewers turned it twice.
 * To JPEG it encodes, then the EXIF and XMP are dropped losslessly (stripJpeg, keeping the
 * colour profile); to anything else it decodes to a PNG in the job's folder, and sharp writes the
 * target from those pixels as they are, without the EXIF (sharpEncode). A JPEG to encode is made upright first for the
 * same reason: heif-enc copies its EXIF but writes no irot.
 */
import { access, open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import sharp from 'sharp';
import { failed } from '../errors.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';
import { embedPicture } from './img2pdf.engine.js';
import { JPEGTRAN, stripJpeg } from './jpeg-strip.js';
import { sharpEncode } from './sharp.engine.js';

const HEIF_CONVERT = '/usr/bin/heif-convert';
const HEIF_ENC = '/usr/bin/heif-enc';
const HEIF_INFO = '/usr/bin/heif-info';
/** A HEIC's PDF page is made by img2pdf (embedPicture), as every other photo's. */
const IMG2PDF = '/usr/bin/img2pdf';

/** The libheif engine. */
export class HeifEngine implements Engine {
  readonly name = 'libheif';
  readonly reads = ['heic', 'png', 'jpg'] as const;
  readonly writes = ['heic', 'png', 'jpg', 'pdf'] as const;

  supports(from: string, to: string): boolean {
    return (from === 'heic' && (to === 'png' || to === 'jpg' || to === 'pdf')) || ((from === 'png' || from === 'jpg') && to === 'heic');
  }

  tradesQualityForSize(to: string): boolean {
    return to === 'heic' || to === 'jpg';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [HEIF_ENC, HEIF_CONVERT, HEIF_INFO, JPEGTRAN, IMG2PDF], ['--version'], /libheif version: (\S+)/);
  }

  async convert(step: Step): Promise<string | undefined> {
    if (step.to === 'heic') {
      const args = step.quality >= 100 ? ['-L'] : ['-q', String(step.quality)];
      await runStep(step, HEIF_ENC, [...args, '-o', step.output, await encoderInput(step)]);
      return undefined;
    }
    if (step.to === 'pdf') {
      // A photo's page embeds a JPEG (img2pdf copies it as is), at the PDF's quality: a
      // camera's 10-bit HEIF took a minute through a 16-bit PNG (heif-convert compresses 24
      // megapixels of 16-bit samples, then img2pdf needs them at 8 bits) and made a PDF ten
      // times the size; its JPEG takes seconds (issue 31). A picture with alpha goes through
      // a PNG, which img2pdf's step lays over white.
      const picture = (await primaryInfo(step)).alpha ? await this.decodedPng(step) : await this.uprightJpeg(step, join(step.job.dir, 'heif-page.jpg'));
      await embedPicture(step, picture);
      return undefined;
    }
    if (step.to === 'jpg' && !(await primaryInfo(step)).alpha) {
      // Not for a picture with an alpha plane: heif-convert drops the plane and shows what
      // lies under the transparent pixels; sharp lays the PNG over white, as every other
      // picture with alpha becomes a JPEG.
      await this.uprightJpeg(step, step.output);
      return undefined;
    }
    await sharpEncode(step, await this.decodedPng(step), { autoOrient: false });
    return undefined;
  }

  /**
   * The fast way to a JPEG: heif-convert encodes it (pixels turned, colour profile kept),
   * then it is copied losslessly without its EXIF and XMP (orientation, location) but with the
   * ICC profile (stripJpeg). A PNG round trip costs ten times as long on a 12 MP photo.
   */
  private async uprightJpeg(step: Step, output: string): Promise<string> {
    const encoded = join(step.job.dir, 'heif-decoded.jpg');
    await decodePrimary(step, ['-q', String(Math.min(step.quality, 100))], encoded);
    // Upright already: heif-convert turned the pixels, and only its EXIF says otherwise.
    return (await stripJpeg({ ...step, input: encoded }, 1, output)) as string;
  }

  /** The primary picture as heif-convert decodes it to PNG (at 16 bits a sample for a deeper source). */
  private async decodedPng(step: Step): Promise<string> {
    const decoded = join(step.job.dir, 'heif-decoded.png');
    await decodePrimary(step, [], decoded);
    return decoded;
  }
}

/**
 * heif-convert writes a file holding several top-level images — a burst, an image sequence's
 * stills, an Apple spatial (stereo) photo's two eyes — as `name-1.png`, `name-2.png`, … and
 * never `name.png` (issue 31: such photos came back "The conversion produced no output.").
 * The primary image is the one a viewer shows: heif-info names it in the same order, and its
 * file becomes `output`; the others are deleted.
 */
async function decodePrimary(step: Step, args: readonly string[], output: string): Promise<void> {
  await runStep(step, HEIF_CONVERT, [...args, step.input, output]);
  if (await exists(output)) return;
  const dot = output.lastIndexOf('.');
  const stem = basename(output.slice(0, dot));
  const ext = output.slice(dot);
  const numbered = (await readdir(dirname(output))).filter((n) => n.startsWith(`${stem}-`) && n.endsWith(ext) && /^\d+$/.test(n.slice(stem.length + 1, -ext.length)));
  if (!numbered.length) return;
  const { images, primary } = await primaryInfo(step);
  const chosen = `${stem}-${primary + 1}${ext}`;
  if (primary < 0 || images !== numbered.length || !numbered.includes(chosen)) {
    throw failed(`The ${step.from} file could not be converted to ${step.to}.`, `heif-convert wrote ${numbered.length} images; heif-info lists ${images}, primary #${primary + 1}`);
  }
  await rename(join(dirname(output), chosen), output);
  await Promise.all(numbered.filter((n) => n !== chosen).map((n) => rm(join(dirname(output), n), { force: true })));
}

/**
 * How many top-level images the file holds, which one is the primary (0-based, in libheif's
 * order, which is heif-convert's; -1 when none is marked) and whether it has an alpha plane.
 * libheif's reading of the header through sharp, in process, as sharp reads every AVIF: 1–4 ms.
 * heif-info decodes the picture to list it: 0.36 s of the 0.95 s a 12 MP iPhone photo took to
 * JPEG through the API (npm run bench:photos). heif-info remains for a file sharp's libheif
 * cannot read.
 */
async function primaryInfo(step: Step): Promise<{ images: number; primary: number; alpha: boolean }> {
  try {
    const m = await sharp(step.input, { limitInputPixels: step.job.maxInputPixels }).metadata();
    if (m.format === 'heif' && m.pages && m.pages > 0 && m.pagePrimary !== undefined && m.pagePrimary < m.pages) {
      return { images: m.pages, primary: m.pagePrimary, alpha: m.hasAlpha === true };
    }
  } catch {
    // heif-info below
  }
  const info = await runStep(step, HEIF_INFO, [step.input], { maxStdoutBytes: 1024 * 1024 });
  // Each top-level image starts at column 0 ("image: …"); its facts follow, indented.
  const blocks = info.stdout.toString('utf8').split(/^(?=image: )/m).filter((b) => b.startsWith('image: '));
  const primary = blocks.findIndex((b) => /^image: \d+x\d+ \(id=\d+\), primary$/m.test(b));
  const facts = blocks[primary < 0 ? 0 : primary] ?? '';
  return { images: blocks.length, primary, alpha: /^\s+alpha channel: yes/m.test(facts) };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}

/**
 * heif-enc (libheif 1.15) aborts on PNGs of fewer than 8 bits a sample ("Assertion
 * `bit_depth>8' failed"): a 1-bit BMP of issue 12's corpus went through such a PNG. Those
 * are re-encoded at 8 bits first. A JPEG is re-encoded upright to PNG (lossless) first:
 * heif-enc would copy its EXIF (orientation, location) and leave the pixels unturned. Any
 * other input is passed as is.
 */
async function encoderInput(step: Step): Promise<string> {
  if (step.from === 'jpg') {
    const out = join(step.job.dir, 'upright.png');
    try {
      await sharp(step.input, { limitInputPixels: step.job.maxInputPixels, failOn: 'error' }).rotate().png().toFile(out);
    } catch (e) {
      throw failed('The jpg image could not be read.', `sharp: ${(e as Error).message}`);
    }
    return out;
  }
  if (step.from !== 'png') return step.input;
  const head = Buffer.alloc(25);
  const fh = await open(step.input, 'r');
  try {
    await fh.read(head, 0, 25, 0);
  } finally {
    await fh.close();
  }
  // IHDR's bit depth is byte 24 of a PNG file.
  if ((head[24] ?? 8) >= 8) return step.input;
  const out = join(step.job.dir, 'eight-bit.png');
  try {
    await sharp(step.input, { limitInputPixels: step.job.maxInputPixels }).png({ palette: false }).toFile(out);
  } catch (e) {
    throw failed('The png image could not be read.', `sharp: ${(e as Error).message}`);
  }
  return out;
}
