/**
 * `form_data` and `flatten` on a finished PDF (issue 25), the first of the PDF operations:
 * the values are checked against the PDF's fields (pdf-info's facts), written by pikepdf
 * (`python/pdf-form.py fill`: /V, the check box and radio widgets' /AS, /NeedAppearances),
 * drawn by qpdf (`--generate-appearances`, so every viewer shows them, not only those that
 * honour /NeedAppearances) and, with `flatten`, made page content by qpdf
 * (`--flatten-annotations=all`); pikepdf then removes what flattening left (`tidy`: an
 * /AcroForm, hidden widgets), so no field remains.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConversionError, failed } from './errors.js';
import { runPikepdfScript } from './engines/pikepdf-script.js';
import { acceptEngineOutput } from './guards/output-guard.js';
import { type Engine, type JobContext } from './engines/engine.js';
import { readPdfFacts } from './engines/pdf-info.engine.js';
import type { QpdfEngine } from './engines/qpdf.engine.js';
import type { ConversionOptions } from './options.js';
import { checkFormData, type FormValue } from './pdf-form-options.js';

/** Checks `form_data` against the fields of the PDF `input` (400 `invalid_request` naming the field); for the preflight and the fill alike. */
export async function checkFormDataAgainst(input: string, data: Readonly<Record<string, FormValue>>, job: JobContext): Promise<void> {
  const facts = await readPdfFacts(input, job);
  checkFormData(data, facts.form.fields);
}

/** Fills and/or flattens `file` as the options ask; answers the resulting file and appends the engines it ran to `engines`. */
export async function applyFormOperations(file: string, options: ConversionOptions, job: JobContext, available: ReadonlyMap<string, Engine>, engines: string[]): Promise<string> {
  const formData = options.pdfForm?.formData;
  const flatten = options.pdfForm?.flatten === true;
  if (!formData && !flatten) return file;
  const qpdf = available.get('qpdf') as QpdfEngine | undefined;
  if (!qpdf || !available.has('pikepdf')) throw failed('Filling and flattening forms is not available (qpdf or pikepdf is missing).');
  let current = file;
  if (formData) {
    await checkFormDataAgainst(current, formData, job);
    const out = join(job.dir, 'form-filled.pdf');
    await runFormScript('fill', current, out, job, JSON.stringify(formData));
    await acceptEngineOutput(out, job, 'pikepdf');
    current = out;
    engines.push('pikepdf');
  }
  const drawn = join(job.dir, flatten ? 'form-flattened.pdf' : 'form-drawn.pdf');
  await qpdf.formAppearances(current, drawn, flatten, job);
  await acceptEngineOutput(drawn, job, 'qpdf');
  current = drawn;
  engines.push('qpdf');
  if (flatten) {
    const out = join(job.dir, 'form-tidy.pdf');
    await runFormScript('tidy', current, out, job);
    await acceptEngineOutput(out, job, 'pikepdf');
    current = out;
    if (!formData) engines.push('pikepdf');
  }
  return current;
}

async function runFormScript(mode: 'fill' | 'tidy', input: string, output: string, job: JobContext, stdin = ''): Promise<void> {
  await rm(output, { force: true });
  const r = await runPikepdfScript('pdf-form.py', [mode, input, output], job, stdin);
  if (r.timedOut || r.aborted || r.exitCode !== 0) {
    // The values were checked against the same facts before: a refusal here is the PDF's doing.
    throw new ConversionError('conversion_failed', mode === 'fill' ? 'The PDF’s form could not be filled.' : 'The PDF’s form could not be flattened.', { detail: `pdf-form ${mode} exit ${r.exitCode}: ${r.stderr.slice(-300)}`, final: true });
  }
}
