/**
 * libvips through sharp, in process, for the common raster formats. sharp's npm package
 * ships a prebuilt libvips (LGPL-3.0, dynamically linked) from the npm registry; it runs in
 * the service's own process, so it is bounded by `limitInputPixels` and sharp's own time-out
 * instead of the exec sandbox (and cannot be cancelled once started).
 */
import { access, constants } from 'node:fs/promises';
import sharp from 'sharp';
import { failed } from '../errors.js';
import { ANIMATED_TARGETS, apngFrames, avifSequenceFrames, isAvifSequence, pagedFrames, stillFrame, writeAnimation } from './animation.js';
import { sandboxFolder, type Engine, type EngineProbe, type Step } from './engine.js';

const IO = ['png', 'jpg', 'webp', 'gif', 'tiff', 'avif', 'apng'] as const;
/** The tools animated AVIF and APNG sources and targets run (animation.ts, animation-encode.ts). */
const ANIMATION_TOOLS = ['/usr/bin/ffmpeg', '/usr/bin/avifdec', '/usr/bin/avifenc', '/usr/bin/apngasm'];
/** The animations libvips reads frame by frame (as pages) and writes. */
const PAGED = new Set(['gif', 'webp']);
// One libvips worker thread per image: the machine is shared and small.
sharp.concurrency(1);
sharp.cache(false);

/** The sharp (libvips) engine. */
export class SharpEngine implements Engine {
  readonly name = 'sharp';
  readonly reads = IO;
  readonly writes = IO;

  tradesQualityForSize(to: string): boolean {
    return to !== 'tiff' && to !== 'gif' && to !== 'apng';
  }

  /**
   * sharp is in process; the animation tools it leans on (ffmpeg, avifdec, avifenc, apngasm)
   * are not needed for stills, so a missing one is a warning, not a disabled engine.
   */
  async probe(): Promise<EngineProbe> {
    const version = `sharp ${sharp.versions.sharp ?? '?'}, libvips ${sharp.versions.vips}`;
    const missing: string[] = [];
    for (const bin of ANIMATION_TOOLS) await access(bin, constants.X_OK).catch(() => missing.push(bin));
    return { engine: this.name, available: true, version, missing: [], requires: ['npm:sharp', ...ANIMATION_TOOLS], ...(missing.length ? { warning: `sharp: animations need ${missing.join(', ')} (missing)` } : {}) };
  }

  /**
   * An AVIF image sequence (animated AVIF) is not libvips's to read (libheif reads the still
   * items only): its frames come from ffmpeg (animation.ts) and the run is recorded as
   * `ffmpeg+sharp`. An APNG neither (libvips reads its default image only, which may not even
   * be a frame of the animation): ffmpeg composes its frames. To an animated target (gif,
   * webp, apng, avif) an animation stays one; to any other target it is its first frame, or
   * the one `frame` picks.
   */
  async convert(step: Step): Promise<string | undefined> {
    const animated = ANIMATED_TARGETS.has(step.to);
    if (step.from === 'avif' && (await isAvifSequence(step.input))) {
      const frames = await avifSequenceFrames(step, await sandboxFolder(step.job, 'avif-frames'), !animated);
      if (animated) await writeAnimation(step, frames);
      else await sharpEncode(step, frames.files.at(-1) as string, { autoOrient: false });
      return 'ffmpeg+sharp';
    }
    if (step.from === 'apng') {
      const frames = await apngFrames(step, step.input, await sandboxFolder(step.job, 'apng-frames'), !animated);
      if (frames && animated) await writeAnimation(step, frames);
      else if (frames) await sharpEncode(step, frames.files.at(-1) as string, { autoOrient: false });
      // A PNG named an APNG that has no animation control: its one picture.
      else {
        if (step.options.frame !== undefined) stillFrame(step, 1);
        await sharpEncode(step, step.input, { autoOrient: true });
      }
      return undefined;
    }
    // An animated GIF or WebP to an APNG or an animated AVIF: libvips writes neither animation.
    if (PAGED.has(step.from) && (step.to === 'apng' || step.to === 'avif')) {
      const frames = await pagedFrames(step, await sandboxFolder(step.job, `${step.from}-frames`));
      if (frames) {
        await writeAnimation(step, frames);
        return undefined;
      }
    }
    // A still AVIF has a first frame only.
    if (step.from === 'avif' && step.options.frame !== undefined) stillFrame(step, 1);
    await sharpEncode(step, step.input, { autoOrient: true });
    return undefined;
  }
}

/** The page of a GIF or WebP that `frame` picks, after checking it has that many. */
async function framePage(step: Step, input: string): Promise<number> {
  let pages: number;
  try {
    pages = (await sharp(input, { limitInputPixels: step.job.maxInputPixels }).metadata()).pages ?? 1;
  } catch (e) {
    throw failed(`The ${step.from} image could not be read.`, `sharp: ${(e as Error).message}`);
  }
  return stillFrame(step, pages);
}

/**
 * Writes `step.output` (png, jpg, webp, avif, gif, tiff, or a still apng: a PNG) from `input` with sharp. The
 * output carries no EXIF or XMP: the picture is upright (`autoOrient` turns it by its EXIF
 * orientation; without it the pixels are taken as they are, already turned by a decoder) and
 * its colours are converted to sRGB, so no orientation tag, location or camera data is
 * carried over (docs/decisions.md, "Photos are turned once").
 */
export async function sharpEncode(step: Step, input: string, opts: { autoOrient: boolean }): Promise<void> {
  const maxDim = step.options.preset?.maxDimension;
  // An animated GIF or WebP to GIF or WebP keeps every frame, its delay and its loop count (issue 31).
  const animated = PAGED.has(step.from) && PAGED.has(step.to);
  // A still of an animated GIF or WebP: its first frame, or the one `frame` picks (issue 31).
  const page = !animated && PAGED.has(step.from) && step.options.frame !== undefined ? await framePage(step, input) : 0;
  let img = sharp(input, { limitInputPixels: step.job.maxInputPixels, failOn: 'error', animated, page });
  if (opts.autoOrient) img = img.rotate();
  if (maxDim) img = img.resize({ width: maxDim, height: maxDim, fit: 'inside', withoutEnlargement: true });
  const q = step.quality;
  switch (step.to) {
    // A still picture to APNG: a PNG of one frame (every viewer shows it; an acTL would add nothing).
    case 'png':
    case 'apng':
      img = step.qualityRequested && q < 100 ? img.png({ palette: true, quality: q, compressionLevel: 9 }) : img.png({ compressionLevel: 9 });
      break;
    case 'jpg':
      img = img.flatten({ background: '#ffffff' }).jpeg({ quality: q, mozjpeg: true });
      break;
    case 'webp':
      // A GIF (a palette picture or animation) becomes a lossless WebP unless a quality is asked
      // for, as libwebp's gif2webp does: exact, and smaller than the GIF as a rule.
      img = img.webp(q >= 100 || (step.from === 'gif' && !step.qualityRequested) ? { lossless: true } : { quality: q });
      break;
    case 'avif':
      img = img.avif(q >= 100 ? { lossless: true } : { quality: q, effort: 2 });
      break;
    case 'gif':
      img = img.gif();
      break;
    case 'tiff':
      img = img.tiff({ compression: 'lzw' });
      break;
    default:
      throw failed(`sharp cannot write ${step.to}.`);
  }
  if (step.job.signal?.aborted) throw failed('The conversion was cancelled.', 'aborted');
  try {
    // sharp's own time-out stops libvips (a Promise.race would leave it running).
    await img.timeout({ seconds: Math.max(1, Math.ceil(step.job.timeoutMs / 1000)) }).toFile(step.output);
  } catch (e) {
    throw failed(`The ${step.from} image could not be converted to ${step.to}.`, `sharp: ${(e as Error).message}`);
  }
}
