/**
 * ImageMagick 6 for the raster formats libvips does not cover (BMP, ICO, PPM, PSD), always
 * as `/usr/bin/convert` (a `convert` earlier on some PATHs is not ImageMagick) and always
 * under our own default-deny policy.xml, passed with MAGICK_CONFIGURE_PATH.
 */
import { dirname } from 'node:path';
import { packageFile, probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const CONVERT = '/usr/bin/convert';
const READS = ['png', 'jpg', 'webp', 'gif', 'tiff', 'bmp', 'ico', 'ppm', 'pgm', 'pbm', 'psd'] as const;
const WRITES = ['png', 'jpg', 'webp', 'gif', 'tiff', 'bmp', 'ico', 'ppm', 'pgm', 'pbm'] as const;
/** Formats sharp handles on both sides: ImageMagick is only their fallback. */
const EXOTIC = new Set(['bmp', 'ico', 'ppm', 'pgm', 'pbm', 'psd']);

/** The ImageMagick engine. */
export class ImageMagickEngine implements Engine {
  readonly name = 'imagemagick';
  readonly reads = READS;
  readonly writes = WRITES;
  private readonly policyDir = dirname(packageFile('imagemagick/policy.xml'));

  supports(from: string, to: string): boolean {
    return from !== to && (EXOTIC.has(from) || EXOTIC.has(to));
  }

  tradesQualityForSize(to: string): boolean {
    return to === 'jpg' || to === 'webp';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [CONVERT], ['-version'], /ImageMagick (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    // Explicit coder prefixes: the bytes were detected, so never let ImageMagick guess again.
    const inCoder = step.from === 'jpg' ? 'jpeg' : step.from;
    const outCoder = step.to === 'jpg' ? 'jpeg' : step.to;
    const args = [`${inCoder}:${step.input}[0]`, '-auto-orient'];
    const maxDim = step.options.preset?.maxDimension ?? (step.to === 'ico' ? 256 : undefined);
    if (maxDim) args.push('-resize', `${maxDim}x${maxDim}>`);
    if (step.to === 'jpg') args.push('-background', 'white', '-flatten');
    if (step.to === 'jpg' || step.to === 'webp') args.push('-quality', String(step.quality));
    args.push('-strip', `${outCoder}:${step.output}`);
    await runStep(step, CONVERT, args, { env: { MAGICK_CONFIGURE_PATH: this.policyDir, MAGICK_THREAD_LIMIT: '1' }, readOnly: [this.policyDir] });
  }
}
