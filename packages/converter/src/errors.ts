/**
 * Failures as data. The codes are the conversion API's (convert-decisions.md item 16);
 * the HTTP layer alone maps them to statuses. `message` is safe to send; `detail` (engine
 * output, paths) is for logs only.
 */
export type ConversionErrorCode =
  | 'invalid_request'
  | 'unsupported_format'
  | 'unsupported_conversion'
  | 'conversion_failed'
  | 'output_too_large'
  /** An encrypted PDF that opens only with a password (convert-decisions.md item 18). */
  | 'password_required'
  /** The LibreOffice queue is full: retry later (maps to 503 `service_unavailable`). */
  | 'service_unavailable'
  /** The disk under the job folder or the destination filled up: not the file's fault; retry once space is back (issue 28). */
  | 'insufficient_storage';

/** An error as a value, the shape {@link convert} answers with. */
export interface ConversionFailure {
  readonly code: ConversionErrorCode;
  readonly message: string;
  /** For `invalid_request`: the offending request field (`quality`, `page_range`, …). */
  readonly field?: string;
  /** Engine detail for logs; never sent to clients. */
  readonly detail?: string;
}

/** Thrown inside the package and turned into a {@link ConversionFailure} at its edge. */
export class ConversionError extends Error {
  constructor(
    readonly code: ConversionErrorCode,
    message: string,
    /** `final`: no other route is tried after this failure (the input's own fault, e.g. a page that never finishes). */
    readonly extra: { field?: string; detail?: string; final?: boolean } = {},
  ) {
    super(message);
    this.name = 'ConversionError';
  }

  /** The error as data. */
  toFailure(): ConversionFailure {
    return {
      code: this.code,
      message: this.message,
      ...(this.extra.field ? { field: this.extra.field } : {}),
      ...(this.extra.detail ? { detail: this.extra.detail } : {}),
    };
  }
}

/** Shorthand for a 400 that names its field. */
export function invalid(field: string, message: string): ConversionError {
  return new ConversionError('invalid_request', message, { field });
}

/** Shorthand for an engine failure. */
export function failed(message: string, detail?: string): ConversionError {
  return new ConversionError('conversion_failed', message, detail ? { detail } : {});
}

/** An engine failure that is the input's own doing: no fallback route gets to run on it. */
export function failedFinally(message: string, detail?: string): ConversionError {
  return new ConversionError('conversion_failed', message, { ...(detail ? { detail } : {}), final: true });
}

/**
 * A short, safe quotation of client input for an error message: control and bidirectional
 * characters removed, at most `max` characters (then an ellipsis), in double quotes.
 */
export function quote(value: unknown, max = 40): string {
  // eslint-disable-next-line no-control-regex
  const text = String(value).replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, '');
  const chars = [...text];
  return `"${chars.length > max ? `${chars.slice(0, max).join('')}…` : text}"`;
}

/** What engines and Node say when a write found the disk (or the quota on it) full. */
const OUT_OF_SPACE = /No space left on device|ENOSPC|Disk quota exceeded|EDQUOT|disk full|database or disk is full/i;

/** The message of a conversion that ran out of space: the service's problem, not the file's. */
export const OUT_OF_SPACE_MESSAGE = 'The service ran out of storage space while converting this file; it was not charged. Retry later.';

/** True when an error or an engine's detail says a write found the disk full. */
export function saysOutOfSpace(e: unknown): boolean {
  if (typeof e === 'string') return OUT_OF_SPACE.test(e);
  if (typeof e !== 'object' || e === null) return false;
  const code = (e as { code?: unknown }).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  return e instanceof Error && OUT_OF_SPACE.test(e.message);
}
