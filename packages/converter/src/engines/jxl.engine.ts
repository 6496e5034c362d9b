/**
 * libjxl's reference tools: `cjxl` writes JPEG XL from PNG, JPEG (recompressed losslessly),
 * GIF, PPM or PGM; `djxl` reads it to PNG, JPEG, PPM or PGM, and (through sharp, apngasm or
 * avifenc) GIF, WebP, APNG and AVIF, animated when the JPEG XL is (animation.ts). One thread each.
 *
 * djxl turns the pixels by the codestream's orientation but copies the file's Exif box as is:
 * into a JPEG as a malformed APP1 segment (exiftool: "Malformed APP1 EXIF segment"), into a PNG
 * as a raw-profile chunk that still says the old orientation. PNG and JPEG targets are decoded
 * to a PNG in the job's folder and written by sharp from those pixels, without the EXIF
 * (sharpEncode; docs/decisions.md, "Photos are turned once").
 */
import { join } from 'node:path';
import sharp, { type Metadata } from 'sharp';
import { failed } from '../errors.js';
import { ANIMATED_TARGETS, apngFrames, stillFrame, writeAnimation } from './animation.js';
import { stripJpeg } from './jpeg-strip.js';
import { probeBinaries, runStep, sandboxFolder, type Engine, type EngineProbe, type Step } from './engine.js';
import { sharpEncode } from './sharp.engine.js';

const CJXL = '/usr/bin/cjxl';
const DJXL = '/usr/bin/djxl';
const ENCODE_FROM = new Set(['png', 'jpg', 'gif', 'ppm', 'pgm']);
const DECODE_TO = new Set(['png', 'jpg', 'ppm', 'pgm', 'gif', 'webp', 'apng', 'avif']);

/**
 * What cjxl reads. cjxl keeps a JPEG's EXIF and XMP (brotli-compressed, where exiftool does
 * not look) and its reconstruction data would bring them back: a JPEG carrying them is first
 * copied without them, turned upright losslessly (issue 31: an upright phone photo's GPS
 * position was in the JPEG XL). A JPEG whose sides are not whole blocks and that is not
 * upright is decoded upright to PNG instead (cjxl then encodes pixels, not the JPEG).
 */
async function encoderInput(step: Step): Promise<string> {
  if (step.from !== 'jpg') return step.input;
  let meta: Metadata;
  try {
    meta = await sharp(step.input, { limitInputPixels: step.job.maxInputPixels }).metadata();
  } catch (e) {
    throw failed('The jpg image could not be read.', `sharp: ${(e as Error).message}`);
  }
  if (!meta.exif && !meta.xmp) return step.input;
  const stripped = await stripJpeg(step, meta.orientation ?? 1, join(step.job.dir, 'stripped.jpg'));
  if (stripped) return stripped;
  const upright = join(step.job.dir, 'upright.png');
  try {
    await sharp(step.input, { limitInputPixels: step.job.maxInputPixels }).rotate().png().toFile(upright);
  } catch (e) {
    throw failed('The jpg image could not be read.', `sharp: ${(e as Error).message}`);
  }
  return upright;
}

/** The libjxl engine. */
export class JxlEngine implements Engine {
  readonly name = 'libjxl';
  readonly reads = ['jxl', ...ENCODE_FROM];
  readonly writes = ['jxl', ...DECODE_TO];

  supports(from: string, to: string): boolean {
    return (from === 'jxl' && DECODE_TO.has(to)) || (to === 'jxl' && ENCODE_FROM.has(from));
  }

  tradesQualityForSize(to: string): boolean {
    return to === 'jxl' || to === 'jpg' || to === 'avif';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [CJXL, DJXL], ['--version'], /v(\d+\.\d+\.\d+)/);
  }

  async convert(step: Step): Promise<void> {
    if (step.to === 'jxl') {
      // A JPEG is repacked losslessly unless a quality was asked for.
      const lossless = step.from === 'jpg' && !step.qualityRequested;
      const args = lossless ? [] : ['-q', String(step.qualityRequested ? step.quality : 90)];
      await runStep(step, CJXL, [...args, '--num_threads=1', await encoderInput(step), step.output]);
      return;
    }
    // 8 bits a sample: djxl 0.7 refuses to write a 16-bit picture with alpha ("Alpha bit depth does not match").
    const pixels = step.to === 'png' || step.to === 'jpg' || ANIMATED_TARGETS.has(step.to);
    const decoded = pixels ? join(step.job.dir, 'jxl-decoded.png') : step.output;
    await runStep(step, DJXL, ['--num_threads=1', '--bits_per_sample=8', step.input, decoded]);
    if (!pixels) return;
    // An animation comes out of djxl as an APNG: to GIF, WebP, APNG and AVIF it stays one (issue
    // 31); to anything else sharp reads its first frame, as it reads every animated source for a still.
    const animated = ANIMATED_TARGETS.has(step.to);
    // A still of another frame than the first (`frame`) takes the animation apart too.
    const frames = animated || (step.options.frame ?? 1) > 1 ? await apngFrames(step, decoded, await sandboxFolder(step.job, 'jxl-frames')) : null;
    if (frames && animated) {
      await writeAnimation(step, frames);
      return;
    }
    let picture = decoded;
    if (frames) picture = frames.files[stillFrame(step, frames.files.length)] as string;
    // A picture that is not animated has a first frame only.
    else if (step.options.frame !== undefined) stillFrame(step, 1);
    await sharpEncode(step, picture, { autoOrient: false });
  }
}
