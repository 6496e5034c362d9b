/**
 * qpdf for PDF structure work: page counts, page selection (`page_range`) and a clean
 * rewrite for PDF → PDF. It never rasterises, so it is fast and lossless.
 */
import { readdir } from 'node:fs/promises';
import { writeJobFile } from '../guards/output-guard.js';
import { join } from 'node:path';
import { ConversionError, failed } from '../errors.js';
import { runSandboxed, shareWithSandbox } from '../exec/exec.js';
import { jobLimits, probeBinaries, runFailure, type Engine, type EngineProbe, type JobContext, type Step } from './engine.js';

const QPDF = '/usr/bin/qpdf';

/** The qpdf engine. */
export class QpdfEngine implements Engine {
  readonly name = 'qpdf';
  readonly reads = ['pdf'] as const;
  readonly writes = ['pdf'] as const;

  supports(from: string, to: string): boolean {
    return from === 'pdf' && to === 'pdf';
  }

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [QPDF], ['--version'], /qpdf version (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    // Exit code 3 is "succeeded with warnings" (a repaired file): the output is good.
    await this.run(step.job, ['--object-streams=generate', '--', step.input, step.output]);
  }

  /** Number of pages of a PDF. */
  async pageCount(path: string, job: JobContext): Promise<number> {
    const r = await runSandboxed(QPDF, ['--show-npages', '--', path], { cwd: job.dir, timeoutMs: job.timeoutMs, ...jobLimits(job) });
    const n = Number(r.stdout.toString('utf8').trim());
    if ((r.exitCode !== 0 && r.exitCode !== 3) || !Number.isInteger(n) || n < 1) {
      throw failed('The PDF could not be read.', `qpdf --show-npages exit ${r.exitCode}: ${r.stderr.slice(-300)}`);
    }
    return n;
  }

  /** Joins whole PDFs, in order, into `output`. */
  async merge(inputs: readonly string[], output: string, job: JobContext): Promise<void> {
    await this.run(job, ['--empty', '--pages', ...inputs, '--', output]);
  }

  /**
   * Writes every page of `input` to a PDF of its own in `dir`: `page-1.pdf` … (qpdf pads the
   * numbers to one width, so the names sort in page order). Answers the names, in order.
   */
  async splitPages(input: string, dir: string, job: JobContext): Promise<string[]> {
    await this.run(job, ['--split-pages=1', '--object-streams=generate', '--', input, join(dir, 'page.pdf')]);
    return (await readdir(dir)).filter((n) => /^page-\d+\.pdf$/.test(n)).sort();
  }

  /** Writes the given 1-based pages of `input` to `output`, in order. */
  async selectPages(input: string, pages: readonly number[], output: string, job: JobContext): Promise<void> {
    await this.run(job, ['--empty', '--pages', input, compactRanges(pages), '--', output]);
  }

  /**
   * Structure-only PDF operations, lossless, in one qpdf run: pages turned clockwise by
   * `rotate` degrees (added to any rotation they have), linearization, and AES-256
   * encryption with `encrypt` as the password to open (and to change permissions).
   * `pdf14` keeps the file within PDF 1.4 (PDF/A-1).
   */
  async transform(input: string, output: string, ops: { rotate?: number; linearize?: boolean; encrypt?: string; pdf14?: boolean }, job: JobContext): Promise<void> {
    // PDF/A-1 (`pdf14`) is PDF 1.4, which has no object streams.
    const args = [ops.pdf14 ? '--object-streams=disable' : '--object-streams=generate'];
    if (ops.rotate) args.push(`--rotate=+${ops.rotate}:1-z`);
    if (ops.linearize) args.push('--linearize');
    if (ops.encrypt !== undefined) args.push('--encrypt', ops.encrypt, ops.encrypt, '256', '--');
    await this.runWithArgFile(job, [...args, '--', input, output]);
  }

  /**
   * Draws the form fields' values into their widgets (`--generate-appearances`: text and
   * choice fields, where /NeedAppearances asks for it) and, with `flatten`, makes every
   * visible annotation with an appearance page content (`--flatten-annotations=all`), which
   * also removes the AcroForm (issue 25).
   */
  async formAppearances(input: string, output: string, flatten: boolean, job: JobContext): Promise<void> {
    await this.run(job, ['--generate-appearances', ...(flatten ? ['--flatten-annotations=all'] : []), '--object-streams=generate', '--', input, output]);
  }

  /**
   * Writes an unencrypted copy of an encrypted PDF, opened with `password`; a password that
   * does not open it is `password_required`.
   */
  async decrypt(input: string, output: string, password: string, job: JobContext): Promise<void> {
    try {
      await this.runWithArgFile(job, [`--password=${password}`, '--decrypt', '--', input, output]);
    } catch (e) {
      if (e instanceof ConversionError && /invalid password/i.test(e.extra.detail ?? '')) {
        throw new ConversionError('password_required', 'The password given does not open the PDF.');
      }
      throw e;
    }
  }

  /** Runs qpdf with its arguments in a file (`@file`), so passwords never appear in a process list. */
  private async runWithArgFile(job: JobContext, args: readonly string[]): Promise<void> {
    const file = join(job.dir, `qpdf-args-${process.hrtime.bigint()}.txt`);
    await writeJobFile(file, `${args.join('\n')}\n`, 0o600);
    await shareWithSandbox(file);
    await this.run(job, [`@${file}`]);
  }

  private async run(job: JobContext, args: string[]): Promise<void> {
    // qpdf has no memory limit of its own: a page selection that repeats a large PDF many
    // times grew it to 12.3 GB (issue #13); the sandbox's RLIMIT_DATA stops it.
    const limits = jobLimits(job);
    const r = await runSandboxed(QPDF, args, { cwd: job.dir, timeoutMs: job.timeoutMs, maxFileBytes: job.maxFileBytes, ...limits, ...(job.signal ? { signal: job.signal } : {}) });
    if (r.timedOut || r.aborted || (r.exitCode !== 0 && r.exitCode !== 3)) throw runFailure(r, 'qpdf', 'The PDF could not be processed.', limits);
  }
}

/** `[1,2,3,5]` → `"1-3,5"` (qpdf's page-range syntax). */
export function compactRanges(pages: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < pages.length) {
    const start = pages[i] as number;
    let end = start;
    while (i + 1 < pages.length && pages[i + 1] === end + 1) end = pages[++i] as number;
    parts.push(start === end ? String(start) : `${start}-${end}`);
    i++;
  }
  return parts.join(',');
}
