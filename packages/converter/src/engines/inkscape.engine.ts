/**
 * Inkscape (command line, no display) for vector formats: SVG, EMF, WMF and the first page
 * of a PDF read; SVG (plain), PNG, PDF, PostScript, EPS, EMF and WMF written. Its EPS/PS
 * import needs a display, so those are read by Ghostscript instead. HOME (its preferences
 * and caches) is the job's folder, as for every engine.
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const INKSCAPE = '/usr/bin/inkscape';

/** The Inkscape engine. */
export class InkscapeEngine implements Engine {
  readonly name = 'inkscape';
  readonly reads = ['svg', 'svgz', 'emf', 'wmf', 'pdf'] as const;
  readonly writes = ['svg', 'png', 'pdf', 'ps', 'eps', 'emf', 'wmf'] as const;

  supports(from: string, to: string): boolean {
    if (from === to) return false;
    // PDF pages to images, text and PostScript belong to poppler and Ghostscript; Inkscape brings vector targets.
    if (from === 'pdf') return to === 'svg' || to === 'emf' || to === 'wmf';
    return true;
  }

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [INKSCAPE], ['--version'], /Inkscape (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const args = [step.input, `--export-type=${step.to}`, `--export-filename=${step.output}`];
    if (step.to === 'svg') args.push('--export-plain-svg');
    if (step.from === 'pdf') args.push('--pdf-page=1', '--pdf-poppler');
    const maxDim = step.options.preset?.maxDimension;
    if (maxDim && step.to === 'png') args.push(`--export-width=${maxDim}`);
    await runStep(step, INKSCAPE, args);
  }
}
