/**
 * Options of PDF forms and metadata (issue 25): `form_data` (fill the PDF's AcroForm fields),
 * `flatten` (fields and annotations become page content) and `metadata` (the information
 * dictionary and XMP together). Objects in JSON; a multipart form carries them as JSON text,
 * which the service parses before they reach here. Whether a `form_data` name and value fit
 * the PDF is known only once the PDF is read: {@link checkFormData}, against pdf-info's facts.
 */
import { invalid, quote } from './errors.js';
import type { FormatFamily } from './formats/catalogue.js';

/** The option names, as the API takes them. */
export const PDF_FORM_OPTION_NAMES = ['form_data', 'flatten', 'metadata'] as const;

/** A value for one field: text, a check box's true/false (or on-state name), a radio's or choice's option, a multi-select list's options. */
export type FormValue = string | boolean | readonly string[];

/** `metadata`: what is written to the information dictionary and the XMP. */
export interface PdfMetadata {
  readonly title?: string;
  readonly author?: string;
  readonly subject?: string;
  /** Joined with ", " in the information dictionary; one dc:subject entry each in the XMP. */
  readonly keywords?: readonly string[];
  readonly creator?: string;
  readonly producer?: string;
  /** ISO 8601 dates, as given (a date-time without a zone is taken as UTC). */
  readonly created?: string;
  readonly modified?: string;
}

/** Validated form and metadata options. */
export interface PdfFormOptions {
  readonly formData?: Readonly<Record<string, FormValue>>;
  readonly flatten?: boolean;
  readonly metadata?: PdfMetadata;
}

/** Caps, as documented in docs/convert-api.md. */
export const PDF_FORM_LIMITS = {
  /** Most fields one `form_data` fills. */
  maxFields: 1000,
  /** Longest field name and longest text value. */
  maxNameChars: 500,
  maxValueChars: 10_000,
  /** Most options a multi-select list value names. */
  maxListValues: 500,
  /** Longest metadata text and most keywords. */
  maxMetadataChars: 1000,
  maxKeywords: 100,
} as const;

const METADATA_TEXT = ['title', 'author', 'subject', 'creator', 'producer'] as const;
const METADATA_DATES = ['created', 'modified'] as const;
const METADATA_KEYS: readonly string[] = [...METADATA_TEXT, 'keywords', ...METADATA_DATES];
/** ISO 8601 date or date-time, with an optional zone. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseFormData(v: unknown): Record<string, FormValue> {
  if (!isObject(v)) throw invalid('form_data', 'form_data must be an object of field names and values, e.g. {"name": "Ada", "agree": true}.');
  const entries = Object.entries(v);
  if (!entries.length) throw invalid('form_data', 'form_data names no field.');
  if (entries.length > PDF_FORM_LIMITS.maxFields) throw invalid('form_data', `form_data fills at most ${PDF_FORM_LIMITS.maxFields} fields.`);
  const out: Record<string, FormValue> = {};
  for (const [name, value] of entries) {
    if (name === '' || name.length > PDF_FORM_LIMITS.maxNameChars) throw invalid('form_data', `form_data: field names are 1–${PDF_FORM_LIMITS.maxNameChars} characters.`);
    const field = formField(name);
    if (typeof value === 'boolean') out[name] = value;
    else if (typeof value === 'string') {
      // Tabs and line breaks are a multi-line field's; other control characters are no one's.
      if (value.length > PDF_FORM_LIMITS.maxValueChars || CONTROL.test(value)) throw invalid(field, `${field}: a text value is at most ${PDF_FORM_LIMITS.maxValueChars} characters, without control characters.`);
      out[name] = value;
    } else if (Array.isArray(value) && value.length >= 1 && value.length <= PDF_FORM_LIMITS.maxListValues && value.every((x) => typeof x === 'string' && x.length <= PDF_FORM_LIMITS.maxValueChars)) {
      out[name] = value as string[];
    } else {
      throw invalid(field, `${field} must be a string, true or false, or a list of strings (a multi-select list).`);
    }
  }
  return out;
}

/** The error field of one `form_data` entry: `form_data.<name>`, cut. */
export function formField(name: string): string {
  return `form_data.${name}`.slice(0, 200);
}

function parseMetadata(v: unknown): PdfMetadata {
  if (!isObject(v)) throw invalid('metadata', `metadata must be an object with any of ${METADATA_KEYS.join(', ')}.`);
  const unknown = Object.keys(v).filter((k) => !METADATA_KEYS.includes(k));
  if (unknown.length) throw invalid(`metadata.${unknown[0]}`.slice(0, 64), `metadata: ${quote(unknown[0])} is not one of ${METADATA_KEYS.join(', ')}.`);
  const out: { -readonly [K in keyof PdfMetadata]: PdfMetadata[K] } = {};
  const given = (k: string): boolean => v[k] !== undefined && v[k] !== null;
  const textOf = (field: string, x: unknown): string => {
    if (typeof x !== 'string' || x.trim() === '' || x.length > PDF_FORM_LIMITS.maxMetadataChars || CONTROL.test(x) || /[\n\r\t]/.test(x)) {
      throw invalid(field, `${field} must be 1–${PDF_FORM_LIMITS.maxMetadataChars} characters without control characters.`);
    }
    return x.trim();
  };
  for (const k of METADATA_TEXT) if (given(k)) out[k] = textOf(`metadata.${k}`, v[k]);
  if (given('keywords')) {
    const raw = v.keywords;
    const list = typeof raw === 'string' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : raw;
    if (!Array.isArray(list) || !list.length || list.length > PDF_FORM_LIMITS.maxKeywords) {
      throw invalid('metadata.keywords', `metadata.keywords must be a string or a list of 1–${PDF_FORM_LIMITS.maxKeywords} strings.`);
    }
    out.keywords = list.map((x) => textOf('metadata.keywords', x));
  }
  for (const k of METADATA_DATES) {
    if (!given(k)) continue;
    const d = v[k];
    if (typeof d !== 'string' || !ISO_DATE.test(d) || Number.isNaN(Date.parse(d))) {
      throw invalid(`metadata.${k}`, `metadata.${k} must be an ISO 8601 date or date-time, e.g. "2026-11-27T10:30:00Z".`);
    }
    // A time without a zone is taken as UTC (the XMP and the dictionary then agree on it).
    out[k] = /T[^Z+-]*$/.test(d) ? `${d}Z` : d;
  }
  if (!Object.keys(out).length) throw invalid('metadata', `metadata names none of ${METADATA_KEYS.join(', ')}.`);
  return out;
}

/**
 * The form and metadata options present in `raw`; all three apply to PDF targets only.
 * `metadata.title` (or `.author`) with the `title` (or `author`) option is refused: two
 * answers to one question.
 */
export function parsePdfFormOptions(raw: Readonly<Record<string, unknown>>, present: (k: string) => boolean, targetFamily: FormatFamily): PdfFormOptions | undefined {
  const given = PDF_FORM_OPTION_NAMES.filter(present);
  if (!given.length) return undefined;
  for (const f of given) if (targetFamily !== 'pdf') throw invalid(f, `${f} applies to PDF outputs only.`);
  const o: { -readonly [K in keyof PdfFormOptions]: PdfFormOptions[K] } = {};
  if (present('form_data')) o.formData = parseFormData(raw.form_data);
  if (present('flatten')) {
    const v = raw.flatten;
    if (v !== true && v !== false && v !== 'true' && v !== 'false') throw invalid('flatten', 'flatten must be true or false.');
    if (v === true || v === 'true') o.flatten = true;
  }
  if (present('metadata')) {
    o.metadata = parseMetadata(raw.metadata);
    for (const k of ['title', 'author'] as const) {
      if (o.metadata[k] !== undefined && present(k)) throw invalid(`metadata.${k}`, `Give the ${k} once: as ${k} or as metadata.${k}, not both.`);
    }
  }
  return Object.keys(o).length ? o : undefined;
}

/** The options as stored for the worker (their API names). */
export function pdfFormOptionsRecord(o: PdfFormOptions | undefined): { form_data?: Record<string, FormValue>; flatten?: true; metadata?: Record<string, string | readonly string[]> } {
  if (!o) return {};
  return {
    ...(o.formData ? { form_data: { ...o.formData } } : {}),
    ...(o.flatten ? { flatten: true as const } : {}),
    ...(o.metadata ? { metadata: { ...o.metadata } } : {}),
  };
}

/** One field of pdf-info's facts (python/pdf-info.py), as far as a fill needs it. */
export interface FormFieldFacts {
  readonly name: string;
  readonly type: 'text' | 'checkbox' | 'radio' | 'choice' | 'list' | 'signature' | 'button';
  readonly options?: readonly string[];
  /** Check box and radio widgets: their appearance states other than Off (the export values are `options`). */
  readonly states?: readonly string[];
  readonly multi_select?: boolean;
  readonly read_only?: boolean;
  readonly multiline?: boolean;
  readonly max_length?: number;
}

/**
 * Checks `form_data` against the PDF's fields: unknown names → 400 `form_data` naming them;
 * a value its field cannot take → 400 `form_data.<name>` (a string for a check box that has
 * no such state, an option not in a choice list, a list for a single choice, a button or
 * signature field, a read-only field).
 */
export function checkFormData(data: Readonly<Record<string, FormValue>>, fields: readonly FormFieldFacts[]): void {
  if (!fields.length) throw invalid('form_data', 'form_data fills form fields, and this PDF has none.');
  const byName = new Map(fields.map((f) => [f.name, f]));
  const unknown = Object.keys(data).filter((n) => !byName.has(n));
  if (unknown.length) {
    const shown = unknown.slice(0, 10).map((n) => quote(n, 80)).join(', ');
    throw invalid('form_data', `form_data names ${unknown.length === 1 ? 'a field' : 'fields'} this PDF does not have: ${shown}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''}; pdf → json lists its fields.`);
  }
  for (const [name, value] of Object.entries(data)) {
    const f = byName.get(name) as FormFieldFacts;
    const field = formField(name);
    const options = f.options ?? [];
    const states = f.states ?? [];
    const oneOf = (): string => options.slice(0, 20).map((o) => quote(o, 60)).join(', ');
    if (f.read_only) throw invalid(field, `${quote(name, 80)} is read-only.`);
    switch (f.type) {
      case 'text':
        if (typeof value !== 'string') throw invalid(field, `${quote(name, 80)} is a text field: give a string.`);
        if (f.max_length !== undefined && [...value].length > f.max_length) throw invalid(field, `${quote(name, 80)} takes at most ${f.max_length} characters.`);
        break;
      case 'checkbox':
        // true needs an on-state to show (a check box without appearances has none).
        if (!(value === false || (value === true && states.length > 0) || (typeof value === 'string' && (states.includes(value) || options.includes(value))))) {
          throw invalid(field, `${quote(name, 80)} is a check box: give true, false${options.length ? ` or ${oneOf()}` : ''}.`);
        }
        break;
      case 'radio':
        if (value !== false && !(typeof value === 'string' && (options.includes(value) || states.includes(value)))) {
          throw invalid(field, `${quote(name, 80)} is a radio group: give one of ${oneOf()} (or false for none).`);
        }
        break;
      case 'choice':
      case 'list': {
        const picked = typeof value === 'string' ? [value] : Array.isArray(value) ? value : null;
        if (!picked || !picked.every((p) => options.includes(p))) throw invalid(field, `${quote(name, 80)} takes one of its options: ${oneOf()}.`);
        if (picked.length > 1 && !f.multi_select) throw invalid(field, `${quote(name, 80)} takes one option, not a list.`);
        break;
      }
      default:
        throw invalid(field, `${quote(name, 80)} is a ${f.type} field, which form_data does not fill.`);
    }
  }
}
