/** Subtitles (SRT, WebVTT, ASS, SSA, MicroDVD, SBV, LRC, SAMI) through subsrt-ts, in a worker thread. */
import type { Engine, EngineProbe, Step } from './engine.js';
import { SUBTITLE_FORMATS } from './structured/subtitles.js';
import { runInWorker } from './structured/run-in-worker.js';

/** The subtitle engine. */
export class SubtitleEngine implements Engine {
  readonly name = 'subtitles';
  readonly reads = SUBTITLE_FORMATS;
  readonly writes = SUBTITLE_FORMATS;

  tradesQualityForSize(): boolean {
    return false;
  }

  async probe(): Promise<EngineProbe> {
    return { engine: this.name, available: true, version: 'subsrt-ts', missing: [], requires: ['npm:subsrt-ts'] };
  }

  async convert(step: Step): Promise<void> {
    await runInWorker(step, 'subtitle');
  }
}
