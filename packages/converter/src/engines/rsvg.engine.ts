/**
 * librsvg's `rsvg-convert` for SVG to PNG, PDF, PostScript and EPS: the quickest and most
 * faithful SVG renderer here. It never fetches anything (the sandbox has no network) and sees
 * only the job's folder, so an SVG naming other files gets nothing from outside it.
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const RSVG = '/usr/bin/rsvg-convert';

/** The rsvg engine. */
export class RsvgEngine implements Engine {
  readonly name = 'rsvg';
  readonly reads = ['svg', 'svgz'] as const;
  readonly writes = ['png', 'pdf', 'ps', 'eps'] as const;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [RSVG], ['--version'], /rsvg-convert version (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const args = ['-f', step.to, '-o', step.output];
    const maxDim = step.options.preset?.maxDimension;
    if (maxDim && step.to === 'png') args.push('-w', String(maxDim), '-h', String(maxDim), '-a');
    args.push(step.input);
    await runStep(step, RSVG, args, { maxMemoryBytes: 1024 ** 3 });
  }
}
