/**
 * calibre's `ebook-convert` for e-books: EPUB, MOBI, AZW3, FB2, LIT, PDB, LRF, TXTZ, HTMLZ,
 * RB, TCR, SNB between themselves, documents into e-books, and e-books out to DOCX, PDF,
 * RTF and text. It runs in the sandbox like every engine, with its HOME, config and temp
 * folders inside the job folder (calibre writes its settings on first use) and Qt on the
 * offscreen platform (PDF output renders through Qt WebEngine, no display).
 */
import { constants as fsConstants } from 'node:fs';
import { copyFile, link, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConversionError } from '../errors.js';
import { ownForSandbox } from '../exec/exec.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const EBOOK_CONVERT = '/usr/bin/ebook-convert';
/** E-book formats calibre both reads and writes. */
/** Python hash seeds tried in turn for TCR output (see CalibreEngine.convert). */
const TCR_HASH_SEEDS = [0, 7, 14, 16, 17, 22, 24, 30, 31, 33] as const;

const EBOOKS = ['epub', 'mobi', 'azw3', 'fb2', 'lit', 'pdb', 'lrf', 'txtz', 'htmlz', 'rb', 'tcr', 'snb'] as const;
/** Documents calibre reads well enough to make an e-book of. */
const DOCUMENTS_IN = ['docx', 'odt', 'rtf', 'html', 'txt', 'md'] as const;
/** Non-e-book targets, from e-books only (LibreOffice and pandoc do documents better). */
const DOCUMENTS_OUT = ['docx', 'pdf', 'rtf', 'txt'] as const;
const EBOOK_SET = new Set<string>(EBOOKS);
/** calibre's input plugin names where they differ from the extension. */
const INPUT_EXT: Readonly<Record<string, string>> = { md: 'txt' };

/** calibre's Python plus Qt WebEngine for PDF output need more than the default cap. */
const MAX_MEMORY_BYTES = 3 * 1024 ** 3;

/** The calibre engine. */
export class CalibreEngine implements Engine {
  readonly name = 'calibre';
  readonly reads = [...EBOOKS, ...DOCUMENTS_IN];
  readonly writes = [...EBOOKS, ...DOCUMENTS_OUT];

  supports(from: string, to: string): boolean {
    if (from === to) return false;
    // Documents only into e-books; e-books anywhere calibre writes.
    return EBOOK_SET.has(from) || EBOOK_SET.has(to);
  }

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [EBOOK_CONVERT], ['--version'], /calibre ([\d.]+)/);
  }

  async convert(step: Step): Promise<void> {
    // ebook-convert picks its input and output plugins by extension: name the files so.
    const home = join(step.job.dir, 'calibre-home');
    await mkdir(home, { recursive: true });
    await ownForSandbox(home);
    const inputExt = INPUT_EXT[step.from];
    const input = inputExt ? `${step.output}.in.${inputExt}` : step.input;
    if (inputExt) await link(step.input, input).catch(() => copyFile(step.input, input, fsConstants.COPYFILE_EXCL));
    const args = [input, step.output];
    if (step.from === 'md') args.push('--formatting-type=markdown');
    // calibre's TCR compressor merges codes in hash-set order and, for some texts in most
    // orders, builds one longer than the format's 255 bytes ("bytes must be in range(0,
    // 256)"). The order follows Python's hash seed: another seed is another try.
    const seeds = step.to === 'tcr' ? TCR_HASH_SEEDS : [undefined];
    for (const [i, seed] of seeds.entries()) {
      try {
        await this.run(step, args, home, seed);
        return;
      } catch (e) {
        const overflow = e instanceof ConversionError && /bytes must be in range/.test(e.extra.detail ?? '');
        if (!overflow || i === seeds.length - 1) throw e;
      }
    }
  }

  private async run(step: Step, args: string[], home: string, hashSeed: number | undefined): Promise<void> {
    await runStep(step, EBOOK_CONVERT, args, {
      env: {
        ...(hashSeed !== undefined ? { PYTHONHASHSEED: String(hashSeed) } : {}),
        HOME: home,
        TMPDIR: home,
        CALIBRE_CONFIG_DIRECTORY: join(home, 'config'),
        CALIBRE_TEMP_DIR: home,
        CALIBRE_CACHE_DIRECTORY: join(home, 'cache'),
        QT_QPA_PLATFORM: 'offscreen',
        // Qt WebEngine's Chromium sandbox needs user namespaces the job sandbox already took.
        QTWEBENGINE_CHROMIUM_FLAGS: '--no-sandbox',
        QTWEBENGINE_DISABLE_SANDBOX: '1',
      },
      maxMemoryBytes: MAX_MEMORY_BYTES,
    });
  }
}
