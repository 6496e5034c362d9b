/**
 * ImageMagick 6 for the raster formats libvips does not cover (BMP, ICO, the Netpbm family,
 * PSD and the long tail: DDS, FITS, Sun raster, SGI, XBM, XPM, PCX, TGA, JPEG 2000, HDR, …), always
 * as `/usr/bin/convert` (a `convert` earlier on some PATHs is not ImageMagick) and always
 * under our own default-deny policy.xml, passed with MAGICK_CONFIGURE_PATH.
 */
import { dirname } from 'node:path';
import { packageFile, probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const CONVERT = '/usr/bin/convert';
/** Formats sharp handles on both sides: ImageMagick is only their fallback. */
const COMMON = ['png', 'jpg', 'webp', 'gif', 'tiff'] as const;
/**
 * The long tail, read and written. Debian 12's ImageMagick 6.9.11 has no QOI coder and no
 * OpenEXR delegate, so neither is listed.
 */
const LONG_TAIL = [
  'bmp', 'ico', 'ppm', 'pgm', 'pbm', 'pam', 'pfm', 'psd', 'psb', 'dds', 'fits', 'ras', 'sgi', 'xbm', 'xpm', 'pcx', 'tga',
  'jp2', 'j2k', 'hdr', 'miff', 'wbmp', 'dpx', 'xwd', 'viff', 'mng', 'jng', 'vicar',
  // The older tail. Not here: MAT (Debian's mat.so fails to load: undefined GetMagickUTCTime),
  // PICON (an XPM by its bytes), ART (the extension is also AOL's ART), IPL and PCD (colours
  // or picture lost on the round trip), raw RGB/gray/YCbCr/UYVY/MONO (need an out-of-band size).
  'pict', 'otb', 'mtv', 'sixel', 'pgx', 'hrz', 'cin', 'dcx', 'cals', 'avs', 'g3', 'jbig', 'v', 'rgf',
] as const;
/**
 * Read only: ImageMagick 6 has no XCF, Utah RLE or MacPaint writer, writes a `.cur` as an icon
 * (type 1), and writes grey Palm bitmaps with the colour-table flag but no table (netpbm's
 * palmtopnm, like a Palm, refuses them).
 */
const READ_ONLY = ['xcf', 'cur', 'rle', 'mac', 'palm'] as const;
const READS = [...COMMON, ...LONG_TAIL, ...READ_ONLY];
const WRITES = [...COMMON, ...LONG_TAIL];
const EXOTIC = new Set<string>([...LONG_TAIL, ...READ_ONLY]);
/** ImageMagick coder names where they differ from our extension. */
const CODER: Readonly<Record<string, string>> = { jpg: 'jpeg', ras: 'sun', v: 'vips' };
/**
 * Targets that hold only a small picture: fit the image first (OTA and EV3 bitmaps store their
 * sides in one byte each; HRZ is always 256×240 and ImageMagick's writer scales to it itself).
 */
const MAX_SIDE: Readonly<Record<string, number>> = { ico: 256, otb: 255, rgf: 255 };
/** Targets without alpha where a transparent picture must be flattened on white. */
const FLATTEN = new Set([
  'jpg', 'jng', 'pcx', 'ppm', 'pgm', 'pbm', 'xbm', 'wbmp', 'fits', 'hdr', 'pfm', 'dpx', 'xwd', 'vicar', 'ras', 'viff',
  'pict', 'otb', 'mtv', 'sixel', 'pgx', 'hrz', 'cin', 'dcx', 'cals', 'g3', 'jbig', 'rgf',
]);
/** Bilevel targets. */
const MONOCHROME = new Set(['pbm', 'xbm', 'wbmp', 'otb', 'cals', 'g3', 'jbig', 'rgf']);

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
    return to === 'jpg' || to === 'webp' || to === 'jp2' || to === 'j2k';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [CONVERT], ['-version'], /ImageMagick (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    // Explicit coder prefixes: the bytes were detected, so never let ImageMagick guess again.
    const inCoder = CODER[step.from] ?? step.from;
    const outCoder = CODER[step.to] ?? step.to;
    // XCF is a layered document: merge its layers rather than take the first one.
    const args = step.from === 'xcf' ? [`${inCoder}:${step.input}`, '-background', 'none', '-layers', 'merge'] : [`${inCoder}:${step.input}[0]`];
    args.push('-auto-orient');
    const maxDim = step.options.preset?.maxDimension ?? MAX_SIDE[step.to];
    if (maxDim) args.push('-resize', `${maxDim}x${maxDim}>`);
    if (FLATTEN.has(step.to)) args.push('-background', 'white', '-flatten');
    if (MONOCHROME.has(step.to)) args.push('-monochrome');
    // OpenJPEG takes at most 31 bits per sample: float sources (PFM, HDR, FITS) go down to 16.
    if (step.to === 'jp2' || step.to === 'j2k') args.push('-depth', '16');
    // The PSD writer mishandles palette images (a GIF's): write true colour.
    if (step.to === 'psd' || step.to === 'psb') args.push('-type', 'TrueColorAlpha');
    // HRZ samples are 6 bits: ImageMagick rounds 252–255 up to 64, which reads back as 0 (white
    // turns black), so the range is compressed to 0–252 first.
    if (step.to === 'hrz') args.push('+level', '0,99%');
    if (step.to === 'jpg' || step.to === 'webp' || step.to === 'jp2' || step.to === 'j2k') args.push('-quality', String(step.quality));
    args.push('-strip', `${outCoder}:${step.output}`);
    await runStep(step, CONVERT, args, { env: { MAGICK_CONFIGURE_PATH: this.policyDir, MAGICK_THREAD_LIMIT: '1' }, readOnly: [this.policyDir] });
  }
}
