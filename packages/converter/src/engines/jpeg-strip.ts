/**
 * A JPEG copied without its EXIF and XMP (location, camera serial, the orientation tag) but
 * with its colour profile, by jpegtran, losslessly: the DCT coefficients are copied, never
 * decoded. Engines that embed or repack a JPEG as is (img2pdf, cjxl) use it so a photo's GPS
 * position does not travel on (issue 31; docs/decisions.md, "Photos are turned once").
 */
import { join } from 'node:path';
import { ConversionError } from '../errors.js';
import { runStep, type Step } from './engine.js';

const JPEGTRAN = '/usr/bin/jpegtran';

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
 * Writes `name` in the job folder: the step's JPEG without EXIF and XMP, its pixels turned
 * upright when `orientation` says they are not (the tag goes with the EXIF). A lossless turn
 * needs the picture's sides to be whole blocks (`-perfect`); when they are not, answers null
 * and the caller decodes the pixels instead.
 */
export async function stripJpeg(step: Step, orientation: number, name: string): Promise<string | null> {
  const out = join(step.job.dir, name);
  const turn = UPRIGHT[orientation] ?? [];
  try {
    await runStep(step, JPEGTRAN, ['-copy', 'icc', ...(turn.length ? ['-perfect', ...turn] : []), '-outfile', out, step.input]);
  } catch (e) {
    // jpegtran -perfect exits 1 when the sides are not whole blocks ("transformation is not perfect").
    if (turn.length && e instanceof ConversionError && e.code === 'conversion_failed') return null;
    throw e;
  }
  return out;
}
