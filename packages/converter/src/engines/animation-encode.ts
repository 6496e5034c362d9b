/**
 * The APNG and AVIF animation encoders (issue 31), each a well-kept tool run in the sandbox
 * over the frames (full-canvas PNG files of one size, animation.ts):
 *
 * - APNG: APNG Assembler (Debian's `apngasm` 2.91) takes each frame's delay as a fraction
 *   from a `.txt` file beside it, so every fcTL says the source's delay exactly in ms, and
 *   the play count with `-l`. (ffmpeg 5.1's APNG muxer was tried first: through the concat
 *   demuxer its delays come out on a 1/25 s grid, 500 ms as 520.) A delay of 0 ms is written
 *   as 1 ms: apngasm makes a 0 numerator 1.
 * - AVIF: libavif's `avifenc` 0.11 writes an image sequence from several inputs, each with
 *   its `--duration` in a 1000-per-second `--timescale`, so each frame's time is exact in ms.
 *   It has no loop count (libavif 1.0 adds `--repetition-count`): a sequence plays forever,
 *   as viewers play one without an edit list.
 */
import { writeFile } from 'node:fs/promises';
import { failed } from '../errors.js';
import type { Frames } from './animation.js';
import { runStep, type Step } from './engine.js';

const APNGASM = '/usr/bin/apngasm';
const AVIFENC = '/usr/bin/avifenc';
/** fcTL's delay_num is 16 bits; in ms over a denominator of 1000. */
const MAX_APNG_DELAY_MS = 65_535;
/**
 * avifenc's speed with libaom (its default). The quicker speeds fail on sequences with
 * avifenc 0.11.1 and libaom 3.6.0 (Debian 12): 7 crashes (a segmentation fault) on two
 * frames or more, 8–10 abort on a rate-control assertion ("rc_pick_q_and_bounds_no_stats_cbr")
 * on a 20-frame APNG; stills are fine at all of them. Speed 6 encodes those 20 frames of
 * 100×100 in 0.4 s.
 */
const AVIF_SPEED = '6';

/** Writes `step.output`, an APNG of the frames with their delays and play count (apngasm). */
export async function writeApng(step: Step, frames: Frames): Promise<void> {
  const first = frames.files[0];
  if (!first) throw failed(`The ${step.from} animation has no frame to convert.`);
  // apngasm reads `f-00002.png`, `f-00003.png`, … after the first, and `f-0000n.txt` beside each.
  for (const [i, file] of frames.files.entries()) {
    const ms = Math.min(MAX_APNG_DELAY_MS, Math.max(0, Math.round(frames.delaysMs[i] ?? 100)));
    await writeFile(file.replace(/\.png$/, '.txt'), `delay=${ms}/1000\n`);
  }
  // -z0: zlib compression (its 7-Zip default is several times slower for a few percent).
  await runStep(step, APNGASM, [step.output, first, `-l${Math.max(0, Math.floor(frames.loop))}`, '-z0'], { maxStdoutBytes: 16 * 1024 * 1024 });
}

/**
 * The avifenc quantizer for a quality of 1–100, as libavif 1.0 maps its `--qcolor`
 * (0 is lossless, 63 the coarsest).
 */
export function avifQuantizer(quality: number): number {
  const q = Math.min(100, Math.max(0, Math.round(quality)));
  return Math.floor(((100 - q) * 63 + 50) / 100);
}

/** Writes `step.output`, an AVIF image sequence of the frames with their durations (avifenc). */
export async function writeAvifSequence(step: Step, frames: Frames): Promise<void> {
  const quality = step.quality >= 100 ? ['--lossless'] : ['--min', String(avifQuantizer(step.quality)), '--max', String(avifQuantizer(step.quality))];
  const inputs = frames.files.flatMap((file, i) => ['--duration', String(Math.max(1, Math.round(frames.delaysMs[i] ?? 100))), file]);
  await runStep(step, AVIFENC, ['-j', '1', '-s', AVIF_SPEED, ...quality, '--timescale', '1000', '--ignore-exif', '--ignore-xmp', ...inputs, '-o', step.output], {
    maxStdoutBytes: 16 * 1024 * 1024,
  });
}
