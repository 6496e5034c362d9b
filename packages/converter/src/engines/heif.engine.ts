/**
 * libheif's tools: `heif-convert` reads HEIF/HEIC (the primary image) to PNG or JPEG;
 * `heif-enc` writes HEIC from PNG or JPEG. Other raster formats go through PNG (registry chains).
 */
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
      await runStep(step, HEIF_ENC, [...args, '-o', step.output, step.input]);
      return;
    }
    await runStep(step, HEIF_CONVERT, [...(step.to === 'jpg' ? ['-q', String(step.quality)] : []), step.input, step.output]);
  }
}
