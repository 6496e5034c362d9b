/**
 * potrace traces a bitmap (PBM, PGM, PPM, BMP; grey levels are thresholded at 50%) into
 * vector outlines: SVG or EPS. Other raster formats reach it through BMP (a registry chain).
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const POTRACE = '/usr/bin/potrace';

/** The potrace engine. */
export class PotraceEngine implements Engine {
  readonly name = 'potrace';
  readonly reads = ['pbm', 'pgm', 'ppm', 'bmp'] as const;
  readonly writes = ['svg', 'eps'] as const;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [POTRACE], ['--version'], /potrace (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    await runStep(step, POTRACE, ['-b', step.to === 'svg' ? 'svg' : 'eps', '-o', step.output, '--', step.input], { maxMemoryBytes: 1024 ** 3 });
  }
}
