/**
 * Conversion options (convert-decisions.md items 12 and 13): validated here into a typed
 * {@link ConversionOptions}; each engine applies the parts that concern it. Unknown names
 * and out-of-range values fail with `invalid_request` naming the field.
 */
import { invalid, quote } from './errors.js';
import type { FormatFamily } from './formats/catalogue.js';
import { PAGE_OPTION_NAMES, parsePageOptions, type PageOptions } from './page-options.js';
import { parsePdfArchiveOptions, PDF_ARCHIVE_OPTION_NAMES, type PdfArchiveOptions } from './pdf-archive-options.js';
import { parsePdfFormOptions, PDF_FORM_OPTION_NAMES, type PdfFormOptions } from './pdf-form-options.js';
import { parsePdfMarkupOptions, PDF_MARKUP_OPTION_NAMES, type PdfMarkupOptions } from './pdf-markup-options.js';
import { parseSignOptions, SIGN_OPTION_NAMES, type SignOptions } from './sign-options.js';
import { parseFrame } from './engines/animation.js';
import { parsePhotoMetadata, type PhotoMetadata } from './photo-metadata.js';
import { parseVideoOptions, VIDEO_OPTION_NAMES, type VideoFrameOptions } from './video-options.js';

/** The 12 OCR languages, as tesseract codes, with their ISO 639-1 aliases. */
export const OCR_LANGUAGES: Readonly<Record<string, string>> = {
  eng: 'en',
  deu: 'de',
  fra: 'fr',
  spa: 'es',
  ita: 'it',
  por: 'pt',
  nld: 'nl',
  rus: 'ru',
  chi_sim: 'zh',
  jpn: 'ja',
  ara: 'ar',
  hin: 'hi',
};
const OCR_ALIAS = new Map(Object.entries(OCR_LANGUAGES).map(([code, alias]) => [alias, code]));

/** A named bundle of options per target family, listed by the formats answer. */
export interface Preset {
  readonly name: string;
  readonly description: string;
  /** Target families the preset applies to. */
  readonly families: readonly FormatFamily[];
  readonly quality?: number;
  /** Images: fit inside this many pixels (longest side). Video: maximum height. */
  readonly maxDimension?: number;
  /** PDF: PDF/A-2b rather than plain PDF (the `pdfa` option's level wins over it). */
  readonly pdfa?: boolean;
  /** PDF: Ghostscript's distiller setting (see {@link PDF_COMPRESSION}). */
  readonly compression?: PdfCompression;
  /** PDF: linearized ("fast web view"). */
  readonly linearize?: boolean;
  /** PDF: every colour turned to grey. */
  readonly grayscale?: boolean;
}

/** Ghostscript's distiller settings, smallest first: image resolution 72, 150, 300, 300 dpi (colour-preserving). */
export const PDF_COMPRESSION = ['screen', 'ebook', 'printer', 'prepress'] as const;
/** One of {@link PDF_COMPRESSION}. */
export type PdfCompression = (typeof PDF_COMPRESSION)[number];
/** Rotations `rotate` accepts, clockwise. */
export const PDF_ROTATIONS = [90, 180, 270] as const;
/** Longest `watermark` text. */
export const MAX_WATERMARK_CHARS = 100;

/** The presets, in listing order. */
export const PRESETS: readonly Preset[] = [
  { name: 'web', description: 'Smaller files for the web: quality 75, images at most 2048 px, video at most 720p.', families: ['image', 'pdf', 'audio', 'video'], quality: 75, maxDimension: 2048 },
  { name: 'print', description: 'High quality for printing: quality 95, no downscaling.', families: ['image', 'pdf'], quality: 95 },
  { name: 'thumbnail', description: 'A small preview image: at most 256 px, quality 70.', families: ['image'], quality: 70, maxDimension: 256 },
  { name: 'ebook', description: 'PDF tuned for screen reading: quality 60, images downsampled.', families: ['pdf'], quality: 60 },
  { name: 'archive', description: 'Long-term keeping: lossless images and audio, PDF/A-2b for PDF outputs (LibreOffice writes it for office documents, Ghostscript for any other PDF; the pdfa option picks another level).', families: ['image', 'pdf', 'audio'], quality: 100, pdfa: true },
  { name: 'compress', description: 'PDF: smaller file, images at 150 dpi (Ghostscript "ebook"); the compression option picks another level.', families: ['pdf'], compression: 'ebook' },
  { name: 'linearize', description: 'PDF: linearized for fast web view (first page shown before the rest arrives); nothing else changes.', families: ['pdf'], linearize: true },
  { name: 'grayscale', description: 'PDF: every colour converted to grey (Ghostscript).', families: ['pdf'], grayscale: true },
];

/** One piece of a page range; `to` null means "to the last page". */
export interface PageSpan {
  readonly from: number;
  readonly to: number | null;
}

/** Validated options. */
export interface ConversionOptions {
  readonly preset?: Preset;
  /** 1–100; the preset's when not given. */
  readonly quality?: number;
  readonly pageRange?: readonly PageSpan[];
  /** The original text of `page_range`, for echoing back. */
  readonly pageRangeText?: string;
  /** Tesseract codes, in the order given. */
  readonly ocrLanguages?: readonly string[];
  readonly maxOutputBytes?: number;
  /** PDF outputs: remove JavaScript, launch and URI actions, embedded files (extension, issue #13). */
  readonly removeActiveContent?: boolean;
  /** PDF outputs: Ghostscript distiller setting (extension; also set by the `compress` preset). */
  readonly compression?: PdfCompression;
  /** PDF outputs: pages turned clockwise by this many degrees (extension). */
  readonly rotate?: (typeof PDF_ROTATIONS)[number];
  /** PDF outputs: text stamped diagonally, half-transparent, across every page (extension). */
  readonly watermark?: string;
  /** PDF sources: the password that opens an encrypted PDF; the output is not encrypted (extension). */
  readonly password?: string;
  /** PDF outputs: encrypted with AES-256, this password needed to open them (extension). */
  readonly setPassword?: string;
  /** PDF outputs: one PDF per page; image outputs of paged sources: one image per page; delivered as a zip (extension). */
  readonly split?: boolean;
  /** HTML rendered by Chromium: paper, margins, header and footer, media, viewport… (extension, issue 22). */
  readonly page?: PageOptions;
  /** PDF outputs: the document's title and author, in its information dictionary and XMP (extension, issue 22). */
  readonly title?: string;
  readonly author?: string;
  /**
   * An archive source (zip, tar, 7z, …) whose files are converted one by one to the target,
   * delivered as a zip of the results and a `manifest.json` (extension, issue 24).
   */
  readonly batch?: boolean;
  /** Video sources to gif, webp, jpg, png: start, duration, fps, width, loop, animated (extension, issue 31). */
  readonly video?: VideoFrameOptions;
  /** PDF outputs: `form_data`, `flatten` and `metadata` (extension, issue 25). */
  readonly pdfForm?: PdfFormOptions;
  /** PDF outputs: `redact`, `page_numbers`, `bates`, `stamps`, `header`, `footer` (extension, issue 25). */
  readonly markup?: PdfMarkupOptions;
  /** PDF outputs: a PAdES signature, the last PDF operation; the credential comes with the request (extension, issue 25). */
  readonly sign?: SignOptions;
  /** PDF outputs: `pdfa` level, `pdf_ua`, `language` (extension, issue 25). */
  readonly pdfArchive?: PdfArchiveOptions;
  /** Picture outputs of an animated source: the frame shown, 1-based (extension, issue 31); absent: the first. */
  readonly frame?: number;
  /** Picture outputs: the source's metadata copied, with or without the location (extension, issue 31); absent: none. */
  readonly photoMetadata?: Exclude<PhotoMetadata, 'strip'>;
}

const KNOWN = new Set(['preset', 'quality', 'page_range', 'ocr_language', 'max_output_bytes', 'remove_active_content', 'compression', 'rotate', 'watermark', 'password', 'set_password', 'split', 'title', 'author', 'batch', 'photo_metadata', 'frame', ...VIDEO_OPTION_NAMES, ...PAGE_OPTION_NAMES, ...PDF_FORM_OPTION_NAMES, ...PDF_MARKUP_OPTION_NAMES, ...SIGN_OPTION_NAMES, ...PDF_ARCHIVE_OPTION_NAMES]);
/** The options every kind of conversion may take, named in the unknown-option error. */
const COMMON_OPTIONS = ['preset', 'quality', 'page_range', 'ocr_language', 'max_output_bytes', 'password', 'split', 'batch'] as const;
/** Longest `title` or `author`. */
export const MAX_METADATA_CHARS = 300;

function metadataText(field: string, v: unknown): string {
  // eslint-disable-next-line no-control-regex
  if (typeof v !== 'string' || v.trim() === '' || v.length > MAX_METADATA_CHARS || /[\u0000-\u001f\u007f]/.test(v)) {
    throw invalid(field, `${field} must be 1–${MAX_METADATA_CHARS} characters without control characters.`);
  }
  return v.trim();
}
/** Longest password accepted by `password` and `set_password`. */
export const MAX_PASSWORD_CHARS = 128;

function password(field: string, v: unknown): string {
  // One line of qpdf's argument file: no control characters (a newline would end it).
  // eslint-disable-next-line no-control-regex
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_PASSWORD_CHARS || /[\u0000-\u001f\u007f]/.test(v)) {
    throw invalid(field, `${field} must be 1–${MAX_PASSWORD_CHARS} characters without control characters.`);
  }
  return v;
}

/** Most pages a `page_range` may select in total (a repeated `1-` must not multiply a big PDF). */
export const MAX_SELECTED_PAGES = 10_000;

/** Parses `"1-3,5,8-"` (1-based). Throws `invalid_request` for `page_range`. */
export function parsePageRange(text: string): PageSpan[] {
  const spans: PageSpan[] = [];
  const parts = text.replace(/\s+/g, '').split(',');
  if (text.trim() === '' || parts.length > 100) throw invalid('page_range', 'page_range must look like "1-3,5,8-" (1-based pages).');
  for (const part of parts) {
    const m = /^(\d{1,6})(?:(-)(\d{1,6})?)?$/.exec(part);
    if (!m) throw invalid('page_range', `page_range: ${quote(part)} is not a page or a range like 2-5 or 8-.`);
    const from = Number(m[1]);
    const to = m[2] ? (m[3] ? Number(m[3]) : null) : from;
    if (from < 1 || (to !== null && to < from)) throw invalid('page_range', `page_range: ${quote(part)} is empty or starts before page 1.`);
    spans.push({ from, to });
  }
  return spans;
}

/**
 * Turns spans into a page list for a document of `pageCount` pages. An explicit page past
 * the end is an error (the client asked for something that does not exist); open ends stop
 * at the last page.
 */
export function resolvePageRange(spans: readonly PageSpan[], pageCount: number): number[] {
  const pages: number[] = [];
  for (const s of spans) {
    const last = s.to ?? pageCount;
    if (s.from > pageCount || last > pageCount) {
      throw invalid('page_range', `page_range asks for page ${Math.max(s.from, last)} but the document has ${pageCount} page(s).`);
    }
    if (pages.length + (last - s.from + 1) > MAX_SELECTED_PAGES) {
      throw invalid('page_range', `page_range selects more than ${MAX_SELECTED_PAGES} pages in total.`);
    }
    for (let p = s.from; p <= last; p++) pages.push(p);
  }
  return pages;
}

function integer(field: string, v: unknown, min: number, max: number): number {
  const n = typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw invalid(field, `${field} must be an integer from ${min} to ${max}.`);
  }
  return n;
}

/** Parses `eng+deu` or `en+de`; throws `invalid_request` for `ocr_language`. */
export function parseOcrLanguages(v: unknown): string[] {
  if (typeof v !== 'string' || v.trim() === '') throw invalid('ocr_language', 'ocr_language must be language codes joined with "+", e.g. "eng+deu".');
  const out: string[] = [];
  for (const raw of v.split('+')) {
    const code = raw.trim().toLowerCase();
    const resolved = code in OCR_LANGUAGES ? code : OCR_ALIAS.get(code);
    if (!resolved) {
      throw invalid('ocr_language', `ocr_language: ${quote(raw)} is not one of ${Object.keys(OCR_LANGUAGES).join(', ')} (or their two-letter codes).`);
    }
    if (!out.includes(resolved)) out.push(resolved);
  }
  return out;
}

/**
 * Validates raw request options (the API's snake_case names; strings from multipart
 * forms are accepted for numbers). `targetFamily` decides which presets are allowed.
 * `undefined` and `null` values count as absent.
 */
export function parseOptions(raw: Readonly<Record<string, unknown>>, targetFamily: FormatFamily): ConversionOptions {
  for (const key of Object.keys(raw)) {
    // The names grew past what an error message should quote (issue 25): the common ones, then the groups.
    if (!KNOWN.has(key)) throw invalid(key.slice(0, 64), `Unknown option ${quote(key)}; options are ${COMMON_OPTIONS.join(', ')} and the PDF, picture, video and page options of docs/convert-api.md.`);
  }
  const present = (k: string): boolean => raw[k] !== undefined && raw[k] !== null && raw[k] !== '';
  const opts: { -readonly [K in keyof ConversionOptions]: ConversionOptions[K] } = {};
  if (present('preset')) {
    const name = raw.preset;
    const preset = PRESETS.find((p) => p.name === name);
    if (!preset) throw invalid('preset', `preset must be one of ${PRESETS.map((p) => p.name).join(', ')}.`);
    if (!preset.families.includes(targetFamily)) {
      throw invalid('preset', `preset "${preset.name}" does not apply to ${targetFamily} targets (it applies to ${preset.families.join(', ')}).`);
    }
    opts.preset = preset;
  }
  if (present('quality')) opts.quality = integer('quality', raw.quality, 1, 100);
  if (present('page_range')) {
    if (typeof raw.page_range !== 'string') throw invalid('page_range', 'page_range must be a string like "1-3,5,8-".');
    opts.pageRange = parsePageRange(raw.page_range);
    opts.pageRangeText = raw.page_range.replace(/\s+/g, '');
  }
  if (present('ocr_language')) opts.ocrLanguages = parseOcrLanguages(raw.ocr_language);
  if (present('remove_active_content')) {
    const v = raw.remove_active_content;
    if (v !== true && v !== false && v !== 'true' && v !== 'false') throw invalid('remove_active_content', 'remove_active_content must be true or false.');
    if (targetFamily !== 'pdf' && (v === true || v === 'true')) throw invalid('remove_active_content', 'remove_active_content applies to PDF outputs only.');
    if (v === true || v === 'true') opts.removeActiveContent = true;
  }
  const pdfOnly = (field: string): void => {
    if (targetFamily !== 'pdf') throw invalid(field, `${field} applies to PDF outputs only.`);
  };
  if (present('compression')) {
    pdfOnly('compression');
    if (!PDF_COMPRESSION.includes(raw.compression as PdfCompression)) throw invalid('compression', `compression must be one of ${PDF_COMPRESSION.join(', ')}.`);
    opts.compression = raw.compression as PdfCompression;
  } else if (opts.preset?.compression) opts.compression = opts.preset.compression;
  if (present('rotate')) {
    pdfOnly('rotate');
    const n = typeof raw.rotate === 'string' && /^\s*-?\d+\s*$/.test(raw.rotate) ? Number(raw.rotate) : raw.rotate;
    const deg = typeof n === 'number' && Number.isInteger(n) ? ((n % 360) + 360) % 360 : NaN;
    if (!PDF_ROTATIONS.includes(deg as never)) throw invalid('rotate', 'rotate must be 90, 180 or 270 (clockwise; -90 means 270).');
    opts.rotate = deg as (typeof PDF_ROTATIONS)[number];
  }
  if (present('watermark')) {
    pdfOnly('watermark');
    const w = raw.watermark;
    // Ghostscript's standard fonts: printable ASCII is what they draw everywhere.
    if (typeof w !== 'string' || w.trim() === '' || w.length > MAX_WATERMARK_CHARS || !/^[\x20-\x7e]+$/.test(w)) {
      throw invalid('watermark', `watermark must be 1–${MAX_WATERMARK_CHARS} printable ASCII characters.`);
    }
    opts.watermark = w.trim();
  }
  if (present('password')) opts.password = password('password', raw.password);
  if (present('set_password')) {
    pdfOnly('set_password');
    opts.setPassword = password('set_password', raw.set_password);
  }
  if (present('split')) {
    const v = raw.split;
    if (v !== true && v !== false && v !== 'true' && v !== 'false') throw invalid('split', 'split must be true or false.');
    if (v === true || v === 'true') {
      if (targetFamily !== 'pdf' && targetFamily !== 'image') throw invalid('split', 'split applies to PDF and image outputs only.');
      opts.split = true;
    }
  }
  if (present('batch')) {
    const v = raw.batch;
    if (v !== true && v !== false && v !== 'true' && v !== 'false') throw invalid('batch', 'batch must be true or false.');
    if (v === true || v === 'true') opts.batch = true;
  }
  for (const field of ['title', 'author'] as const) {
    if (!present(field)) continue;
    pdfOnly(field);
    opts[field] = metadataText(field, raw[field]);
  }
  if (present('max_output_bytes')) opts.maxOutputBytes = integer('max_output_bytes', raw.max_output_bytes, 1, Number.MAX_SAFE_INTEGER);
  if (present('frame')) opts.frame = parseFrame(raw.frame, targetFamily);
  if (present('photo_metadata')) {
    const mode = parsePhotoMetadata(raw.photo_metadata, targetFamily);
    if (mode) opts.photoMetadata = mode;
  }
  const page = parsePageOptions(raw, present, targetFamily);
  if (page) opts.page = page;
  const video = parseVideoOptions(raw, present, targetFamily);
  if (video) opts.video = video;
  const pdfForm = parsePdfFormOptions(raw, present, targetFamily);
  if (pdfForm) opts.pdfForm = pdfForm;
  const sign = parseSignOptions(raw, present, targetFamily);
  if (sign) opts.sign = sign;
  const pdfArchive = parsePdfArchiveOptions(raw, present, targetFamily);
  if (pdfArchive) opts.pdfArchive = pdfArchive;
  const markup = parsePdfMarkupOptions(raw, present, targetFamily);
  if (markup) opts.markup = markup;
  return opts;
}

/** The quality to use: explicit, else the preset's, else the engine's default. */
export function effectiveQuality(opts: ConversionOptions, fallback: number): number {
  return opts.quality ?? opts.preset?.quality ?? fallback;
}

/**
 * Qualities to try, best first, when `max_output_bytes` asks for a smaller file:
 * the effective quality, then a descending ladder below it.
 */
export function qualityLadder(opts: ConversionOptions, fallback: number): number[] {
  const start = effectiveQuality(opts, fallback);
  if (!opts.maxOutputBytes) return [start];
  return [start, ...[75, 55, 40, 25, 10].filter((q) => q < start)];
}
