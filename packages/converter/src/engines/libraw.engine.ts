/**
 * LibRaw's `dcraw_emu` develops camera raw files (read-only) to a 16-bit-free 8-bit TIFF
 * or PPM with the camera's white balance; other targets go through TIFF (registry chain).
 * Only DNG is listed: it is the raw format we can make samples of (a camera's own files
 * need licensed samples).
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const DCRAW_EMU = '/usr/bin/dcraw_emu';

/** The LibRaw engine. */
export class LibRawEngine implements Engine {
  readonly name = 'libraw';
  readonly reads = ['dng'] as const;
  readonly writes = ['tiff', 'ppm'] as const;

  tradesQualityForSize(): boolean {
    return false;
  }

  async probe(): Promise<EngineProbe> {
    const p = await probeBinaries(this.name, [DCRAW_EMU, '/usr/bin/raw-identify'], ['-v'], /LibRaw (\S+)/);
    return p.available ? { ...p, version: p.version ?? 'libraw' } : p;
  }

  async convert(step: Step): Promise<void> {
    await runStep(step, DCRAW_EMU, ['-w', ...(step.to === 'tiff' ? ['-T'] : []), '-Z', step.output, step.input], { maxMemoryBytes: 1024 ** 3 });
  }
}
