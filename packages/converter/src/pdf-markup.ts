/**
 * Redaction and page marks on a finished PDF (issue 25): `python/pdf-redact.py` and
 * `python/pdf-stamp.py`, PyMuPDF (Debian's python3-fitz, AGPL like Ghostscript, run as a
 * separate program) and pikepdf in the engine sandbox, under the job's time and memory caps.
 * What they write is checked by the output guard before it is read again (pdf-operations.ts).
 */
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { failed, invalid } from './errors.js';
import { jobLimits, packageFile, type JobContext } from './engines/engine.js';
import { runSandboxed, type ExecResult } from './exec/exec.js';
import type { PageMark, PdfMarkupOptions, RedactOptions } from './pdf-markup-options.js';

/** PyMuPDF and pikepdf together: at most 1 GiB (less when the job caps lower). */
const ENGINE_MEMORY = 1024 ** 3;

function rgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [((n >> 16) & 255) / 255, ((n >> 8) & 255) / 255, (n & 255) / 255];
}

async function runScript(name: string, args: readonly string[], job: JobContext): Promise<ExecResult> {
  const script = packageFile(`python/${name}`);
  return runSandboxed('/usr/bin/python3', ['-I', script, ...args], {
    cwd: job.dir,
    timeoutMs: job.timeoutMs,
    maxFileBytes: job.maxFileBytes,
    ...jobLimits(job, ENGINE_MEMORY),
    readOnly: [dirname(script)],
    env: { PYTHONDONTWRITEBYTECODE: '1' },
    ...(job.signal ? { signal: job.signal } : {}),
  });
}

function tail(r: ExecResult): string {
  // PyMuPDF's SWIG bindings print leak notices on exit; they say nothing about the run.
  return r.stderr.toString().split('\n').filter((l) => !l.startsWith('swig/python detected')).join('\n').slice(-300);
}

/**
 * `redact`: text, image pixels and vector paths under the boxes removed, metadata, attached
 * files, JavaScript and the annotations over the boxes scrubbed, the file rewritten whole.
 * Answers how many boxes were redacted.
 */
export async function redactPdf(input: string, output: string, r: RedactOptions, job: JobContext): Promise<number> {
  const spec = join(job.dir, 'redact.json');
  const work = join(job.dir, 'redact-paths.pdf');
  await writeFile(spec, JSON.stringify({ areas: r.areas, text: r.text, regex: r.regex ?? null, match_case: r.matchCase, fill: rgb(r.fill) }), { mode: 0o644 });
  await rm(output, { force: true });
  const res = await runScript('pdf-redact.py', [input, output, spec, work], job);
  await rm(work, { force: true });
  if (res.timedOut) throw failed('Redacting the PDF took longer than the time limit (a regular expression that takes too long, or a very complex page).', `pdf-redact timed out: ${tail(res)}`);
  if (res.exitCode === 3) throw invalid('redact.regex', 'redact.regex is not a regular expression Python’s re module compiles.');
  if (res.exitCode === 4) throw invalid('redact.areas', 'redact.areas names a page past the last page of the PDF.');
  if (res.exitCode !== 0) throw failed('The PDF could not be redacted.', `pdf-redact exit ${res.exitCode}: ${tail(res)}`);
  const answer = /\{"areas": (\d+)\}/.exec(res.stdout.toString());
  return Number(answer?.[1] ?? 0);
}

/** Every page mark of the options, in drawing order: page numbers, Bates, stamps, header, footer. */
function marksOf(m: PdfMarkupOptions): PageMark[] {
  const line = (text: string, position: PageMark['position']): PageMark => ({ text, pages: [{ from: 1, to: null }], pagesText: '1-', position, fontSize: 10, color: '#000000', opacity: 1, rotation: 0, margin: 24 });
  return [
    ...(m.pageNumbers ? [m.pageNumbers] : []),
    ...(m.bates ? [m.bates] : []),
    ...(m.stamps ?? []),
    ...(m.header !== undefined ? [line(m.header, 'top-center')] : []),
    ...(m.footer !== undefined ? [line(m.footer, 'bottom-center')] : []),
  ];
}

/** Whether the options draw anything on the pages. */
export function hasPageMarks(m: PdfMarkupOptions | undefined): boolean {
  return m !== undefined && marksOf(m).length > 0;
}

/**
 * `page_numbers`, `bates`, `stamps`, `header`, `footer`: drawn upright on the pages as
 * displayed. `title` fills `{title}` (the `title` option when given, else the PDF's own).
 */
export async function stampPdf(input: string, output: string, m: PdfMarkupOptions, title: string | undefined, job: JobContext, now: Date): Promise<void> {
  const items = [];
  for (const [i, mark] of marksOf(m).entries()) {
    let image: string | undefined;
    if (mark.image) {
      image = join(job.dir, `stamp-${i}.img`);
      await writeFile(image, mark.image, { mode: 0o644 });
    }
    items.push({
      ...(image ? { image, width: mark.width ?? null } : { text: mark.text }),
      pages: mark.pages.map((s) => [s.from, s.to]),
      numbering: mark.numbering ? { start: mark.numbering.start, digits: mark.numbering.digits ?? null, prefix: mark.numbering.prefix, suffix: mark.numbering.suffix } : null,
      position: mark.position,
      font_size: mark.fontSize,
      color: rgb(mark.color),
      opacity: mark.opacity,
      rotation: mark.rotation,
      margin: mark.margin,
    });
  }
  const spec = join(job.dir, 'stamps.json');
  await writeFile(spec, JSON.stringify({ date: now.toISOString().slice(0, 10), title: title ?? null, items }), { mode: 0o644 });
  await rm(output, { force: true });
  const res = await runScript('pdf-stamp.py', [input, output, spec], job);
  if (res.timedOut) throw failed('Stamping the PDF took longer than the time limit.', `pdf-stamp timed out: ${tail(res)}`);
  if (res.exitCode !== 0) throw failed('The PDF could not be stamped (page numbers, Bates numbers, stamps, header or footer).', `pdf-stamp exit ${res.exitCode}: ${tail(res)}`);
}
