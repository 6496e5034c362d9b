/**
 * Options of PDF redaction and page marks (issue 25): `redact` (true redaction), and
 * `page_numbers`, `bates`, `stamps`, `header`, `footer` (drawn on the pages). Objects and
 * arrays arrive as JSON in JSON bodies and as JSON text in multipart forms; both are taken.
 * Each problem is a 400 naming the field (`redact.regex`, `stamps[1].image`, …).
 */
import { createHash } from 'node:crypto';
import { ConversionError, invalid, quote } from './errors.js';
import type { FormatFamily } from './formats/catalogue.js';
import { parsePageRange, type PageSpan } from './options.js';

/** The option names, as the API takes them. */
export const PDF_MARKUP_OPTION_NAMES = ['redact', 'page_numbers', 'bates', 'stamps', 'header', 'footer'] as const;

/** Where a line of text or an image goes on the page as displayed. */
export const MARK_POSITIONS = ['top-left', 'top-center', 'top-right', 'bottom-left', 'bottom-center', 'bottom-right'] as const;
export type MarkPosition = (typeof MARK_POSITIONS)[number] | 'center';

/** Limits, as documented in docs/convert-api.md. */
export const PDF_MARKUP_LIMITS = {
  maxAreas: 1000,
  maxTexts: 100,
  maxTextChars: 200,
  maxRegexChars: 500,
  maxStamps: 10,
  maxStampImageBytes: 1024 * 1024,
  maxStampImageSide: 4096,
  maxMarkChars: 200,
  maxAffixChars: 50,
} as const;

/** One redaction box: points, origin at the top-left of the page as displayed. */
export interface RedactArea {
  readonly page: number;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface RedactOptions {
  readonly areas: readonly RedactArea[];
  readonly text: readonly string[];
  readonly regex?: string;
  readonly matchCase: boolean;
  /** `#rrggbb`. */
  readonly fill: string;
}

/** One line of text or one image drawn on chosen pages. */
export interface PageMark {
  readonly text?: string;
  /** The decoded PNG or JPEG. */
  readonly image?: Buffer;
  /** Extension: an image's width in points (default its pixels at 96 dpi). */
  readonly width?: number;
  readonly pages: readonly PageSpan[];
  readonly pagesText: string;
  readonly position: MarkPosition;
  readonly fontSize: number;
  readonly color: string;
  readonly opacity: number;
  /** Degrees, counter-clockwise as displayed. */
  readonly rotation: number;
  readonly margin: number;
  /** Page and Bates numbers: `{page}` is the running number from `start`, padded to `digits`. */
  readonly numbering?: { readonly start: number; readonly digits?: number; readonly prefix: string; readonly suffix: string };
}

export interface PdfMarkupOptions {
  readonly redact?: RedactOptions;
  readonly pageNumbers?: PageMark;
  readonly bates?: PageMark;
  readonly stamps?: readonly PageMark[];
  readonly header?: string;
  readonly footer?: string;
}

const COLOR = /^#[0-9a-fA-F]{6}$/;
// Helvetica of the base 14 draws Latin-1: printable characters of U+0020–U+00FF.
const LATIN1 = /^[\x20-\x7e\u00a0-\u00ff]*$/;

/** An object, or JSON text of one (multipart forms). */
function jsonValue(field: string, v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    throw invalid(field, `${field} must be JSON (in a form: JSON text).`);
  }
}

function object(field: string, v: unknown, keys: readonly string[]): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(field, `${field} must be an object.`);
  const unknown = Object.keys(v).find((k) => !keys.includes(k));
  if (unknown !== undefined) throw invalid(`${field}.${unknown.slice(0, 40)}`, `${field} takes ${keys.join(', ')}; ${quote(unknown)} is not one of them.`);
  return v as Record<string, unknown>;
}

function number(field: string, v: unknown, min: number, max: number, integer = false): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw invalid(field, `${field} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}.`);
  }
  return v;
}

function markText(field: string, v: unknown, max: number, allowEmpty = false): string {
  if (typeof v !== 'string' || v.length > max || (!allowEmpty && v.trim() === '') || !LATIN1.test(v)) {
    throw invalid(field, `${field} must be ${allowEmpty ? 'at most' : '1 to'} ${max} printable Latin-1 characters (Helvetica draws no others).`);
  }
  return v;
}

function color(field: string, v: unknown): string {
  if (typeof v !== 'string' || !COLOR.test(v)) throw invalid(field, `${field} must be a colour like "#cc0000".`);
  return v.toLowerCase();
}

function bool(field: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw invalid(field, `${field} must be true or false.`);
  return v;
}

function pages(field: string, v: unknown): { spans: PageSpan[]; text: string } {
  if (v === undefined) return { spans: [{ from: 1, to: null }], text: '1-' };
  if (typeof v !== 'string') throw invalid(field, `${field} must be a page range like "1-3,5,8-".`);
  try {
    return { spans: parsePageRange(v), text: v.replace(/\s+/g, '') };
  } catch (e) {
    if (e instanceof ConversionError) throw invalid(field, e.message.replaceAll('page_range', field));
    throw e;
  }
}

function position(field: string, v: unknown, fallback: MarkPosition, center: boolean): MarkPosition {
  if (v === undefined) return fallback;
  const allowed: readonly string[] = center ? ['center', ...MARK_POSITIONS] : MARK_POSITIONS;
  if (typeof v !== 'string' || !allowed.includes(v)) throw invalid(field, `${field} must be one of ${allowed.join(', ')}.`);
  return v as MarkPosition;
}

/**
 * A regular expression safe to run: at most 500 characters, compiling, and without the
 * shapes that backtrack catastrophically (a repeated group holding a repetition or an
 * alternation, back-references, look-arounds). Matched by Python's `re`, one line of text at
 * a time, under the job's time limit.
 */
export function checkRegex(field: string, v: unknown): string {
  if (typeof v !== 'string' || v === '' || v.length > PDF_MARKUP_LIMITS.maxRegexChars) throw invalid(field, `${field} must be 1–${PDF_MARKUP_LIMITS.maxRegexChars} characters.`);
  if (/\\[1-9k]|\(\?[^:]/.test(v)) throw invalid(field, `${field} may not use back-references, look-arounds, named groups or inline flags (match_case sets the case).`);
  try {
    new RegExp(v);
  } catch {
    throw invalid(field, `${field} is not a valid regular expression.`);
  }
  // Groups: does each hold a repetition or an alternation, and is it repeated itself?
  const open: { risky: boolean }[] = [];
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      // A character class: its contents are literal.
      for (i++; i < v.length && v[i] !== ']'; i++) if (v[i] === '\\') i++;
      continue;
    }
    const top = open[open.length - 1];
    if (c === '(') open.push({ risky: false });
    else if (c === '|' && top) top.risky = true;
    else if ((c === '*' || c === '+' || c === '{') && top) top.risky = true;
    else if (c === ')') {
      const group = open.pop();
      const next = v[i + 1];
      if (group?.risky && (next === '*' || next === '+' || next === '{')) {
        throw invalid(field, `${field}: a repeated group that holds a repetition or an alternation (like (a+)+ or (a|b)*) can take exponential time; write it without.`);
      }
      const outer = open[open.length - 1];
      if (outer && group?.risky) outer.risky = true;
    }
  }
  return v;
}

function parseRedact(raw: unknown): RedactOptions {
  const o = object('redact', jsonValue('redact', raw), ['areas', 'text', 'regex', 'match_case', 'fill']);
  const areas: RedactArea[] = [];
  if (o.areas !== undefined) {
    if (!Array.isArray(o.areas) || o.areas.length > PDF_MARKUP_LIMITS.maxAreas) throw invalid('redact.areas', `redact.areas must be an array of at most ${PDF_MARKUP_LIMITS.maxAreas} {page, x, y, width, height}.`);
    for (const [i, a] of (o.areas as unknown[]).entries()) {
      const f = `redact.areas[${i}]`;
      const area = object(f, a, ['page', 'x', 'y', 'width', 'height']);
      areas.push({
        page: number(`${f}.page`, area.page, 1, 100_000, true),
        x: number(`${f}.x`, area.x, 0, 100_000),
        y: number(`${f}.y`, area.y, 0, 100_000),
        width: number(`${f}.width`, area.width, 0.01, 100_000),
        height: number(`${f}.height`, area.height, 0.01, 100_000),
      });
    }
  }
  const text: string[] = [];
  if (o.text !== undefined) {
    if (!Array.isArray(o.text) || o.text.length > PDF_MARKUP_LIMITS.maxTexts) throw invalid('redact.text', `redact.text must be an array of at most ${PDF_MARKUP_LIMITS.maxTexts} strings.`);
    for (const [i, t] of (o.text as unknown[]).entries()) {
      if (typeof t !== 'string' || t.trim() === '' || t.length > PDF_MARKUP_LIMITS.maxTextChars) throw invalid(`redact.text[${i}]`, `redact.text[${i}] must be 1–${PDF_MARKUP_LIMITS.maxTextChars} characters.`);
      text.push(t);
    }
  }
  const regex = o.regex === undefined ? undefined : checkRegex('redact.regex', o.regex);
  if (!areas.length && !text.length && regex === undefined) throw invalid('redact', 'redact needs at least one of areas, text and regex.');
  return {
    areas,
    text,
    ...(regex !== undefined ? { regex } : {}),
    matchCase: o.match_case === undefined ? false : bool('redact.match_case', o.match_case),
    fill: o.fill === undefined ? '#000000' : color('redact.fill', o.fill),
  };
}

function parsePageNumbers(raw: unknown): PageMark | undefined {
  const v = jsonValue('page_numbers', raw);
  if (v === false) return undefined;
  const o = v === true ? {} : object('page_numbers', v, ['format', 'position', 'font_size', 'start', 'pages', 'margin']);
  const range = pages('page_numbers.pages', o.pages);
  const format = o.format === undefined ? '{page}' : markText('page_numbers.format', o.format, PDF_MARKUP_LIMITS.maxMarkChars);
  return {
    text: format,
    pages: range.spans,
    pagesText: range.text,
    position: position('page_numbers.position', o.position, 'bottom-center', false),
    fontSize: o.font_size === undefined ? 10 : number('page_numbers.font_size', o.font_size, 6, 72),
    color: '#000000',
    opacity: 1,
    rotation: 0,
    margin: o.margin === undefined ? 24 : number('page_numbers.margin', o.margin, 0, 200),
    numbering: { start: o.start === undefined ? 1 : number('page_numbers.start', o.start, 0, 1_000_000_000, true), prefix: '', suffix: '' },
  };
}

function parseBates(raw: unknown): PageMark {
  const o = object('bates', jsonValue('bates', raw), ['prefix', 'suffix', 'start', 'digits', 'position', 'font_size']);
  return {
    text: '{page}',
    pages: [{ from: 1, to: null }],
    pagesText: '1-',
    position: position('bates.position', o.position, 'bottom-right', false),
    fontSize: o.font_size === undefined ? 10 : number('bates.font_size', o.font_size, 6, 72),
    color: '#000000',
    opacity: 1,
    rotation: 0,
    margin: 24,
    numbering: {
      start: o.start === undefined ? 1 : number('bates.start', o.start, 0, 999_999_999_999, true),
      digits: o.digits === undefined ? 6 : number('bates.digits', o.digits, 1, 12, true),
      prefix: o.prefix === undefined ? '' : markText('bates.prefix', o.prefix, PDF_MARKUP_LIMITS.maxAffixChars, true),
      suffix: o.suffix === undefined ? '' : markText('bates.suffix', o.suffix, PDF_MARKUP_LIMITS.maxAffixChars, true),
    },
  };
}

/** Width and height of a PNG or JPEG from its header, or undefined when it is neither. */
export function imageSize(b: Buffer): { width: number; height: number; type: 'png' | 'jpeg' } | undefined {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), type: 'png' };
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  // JPEG: walk the segments to the first start-of-frame marker.
  for (let i = 2; i + 9 < b.length; ) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1] as number;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7), type: 'jpeg' };
    i += 2 + b.readUInt16BE(i + 2);
  }
  return undefined;
}

function stampImage(field: string, v: unknown): Buffer {
  const max = PDF_MARKUP_LIMITS.maxStampImageBytes;
  if (typeof v !== 'string' || v.length > Math.ceil((max * 4) / 3) + 4 || !/^[A-Za-z0-9+/]+={0,2}$/.test(v)) throw invalid(field, `${field} must be a base64 PNG or JPEG of at most 1 MB.`);
  const bytes = Buffer.from(v, 'base64');
  const size = imageSize(bytes);
  if (bytes.length > max || !size) throw invalid(field, `${field} must be a base64 PNG or JPEG of at most 1 MB.`);
  const side = PDF_MARKUP_LIMITS.maxStampImageSide;
  if (size.width < 1 || size.height < 1 || size.width > side || size.height > side) throw invalid(field, `${field} must be at most ${side}×${side} pixels (it is ${size.width}×${size.height}).`);
  return bytes;
}

function parseStamps(raw: unknown): PageMark[] {
  const v = jsonValue('stamps', raw);
  if (!Array.isArray(v) || v.length === 0 || v.length > PDF_MARKUP_LIMITS.maxStamps) throw invalid('stamps', `stamps must be an array of 1–${PDF_MARKUP_LIMITS.maxStamps} stamps.`);
  return v.map((s: unknown, i) => {
    const f = `stamps[${i}]`;
    const o = object(f, s, ['text', 'image', 'width', 'pages', 'position', 'font_size', 'color', 'opacity', 'rotation', 'margin']);
    if ((o.text === undefined) === (o.image === undefined)) throw invalid(f, `${f} needs exactly one of text and image.`);
    const range = pages(`${f}.pages`, o.pages);
    return {
      ...(o.text !== undefined ? { text: markText(`${f}.text`, o.text, PDF_MARKUP_LIMITS.maxMarkChars) } : { image: stampImage(`${f}.image`, o.image) }),
      ...(o.width !== undefined ? { width: number(`${f}.width`, o.width, 1, 14_400) } : {}),
      pages: range.spans,
      pagesText: range.text,
      position: position(`${f}.position`, o.position, 'center', true),
      fontSize: o.font_size === undefined ? 36 : number(`${f}.font_size`, o.font_size, 6, 200),
      color: o.color === undefined ? '#cc0000' : color(`${f}.color`, o.color),
      opacity: o.opacity === undefined ? 1 : number(`${f}.opacity`, o.opacity, 0, 1),
      rotation: o.rotation === undefined ? 0 : number(`${f}.rotation`, o.rotation, -180, 180),
      margin: o.margin === undefined ? 24 : number(`${f}.margin`, o.margin, 0, 200),
    };
  });
}

/**
 * The redaction and page-mark options present in `raw` (`present` says which are); PDF
 * targets only.
 */
export function parsePdfMarkupOptions(raw: Readonly<Record<string, unknown>>, present: (k: string) => boolean, targetFamily: FormatFamily): PdfMarkupOptions | undefined {
  const given = PDF_MARKUP_OPTION_NAMES.filter(present);
  if (!given.length) return undefined;
  for (const f of given) if (targetFamily !== 'pdf') throw invalid(f, `${f} applies to PDF outputs only.`);
  const o: { -readonly [K in keyof PdfMarkupOptions]: PdfMarkupOptions[K] } = {};
  if (present('redact')) o.redact = parseRedact(raw.redact);
  if (present('page_numbers')) {
    const numbers = parsePageNumbers(raw.page_numbers);
    if (numbers) o.pageNumbers = numbers;
  }
  if (present('bates')) o.bates = parseBates(raw.bates);
  if (present('stamps')) o.stamps = parseStamps(raw.stamps);
  if (present('header')) o.header = markText('header', raw.header, PDF_MARKUP_LIMITS.maxMarkChars);
  if (present('footer')) o.footer = markText('footer', raw.footer, PDF_MARKUP_LIMITS.maxMarkChars);
  return Object.keys(o).length ? o : undefined;
}

/**
 * Pages the options name that the output does not have: a redaction area past the last
 * page, or a page mark's range with an explicit page past it → 400 naming the field (the
 * preflight's check, like `page_range`'s).
 */
export function checkMarkupPages(m: PdfMarkupOptions, pageCount: number): void {
  const past = m.redact?.areas.find((a) => a.page > pageCount);
  if (past) throw invalid('redact.areas', `redact.areas asks for page ${past.page} but the document has ${pageCount} page(s).`);
  const ranged: [string, PageMark | undefined][] = [['page_numbers.pages', m.pageNumbers], ...(m.stamps ?? []).map((s, i): [string, PageMark] => [`stamps[${i}].pages`, s])];
  for (const [field, mark] of ranged) {
    const last = mark?.pages.reduce((n, s) => Math.max(n, s.to ?? s.from), 0) ?? 0;
    if (last > pageCount) throw invalid(field, `${field} asks for page ${last} but the document has ${pageCount} page(s).`);
  }
}

/** The options as stored for the worker and answered (their API names, normalised). */
export function pdfMarkupRecord(m: PdfMarkupOptions | undefined): Record<string, unknown> {
  if (!m) return {};
  const out: Record<string, unknown> = {};
  if (m.redact) {
    const r = m.redact;
    out.redact = { ...(r.areas.length ? { areas: r.areas } : {}), ...(r.text.length ? { text: r.text } : {}), ...(r.regex !== undefined ? { regex: r.regex } : {}), match_case: r.matchCase, fill: r.fill };
  }
  if (m.pageNumbers) {
    const p = m.pageNumbers;
    out.page_numbers = { format: p.text, position: p.position, font_size: p.fontSize, start: p.numbering?.start ?? 1, pages: p.pagesText, margin: p.margin };
  }
  if (m.bates) {
    const b = m.bates;
    out.bates = { prefix: b.numbering?.prefix ?? '', suffix: b.numbering?.suffix ?? '', start: b.numbering?.start ?? 1, digits: b.numbering?.digits ?? 6, position: b.position, font_size: b.fontSize };
  }
  if (m.stamps) {
    out.stamps = m.stamps.map((s) => ({
      ...(s.text !== undefined ? { text: s.text } : { image: s.image?.toString('base64') }),
      ...(s.width !== undefined ? { width: s.width } : {}),
      pages: s.pagesText, position: s.position, font_size: s.fontSize, color: s.color, opacity: s.opacity, rotation: s.rotation, margin: s.margin,
    }));
  }
  if (m.header !== undefined) out.header = m.header;
  if (m.footer !== undefined) out.footer = m.footer;
  return out;
}

/**
 * Stored stamps as answered in records: an image (up to 1 MB of base64) is answered by its
 * SHA-256 and size, not sent back in every status and listing.
 */
export function answeredStamps(stamps: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return stamps.map(({ image, ...rest }) => {
    if (typeof image !== 'string') return rest;
    const bytes = Buffer.from(image, 'base64');
    return { ...rest, image_sha256: createHash('sha256').update(bytes).digest('hex'), image_bytes: bytes.length };
  });
}
