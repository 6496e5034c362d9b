/**
 * SoX for the audio formats FFmpeg cannot write: Amiga 8SVX, AVR, NIST SPHERE and AMR-NB
 * (FFmpeg reads them all, so their outputs are checked by an independent tool). Types are
 * always given (`-t`), file names never globbed.
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const SOX = '/usr/bin/sox';
/** SoX's type names. */
const TYPE: Readonly<Record<string, string>> = {
  wav: 'wav', aiff: 'aiff', au: 'au', flac: 'flac', voc: 'voc', '8svx': '8svx', avr: 'avr', sph: 'sph', amr: 'amr-nb',
};
const WRITES = ['8svx', 'avr', 'sph', 'amr'] as const;

/** The SoX engine. */
export class SoxEngine implements Engine {
  readonly name = 'sox';
  readonly reads = Object.keys(TYPE);
  readonly writes = WRITES;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [SOX], ['--version'], /SoX v(\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const out: string[] = [];
    // AMR-NB is 8 kHz mono speech; AVR and 8SVX hold at most 16 and 8 bits.
    if (step.to === 'amr') out.push('-r', '8000', '-c', '1');
    if (step.to === 'avr') out.push('-b', '16');
    await runStep(step, SOX, ['--no-glob', '-V1', '-t', TYPE[step.from] ?? step.from, step.input, ...out, '-t', TYPE[step.to] ?? step.to, step.output]);
  }
}
