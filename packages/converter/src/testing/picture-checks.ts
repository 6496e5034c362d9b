/**
 * How tests judge pictures and animation frames against a reference decoder's (issue 31):
 * both laid over white, then ffmpeg's SSIM, or PSNR for a flat reference. Used by tests only.
 */
import { psnr, ssim, tool } from './tools.js';

/** A picture laid over white (the yardstick for outputs without alpha), beside it as `…-white.png`. */
export function onWhite(path: string): string {
  const out = `${path}-white.png`;
  tool('/usr/bin/convert', [path, '-background', 'white', '-alpha', 'remove', '-alpha', 'off', out]);
  return out;
}

/**
 * How close a picture is to its reference, both over white: ffmpeg's SSIM ≥ `minSsim`, or for
 * a flat reference (one colour: libavif's test sequences are solid colour frames, where SSIM's
 * structure term is 0/0 and a one-level difference reads as 0.7) a PSNR ≥ 35 dB. Null when close.
 */
export function unlike(picture: string, reference: string, minSsim: number): string | null {
  const a = onWhite(picture);
  const b = onWhite(reference);
  if (Number(tool('/usr/bin/identify', ['-format', '%[fx:standard_deviation]', b])) < 0.01) {
    const db = psnr(a, b);
    return db >= 35 ? null : `PSNR ${db} dB against a flat reference`;
  }
  const s = ssim(a, b);
  return s >= minSsim ? null : `SSIM ${s}`;
}

/** The frames against the references, one by one; the problems found. */
export function compareFrames(label: string, frames: readonly string[], refs: readonly string[], minSsim: number): string[] {
  if (frames.length !== refs.length) return [`${label}: ${frames.length} frames, not ${refs.length}`];
  return frames.flatMap((f, i) => {
    const p = unlike(f, refs[i] as string, minSsim);
    return p ? [`${label} frame ${i}: ${p}`] : [];
  });
}

/** Whether every pixel is opaque (GIF's one-bit transparency cannot show a translucent frame). */
export function opaque(path: string): boolean {
  return Number(tool('/usr/bin/identify', ['-format', '%[fx:minima.a]', path])) === 1;
}
