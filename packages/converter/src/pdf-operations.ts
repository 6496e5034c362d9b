/**
 * PDF operations on a finished PDF output (issue 12, convert-decisions.md item 17), in a
 * fixed order: `form_data` and `flatten` (issue 25, pdf-form-operations.ts), `redact` and the
 * page marks (`page_numbers`, `bates`, `stamps`, `header`, `footer`; PyMuPDF, pdf-markup.ts),
 * `watermark` (Ghostscript stamps every page), `remove_active_content`
 * (Ghostscript re-distils without actions, issue #13), `title`, `author` and `metadata` (pikepdf),
 * PDF/A (`pdfa`, the `archive` preset's 2b) and PDF/UA (`pdf_ua`, pdf-archive.ts), then `rotate`, the `linearize`
 * preset and `set_password` (AES-256) in one lossless qpdf run, last because a later
 * rewrite would undo linearization and could not read the encrypted file.
 * Compression and grey conversion happen earlier, in the route's Ghostscript step.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { failed, invalid } from './errors.js';
import type { ArchiveEngine } from './engines/archive.engine.js';
import { sandboxFolder, type Engine, type JobContext, type Step } from './engines/engine.js';
import { runPikepdfScript } from './engines/pikepdf-script.js';
import { acceptEngineOutput } from './guards/output-guard.js';
import type { GhostscriptEngine } from './engines/ghostscript.engine.js';
import type { QpdfEngine } from './engines/qpdf.engine.js';
import type { ConversionOptions } from './options.js';
import { applyPdfArchive, writtenByLibreOffice } from './pdf-archive.js';
import { pdfaLevel } from './pdf-archive-options.js';
import { applyFormOperations } from './pdf-form-operations.js';
import type { PdfMetadata } from './pdf-form-options.js';
import { hasPageMarks, redactPdf, stampPdf } from './pdf-markup.js';
import { signPdf } from './pdf-sign.js';
import type { SigningCredential } from './signing-credential.js';

/**
 * Applies the options' PDF operations to `file` and returns the resulting file; appends
 * the engines it ran to `engines` (the record's chain, in order).
 */
export async function applyPdfOperations(
  file: string,
  options: ConversionOptions,
  job: JobContext,
  available: ReadonlyMap<string, Engine>,
  engines: string[],
  signing?: SigningCredential,
): Promise<string> {
  const step = (input: string, output: string): Step => ({ input, output, from: 'pdf', to: 'pdf', options, quality: 100, qualityRequested: false, job });
  const used = (name: string): void => {
    engines.push(name);
  };
  const gs = available.get('ghostscript') as GhostscriptEngine | undefined;
  const qpdf = available.get('qpdf') as QpdfEngine | undefined;
  let current = file;
  // LibreOffice's PDF (PDF/A, PDF/UA written by its export filter), while no step rewrote it.
  const libreOfficePdf = writtenByLibreOffice(engines) ? file : undefined;
  // Issue 25's form fill and flatten come first, then redaction and the page marks: later steps stamp and distil what they drew.
  current = await applyFormOperations(current, options, job, available, engines);
  current = await applyMarkup(current, options, job, used);
  if (options.watermark) {
    if (!gs) throw failed('Watermarks are not available (Ghostscript is missing).');
    const out = join(job.dir, 'watermarked.pdf');
    await gs.watermark(step(current, out), options.watermark);
    await acceptEngineOutput(out, job, 'ghostscript');
    current = out;
    used('ghostscript');
  }
  if (options.removeActiveContent) {
    if (!gs) throw failed('Removing active content is not available (Ghostscript is missing).');
    const out = join(job.dir, 'inert.pdf');
    await gs.removeActiveContent(step(current, out));
    await acceptEngineOutput(out, job, 'ghostscript');
    current = out;
    used('ghostscript');
  }
  const beforeMetadata = current;
  // Metadata before PDF/A: a PDF/A step after this one carries it into its own XMP.
  const metadata = { ...options.pdfForm?.metadata, ...(options.title !== undefined ? { title: options.title } : {}), ...(options.author !== undefined ? { author: options.author } : {}) };
  if (Object.keys(metadata).length) {
    const out = join(job.dir, 'described.pdf');
    await setPdfMetadata(current, out, metadata, job);
    await acceptEngineOutput(out, job, 'pikepdf');
    current = out;
    used('pikepdf');
  }
  // PDF/A and PDF/UA (pdf-archive.ts): LibreOffice's own file stands when only the metadata step changed it.
  current = await applyPdfArchive(current, libreOfficePdf === beforeMetadata, options, job, available, engines);
  const linearize = options.preset?.linearize === true;
  if (options.rotate || linearize || options.setPassword !== undefined) {
    if (!qpdf) throw failed('Rotating, linearizing and encrypting PDFs are not available (qpdf is missing).');
    const out = join(job.dir, 'restructured.pdf');
    await qpdf.transform(current, out, {
      ...(options.rotate ? { rotate: options.rotate } : {}),
      linearize,
      pdf14: pdfaLevel(options) === '1b',
      ...(options.setPassword !== undefined ? { encrypt: options.setPassword } : {}),
    }, job);
    await acceptEngineOutput(out, job, 'qpdf');
    current = out;
    used('qpdf');
  }
  // Last: any rewrite after it would break the signature. After linearize it is an incremental update.
  if (options.sign) {
    if (!signing) throw invalid('sign', 'signing is not configured on this service.');
    current = await signPdf(current, options.sign, signing, job);
    used('pikepdf');
  }
  return current;
}

/**
 * Steps 3 and 4 of the order (issue 25): `redact`, then the page marks (`page_numbers`,
 * `bates`, `stamps`, `header`, `footer`), each with PyMuPDF in the sandbox.
 */
async function applyMarkup(file: string, options: ConversionOptions, job: JobContext, used: (name: string) => void): Promise<string> {
  let current = file;
  const markup = options.markup;
  if (markup?.redact) {
    const out = join(job.dir, 'redacted.pdf');
    const areas = await redactPdf(current, out, markup.redact, job);
    if (job.counts) job.counts.redactedAreas = areas;
    await acceptEngineOutput(out, job, 'pymupdf');
    current = out;
    used('pymupdf');
  }
  if (markup && hasPageMarks(markup)) {
    const out = join(job.dir, 'stamped.pdf');
    await stampPdf(current, out, markup, options.title, job, new Date());
    await acceptEngineOutput(out, job, 'pymupdf');
    current = out;
    used('pymupdf');
  }
  return current;
}

/**
 * `split`: the finished PDF cut into one PDF per page (qpdf, lossless), packed into a zip
 * (bsdtar) as `page-1.pdf` … with the numbers padded to one width, so they sort in page
 * order. Answers the zip and its number of pages.
 */
export async function splitPdfPages(
  file: string,
  options: ConversionOptions,
  job: JobContext,
  available: ReadonlyMap<string, Engine>,
  engines: string[],
): Promise<{ file: string; pages: number }> {
  const { dir, names } = await cutPages(file, job, available);
  engines.push('qpdf');
  const zip = await zipFiles(dir, names, options, job, available);
  engines.push('bsdtar');
  return { file: zip, pages: names.length };
}

/** qpdf writes every page of `file` to a PDF of its own in a new job subfolder; answers the folder and the names, in page order. */
export async function cutPages(file: string, job: JobContext, available: ReadonlyMap<string, Engine>): Promise<{ dir: string; names: string[] }> {
  const qpdf = available.get('qpdf') as QpdfEngine | undefined;
  if (!qpdf || !available.has('bsdtar')) throw failed('Splitting into pages is not available (qpdf or bsdtar is missing).');
  const dir = await sandboxFolder(job, 'pages');
  const names = await qpdf.splitPages(file, dir, job);
  if (!names.length) throw failed('The PDF could not be split into pages.', 'qpdf --split-pages wrote no pages');
  // Each page is read again (by engines, into the zip): hostile until checked.
  for (const name of names) await acceptEngineOutput(join(dir, name), job, 'qpdf');
  return { dir, names };
}

/** bsdtar packs the named files of `dir` into `pages.zip` in the job folder; answers its path. */
export async function zipFiles(dir: string, names: readonly string[], options: ConversionOptions, job: JobContext, available: ReadonlyMap<string, Engine>): Promise<string> {
  const bsdtar = available.get('bsdtar') as ArchiveEngine | undefined;
  if (!bsdtar) throw failed('Splitting into pages is not available (bsdtar is missing).');
  const zip = join(job.dir, 'pages.zip');
  await bsdtar.pack({ input: join(dir, names[0] ?? ''), output: zip, from: 'pdf', to: 'zip', options, quality: 100, qualityRequested: false, job }, dir, names);
  await acceptEngineOutput(zip, job, 'bsdtar');
  return zip;
}

/**
 * `password`: an unencrypted copy of an encrypted PDF source, made before the bomb checks
 * and the engines see it (they would refuse it as `password_required`).
 */
export async function unlockPdf(input: string, password: string, job: JobContext, available: ReadonlyMap<string, Engine>): Promise<string> {
  const qpdf = available.get('qpdf') as QpdfEngine | undefined;
  if (!qpdf) throw failed('Opening encrypted PDFs is not available (qpdf is missing).');
  const out = join(job.dir, 'unlocked.pdf');
  await qpdf.decrypt(input, out, password, job);
  await acceptEngineOutput(out, job, 'qpdf');
  return out;
}


/**
 * Sets a PDF's metadata (the `title`, `author` and `metadata` options) with pikepdf (Debian's
 * python3-pikepdf, on qpdf) in the sandbox: the information dictionary and the XMP metadata
 * together, nothing else of the file changed (`python/pdf-metadata.py`, the entries on stdin).
 */
async function setPdfMetadata(input: string, output: string, meta: PdfMetadata, job: JobContext): Promise<void> {
  await rm(output, { force: true });
  const r = await runPikepdfScript('pdf-metadata.py', [input, output], job, JSON.stringify(meta));
  if (r.timedOut || r.exitCode !== 0) throw failed('The PDF’s metadata could not be set.', `pdf-metadata exit ${r.exitCode}: ${r.stderr.toString().slice(-300)}`);
}
