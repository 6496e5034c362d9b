/**
 * FontForge, scripted (`-lang=ff`, no Python), for fonts: TrueType, OpenType/CFF, WOFF,
 * WOFF2, PostScript Type 1 (PFB) and its own SFD source format, each to each. The script is
 * fixed; the file names reach it as arguments, never as script text.
 *
 * An SFD file may carry Python data (`PickledData:` / `PickledDataWithLists:`), which
 * FontForge unpickles on open even under `-lang=ff`: running code from the upload (issue 21).
 * Such files are refused before FontForge sees them; nothing else in a font needs Python.
 */
import { createReadStream } from 'node:fs';
import { failed } from '../errors.js';
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
    if (step.from === 'sfd' && (await containsText(step.input, PICKLED))) {
      throw failed('The sfd file carries embedded Python data (PickledData), which runs code when opened; such files are refused.', 'sfd with PickledData');
    }
    // SFD is FontForge's own document: Save writes it, Generate writes real fonts.
    const script = step.to === 'sfd' ? 'Open($1); Save($2)' : 'Open($1); Generate($2)';
    await runStep(step, FONTFORGE, ['-quiet', '-lang=ff', '-c', script, step.input, step.output], { maxMemoryBytes: 1024 ** 3 });
  }
}

/** The SFD keyword both pickled forms start with (FontForge matches keywords in any case). */
const PICKLED = 'pickleddata';

/** Whether the ASCII `needle` occurs anywhere in the file, in any case (streamed: a large file costs no memory). */
export async function containsText(path: string, needle: string): Promise<boolean> {
  let tail = '';
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    const window = tail + chunk.toString('latin1').toLowerCase();
    if (window.includes(needle)) return true;
    tail = window.slice(Math.max(0, window.length - needle.length + 1));
  }
  return false;
}
