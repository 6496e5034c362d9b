/**
 * LibreOffice (Writer, Calc, Impress) for office documents: to PDF and between office
 * formats, through the warm {@link LibreOfficePool}. Export filters are named explicitly;
 * import filters only where detection is ambiguous (CSV and plain text).
 */
import { access, constants, copyFile, link, mkdir, mkdtemp, rename } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { formatInfo } from '../formats/catalogue.js';
import { ConversionError, failed } from '../errors.js';
import { ownForSandbox, removeSandboxTree, runSandboxed } from '../exec/exec.js';
import { copyEngineOutput } from '../guards/output-guard.js';
import { effectiveQuality } from '../options.js';
import { libreOfficePdfExport } from '../pdf-archive-options.js';
import { missingProbe, probeBinaries, type Engine, type EngineProbe, type Step } from './engine.js';
import { LibreOfficePool, PYTHON, SOFFICE_BIN, prepareProfile, type LibreOfficeJob, type LibreOfficePoolOptions } from './libreoffice-pool.js';

/** The Python UNO bridge the warm pool drives LibreOffice through. */
const UNO = '/usr/lib/python3/dist-packages/uno.py';

const DOCUMENT_IN = ['docx', 'doc', 'odt', 'fodt', 'rtf', 'txt'];
const DOCUMENT_OUT = ['pdf', 'docx', 'doc', 'odt', 'fodt', 'rtf', 'txt', 'html'];
// xlsb (Excel binary workbook): LibreOffice reads it but has no writer for it.
const SHEET_IN = ['xlsx', 'xlsb', 'xls', 'ods', 'fods', 'csv'];
const SHEET_OUT = ['pdf', 'xlsx', 'xls', 'ods', 'fods', 'csv', 'html'];
const SLIDES_IN = ['pptx', 'ppt', 'odp', 'fodp'];
const SLIDES_OUT = ['pdf', 'pptx', 'ppt', 'odp', 'fodp'];
/**
 * PDF → word-processing formats through Writer's PDF import: every line of text in a frame
 * placed as on the page, pictures and lines as drawings, so the document looks like the PDF
 * and its text can be edited (not reflowed into running paragraphs: pdf → html → … does that).
 */
const PDF_IMPORT_OUT = ['docx', 'doc', 'odt', 'fodt', 'rtf'];

type App = 'writer' | 'calc' | 'impress';

function appOf(from: string): App | undefined {
  if (from === 'pdf') return 'writer';
  if (DOCUMENT_IN.includes(from)) return 'writer';
  if (SHEET_IN.includes(from)) return 'calc';
  if (SLIDES_IN.includes(from)) return 'impress';
  return undefined;
}

const EXPORT: Readonly<Record<App, Readonly<Record<string, { filter: string; options?: string }>>>> = {
  writer: {
    pdf: { filter: 'writer_pdf_Export' },
    docx: { filter: 'MS Word 2007 XML' },
    doc: { filter: 'MS Word 97' },
    odt: { filter: 'writer8' },
    fodt: { filter: 'OpenDocument Text Flat XML' },
    rtf: { filter: 'Rich Text Format' },
    txt: { filter: 'Text (encoded)', options: 'UTF8' },
    html: { filter: 'HTML (StarWriter)' },
  },
  calc: {
    pdf: { filter: 'calc_pdf_Export' },
    xlsx: { filter: 'Calc MS Excel 2007 XML' },
    xls: { filter: 'MS Excel 97' },
    ods: { filter: 'calc8' },
    fods: { filter: 'OpenDocument Spreadsheet Flat XML' },
    // Comma, double quote, UTF-8 (76), first line as is.
    csv: { filter: 'Text - txt - csv (StarCalc)', options: '44,34,76,1' },
    html: { filter: 'HTML (StarCalc)' },
  },
  impress: {
    pdf: { filter: 'impress_pdf_Export' },
    pptx: { filter: 'Impress MS PowerPoint 2007 XML' },
    ppt: { filter: 'MS PowerPoint 97' },
    odp: { filter: 'impress8' },
    fodp: { filter: 'OpenDocument Presentation Flat XML' },
  },
};

/** Memory cap (RLIMIT_DATA) of a one-off soffice run: as for a warm instance. */
const COLD_MAX_MEMORY_BYTES = 3 * 1024 ** 3;

/** The LibreOffice engine. */
export class LibreOfficeEngine implements Engine {
  readonly name = 'libreoffice';
  readonly reads = [...DOCUMENT_IN, ...SHEET_IN, ...SLIDES_IN, 'pdf'];
  readonly writes = [...new Set([...DOCUMENT_OUT, ...SHEET_OUT, ...SLIDES_OUT])];
  /** The warm pool; started on the first conversion or by {@link LibreOfficeEngine.start}. */
  readonly pool: LibreOfficePool;

  constructor(poolOptions: LibreOfficePoolOptions) {
    this.pool = new LibreOfficePool(poolOptions);
  }

  supports(from: string, to: string): boolean {
    if (from === 'pdf') return PDF_IMPORT_OUT.includes(to);
    const app = appOf(from);
    return app !== undefined && from !== to && to in EXPORT[app];
  }

  tradesQualityForSize(to: string): boolean {
    return to === 'pdf';
  }

  async probe(): Promise<EngineProbe> {
    const p = await probeBinaries(this.name, [SOFFICE_BIN, PYTHON], ['--headless', '--version'], /LibreOffice (\S+)/);
    const requires = [...p.requires, UNO];
    if (!p.available) return { ...p, requires };
    try {
      await access(UNO, constants.R_OK);
    } catch {
      return missingProbe(this.name, requires, [UNO]);
    }
    return { ...p, requires };
  }

  /** Prestarts the pool (service start-up). */
  start(): Promise<void> {
    return this.pool.start();
  }

  /** Resolves with `libreoffice-cold` when the one-off fallback did the work. */
  async convert(step: Step): Promise<string | undefined> {
    const app = appOf(step.from);
    const target = app ? EXPORT[app][step.to] : undefined;
    if (!app || !target || !this.supports(step.from, step.to)) throw failed(`LibreOffice cannot convert ${step.from} to ${step.to}.`);
    const job: { -readonly [K in keyof LibreOfficeJob]: LibreOfficeJob[K] } = {
      input: step.input,
      output: step.output,
      filter: target.filter,
    };
    if (target.options) job.filterOptions = target.options;
    if (step.from === 'csv') {
      job.inputFilter = 'Text - txt - csv (StarCalc)';
      job.inputOptions = '44,34,76,1';
    } else if (step.from === 'pdf') {
      job.inputFilter = 'writer_pdf_import';
    } else if (step.from === 'txt') {
      job.inputFilter = 'Text (encoded)';
      job.inputOptions = 'UTF8';
    }
    if (step.to === 'pdf') {
      const data: Record<string, string | number | boolean> = { Quality: step.quality, ExportNotes: false };
      if (step.qualityRequested && effectiveQuality(step.options, 90) < 90) {
        data.ReduceImageResolution = true;
        data.MaxImageResolution = step.quality >= 60 ? 150 : 75;
      }
      // PDF/A (the pdfa option, the archive preset) and PDF/UA, written by the export filter itself.
      const archival = libreOfficePdfExport(step.options);
      job.filterData = { ...data, ...archival.filterData };
      if (archival.title !== undefined) job.title = archival.title;
    }
    try {
      await this.pool.convert(job, step.job.timeoutMs, step.job.signal);
      return undefined;
    } catch (err) {
      // Some real documents (Word comments, seen with LibreOffice 7.4) crash an instance
      // driven over UNO every time, even a fresh one, while a one-off `soffice --convert-to`
      // converts them: fall back to that, in the same sandbox, and say so in the chain. A
      // document that is really broken fails there too.
      if (step.job.signal?.aborted || !isInstanceCrash(err)) throw err;
      await this.convertCold(step, job);
      return 'libreoffice-cold';
    }
  }

  /** One `soffice --headless --convert-to` run with a profile of its own in the job folder. */
  private async convertCold(step: Step, job: LibreOfficeJob): Promise<void> {
    const dir = await mkdtemp(join(step.job.dir, 'lo-cold-'));
    await ownForSandbox(dir);
    const profile = await prepareProfile(join(dir, 'profile'));
    // The output folder is made here, shared with the engine user like the pool's io/ (issue
    // 44): one soffice made itself is the engine user's, 0755, and a service that is not root
    // (npm start runs it as mailconv) could not move the PDF out of it.
    const outdir = join(dir, 'out');
    await mkdir(outdir);
    await ownForSandbox(outdir);
    let spec = `${step.to}:${job.filter}`;
    if (job.filterData) spec += `:${JSON.stringify(Object.fromEntries(Object.entries(job.filterData).map(([k, v]) => [k, typedValue(v)])))}`;
    else if (job.filterOptions) spec += `:${job.filterOptions}`;
    const args = [`-env:UserInstallation=${profile}`, '--headless', '--invisible', '--nocrashreport', '--nodefault', '--nologo', '--nofirststartwizard', '--norestore', '--nolockcheck'];
    if (job.inputFilter) args.push(`--infilter=${job.inputFilter}${job.inputOptions ? `:${job.inputOptions}` : ''}`);
    // soffice leaves a lock file beside what it opens: open a link inside our own folder.
    const input = join(dir, `input${extname(step.input)}`);
    await link(step.input, input).catch(() => copyFile(step.input, input));
    args.push('--convert-to', spec, '--outdir', outdir, input);
    const run = () =>
      runSandboxed(SOFFICE_BIN, args, {
        cwd: dir,
        home: dir,
        env: { SAL_USE_VCLPLUGIN: 'svp' },
        timeoutMs: step.job.timeoutMs,
        maxFileBytes: step.job.maxFileBytes,
        // The same caps as a warm instance (data segment, and CPU time for this one document).
        maxMemoryBytes: COLD_MAX_MEMORY_BYTES,
        maxCpuSeconds: Math.max(1, Math.ceil(step.job.timeoutMs / 1000)),
        ...(step.job.signal ? { signal: step.job.signal } : {}),
      });
    let r = await run();
    // A fresh profile makes soffice exit once with 81 ("restart required") after creating it.
    if (r.exitCode === 81) r = await run();
    const produced = join(outdir, `input.${step.to}`);
    try {
      if (r.timedOut) throw failed('LibreOffice took too long to convert the document.', 'cold soffice timed out');
      await rename(produced, step.output).catch(async (e: unknown) => {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
          // soffice exits 0 when it cannot load a document; what it printed says why.
          const said = `${r.stdout.toString('utf8')}${r.stderr}`.trim().slice(-300);
          throw failed('LibreOffice could not convert the document.', `cold soffice exited ${r.exitCode ?? r.signal} without output: ${said}`);
        }
        // Not a plain move (another file system, a folder the service may not write): the
        // output guard copies it, as the pool does.
        await copyEngineOutput(produced, step.output, step.job, 'libreoffice');
      });
    } finally {
      await removeSandboxTree(dir);
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/**
 * Whether a one-off run is worth trying after the pool failed: the instance crashed, its
 * bridge died, or UNO answered with an exception (seen on a fresh instance right after a
 * crash: "illegal object given!"). Not after a time-out, a memory kill or a cancel: a
 * one-off run would do the same, at the same cost again.
 */
function isInstanceCrash(err: unknown): boolean {
  if (!(err instanceof ConversionError) || err.code !== 'conversion_failed') return false;
  return /crashed|could not convert/i.test(err.message);
}

/** A filter-data value in the typed JSON that `--convert-to` takes (LibreOffice 7.4+). */
function typedValue(v: string | number | boolean): { type: string; value: string } {
  if (typeof v === 'boolean') return { type: 'boolean', value: String(v) };
  if (typeof v === 'number') return { type: 'long', value: String(Math.round(v)) };
  return { type: 'string', value: v };
}

/** Whether a format is LibreOffice's to read (for routing office sources). */
export function isOfficeFormat(ext: string): boolean {
  const f = formatInfo(ext);
  return f !== undefined && f.ext !== 'pdf' && appOf(f.ext) !== undefined;
}
