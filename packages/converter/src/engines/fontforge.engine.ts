/**
 * FontForge, scripted (`-lang=ff`, no Python), for fonts: TrueType, OpenType/CFF, WOFF,
 * WOFF2, PostScript Type 1 (PFB) and its own SFD source format, each to each. The script is
 * fixed; the file names reach it as arguments, never as script text.
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const FONTFORGE = '/usr/bin/fontforge';
const FORMATS = ['ttf', 'otf', 'woff', 'woff2', 'sfd', 'pfb'] as const;

/** The FontForge engine. */
export class FontForgeEngine implements Engine {
  readonly name = 'fontforge';
  readonly reads = FORMATS;
  readonly writes = FORMATS;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [FONTFORGE], ['-version'], /Version: (\S+)/i);
  }

  async convert(step: Step): Promise<void> {
    // SFD is FontForge's own document: Save writes it, Generate writes real fonts.
    const script = step.to === 'sfd' ? 'Open($1); Save($2)' : 'Open($1); Generate($2)';
    await runStep(step, FONTFORGE, ['-quiet', '-lang=ff', '-c', script, step.input, step.output], { maxMemoryBytes: 1024 ** 3 });
  }
}
