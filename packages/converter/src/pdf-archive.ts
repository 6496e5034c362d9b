/**
 * Step 8 of the PDF operations (pdf-operations.ts): PDF/A and PDF/UA (issue 25).
 *
 * LibreOffice writes both itself (its export filter, see `libreOfficePdfExport`); its file
 * is kept when nothing rewrote it since, apart from the metadata step (pikepdf changes only
 * the information dictionary and XMP, together). Any other PDF — a PDF source, an image, a
 * page Chromium printed, LibreOffice's file after page selection, compression, a watermark
 * or another earlier operation — is made PDF/A by Ghostscript. PDF/UA is LibreOffice's
 * alone (Ghostscript does not keep a structure tree): it is checked here and given its
 * language; a PDF/UA file that was rewritten is a failure, never a silent untagged answer.
 */
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { failed } from './errors.js';
import type { Engine, JobContext, Step } from './engines/engine.js';
import type { GhostscriptEngine } from './engines/ghostscript.engine.js';
import { acceptEngineOutput } from './guards/output-guard.js';
import type { ConversionOptions } from './options.js';
import { pdfaLevel, pdfaPart } from './pdf-archive-options.js';
import { runPikepdfScript } from './engines/pikepdf-script.js';

/** Whether the route's last engine was LibreOffice (warm or one-off), which wrote the PDF/A or PDF/UA itself. */
export function writtenByLibreOffice(engines: readonly string[]): boolean {
  return /^libreoffice(-cold)?$/.test(engines[engines.length - 1] ?? '');
}

/**
 * Makes `input` PDF/A (`pdfa`, the `archive` preset) and checks and completes PDF/UA
 * (`pdf_ua`); `keptByLibreOffice` says the file is still LibreOffice's own. Answers the
 * resulting file; appends the engines it ran to `engines`.
 */
export async function applyPdfArchive(
  input: string,
  keptByLibreOffice: boolean,
  options: ConversionOptions,
  job: JobContext,
  available: ReadonlyMap<string, Engine>,
  engines: string[],
): Promise<string> {
  const level = pdfaLevel(options);
  let current = input;
  if (options.pdfArchive?.pdfUa) {
    if (!keptByLibreOffice) throw failed('PDF/UA could not be written: the PDF was not LibreOffice’s tagged export, or an operation rewrote its pages.', 'pdf_ua without LibreOffice\'s own file');
    const out = join(job.dir, 'accessible.pdf');
    const r = await runArchiveScript(['ua', current, out, options.pdfArchive.language ?? ''], job);
    if (r.exitCode === 4) throw failed('PDF/UA needs a document title and this document has none: send the title option.', 'pdf_ua without a title');
    if (r.exitCode !== 0) throw failed('PDF/UA could not be written.', `pdf-archive ua exit ${r.exitCode}: ${r.stderr.slice(-300)}`);
    await acceptEngineOutput(out, job, 'pikepdf');
    current = out;
    engines.push('pikepdf');
  }
  if (level && !keptByLibreOffice) {
    const gs = available.get('ghostscript') as GhostscriptEngine | undefined;
    if (!gs) throw failed('PDF/A is not available (Ghostscript is missing).');
    const part = pdfaPart(level);
    if (part === 1) {
      const r = await runArchiveScript(['transparency', current], job);
      if (r.exitCode === 5) {
        throw failed(`PDF/A-1 forbids transparency, which this PDF uses (page ${r.stdout.trim()}): ask for pdfa "2b" or "3b", which keep it.`, 'pdfa 1b with transparency');
      }
      if (r.exitCode !== 0) throw failed('The PDF could not be read for PDF/A.', `pdf-archive transparency exit ${r.exitCode}: ${r.stderr.slice(-300)}`);
    }
    const out = join(job.dir, 'pdfa.pdf');
    const step: Step = { input: current, output: out, from: 'pdf', to: 'pdf', options, quality: 100, qualityRequested: false, job };
    await gs.toPdfA(step, part);
    await acceptEngineOutput(out, job, 'ghostscript');
    current = out;
    engines.push('ghostscript');
  }
  return current;
}

/** Runs `python/pdf-archive.py` (pikepdf) in the sandbox; answers its exit code and output. */
async function runArchiveScript(args: readonly string[], job: JobContext): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  if (args[0] === 'ua') await rm(args[2] as string, { force: true });
  const r = await runPikepdfScript('pdf-archive.py', args, job);
  if (r.timedOut) throw failed('Checking the PDF for PDF/A or PDF/UA took too long.', 'pdf-archive timed out');
  return { exitCode: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
