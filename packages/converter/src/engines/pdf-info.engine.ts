/**
 * pdf → json (issue 25): a PDF's facts — version, pages and their sizes, encryption, metadata
 * (information dictionary, XMP), PDF/A and PDF/UA claims, tags, signatures, AcroForm fields —
 * read by pikepdf in the sandbox (`python/pdf-info.py`), and its image count from
 * `pdfimages -list` (the count pdf → zip extracts). The same facts check a `form_data`
 * request against the PDF's fields ({@link readPdfFacts}). What the script writes is hostile:
 * it is read through the output guard, within a size cap, parsed and shape-checked before
 * the service writes the answer itself.
 */
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { failed } from '../errors.js';
import { runSandboxed } from '../exec/exec.js';
import { openEngineOutput, writeJobFile } from '../guards/output-guard.js';
import type { FormFieldFacts } from '../pdf-form-options.js';
import { jobLimits, missingProbe, packageFile, probeBinaries, runFailure, type Engine, type EngineProbe, type JobContext, type Step } from './engine.js';

const PYTHON = '/usr/bin/python3';
/** pikepdf, read by the probe's `import pikepdf` (python3-pikepdf). */
const PIKEPDF = '/usr/lib/python3/dist-packages/pikepdf/__init__.py';
const PDFIMAGES = '/usr/bin/pdfimages';
/** Largest facts file read back: 2,000 fields of 500 options each stay far below it. */
export const MAX_FACTS_BYTES = 8 * 1024 * 1024;
/** pikepdf holds the object graph in memory; a PDF within the upload limit fits. */
const MAX_MEMORY = 1024 ** 3;

/** A PDF's facts as the pdf → json pair answers them (docs/convert-api.md, "PDF forms, metadata and images"). */
export interface PdfFacts {
  readonly pdf_version: string;
  readonly pages: number;
  readonly page_sizes: readonly { page: number; width: number; height: number; rotation: number }[];
  readonly encrypted: boolean;
  readonly metadata: Readonly<Record<'title' | 'author' | 'subject' | 'keywords' | 'creator' | 'producer' | 'created' | 'modified', string | null>>;
  readonly pdfa: string | null;
  readonly pdfua: boolean;
  readonly tagged: boolean;
  readonly signatures: readonly { field: string; signer: string | null; signed_at: string | null; reason: string | null; location: string | null }[];
  readonly form: { readonly fields: readonly (FormFieldFacts & { value: unknown; page: number | null; required: boolean; read_only: boolean })[] };
  readonly images: number;
}

/** pdfimages' rows of a PDF: every image it would extract, with its pixels. */
export interface ImageListing {
  readonly count: number;
  /** The largest image's pixels and the sum over all of them. */
  readonly maxPixels: number;
  readonly totalPixels: number;
  /** The listing was longer than its cap: `count` is the rows read, a floor. */
  readonly overflow: boolean;
}

/** Lists the images `pdfimages -all` would write (no pixel is decoded), `maxBytes` of listing at most. */
export async function listImages(input: string, job: JobContext, maxBytes = 1024 * 1024): Promise<ImageListing> {
  const limits = jobLimits(job, MAX_MEMORY);
  const r = await runSandboxed(PDFIMAGES, ['-list', input], {
    cwd: job.dir, timeoutMs: Math.min(job.timeoutMs, 60_000), ...limits, maxStdoutBytes: maxBytes, ...(job.signal ? { signal: job.signal } : {}),
  });
  if (!r.stdoutOverflow && (r.timedOut || r.aborted || r.exitCode !== 0)) throw runFailure(r, 'pdfimages', 'The PDF’s images could not be listed.', limits);
  let count = 0;
  let maxPixels = 0;
  let totalPixels = 0;
  for (const line of r.stdout.toString('utf8').split('\n').slice(2)) {
    const cols = line.trim().split(/\s+/);
    const [w, h] = [Number(cols[3]), Number(cols[4])];
    if (cols.length < 5 || !Number.isFinite(w) || !Number.isFinite(h)) continue;
    count++;
    maxPixels = Math.max(maxPixels, w * h);
    totalPixels += w * h;
  }
  // Past the cap the rows read are a floor: the listing was cut (and pdfimages stopped).
  return { count, maxPixels, totalPixels, overflow: r.stdoutOverflow };
}

/** Runs pdf-info.py on `input`; answers its facts, checked (the image count is not among them: see {@link PdfInfoEngine}). */
export async function readPdfFacts(input: string, job: JobContext): Promise<Omit<PdfFacts, 'images'>> {
  const script = packageFile('python/pdf-info.py');
  const out = join(job.dir, `pdf-info-${process.hrtime.bigint()}.json`);
  const limits = jobLimits(job, MAX_MEMORY);
  const r = await runSandboxed(PYTHON, ['-I', script, input, out], {
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 60_000),
    maxFileBytes: MAX_FACTS_BYTES,
    ...limits,
    readOnly: [dirname(script)],
    env: { PYTHONDONTWRITEBYTECODE: '1' },
    ...(job.signal ? { signal: job.signal } : {}),
  });
  if (r.timedOut || r.aborted || r.exitCode !== 0) {
    await rm(out, { force: true });
    // Exit 3: more text than the script's cap (one long string shared by a million /Opt entries).
    if (r.exitCode === 3) throw failed('The PDF’s facts are too large to answer.', `pdf-info: ${r.stderr.slice(-200)}`);
    throw runFailure(r, 'pdf-info', 'The PDF could not be read.', limits);
  }
  const opened = await openEngineOutput(out, job, 'pikepdf');
  if (!opened) throw failed('The PDF could not be read.', 'pdf-info wrote no output');
  let text: string;
  try {
    if (opened.size > MAX_FACTS_BYTES) throw failed('The PDF’s facts are too large to answer.', `pdf-info wrote ${opened.size} bytes`);
    text = await opened.handle.readFile('utf8');
  } finally {
    await opened.handle.close();
    await rm(out, { force: true });
  }
  return checkFacts(text);
}

/** The script's JSON, parsed and checked for the shape the service relies on. */
export function checkFacts(text: string): Omit<PdfFacts, 'images'> {
  let facts: unknown;
  try {
    facts = JSON.parse(text);
  } catch {
    throw failed('The PDF could not be read.', 'pdf-info wrote no JSON');
  }
  const f = facts as Partial<PdfFacts> | null;
  const fields = f?.form?.fields;
  const shaped = typeof f === 'object' && f !== null && typeof f.pdf_version === 'string' && Number.isInteger(f.pages) && Array.isArray(f.page_sizes)
    && typeof f.encrypted === 'boolean' && typeof f.metadata === 'object' && f.metadata !== null && Array.isArray(f.signatures) && Array.isArray(fields)
    && fields.every((x) => typeof x === 'object' && x !== null && typeof x.name === 'string' && typeof x.type === 'string'
      && (x.options === undefined || (Array.isArray(x.options) && (x.options as unknown[]).every((o) => typeof o === 'string')))
      && (x.states === undefined || (Array.isArray(x.states) && (x.states as unknown[]).every((o) => typeof o === 'string'))));
  if (!shaped) throw failed('The PDF could not be read.', 'pdf-info wrote JSON of another shape');
  return f as Omit<PdfFacts, 'images'>;
}

/** The pdf → json engine. */
export class PdfInfoEngine implements Engine {
  readonly name = 'pikepdf';
  readonly reads = ['pdf'] as const;
  readonly writes = ['json'] as const;
  /** It describes the PDF it is given: a document made into a PDF on the way has no such facts of its own. */
  readonly directOnly = true;

  tradesQualityForSize(): boolean {
    return false;
  }

  async probe(): Promise<EngineProbe> {
    const p = await probeBinaries(this.name, [PYTHON, PDFIMAGES], ['-I', '-c', 'import pikepdf; print("pikepdf", pikepdf.__version__)'], /pikepdf (\S+)/);
    const requires = [...p.requires, PIKEPDF];
    if (p.available && p.version === null) return missingProbe(this.name, requires, [PIKEPDF]);
    return { ...p, requires };
  }

  async convert(step: Step): Promise<void> {
    const facts = await readPdfFacts(step.input, step.job);
    // 16 MiB of listing is some 170,000 rows; past it the count is a floor (docs say so).
    const listed = await listImages(step.input, step.job, 16 * 1024 * 1024);
    // A source opened with `password` reaches the engines decrypted: it was encrypted all the same.
    const answer: PdfFacts = { ...facts, encrypted: facts.encrypted || step.options.password !== undefined, images: listed.count };
    await writeJobFile(step.output, `${JSON.stringify(answer, null, 2)}\n`, 0o600);
  }
}
