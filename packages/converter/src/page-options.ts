/**
 * Page options of HTML rendered by Chromium (issue 22): paper, margins, orientation, scale,
 * backgrounds, header and footer templates, emulated media, a selector to wait for, one long
 * page, and the viewport of screenshots. Flat option names (they arrive as multipart fields
 * too); each is refused with a 400 naming it when its value is wrong or its target does not
 * take it.
 */
import { invalid, quote } from './errors.js';
import type { FormatFamily } from './formats/catalogue.js';

/** Paper sizes by name, in inches (Chromium's `page.pdf` formats). */
export const PAPER_SIZES: Readonly<Record<string, readonly [number, number]>> = {
  a3: [11.69, 16.54],
  a4: [8.27, 11.69],
  a5: [5.83, 8.27],
  letter: [8.5, 11],
  legal: [8.5, 14],
  tabloid: [11, 17],
};

/** A length in CSS units as Chromium takes it (`10mm`, `0.5in`, `12px`, `1cm`). */
const LENGTH = /^(\d{1,4}(?:\.\d{1,3})?)(mm|cm|in|px)$/;
const PER_INCH: Readonly<Record<string, number>> = { in: 1, cm: 2.54, mm: 25.4, px: 96 };

/** Most characters of a header or footer template. */
export const MAX_TEMPLATE_CHARS = 8192;

export interface PageOptions {
  /** Paper width and height in inches (after `landscape`). */
  readonly paper?: { readonly width: number; readonly height: number; readonly text: string };
  readonly landscape?: boolean;
  /** Margins top, right, bottom, left, as CSS lengths. */
  readonly margin?: { readonly top: string; readonly right: string; readonly bottom: string; readonly left: string; readonly text: string };
  readonly scale?: number;
  readonly printBackground?: boolean;
  readonly preferCssPageSize?: boolean;
  readonly headerHtml?: string;
  readonly footerHtml?: string;
  readonly media?: 'print' | 'screen';
  readonly waitFor?: string;
  readonly singlePage?: boolean;
  readonly viewportWidth?: number;
  readonly deviceScale?: number;
  /** The caller's stylesheet, applied after the page's own (and after Markdown's default one). */
  readonly css?: string;
}

/** The option names, as the API takes them. */
export const PAGE_OPTION_NAMES = [
  'paper', 'landscape', 'margin', 'scale', 'print_background', 'prefer_css_page_size', 'header_html', 'footer_html',
  'media', 'wait_for', 'single_page', 'viewport_width', 'device_scale', 'css',
] as const;

/** Most characters of a `css` stylesheet. */
export const MAX_CSS_CHARS = 65_536;

const PDF_ONLY = new Set(['paper', 'landscape', 'margin', 'scale', 'print_background', 'prefer_css_page_size', 'header_html', 'footer_html', 'single_page']);
const IMAGE_ONLY = new Set(['viewport_width', 'device_scale']);

function bool(field: string, v: unknown): boolean {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw invalid(field, `${field} must be true or false.`);
}

function number(field: string, v: unknown, min: number, max: number, integer: boolean): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw invalid(field, `${field} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}.`);
  }
  return n;
}

function inches(field: string, text: string): number {
  const m = LENGTH.exec(text);
  if (!m) throw invalid(field, `${field}: ${quote(text)} is not a length like 210mm, 8.5in, 21cm or 800px.`);
  return Number(m[1]) / (PER_INCH[m[2] as string] as number);
}

function template(field: string, v: unknown): string {
  if (typeof v !== 'string' || v.length > MAX_TEMPLATE_CHARS) throw invalid(field, `${field} must be HTML of at most ${MAX_TEMPLATE_CHARS} characters.`);
  return v;
}

/**
 * The page options present in `raw` (`present` says which are), checked against the target
 * family: PDF layout options for PDF targets, viewport options for images.
 */
export function parsePageOptions(raw: Readonly<Record<string, unknown>>, present: (k: string) => boolean, targetFamily: FormatFamily): PageOptions | undefined {
  const given = PAGE_OPTION_NAMES.filter(present);
  if (!given.length) return undefined;
  for (const f of given) {
    if (PDF_ONLY.has(f) && targetFamily !== 'pdf') throw invalid(f, `${f} applies to PDF outputs of HTML only.`);
    if (IMAGE_ONLY.has(f) && targetFamily !== 'image') throw invalid(f, `${f} applies to image outputs of HTML only.`);
  }
  const o: { -readonly [K in keyof PageOptions]: PageOptions[K] } = {};
  if (present('landscape')) o.landscape = bool('landscape', raw.landscape);
  if (present('paper')) {
    const text = String(raw.paper).trim();
    const named = PAPER_SIZES[text.toLowerCase()];
    let size: [number, number];
    if (named) size = [named[0], named[1]];
    else {
      const parts = text.toLowerCase().split('x');
      if (parts.length !== 2) throw invalid('paper', 'paper must be A3, A4, A5, Letter, Legal, Tabloid or a size like 210mmx297mm.');
      size = [inches('paper', parts[0] as string), inches('paper', parts[1] as string)];
      if (size.some((s) => s < 1 || s > 200)) throw invalid('paper', 'paper sides must be from 1 to 200 inches.');
    }
    o.paper = { width: size[0], height: size[1], text };
  }
  if (present('margin')) {
    const text = String(raw.margin).trim();
    const parts = text.split(/\s+/);
    if (parts.length > 4) throw invalid('margin', 'margin takes 1 to 4 lengths, as in CSS (top right bottom left).');
    for (const p of parts) if (inches('margin', p) > 20) throw invalid('margin', 'each margin must be at most 20 inches.');
    const [top, right = top, bottom = top, left = right] = parts as [string, string?, string?, string?];
    o.margin = { top, right, bottom, left, text };
  }
  if (present('scale')) o.scale = number('scale', raw.scale, 0.1, 2, false);
  if (present('print_background')) o.printBackground = bool('print_background', raw.print_background);
  if (present('prefer_css_page_size')) o.preferCssPageSize = bool('prefer_css_page_size', raw.prefer_css_page_size);
  if (present('header_html')) o.headerHtml = template('header_html', raw.header_html);
  if (present('footer_html')) o.footerHtml = template('footer_html', raw.footer_html);
  if (present('media')) {
    if (raw.media !== 'print' && raw.media !== 'screen') throw invalid('media', 'media must be print or screen.');
    o.media = raw.media;
  }
  if (present('wait_for')) {
    const v = raw.wait_for;
    if (typeof v !== 'string' || v.trim() === '' || v.length > 256) throw invalid('wait_for', 'wait_for must be a CSS selector of 1–256 characters.');
    o.waitFor = v.trim();
  }
  if (present('single_page')) o.singlePage = bool('single_page', raw.single_page);
  if (present('css')) {
    if (typeof raw.css !== 'string' || raw.css.length > MAX_CSS_CHARS) throw invalid('css', `css must be a stylesheet of at most ${MAX_CSS_CHARS} characters.`);
    o.css = raw.css;
  }
  if (present('viewport_width')) o.viewportWidth = number('viewport_width', raw.viewport_width, 320, 3840, true);
  if (present('device_scale')) o.deviceScale = number('device_scale', raw.device_scale, 1, 3, false);
  if (o.singlePage && o.paper) throw invalid('single_page', 'single_page cannot be combined with paper: the page is as tall as the document.');
  return o;
}

/** The options as stored and answered (their API names, normalised), for the record. */
export function pageOptionsRecord(p: PageOptions | undefined): Record<string, string | number | boolean> {
  if (!p) return {};
  const out: Record<string, string | number | boolean> = {};
  if (p.paper) out.paper = p.paper.text;
  if (p.landscape !== undefined) out.landscape = p.landscape;
  if (p.margin) out.margin = p.margin.text;
  if (p.scale !== undefined) out.scale = p.scale;
  if (p.printBackground !== undefined) out.print_background = p.printBackground;
  if (p.preferCssPageSize !== undefined) out.prefer_css_page_size = p.preferCssPageSize;
  if (p.headerHtml !== undefined) out.header_html = p.headerHtml;
  if (p.footerHtml !== undefined) out.footer_html = p.footerHtml;
  if (p.media) out.media = p.media;
  if (p.waitFor) out.wait_for = p.waitFor;
  if (p.singlePage !== undefined) out.single_page = p.singlePage;
  if (p.viewportWidth !== undefined) out.viewport_width = p.viewportWidth;
  if (p.deviceScale !== undefined) out.device_scale = p.deviceScale;
  if (p.css !== undefined) out.css = p.css;
  return out;
}
