/**
 * The `sign` option (issue 25): `true` or `{certificate?, visible?, page?, x?, y?, width?,
 * height?, reason?, location?, contact?}`. Which certificate signs is the service's business
 * (it resolves `certificate` and passes the credential with the request); the engine only
 * checks the shape here.
 */
import { invalid } from './errors.js';
import type { FormatFamily } from './formats/catalogue.js';

/** Validated `sign` options. */
export interface SignOptions {
  /** `operator` (the service's certificate) or an account certificate's id. */
  readonly certificate: string;
  readonly visible: boolean;
  /** 1-based; -1 = the last page. */
  readonly page: number;
  /** The visible box, points from the top-left of the page as displayed; absent: 200×60 at the bottom-right, 36 pt from the edges. */
  readonly box?: { readonly x: number; readonly y: number; readonly width: number; readonly height: number };
  readonly reason?: string;
  readonly location?: string;
  readonly contact?: string;
}

/** The option's name, as the API takes it. */
export const SIGN_OPTION_NAMES = ['sign'] as const;
/** Longest `reason`, `location`, `contact`. */
export const MAX_SIGN_TEXT_CHARS = 200;
const KEYS = new Set(['certificate', 'visible', 'page', 'x', 'y', 'width', 'height', 'reason', 'location', 'contact']);

/** Parses `sign` (an object, or its JSON text from a multipart form); undefined when absent or false. */
export function parseSignOptions(raw: Readonly<Record<string, unknown>>, present: (k: string) => boolean, targetFamily: FormatFamily): SignOptions | undefined {
  if (!present('sign')) return undefined;
  let v = raw.sign;
  if (typeof v === 'string') {
    const t = v.trim();
    if (t === 'true' || t === 'false') v = t === 'true';
    else {
      try {
        v = JSON.parse(t);
      } catch {
        throw invalid('sign', 'sign must be true or an object such as {"visible": true, "reason": "Approved"}.');
      }
    }
  }
  if (v === false) return undefined;
  if (targetFamily !== 'pdf') throw invalid('sign', 'sign applies to PDF outputs only.');
  if (v === true) return { certificate: 'operator', visible: false, page: 1 };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid('sign', 'sign must be true or an object such as {"visible": true, "reason": "Approved"}.');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!KEYS.has(k)) throw invalid('sign', `sign: unknown field "${k.slice(0, 40)}"; fields are ${[...KEYS].join(', ')}.`);
  }
  const given = (k: string): boolean => o[k] !== undefined && o[k] !== null;
  const out: { -readonly [K in keyof SignOptions]: SignOptions[K] } = { certificate: 'operator', visible: false, page: 1 };
  if (given('certificate')) {
    if (typeof o.certificate !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(o.certificate)) throw invalid('sign', 'sign.certificate must be "operator" or the id of one of your signing certificates.');
    out.certificate = o.certificate;
  }
  if (given('visible')) {
    if (typeof o.visible !== 'boolean') throw invalid('sign', 'sign.visible must be true or false.');
    out.visible = o.visible;
  }
  if (given('page')) {
    const p = o.page;
    if (typeof p !== 'number' || !Number.isInteger(p) || (p < 1 && p !== -1) || p > 100_000) throw invalid('sign', 'sign.page must be a page number from 1, or -1 for the last page.');
    out.page = p;
  }
  const box = ['x', 'y', 'width', 'height'] as const;
  const boxGiven = box.filter(given);
  if (boxGiven.length) {
    if (boxGiven.length !== 4) throw invalid('sign', 'sign: give x, y, width and height together (or none for the default box).');
    if (!out.visible) throw invalid('sign', 'sign: x, y, width and height place a visible signature; add "visible": true.');
    const n: number[] = box.map((k) => {
      const x = o[k];
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || x > 14_400) throw invalid('sign', `sign.${k} must be a number of points from 0 to 14400.`);
      return x;
    });
    if (n[2]! < 40 || n[3]! < 20) throw invalid('sign', 'sign: the visible box must be at least 40×20 points.');
    out.box = { x: n[0]!, y: n[1]!, width: n[2]!, height: n[3]! };
  }
  for (const k of ['reason', 'location', 'contact'] as const) {
    if (!given(k)) continue;
    const s = o[k];
    // eslint-disable-next-line no-control-regex
    if (typeof s !== 'string' || s.trim() === '' || s.length > MAX_SIGN_TEXT_CHARS || /[\u0000-\u001f\u007f-\u009f]/.test(s)) {
      throw invalid('sign', `sign.${k} must be 1–${MAX_SIGN_TEXT_CHARS} characters without control characters.`);
    }
    out[k] = s.trim();
  }
  return out;
}

/**
 * Options `sign` cannot go with: an encrypted output (the signature would have to be computed
 * over the encrypted file and the update encrypted too), one PDF per page (`split`: the pages
 * would not carry it) and `batch`.
 */
export function refuseSignWith(options: { readonly setPassword?: string; readonly split?: boolean; readonly batch?: boolean }): void {
  if (options.setPassword !== undefined) throw invalid('sign', 'sign: signing encrypted output is not supported; leave out set_password.');
  if (options.split) throw invalid('sign', 'sign cannot be combined with split (the pages would not carry the signature).');
  if (options.batch) throw invalid('sign', 'sign cannot be combined with batch.');
}

/**
 * Whether a PDF → PDF conversion only signs: then the source's own bytes are signed (an
 * incremental update after them), not qpdf's clean rewrite, so signatures it already carries
 * stay valid. The sandboxed preparation still parses it as hostile input.
 */
export function signsSourceAsIs(source: string, target: string, options: object): boolean {
  return source === 'pdf' && target === 'pdf' && 'sign' in options && Object.keys(options).every((k) => k === 'sign' || k === 'maxOutputBytes');
}
