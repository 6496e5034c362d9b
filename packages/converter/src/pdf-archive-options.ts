/**
 * Options of archival and accessible PDFs (issue 25): `pdfa` (PDF/A-1b, 2b or 3b on any PDF
 * target), `pdf_ua` (tagged PDF/UA-1 of documents, sheets and slides LibreOffice converts)
 * and `language` (the PDF's natural language, with `pdf_ua`). Which source and route they
 * fit is checked by {@link checkPdfArchivePlan}; the work is done by LibreOffice (its export
 * filter) and pdf-archive.ts (step 8 of the PDF operations).
 */
import { invalid, quote } from './errors.js';
import type { FormatFamily } from './formats/catalogue.js';
import type { ConversionOptions } from './options.js';

/** The PDF/A levels `pdfa` takes: part 1, 2 or 3, conformance level B. */
export const PDFA_LEVELS = ['1b', '2b', '3b'] as const;
/** One of {@link PDFA_LEVELS}. */
export type PdfaLevel = (typeof PDFA_LEVELS)[number];

/** The option names, as the API takes them. */
export const PDF_ARCHIVE_OPTION_NAMES = ['pdfa', 'pdf_ua', 'language'] as const;

/** Validated `pdfa`, `pdf_ua` and `language`. */
export interface PdfArchiveOptions {
  readonly pdfa?: PdfaLevel;
  /** Tagged PDF/UA-1 (office sources only). */
  readonly pdfUa?: boolean;
  /** BCP 47, canonical case (e.g. "en-GB"): the PDF's /Lang (with `pdf_ua`). */
  readonly language?: string;
}

/**
 * Options that rewrite the pages after LibreOffice tagged them (Ghostscript re-distils,
 * qpdf page cuts, stamps drawn on the pages): PDF/UA's tags would be lost or left
 * incomplete, so they cannot be combined with `pdf_ua`. Names of later options of issue 25
 * are listed too; an option this build does not know is refused as unknown before this.
 */
const REWRITES_PAGES = [
  'page_range', 'split', 'quality', 'compression', 'max_output_bytes', 'watermark', 'remove_active_content',
  'form_data', 'flatten', 'redact', 'page_numbers', 'bates', 'stamps', 'header', 'footer',
] as const;
/** Presets that leave LibreOffice's pages as they are. */
const UA_PRESETS = ['archive', 'linearize'];

/** Longest `language` tag (BCP 47 allows long ones; a PDF needs the language and region). */
const MAX_LANGUAGE_CHARS = 35;

/** `language`: a BCP 47 tag (language, optional script, region and variants), in canonical case. */
export function parseLanguageTag(v: unknown): string {
  const shape = /^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-(?:[A-Za-z]{2}|\d{3}))?(-(?:[A-Za-z\d]{5,8}|\d[A-Za-z\d]{3}))*$/;
  if (typeof v !== 'string' || v.length > MAX_LANGUAGE_CHARS || !shape.test(v)) {
    throw invalid('language', `language must be a BCP 47 language tag such as "en", "en-GB" or "pt-BR"; ${quote(v)} is not.`);
  }
  try {
    return Intl.getCanonicalLocales(v)[0] as string;
  } catch {
    throw invalid('language', `language: ${quote(v)} is not a valid BCP 47 language tag.`);
  }
}

function flag(field: string, v: unknown): boolean {
  if (v !== true && v !== false && v !== 'true' && v !== 'false') throw invalid(field, `${field} must be true or false.`);
  return v === true || v === 'true';
}

/** The PDF/A and PDF/UA options present in `raw`; PDF targets only. */
export function parsePdfArchiveOptions(raw: Readonly<Record<string, unknown>>, present: (k: string) => boolean, targetFamily: FormatFamily): PdfArchiveOptions | undefined {
  const given = PDF_ARCHIVE_OPTION_NAMES.filter(present);
  if (!given.length) return undefined;
  for (const f of given) {
    if (targetFamily !== 'pdf') throw invalid(f, `${f} applies to PDF outputs only.`);
  }
  const o: { -readonly [K in keyof PdfArchiveOptions]: PdfArchiveOptions[K] } = {};
  if (present('pdfa')) {
    const level = typeof raw.pdfa === 'string' ? raw.pdfa.toLowerCase() : raw.pdfa;
    if (!PDFA_LEVELS.includes(level as PdfaLevel)) throw invalid('pdfa', `pdfa must be one of ${PDFA_LEVELS.join(', ')} (PDF/A part 1, 2 or 3, level B).`);
    o.pdfa = level as PdfaLevel;
  }
  if (present('pdf_ua') && flag('pdf_ua', raw.pdf_ua)) o.pdfUa = true;
  if (present('language')) {
    if (!o.pdfUa) throw invalid('language', 'language sets the natural language of a PDF/UA document: it applies with pdf_ua true.');
    o.language = parseLanguageTag(raw.language);
  }
  return Object.keys(o).length ? o : undefined;
}

/** The PDF/A level asked for: the `pdfa` option, else the `archive` preset's 2b. */
export function pdfaLevel(options: ConversionOptions): PdfaLevel | undefined {
  return options.pdfArchive?.pdfa ?? (options.preset?.pdfa ? '2b' : undefined);
}

/** The PDF/A part of a level (1, 2 or 3). */
export function pdfaPart(level: PdfaLevel): 1 | 2 | 3 {
  return Number(level[0]) as 1 | 2 | 3;
}

/**
 * What LibreOffice's PDF export filter is told for these options (LibreOffice 7.4):
 * `SelectPdfVersion` 1–3 writes PDF/A-1 (LibreOffice's is tagged: level A, which meets
 * B's requirements), 2b or 3b; `pdf_ua` turns on tagging, PDF/UA and the title shown in
 * the window. `title` is the document title LibreOffice writes (into the PDF's information
 * dictionary and XMP) when `pdf_ua` asks for one.
 */
export function libreOfficePdfExport(options: ConversionOptions): { filterData: Record<string, number | boolean>; title?: string } {
  const level = pdfaLevel(options);
  const filterData: Record<string, number | boolean> = level ? { SelectPdfVersion: pdfaPart(level) } : {};
  if (!options.pdfArchive?.pdfUa) return { filterData };
  Object.assign(filterData, { UseTaggedPDF: true, PDFUACompliance: true, DisplayPDFDocumentTitle: true });
  return { filterData, ...(options.title !== undefined ? { title: options.title } : {}) };
}

/**
 * Plan-time rules: PDF/A forbids encryption (`set_password`) and is lost by `split`; `pdf_ua` applies to office
 * sources LibreOffice turns into PDF in one step, with nothing that rewrites its pages.
 * `office` says whether the source is LibreOffice's to read and the route is LibreOffice alone.
 */
export function checkPdfArchivePlan(options: ConversionOptions, raw: Readonly<Record<string, unknown>>, source: string, target: string, office: boolean): void {
  if (target !== 'pdf') return;
  const level = pdfaLevel(options);
  if (level && options.setPassword !== undefined) {
    const by = options.pdfArchive?.pdfa ? `pdfa "${level}"` : 'preset "archive"';
    throw invalid('set_password', `PDF/A (${by}) forbids encryption: set_password cannot be combined with it.`);
  }
  // qpdf's pages are new files without the XMP claim or the output intent.
  if (level && options.split) throw invalid('split', `split cuts the PDF into pages that are no longer PDF/A: it cannot be combined with ${options.pdfArchive?.pdfa ? 'pdfa' : 'preset "archive"'}.`);
  if (!options.pdfArchive?.pdfUa) return;
  if (!office) {
    throw invalid('pdf_ua', `pdf_ua applies to documents, sheets and slides that LibreOffice converts to PDF (docx, doc, odt, rtf, txt, xlsx, xls, ods, csv, pptx, ppt, odp, …); ${source} to pdf is not one.`);
  }
  const given = (k: string): boolean => raw[k] !== undefined && raw[k] !== null && raw[k] !== '';
  const clash = REWRITES_PAGES.find(given);
  if (clash) throw invalid(clash, `${clash} cannot be combined with pdf_ua: it rewrites the pages LibreOffice tagged, and PDF/UA's tags would be lost.`);
  if (options.preset && !UA_PRESETS.includes(options.preset.name)) {
    throw invalid('preset', `preset "${options.preset.name}" cannot be combined with pdf_ua: it re-distils the pages LibreOffice tagged (archive and linearize can).`);
  }
}

/** The options as stored and answered (their API names), for the record. */
export function pdfArchiveOptionsRecord(o: PdfArchiveOptions | undefined): { pdfa?: PdfaLevel; pdf_ua?: true; language?: string } {
  if (!o) return {};
  return { ...(o.pdfa ? { pdfa: o.pdfa } : {}), ...(o.pdfUa ? { pdf_ua: true as const } : {}), ...(o.language ? { language: o.language } : {}) };
}
