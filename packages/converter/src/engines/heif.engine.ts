/**
 * libheif's tools: `heif-convert` reads HEIF/HEIC (the primary image) to PNG or JPEG;
 * `heif-enc` writes HEIC from PNG or JPEG. Other raster formats go through PNG (registry chains).
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { failed } from '../errors.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const HEIF_CONVERT = '/usr/bin/heif-convert';
const HEIF_ENC = '/usr/bin/heif-enc';

/** The libheif engine. */
export class HeifEngine implements Engine {
  readonly name = 'libheif';
  readonly reads = ['heic', 'png', 'jpg'] as const;
  readonly writes = ['heic', 'png', 'jpg'] as const;

  supports(from: string, to: string): boolean {
    return (from === 'heic' && (to === 'png' || to === 'jpg')) || ((from === 'png' || from === 'jpg') && to === 'heic');
  }

  tradesQualityForSize(to: string): boolean {
    return to === 'heic' || to === 'jpg';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [HEIF_ENC, HEIF_CONVERT], ['--version'], /libheif version: (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    if (step.to === 'heic') {
      const args = step.quality >= 100 ? ['-L'] : ['-q', String(step.quality)];
      await runStep(step, HEIF_ENC, [...args, '-o', step.output, await eightBitInput(step)]);
      return;
    }
    await runStep(step, HEIF_CONVERT, [...(step.to === 'jpg' ? ['-q', String(step.quality)] : []), step.input, step.output]);
  }
}

/**
 * heif-enc (libheif 1.15) aborts on PNGs of fewer than 8 bits a sample ("Assertion
 * `bit_depth>8' failed"): a 1-bit BMP of issue 12's corpus went through such a PNG. Those
 * are re-encoded at 8 bits first; any other input is passed as is.
 */
async function eightBitInput(step: Step): Promise<string> {
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
