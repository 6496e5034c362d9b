/**
 * A JPEG copied without its EXIF and XMP (location, camera serial, the orientation tag) but
 * with its colour profile, losslessly: the compressed data is copied, never decoded. Engines
 * that embed or repack a JPEG as is (img2pdf, cjxl) or that wrote one with the source's EXIF
 * (heif-convert) use it so a photo's GPS position does not travel on (issue 31;
 * docs/decisions.md, "Photos are turned once").
 *
 * A JPEG that needs no turn is copied segment by segment in process (`withoutMetadata`): the
 * same segments jpegtran `-copy icc` keeps, in a few milliseconds where jpegtran re-codes the
 * scan and a sandboxed process costs 80 ms on a 12 MP photo (bench:photos). A turn, or a
 * file whose structure the walk does not follow, goes to jpegtran.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { ConversionError } from '../errors.js';
import { runStep, type Step } from './engine.js';

/** libjpeg-turbo's lossless JPEG transformer (scripts/system-packages/converter.txt). */
export const JPEGTRAN = '/usr/bin/jpegtran';
/** Larger JPEGs go to jpegtran rather than into the service's memory. */
const MAX_IN_PROCESS_BYTES = 64 * 1024 ** 2;

/** jpegtran's transform that turns a picture tagged with an EXIF orientation upright. */
const UPRIGHT: Readonly<Record<number, readonly string[]>> = {
  2: ['-flip', 'horizontal'],
  3: ['-rotate', '180'],
  4: ['-flip', 'vertical'],
  5: ['-transpose'],
  6: ['-rotate', '90'],
  7: ['-transverse'],
  8: ['-rotate', '270'],
};

/**
 * Writes `out`: the step's JPEG without EXIF and XMP, its pixels turned upright when
 * `orientation` says they are not (the tag goes with the EXIF). A lossless turn needs the
 * picture's sides to be whole blocks (`-perfect`); when they are not, answers null and the
 * caller decodes the pixels instead.
 */
export async function stripJpeg(step: Step, orientation: number, out: string): Promise<string | null> {
  const turn = UPRIGHT[orientation] ?? [];
  if (!turn.length && (await stat(step.input)).size <= MAX_IN_PROCESS_BYTES) {
    const copy = withoutMetadata(await readFile(step.input));
    if (copy) {
      await writeFile(out, copy);
      return out;
    }
  }
  try {
    await runStep(step, JPEGTRAN, ['-copy', 'icc', ...(turn.length ? ['-perfect', ...turn] : []), '-outfile', out, step.input]);
  } catch (e) {
    // jpegtran -perfect exits 1 when the sides are not whole blocks ("transformation is not perfect").
    if (turn.length && e instanceof ConversionError && e.code === 'conversion_failed') return null;
    throw e;
  }
  return out;
}

/**
 * Whether a segment stays: every segment that is not an application or comment segment, and
 * of those only the JFIF header (APP0), the ICC profile (APP2 `ICC_PROFILE`) and Adobe's colour
 * transform (APP14), as jpegtran `-copy icc` keeps them. EXIF and XMP (APP1), MPF and FlashPix
 * (APP2), IPTC (APP13), JFXX thumbnails and comments go.
 */
function keeps(marker: number, payload: Buffer): boolean {
  const starts = (tag: string): boolean => payload.toString('latin1', 0, tag.length) === tag;
  if (marker === 0xfe) return false;
  if (marker < 0xe0 || marker > 0xef) return true;
  return (marker === 0xe0 && starts('JFIF\0')) || (marker === 0xe2 && starts('ICC_PROFILE\0')) || (marker === 0xee && starts('Adobe'));
}

/**
 * The JPEG `jpeg` without its metadata segments (see `keeps`), every other byte as it was, up
 * to its end of image (data after it, such as a gain map, goes, as jpegtran drops it). Null
 * when the bytes do not walk as a JPEG — no start of image, a segment running past the end, no
 * end of image: the caller then leaves the file to jpegtran.
 */
export function withoutMetadata(jpeg: Buffer): Buffer | null {
  if (jpeg.length < 4 || jpeg.readUInt16BE(0) !== 0xffd8) return null;
  const parts: Buffer[] = [jpeg.subarray(0, 2)];
  let at = 2;
  while (at + 1 < jpeg.length) {
    if (jpeg[at] !== 0xff) return null;
    const marker = jpeg[at + 1] as number;
    if (marker === 0xff) {
      at += 1; // a fill byte
      continue;
    }
    if (marker === 0xd9) {
      parts.push(jpeg.subarray(at, at + 2));
      return Buffer.concat(parts);
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) return null; // no standalone marker belongs here
    if (at + 4 > jpeg.length) return null;
    const end = at + 2 + jpeg.readUInt16BE(at + 2);
    if (end < at + 4 || end > jpeg.length) return null;
    if (keeps(marker, jpeg.subarray(at + 4, end))) parts.push(jpeg.subarray(at, end));
    at = end;
    if (marker === 0xda) {
      // A scan's entropy-coded data runs to the next marker: an 0xFF followed by neither a
      // stuffed 0x00, a restart marker nor another 0xFF.
      const data = at;
      for (;;) {
        at = jpeg.indexOf(0xff, at);
        if (at < 0 || at + 1 >= jpeg.length) return null;
        const next = jpeg[at + 1] as number;
        if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) at += 2;
        else if (next === 0xff) at += 1;
        else break;
      }
      parts.push(jpeg.subarray(data, at));
    }
  }
  return null;
}
