/**
 * LibreOffice (Writer, Calc, Impress) for office documents: to PDF and between office
 * formats, through the warm {@link LibreOfficePool}. Export filters are named explicitly;
 * import filters only where detection is ambiguous (CSV and plain text).
 */
import { access, constants } from 'node:fs/promises';
import { formatInfo } from '../formats/catalogue.js';
import { failed } from '../errors.js';
import { effectiveQuality } from '../options.js';
import { probeBinaries, type Engine, type EngineProbe, type Step } from './engine.js';
import { LibreOfficePool, PYTHON, SOFFICE_BIN, type LibreOfficeJob, type LibreOfficePoolOptions } from './libreoffice-pool.js';

const DOCUMENT_IN = ['docx', 'doc', 'odt', 'rtf', 'txt'];
const DOCUMENT_OUT = ['pdf', 'docx', 'doc', 'odt', 'rtf', 'txt', 'html'];
const SHEET_IN = ['xlsx', 'xls', 'ods', 'csv'];
const SHEET_OUT = ['pdf', 'xlsx', 'xls', 'ods', 'csv', 'html'];
const SLIDES_IN = ['pptx', 'ppt', 'odp'];
const SLIDES_OUT = ['pdf', 'pptx', 'ppt', 'odp'];

type App = 'writer' | 'calc' | 'impress';

function appOf(from: string): App | undefined {
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
    rtf: { filter: 'Rich Text Format' },
    txt: { filter: 'Text (encoded)', options: 'UTF8' },
    html: { filter: 'HTML (StarWriter)' },
  },
  calc: {
    pdf: { filter: 'calc_pdf_Export' },
    xlsx: { filter: 'Calc MS Excel 2007 XML' },
    xls: { filter: 'MS Excel 97' },
    ods: { filter: 'calc8' },
    // Comma, double quote, UTF-8 (76), first line as is.
    csv: { filter: 'Text - txt - csv (StarCalc)', options: '44,34,76,1' },
    html: { filter: 'HTML (StarCalc)' },
  },
  impress: {
    pdf: { filter: 'impress_pdf_Export' },
    pptx: { filter: 'Impress MS PowerPoint 2007 XML' },
    ppt: { filter: 'MS PowerPoint 97' },
    odp: { filter: 'impress8' },
  },
};

/** The LibreOffice engine. */
export class LibreOfficeEngine implements Engine {
  readonly name = 'libreoffice';
  readonly reads = [...DOCUMENT_IN, ...SHEET_IN, ...SLIDES_IN];
  readonly writes = [...new Set([...DOCUMENT_OUT, ...SHEET_OUT, ...SLIDES_OUT])];
  /** The warm pool; started on the first conversion or by {@link LibreOfficeEngine.start}. */
  readonly pool: LibreOfficePool;

  constructor(poolOptions: LibreOfficePoolOptions) {
    this.pool = new LibreOfficePool(poolOptions);
  }

  supports(from: string, to: string): boolean {
    const app = appOf(from);
    return app !== undefined && from !== to && to in EXPORT[app];
  }

  tradesQualityForSize(to: string): boolean {
    return to === 'pdf';
  }

  async probe(): Promise<EngineProbe> {
    const p = await probeBinaries(this.name, [SOFFICE_BIN, PYTHON], ['--headless', '--version'], /LibreOffice (\S+)/);
    if (!p.available) return p;
    try {
      await access('/usr/lib/python3/dist-packages/uno.py', constants.R_OK);
    } catch {
      return { ...p, available: false, missing: ['python3-uno'], warning: 'libreoffice disabled: python3-uno is missing' };
    }
    return p;
  }

  /** Prestarts the pool (service start-up). */
  start(): Promise<void> {
    return this.pool.start();
  }

  async convert(step: Step): Promise<void> {
    const app = appOf(step.from);
    const target = app ? EXPORT[app][step.to] : undefined;
    if (!app || !target) throw failed(`LibreOffice cannot convert ${step.from} to ${step.to}.`);
    const job: { -readonly [K in keyof LibreOfficeJob]: LibreOfficeJob[K] } = {
      input: step.input,
      output: step.output,
      filter: target.filter,
    };
    if (target.options) job.filterOptions = target.options;
    if (step.from === 'csv') {
      job.inputFilter = 'Text - txt - csv (StarCalc)';
      job.inputOptions = '44,34,76,1';
    } else if (step.from === 'txt') {
      job.inputFilter = 'Text (encoded)';
      job.inputOptions = 'UTF8';
    }
    if (step.to === 'pdf') {
      const data: Record<string, string | number | boolean> = { Quality: step.quality, ExportNotes: false };
      const preset = step.options.preset;
      if (step.qualityRequested && effectiveQuality(step.options, 90) < 90) {
        data.ReduceImageResolution = true;
        data.MaxImageResolution = step.quality >= 60 ? 150 : 75;
      }
      // PDF/A-2b for the archive preset.
      if (preset?.pdfa) data.SelectPdfVersion = 2;
      job.filterData = data;
    }
    await this.pool.convert(job, step.job.timeoutMs, step.job.signal);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** Whether a format is LibreOffice's to read (for routing office sources). */
export function isOfficeFormat(ext: string): boolean {
  const f = formatInfo(ext);
  return f !== undefined && appOf(f.ext) !== undefined;
}
